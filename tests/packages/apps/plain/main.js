// No bundler: the page imports the package's browser entry from where its folder is served
// (run.mjs assembles the app: this file, ../page/index.html and ../shared.js beside it, and the
// installed package).
import init, { fetchWithBudget } from "./retry-budget/retry_budget.js";
import { palettesUrl, report } from "./shared.js";

report(async () => {
  await init();
  return fetchWithBudget(palettesUrl(location.search));
});
