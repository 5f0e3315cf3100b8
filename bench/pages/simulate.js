// Decision cost through the JS API: `simulate(scenario)` on Schedule A, the JS object in and
// the report object out, so the boundary crossing (serde-wasm-bindgen both ways) is included.
// `runningActions()` (no arguments, a number back) is timed the same way as the floor of one
// call into the module.

import { report } from "./report.js";

const BATCHES = 25;
const BATCH_MS = 20;

/** Per-call time in microseconds: batches of n calls, n chosen so a batch takes BATCH_MS. */
function perCall(f) {
  for (let i = 0; i < 500; i++) f(); // warm up, and let the engine tier up
  let n = 1;
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < n; i++) f();
    if (performance.now() - t >= BATCH_MS) break;
    n *= 2;
  }
  const us = [];
  for (let b = 0; b < BATCHES; b++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) f();
    us.push(((performance.now() - t) * 1000) / n);
  }
  us.sort((a, b) => a - b);
  return { calls_per_batch: n, batches: BATCHES, p50_us: us[Math.floor(BATCHES / 2)], min_us: us[0], max_us: us[BATCHES - 1] };
}

async function measure() {
  // Imported here, so that a package without `simulate` is reported, not hung.
  const { default: init, simulate, runningActions } = await import("/pkg-full/retry_budget.js");
  if (typeof simulate !== "function") throw new Error("this build of the package exports no simulate()");
  await init();
  const file = await (await fetch("/fixtures/B62-16-schedules.json")).json();
  const scenario = file.scenarios.find((s) => s.name === "schedule-a");
  const check = simulate(scenario);
  return {
    scenario: scenario.name,
    outcome: check.outcome,
    attempt_starts_s: check.attempt_starts_s,
    simulate: perCall(() => simulate(scenario)),
    boundary: perCall(() => runningActions()),
  };
}

await report(measure);
