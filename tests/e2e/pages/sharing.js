// The sharing harness: actions on one origin, in one page or in several tabs, started by the
// end-to-end suite (tests/e2e/tests/sharing.rs) through `window.sharing`. Everything it writes
// to the page is text.
import init, { fetchWithBudget, rateLimits } from "/pkg-full/retry_budget.js";

/** Each action started here, by run id: its outcome and report once it has ended. */
const actions = new Map();

/** The URL of run `run` of scenario `name`, in `collection`. */
const urlFor = (name, run, collection) =>
  `/palettes?collection=${encodeURIComponent(collection)}&scenario=${encodeURIComponent(name)}&run=${encodeURIComponent(run)}`;

/** The policy of an action: the defaults, with `jitter_s` and `ratelimit_fields` when asked
 *  for. */
function policyOf(jitter_s, ratelimit_fields) {
  const policy = { budget_s: 20, max_attempts: 3, attempt_cap_s: 4 };
  if (jitter_s) policy.jitter_s = jitter_s;
  if (ratelimit_fields) policy.ratelimit_fields = true;
  return policy;
}

/** The compact record the test reads back of an ended action. */
function summary(report) {
  return {
    outcome: report.outcome,
    attempts: report.attempts,
    elapsed_s: report.elapsed_s,
    attempt_starts_s: report.attempt_starts_s,
    last_status: report.last_response?.status ?? null,
    blocked: report.events.filter((e) => e.event === "blocked"),
    waits: report.events.filter((e) => e.event === "wait"),
    visible: report.visible,
  };
}

/** Shows every action's state as text. */
function show() {
  const lines = [...actions].map(([run, a]) => `${run}: ${a.done ? a.done.outcome : "running"}`);
  document.getElementById("runs").textContent = lines.join("\n") || "None yet.";
}

/** Starts an action of `scenario` as run `run`; `share`, `scope` (none: the origin),
 *  `jitter_s` and `ratelimit_fields` as given. The record keeps the wall clock at the press,
 *  which the test compares with the server's `arrival_unix_ms` (one machine, one clock). */
function start({ scenario, run, share = "page", scope, jitter_s = 0, ratelimit_fields = false, collection = "coast" }) {
  const record = { done: null, error: null, pressed_unix_ms: Date.now() };
  actions.set(run, record);
  const options = { policy: policyOf(jitter_s, ratelimit_fields), share };
  if (scope !== undefined) options.scope = scope;
  fetchWithBudget(urlFor(scenario, run, collection), options)
    .then((report) => { record.done = summary(report); })
    .catch((e) => { record.error = String(e?.message ?? e); })
    .finally(show);
  show();
  return run;
}

/** The ended action's record, `{ error }` if it failed to run, or null while it runs. */
function result(run) {
  const record = actions.get(run);
  if (!record) return { error: `no action ${run}` };
  if (record.error) return { error: record.error };
  return record.done && { ...record.done, pressed_unix_ms: record.pressed_unix_ms };
}

/** Once `rateLimits()` lists a block of `scope` (any scope when it is null; asked every 5 ms),
 *  starts an action for each spec, all in the task that saw the block: each then starts while
 *  the block is known, however long the test's own round trips take on a busy machine.
 *  Resolves with the list seen. */
function startWhenListed(scope, specs) {
  return new Promise((resolve) => {
    const poll = () => {
      const limits = rateLimits();
      if (!limits.some((l) => scope === null || l.scope === scope)) {
        setTimeout(poll, 5);
        return;
      }
      for (const spec of specs) start(spec);
      resolve(limits);
    };
    poll();
  });
}

/** The start of the keys under which the module keeps the blocks shared with tabs for later
 *  pages, one per scope: the scope follows it, and the value is the block's end. */
const STORED = "retry-budget:block:";

/** The module's keys in this origin's `localStorage`. */
const storedKeys = () => Object.keys(localStorage).filter((key) => key.startsWith(STORED));

/** What the module keeps (`{ scope: until_ms }`), or null when it keeps nothing. */
function stored() {
  const keys = storedKeys();
  if (keys.length === 0) return null;
  return Object.fromEntries(keys.map((key) => [key.slice(STORED.length), JSON.parse(localStorage.getItem(key))]));
}

window.sharing = {
  start,
  startWhenBlocked: (specs) => startWhenListed(null, specs),
  startWhenListed,
  result,
  rateLimits: () => rateLimits(),
  stored,
  forgetStored: () => storedKeys().forEach((key) => localStorage.removeItem(key)),
};

init().then(() => { document.body.dataset.ready = "true"; });
