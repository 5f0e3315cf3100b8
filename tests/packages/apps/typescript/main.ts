// Type-checked only (manifest.test.mjs runs tsc on tsconfig.json, --strict, under bundler and
// node16 resolution): the package's declarations reach a TypeScript app through its exports map.
import init, { fetchWithBudget, type BudgetResult } from "retry-budget";
// @ts-expect-error The app build has no simulate (the full build's, for the page).
import { simulate } from "retry-budget";

await init();
const result: BudgetResult = await fetchWithBudget("/palettes?collection=coast", {
  policy: { budget_s: 20 },
});
const attempts: number = result.attempts;
export { attempts, simulate };
