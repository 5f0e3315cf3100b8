// Type-checked only (manifest.test.mjs runs tsc on tsconfig.json, --strict, under bundler and
// node16 resolution): the package's declarations reach a TypeScript app through its exports map,
// and they refuse what the module refuses at run time.
import init, {
  defaultPolicy,
  fetchWithBudget,
  isAbortError,
  rateLimits,
  type BudgetReport,
  type BudgetResult,
  type StopCause,
} from "retry-budget";
// @ts-expect-error The app build has no simulate (the full build's, for the page).
import { simulate } from "retry-budget";

await init();

/** The body's type is the caller's: it flows through to `result.body`. */
type Palettes = string[];

const leave = new AbortController();
let shown: string[] = [];
try {
  const result: BudgetResult<Palettes> = await fetchWithBudget<Palettes>("/palettes?collection=coast", {
    policy: { budget_s: 20, ratelimit_fields: true },
    signal: leave.signal,
    scope: "palettes",
    share: "tabs",
    onUpdate: ({ visible }) => {
      shown = visible;
    },
  });
  // A resolved action never says the user left: that rejects.
  // @ts-expect-error "user_left" is not an outcome a BudgetResult can have.
  const left: typeof result.outcome = "user_left";
  if (result.outcome === "success" && result.body !== null) {
    const first: string | undefined = result.body[0];
    shown = [first ?? "empty"];
  }
  const cause: StopCause = result.cause;
  if (cause.kind === "not_retryable") {
    const status: number = cause.status;
    shown.push(String(status));
  }
  void left;
} catch (e) {
  if (!isAbortError(e)) throw e;
  // Narrowed: an abort carries the report of what was done.
  const report: BudgetReport = e.report;
  shown = report.visible;
}

// Only reads are retried: the declarations refuse a write, as the module does.
// @ts-expect-error method is "GET" only.
await fetchWithBudget("/palettes", { method: "POST" });
// @ts-expect-error An option the module does not know is refused, not ignored.
await fetchWithBudget("/palettes", { retries: 5 });
// @ts-expect-error A policy field the module does not know is refused too.
await fetchWithBudget("/palettes", { policy: { budget_ms: 20000 } });
// @ts-expect-error share is one of "page", "tabs" and "none".
await fetchWithBudget("/palettes", { share: "everyone" });

const budget: number = defaultPolicy().budget_s;
const until: number[] = rateLimits().map((b) => b.until_s);
export { budget, shown, simulate, until };
