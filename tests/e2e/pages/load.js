// The load and race harness: many actions on one page, against the fixture server, driven by
// the end-to-end suite through WebDriver (tests/e2e/tests/load.rs and races.rs).
//
// It counts, from outside the module, every timer and event listener the page holds, so that
// "an ended action leaves nothing behind" is measured rather than assumed: setTimeout,
// clearTimeout and EventTarget's add/removeEventListener are wrapped before any action runs
// (the wasm glue looks them up at each call). Everything it writes to the page is text.
import init, { fetchWithBudget, simulate, runningActions, ownedScreens } from "/pkg-full/retry_budget.js";

/** Each action here is checked against the model of its own scenario alone, so none shares the
 *  service's origin blocks with the others (the sharing suite tests that). */
const ALONE = "none";

// ---- Instrumentation -------------------------------------------------------------------------

/** Live timers: id -> delay. A timer leaves the set when it fires or is cleared. */
const liveTimers = new Map();
/** Live listeners: [target, type, listener, capture, wrapped]. */
const liveListeners = [];
/** A hook on the next timer armed (races): receives (callback, ms), returns the callback to use. */
let nextTimerHook = null;

const realSetTimeout = globalThis.setTimeout.bind(globalThis);
const realClearTimeout = globalThis.clearTimeout.bind(globalThis);
globalThis.setTimeout = function setTimeout(callback, ms, ...args) {
  let run = typeof callback === "function" ? callback : () => {};
  if (nextTimerHook) {
    const hook = nextTimerHook;
    nextTimerHook = null;
    run = hook(run, ms);
  }
  const id = realSetTimeout(() => {
    liveTimers.delete(id);
    run(...args);
  }, ms);
  liveTimers.set(id, ms);
  return id;
};
globalThis.clearTimeout = function clearTimeout(id) {
  liveTimers.delete(id);
  realClearTimeout(id);
};

const realAdd = EventTarget.prototype.addEventListener;
const realRemove = EventTarget.prototype.removeEventListener;
const captureOf = (options) => (typeof options === "boolean" ? options : !!options?.capture);
const findListener = (target, type, listener, capture) =>
  liveListeners.findIndex((l) => l[0] === target && l[1] === type && l[2] === listener && l[3] === capture);
EventTarget.prototype.addEventListener = function addEventListener(type, listener, options) {
  if (!listener) return realAdd.call(this, type, listener, options);
  const capture = captureOf(options);
  if (findListener(this, type, listener, capture) >= 0) return undefined;
  const target = this;
  let wrapped = listener;
  if (typeof options === "object" && options?.once) {
    // A once listener is removed by the browser when it fires, without removeEventListener.
    wrapped = function (event) {
      const i = findListener(target, type, listener, capture);
      if (i >= 0) liveListeners.splice(i, 1);
      return typeof listener === "function" ? listener.call(this, event) : listener.handleEvent(event);
    };
  }
  liveListeners.push([this, type, listener, capture, wrapped]);
  return realAdd.call(this, type, wrapped, options);
};
EventTarget.prototype.removeEventListener = function removeEventListener(type, listener, options) {
  const capture = captureOf(options);
  const i = findListener(this, type, listener, capture);
  if (i < 0) return realRemove.call(this, type, listener, options);
  const [, , , , wrapped] = liveListeners[i];
  liveListeners.splice(i, 1);
  return realRemove.call(this, type, wrapped, options);
};

// ---- Helpers ---------------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => realSetTimeout(resolve, ms));
let scenarios = {};
let models = {};
let wasm = null;

/** The policy fields this page passes, each at the value a scenario that leaves it out means. */
const policyDefaults = () => ({
  budget_s: 20,
  max_attempts: 3,
  attempt_cap_s: 4,
  min_wait_s: 1,
  fallback_base_s: 2,
  retry_statuses: [429],
});

/** A policy object of its own for an action of `scenario`: the scenario's fields, else the defaults. */
function policyOf(scenario) {
  const p = scenario.policy ?? {};
  const policy = policyDefaults();
  for (const key of Object.keys(policy)) policy[key] = p[key] ?? policy[key];
  return policy;
}

const urlFor = (name, run) =>
  `/palettes?collection=coast&scenario=${encodeURIComponent(name)}&run=${encodeURIComponent(run)}`;

/** Resolves once the server's log has a request of `run` (asked every 10 ms): the order of
 *  events, seen where it happens, rather than a guess at how long a request takes to arrive. */
async function arrived(run) {
  for (;;) {
    const log = await (await fetch(`/log?run=${encodeURIComponent(run)}`)).json();
    if (log.length > 0) return;
    await sleep(10);
  }
}

/** What the page holds right now. */
function counts() {
  const heap = performance.memory ? performance.memory.usedJSHeapSize : null;
  return {
    running: runningActions(),
    screens: ownedScreens(),
    timers: liveTimers.size,
    listeners: liveListeners.length,
    wasmBytes: wasm.memory.buffer.byteLength,
    heap,
  };
}

/** Memory once collections stop freeing anything, when the browser lets the page ask for one
 *  (Chromium with --js-flags=--expose-gc). One collection is not enough to settle: what a
 *  FinalizationRegistry frees (wasm-bindgen's closures and handles) goes only after its callback
 *  has run, after the collection, so the page collects, yields, and collects again until the
 *  heap stops shrinking (at most five rounds) and reports the least it saw. */
async function memory() {
  let heap = counts().heap;
  if (typeof globalThis.gc === "function") {
    for (let round = 0; round < 5; round++) {
      globalThis.gc();
      await sleep(10);
      const now = counts().heap;
      const shrank = heap === null || now < heap;
      heap = heap === null ? now : Math.min(heap, now);
      if (!shrank && round > 0) break;
    }
  }
  return { wasmBytes: counts().wasmBytes, heap };
}

function figures(text) {
  $("figures").textContent = text;
}

/** The outcome of a settled fetchWithBudget promise. */
function outcomeOf(settled) {
  if (settled.status === "fulfilled") return settled.value.outcome;
  const e = settled.reason;
  if (e?.name === "AbortError") return e.report?.outcome ?? "user_left";
  return `error: ${e?.message ?? e}`;
}

/** One action with its own budget (a fresh policy object), signal and screen, fetching with
 *  `fetchFn` when one is given. Resolves with { name, run, outcome, updates, lateUpdates };
 *  `totals.updates` and `totals.lateUpdates` count across actions, including calls after the
 *  record was returned. */
function one(name, run, screen, totals = { updates: 0, lateUpdates: 0 }, fetchFn = undefined) {
  const scenario = scenarios[name];
  const record = { name, run, outcome: null, updates: 0, lateUpdates: 0 };
  let settled = false;
  const promise = fetchWithBudget(urlFor(name, run), {
    policy: policyOf(scenario),
    share: ALONE,
    signal: new AbortController().signal,
    screen,
    ...(fetchFn ? { fetch: fetchFn } : {}),
    onUpdate() {
      record.updates += 1;
      totals.updates += 1;
      if (settled) {
        record.lateUpdates += 1;
        totals.lateUpdates += 1;
      }
    },
  });
  return promise.then(
    (value) => ({ status: "fulfilled", value }),
    (reason) => ({ status: "rejected", reason }),
  ).then((s) => {
    settled = true;
    record.outcome = outcomeOf(s);
    return record;
  });
}

const MIX = ["load-ok", "load-retry-then-ok", "load-budget", "load-not-retryable"];

// ---- Load ------------------------------------------------------------------------------------

/** n actions, one after the other; after each, nothing may be left running or listening.
 *  Action i runs scenario MIX[i % 4] as run `${batch}-b2b-${i}`. Nothing per action is kept
 *  (only counters), so the collected heap measures the module, not this harness. */
async function backToBack({ n, batch, mix = MIX }) {
  const base = counts();
  const out = { n, mismatches: [], leftovers: [], memory: [], outcomes: {}, updates: 0, lateUpdates: 0 };
  const started = performance.now();
  for (let i = 0; i < n; i += 1) {
    const name = mix[i % mix.length];
    const run = `${batch}-b2b-${i}`;
    const record = await one(name, run, `${batch}-screen-${i}`, out);
    out.outcomes[record.outcome] = (out.outcomes[record.outcome] ?? 0) + 1;
    if (record.outcome !== models[name].outcome) {
      out.mismatches.push(`${run}: ${record.outcome}, the model says ${models[name].outcome}`);
    }
    const c = counts();
    if (c.running || c.screens || c.timers !== base.timers || c.listeners !== base.listeners) {
      out.leftovers.push(`after ${run}: ${JSON.stringify(c)} (before: ${JSON.stringify(base)})`);
    }
    if (i % 100 === 99 || i === 0) out.memory.push({ after: i + 1, ...(await memory()) });
    if (i % 50 === 0) figures(`back to back: ${i + 1} of ${n}`);
  }
  out.seconds = (performance.now() - started) / 1000;
  // A late onUpdate would come after the promise settled: give stragglers a moment.
  await sleep(300);
  out.after = counts();
  out.base = base;
  return out;
}

/** The control for the memory figures: n plain fetches of `name`, back to back, with no
 *  module involved, sampled like backToBack. What the browser itself keeps per request
 *  (resource timing, network bookkeeping) shows here too. */
async function plainFetches({ n, batch, name = "load-ok" }) {
  const out = { n, memory: [], statuses: {} };
  for (let i = 0; i < n; i += 1) {
    const response = await fetch(urlFor(name, `${batch}-plain-${i}`));
    await response.text();
    out.statuses[response.status] = (out.statuses[response.status] ?? 0) + 1;
    if (i % 100 === 99 || i === 0) out.memory.push({ after: i + 1, ...(await memory()) });
  }
  return out;
}

/** n actions at once, each with its own budget and screen. Their requests wait at a gate
 *  until the peak is counted, so that no action can end before every one has started, however
 *  a busy machine orders the tasks; then they go to the server. */
async function atOnce({ n, batch }) {
  const base = counts();
  const out = { n, mismatches: [], outcomes: {}, peakRunning: 0, runs: [] };
  let openGate;
  const gate = new Promise((resolve) => { openGate = resolve; });
  const gated = (url, init) => gate.then(() => fetch(url, init));
  const started = performance.now();
  const all = [];
  for (let i = 0; i < n; i += 1) {
    const name = MIX[i % MIX.length];
    const run = `${batch}-once-${i}`;
    out.runs.push([run, name]);
    all.push(one(name, run, `${batch}-once-screen-${i}`, undefined, gated));
  }
  // Every action has started (claimed its screen) by the next task.
  await sleep(0);
  out.peakRunning = runningActions();
  out.peakScreens = ownedScreens();
  openGate();
  const records = await Promise.all(all);
  out.seconds = (performance.now() - started) / 1000;
  await sleep(300);
  for (const r of records) {
    out.outcomes[r.outcome] = (out.outcomes[r.outcome] ?? 0) + 1;
    if (r.outcome !== models[r.name].outcome) {
      out.mismatches.push(`${r.run}: ${r.outcome}, the model says ${models[r.name].outcome}`);
    }
  }
  out.lateUpdates = records.reduce((sum, r) => sum + r.lateUpdates, 0);
  out.after = counts();
  out.base = base;
  return out;
}

/** n pairs on one screen each: A (slow) starts, then B claims the same screen. A must end as
 *  user_left and never write to the view after B claimed it; the view shows B's result. */
async function supersede({ n, batch }) {
  const base = counts();
  const out = { n, aOutcomes: {}, bOutcomes: {}, aUpdatesAfterClaim: 0, views: [], runs: [] };
  const view = $("view");
  for (let i = 0; i < n; i += 1) {
    const screen = `${batch}-shared-${i}`;
    const runA = `${batch}-superseded-${i}`;
    const runB = `${batch}-superseding-${i}`;
    out.runs.push([runA, "load-slow", "superseded"], [runB, "load-ok", "superseding"]);
    let claimed = false;
    let aStarted;
    const aInFlight = new Promise((resolve) => { aStarted = resolve; });
    const a = fetchWithBudget(urlFor("load-slow", runA), {
      policy: policyOf(scenarios["load-slow"]),
      share: ALONE,
      screen,
      onUpdate(update) {
        if (claimed) out.aUpdatesAfterClaim += 1;
        // Deliberately unguarded: the driver alone must keep a superseded action off the view.
        view.textContent = `A ${i}: ${update.visible[0] ?? ""}`;
        if (update.events.some((e) => e.event === "start")) aStarted();
      },
    });
    await aInFlight;
    // A's request reaches the server before B takes the screen.
    await arrived(runA);
    const b = fetchWithBudget(urlFor("load-ok", runB), {
      policy: policyOf(scenarios["load-ok"]),
      share: ALONE,
      screen,
      onUpdate(update) {
        claimed = true;
        view.textContent = `B ${i}: ${update.visible[0] ?? ""}`;
      },
    });
    const [ra, rb] = await Promise.allSettled([a, b]);
    const aOutcome = outcomeOf(ra);
    const bOutcome = outcomeOf(rb);
    out.aOutcomes[aOutcome] = (out.aOutcomes[aOutcome] ?? 0) + 1;
    out.bOutcomes[bOutcome] = (out.bOutcomes[bOutcome] ?? 0) + 1;
    if (ra.status === "rejected" && ra.reason?.name !== "AbortError") {
      out.aOutcomes[`threw ${ra.reason?.name}`] = 1;
    }
    // A's response was due 1.5 s after it started: wait past it, then read the view.
    if (i === n - 1) await sleep(1600);
    out.views.push(view.textContent);
  }
  out.lastView = view.textContent;
  await sleep(100);
  out.after = counts();
  out.base = base;
  return out;
}

// ---- Races -----------------------------------------------------------------------------------

/** Leaves by navigating to /away, which the server holds until plus_ms after it sends the
 *  run's first response. Just before the page goes (pagehide), records what the action had
 *  started, in sessionStorage, for the test to read on the next page. */
function raceNavigation({ run, plusMs }) {
  const name = "race-429-then-200";
  const seen = { run, starts: 0, receipts: 0, waits: 0, timers: 0, updatesAfterHide: 0, hidden: false };
  const t0 = performance.now();
  // Registered before the action's own pagehide listener, so it runs first: nothing can be
  // sent between it and the action's.
  addEventListener("pagehide", () => {
    seen.hidden = true;
    seen.hideAt = performance.now() - t0;
    seen.runningAtHide = runningActions();
    sessionStorage.setItem(`race:${run}`, JSON.stringify(seen));
  });
  fetchWithBudget(urlFor(name, run), {
    policy: policyOf(scenarios[name]),
    share: ALONE,
    screen: "race",
    onUpdate(update) {
      if (seen.hidden) seen.updatesAfterHide += 1;
      for (const e of update.events) {
        if (e.event === "start") seen.starts += 1;
        if (e.event === "receipt") { seen.receipts += 1; seen.receiptAt = performance.now() - t0; }
        if (e.event === "wait") seen.waits += 1;
        if (e.event === "timer") { seen.timers += 1; seen.timerAt = performance.now() - t0; }
      }
    },
  }).catch(() => {});
  location.href = `/away?run=${encodeURIComponent(run)}&attempt=1&plus_ms=${plusMs}`;
  return { run };
}

/** Leaves inside the page, at the moment a response arrives or a timer fires:
 *  - how "abort": the action's signal; "pagehide": a pagehide event, as a page being hidden;
 *  - when "tie" (or "tie-before"): in the same task, just before the response's body or the
 *    timer is handed to the driver; "tie-after" (timers): in the same task, just after the
 *    timer's callback, so that the driver's next poll finds both the timer and the departure
 *    ready (leaving must win); "next-task": in a task queued just after, so the driver may
 *    process the response or timer first (start the wait, or send the next request) and must
 *    then stop. */
async function raceInPage({ run, kind, how, when }) {
  const name = "race-429-then-200";
  const controller = new AbortController();
  const record = { run, kind, how, when, startsAtLeave: null, outcome: null, updatesAfterLeave: 0 };
  let starts = 0;
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    record.startsAtLeave = starts;
    if (how === "abort") controller.abort();
    else dispatchEvent(new PageTransitionEvent("pagehide", { persisted: false }));
  };
  const leaveAt = () => (when === "next-task" ? realSetTimeout(leave, 0) : leave());
  const realFetch = globalThis.fetch.bind(globalThis);
  const options = {
    policy: policyOf(scenarios[name]),
    share: ALONE,
    signal: controller.signal,
    screen: "race-in-page",
    onUpdate(update) {
      if (left) record.updatesAfterLeave += 1;
      for (const e of update.events) {
        if (e.event === "start") starts += 1;
        // The wait's timer is the next one the driver arms: leave when it fires.
        if (e.event === "wait" && kind === "timer") {
          nextTimerHook = (callback) => () => {
            if (when === "tie" || when === "tie-before") {
              leave();
              callback();
            } else if (when === "tie-after") {
              callback();
              leave();
            } else {
              callback();
              leaveAt();
            }
          };
        }
      }
    },
  };
  if (kind === "receipt") {
    // The response's body is the driver's receipt: leave as it resolves.
    options.fetch = (url, init) => realFetch(url, init).then((response) => {
      const text = response.text.bind(response);
      response.text = () => text().then((body) => {
        leaveAt();
        return body;
      });
      return response;
    });
  }
  const settled = await fetchWithBudget(urlFor(name, run), options).then(
    (value) => ({ status: "fulfilled", value }),
    (reason) => ({ status: "rejected", reason }),
  );
  record.outcome = outcomeOf(settled);
  nextTimerHook = null;
  return record;
}

/** Runs in-page races one after the other; then waits past any request a lost leave could
 *  still send. */
async function racesInPage({ list }) {
  const base = counts();
  const records = [];
  for (const spec of list) records.push(await raceInPage(spec));
  await sleep(500);
  return { records, after: counts(), base };
}

// ---- Wiring ----------------------------------------------------------------------------------

const jobs = { backToBack, plainFetches, atOnce, supersede, racesInPage };

/** The WebDriver entry point: harness.start(job, args); poll harness.result. */
const harness = {
  result: null,
  error: null,
  busy: false,
  counts,
  memory,
  start(job, args) {
    this.result = null;
    this.error = null;
    this.busy = true;
    jobs[job](args)
      .then((result) => {
        this.result = result;
        figures(`${job}: done`);
      })
      .catch((e) => {
        this.error = `${e?.name}: ${e?.message}`;
      })
      .finally(() => {
        this.busy = false;
      });
    return true;
  },
  raceNavigation,
};
globalThis.harness = harness;

async function main() {
  wasm = await init();
  const listing = await (await fetch("/scenarios")).json();
  for (const s of listing.scenarios) scenarios[s.name] = s;
  for (const name of [...MIX, "load-slow", "race-429-then-200"]) {
    if (!scenarios[name]) throw new Error(`the server has no scenario ${name}`);
    models[name] = simulate(scenarios[name]);
  }
  figures(`Ready. ${JSON.stringify(counts())}`);
  document.body.dataset.ready = "true";
}

main().catch((e) => {
  figures(`The page could not start: ${e.message}`);
});
