// Node running code written for a browser: `await init()` first, as the browser entry needs.
// Usage: node main.mjs URL; prints the summary, or the failure, as JSON.
import init, { fetchWithBudget } from "retry-budget";
import { failure, summary } from "../shared.js";

await init();
const result = await fetchWithBudget(process.argv[2]).then(summary, failure);
console.log(JSON.stringify(result));
