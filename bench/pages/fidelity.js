// Timing fidelity: every scenario of fixtures/B62-16-schedules.json, `rounds` times, live
// through `fetchWithBudget` against the fixture server's /palettes, `concurrency` actions at a
// time (at most one request each, so at most that many connections: keep it within the
// browser's six per host, or requests would queue and look late at the server).
//
// For each run it records the driver's own trace (the report's outcome, attempt_starts_s and
// events) and, from GET /log, the server's arrival time of each attempt. scripts/bench compares
// them with the model (run natively on each scenario as a live run can play it, as tests/e2e
// does: a response scripted to land exactly on its cap is one the cap aborts).

import { report } from "./report.js";

// The glue is imported by measure(), so that a broken package is reported, not hung.
let fetchWithBudget;
let simulate;

const params = new URLSearchParams(location.search);
const rounds = Number(params.get("rounds") ?? 5);
const concurrency = Number(params.get("concurrency") ?? 6);

/** The scenario's length, to schedule the longest runs first: the model's, or else the sum of
 * its scripted durations. */
function length(scenario) {
  try {
    return simulate(scenario).elapsed_s;
  } catch {
    return scenario.responses.reduce((sum, r) => sum + (r.duration_s ?? 0), 0);
  }
}

async function runOne({ round, scenario }) {
  const run = `bench-${round}-${scenario.name}-${crypto.randomUUID()}`;
  const url = `/palettes?collection=coast&scenario=${encodeURIComponent(scenario.name)}&run=${encodeURIComponent(run)}`;
  const controller = new AbortController();
  // The user leaves as the page does (a route change aborts the action's signal).
  const leave = scenario.user_leaves_at_s == null
    ? null
    : setTimeout(() => controller.abort(), scenario.user_leaves_at_s * 1000);
  let report = null;
  let error = null;
  try {
    report = await fetchWithBudget(url, {
      policy: scenario.policy ?? {},
      // Each run is compared with the model of its scenario alone: no shared origin blocks.
      share: "none",
      signal: controller.signal,
      testOnlyTimerLateBy_s: scenario.timer_late_by_s ?? [],
    });
  } catch (e) {
    if (e?.name === "AbortError" && e.report) report = e.report;
    else error = String(e?.message ?? e);
  } finally {
    clearTimeout(leave);
  }
  return {
    scenario: scenario.name,
    round,
    run,
    outcome: report?.outcome ?? null,
    trace_starts_s: report?.attempt_starts_s ?? [],
    events: report?.events ?? [],
    error,
  };
}

async function measure() {
  const glue = await import("/pkg-full/retry_budget.js");
  ({ fetchWithBudget, simulate } = glue);
  await glue.default();
  const scenarios = (await (await fetch("/fixtures/B62-16-schedules.json")).json()).scenarios;
  const jobs = [];
  for (let round = 1; round <= rounds; round += 1) {
    for (const scenario of scenarios) jobs.push({ round, scenario, length: length(scenario) });
  }
  // The longest first, so that the workers finish together.
  jobs.sort((a, b) => b.length - a.length);
  const runs = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next];
      next += 1;
      runs.push(await runOne(job));
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall_s = (performance.now() - t0) / 1000;

  // The server's arrivals of each run's attempts, in attempt order.
  const log = await (await fetch("/log")).json();
  const byRun = new Map();
  for (const e of log) {
    if (e.method !== "GET" || e.attempt == null || !e.run) continue;
    if (!byRun.has(e.run)) byRun.set(e.run, []);
    byRun.get(e.run).push(e);
  }
  for (const r of runs) {
    const entries = (byRun.get(r.run) ?? []).sort((a, b) => a.attempt - b.attempt);
    r.arrivals_ms = entries.map((e) => e.arrival_ms);
  }
  return { rounds, concurrency, scenarios: scenarios.length, wall_s, runs };
}

await report(measure, (result) => result.error ?? `${result.runs.length} runs`);
