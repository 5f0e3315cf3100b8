// Node: import and call, nothing else (the package's Node entry starts the module at import).
// Usage: node main.mjs URL; prints the summary, or the failure, as JSON.
import { fetchWithBudget } from "retry-budget";
import { failure, summary } from "../shared.js";

const result = await fetchWithBudget(process.argv[2]).then(summary, failure);
console.log(JSON.stringify(result));
