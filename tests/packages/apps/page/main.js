// The app that webpack, Vite (build, preview, dev), esbuild and Rollup each build: one read
// through the package, its result shown for the runner.
import init, { fetchWithBudget } from "retry-budget";
import { palettesUrl, report } from "../shared.js";

report(async () => {
  await init();
  return fetchWithBudget(palettesUrl(location.search));
});
