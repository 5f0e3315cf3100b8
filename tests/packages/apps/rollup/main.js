import init, { fetchWithBudget } from "retry-budget";
import { palettesUrl, report } from "../shared.js";

report(async () => {
  await init();
  return fetchWithBudget(palettesUrl(location.search));
});
