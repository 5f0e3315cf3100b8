// A report's events as the source document's step tables (Step, Elapsed interval, Observed,
// Decision), the outcome in words, and the request the budget refused. Everything here reads
// the events a report already carries (a live run's or the model's); nothing is asked of the
// module, so the shipped app build does not grow.

/** Each outcome in words, as the timeline and the tables say it. */
export const OUTCOME_WORDS = {
  success: "success: the list is loaded",
  budget_exhausted: "stopped: the budget cannot fit another request",
  attempts_exhausted: "stopped: every attempt was used",
  user_left: "stopped: you left the screen",
  clock_untrusted: "stopped: no trusted clock to read the server's date",
  not_retryable: "stopped: this status is not retried",
  transport_error: "stopped: the request failed",
};

/** The policy a scenario runs under, with the defaults filled in (as the page runs it and the tables read it). */
export function policyOf(scenario) {
  const p = scenario.policy ?? {};
  return {
    budget_s: p.budget_s ?? 20,
    max_attempts: p.max_attempts ?? 3,
    attempt_cap_s: p.attempt_cap_s ?? 4,
    min_wait_s: p.min_wait_s ?? 1,
    fallback_base_s: p.fallback_base_s ?? 2,
    retry_statuses: p.retry_statuses ?? [429],
    trust_local_clock: p.trust_local_clock ?? false,
  };
}

/** Seconds as the tables write them: whole numbers as they are, else two decimals at most. */
export function seconds(x) {
  return Number.isInteger(x) ? `${x}` : x.toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
}

/** A server's delay, which may be far beyond any budget (a saturated delay-seconds). */
export function amount(x) {
  return x >= 1e6 ? x.toExponential(2) : seconds(x);
}

function span(from, to) {
  return `${seconds(from)}–${seconds(to)}`;
}

function capitalised(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** What a response showed, in the source document's words. */
function observedReceipt(e) {
  if (e.status >= 200 && e.status < 300) return `${e.status}; list returned`;
  const ra = e.retry_after;
  const header = {
    seconds: () => `delay ${amount(ra.delay_s)}`,
    date: () => `date ${ra.raw}`,
    missing: () => "no Retry-After",
    invalid: () => `invalid Retry-After "${ra.raw}"`,
  }[ra.kind];
  return `${e.status}; ${header ? header() : ra.kind}`;
}

function observedFailure(e) {
  return e.error === "timed_out" ? "no response: the cap ran out" : `no response: ${e.error} error`;
}

/** Why the wait is as long as it is. */
function waitReason(e) {
  const raised = e.wait_s > e.delay_s ? `, raised to ${seconds(e.wait_s)} s` : "";
  const reasons = {
    server_seconds: () => (raised ? `delay ${amount(e.delay_s)}${raised}` : `wait ${seconds(e.wait_s)} s as asked`),
    server_date: () => `date minus receipt = ${amount(e.delay_s)}${raised}`,
    fallback_missing: () => `fallback wait ${seconds(e.wait_s)} s`,
    fallback_invalid: () => `fallback wait ${seconds(e.wait_s)} s`,
    origin_block: () => `the site is blocked until ${seconds(e.until_s - e.jitter_s)}`,
  };
  const reason = reasons[e.source] ? reasons[e.source]() : e.source;
  return e.jitter_s > 0 ? `${reason}, + ${seconds(e.jitter_s)} s jitter` : reason;
}

function waitDecision(e, policy) {
  const fits = seconds(e.until_s + policy.attempt_cap_s);
  return capitalised(`${waitReason(e)}; next start ${seconds(e.until_s)}; full cap fits by ${fits}`);
}

/**
 * The wait `rule` the budget refused when the action stopped with `budget_exhausted`:
 * `{ from, start, cause }`, the would-be wait from `from` to the next start `start`, or null.
 * `cause` is `{ kind: "asked" | "fallback", delay }` after a response, `{ kind: "block", until }`
 * when a block on the origin could not fit, `{ kind: "late" }` when a timer woke too late.
 */
export function refusal(events, policy) {
  const stop = events[events.length - 1];
  const before = events[events.length - 2];
  if (!stop || stop.event !== "stop" || stop.outcome !== "budget_exhausted" || !before) return null;
  if (before.event === "receipt") return refusedRetry(events, before, policy);
  if (before.event === "blocked") return { from: stop.at_s, start: before.until_s, cause: { kind: "block", until: before.until_s } };
  if (before.event === "timer") return { from: stop.at_s, start: before.at_s, cause: { kind: "late" } };
  return null;
}

/** Rules 8, 9 and 15 for the response that ended the action. */
function refusedRetry(events, receipt, policy) {
  const ra = receipt.retry_after;
  const server = ra.kind === "seconds" || ra.kind === "date";
  const delay = server ? ra.delay_s : policy.fallback_base_s * 2 ** (receipt.attempt - 1);
  const block = Math.max(0, ...events.filter((e) => e.event === "blocked").map((e) => e.until_s));
  const own = receipt.at_s + Math.max(policy.min_wait_s, delay);
  const cause = own >= block ? { kind: server ? "asked" : "fallback", delay } : { kind: "block", until: block };
  return { from: receipt.at_s, start: Math.max(own, block), cause };
}

/** The refused wait in a few words: "asked 30 s: next start would be 32 s". */
export function refusalLabel(r, policy) {
  const capEnd = seconds(r.start + policy.attempt_cap_s);
  const start = r.start > policy.budget_s
    ? `next start would be ${amount(r.start)} s`
    : `next start ${seconds(r.start)} s, its cap to ${capEnd} s`;
  const cause = {
    asked: () => `asked ${amount(r.cause.delay)} s: ${start}`,
    fallback: () => `fallback ${amount(r.cause.delay)} s: ${start}`,
    block: () => `site blocked until ${seconds(r.cause.until)} s: ${start}`,
    late: () => `woke at ${seconds(r.start)} s: its cap would run to ${capEnd} s`,
  }[r.cause.kind];
  return cause();
}

function stopDecision(stop, events, policy) {
  const at = `Stop at ${seconds(stop.at_s)}`;
  const receipt = events.filter((e) => e.event === "receipt").pop();
  switch (stop.outcome) {
    case "success":
      return `Finish at ${seconds(stop.at_s)} with the received list`;
    case "budget_exhausted":
      return `${at}: ${refusedWords(refusal(events, policy), policy)}`;
    case "attempts_exhausted":
      return `${at}: all ${policy.max_attempts} attempts used; no further request`;
    case "user_left":
      return `${at}: you left; nothing more is sent`;
    case "clock_untrusted":
      return `${at}: no trusted clock to read the date, and it is never read as zero`;
    case "not_retryable":
      return `${at}: ${receipt ? receipt.status : "this status"} is not retried`;
    case "transport_error":
      return `${at}: the request failed; no retry`;
    default:
      return `${at}: ${stop.outcome}`;
  }
}

function refusedWords(r, policy) {
  if (!r) return "the budget cannot fit another request";
  const capEnd = seconds(r.start + policy.attempt_cap_s);
  if (r.start > policy.budget_s) {
    return `next start would be ${amount(r.start)}, past the ${seconds(policy.budget_s)} s budget; no shortened wait, no further attempt`;
  }
  return `next start ${seconds(r.start)} needs its cap through ${capEnd}, past ${seconds(policy.budget_s)}; no further attempt`;
}

/** The step table of a report's events: rows of [Step, Elapsed interval, Observed, Decision]. */
export function stepRows(events, policy) {
  const table = new StepTable(events, policy);
  for (const e of events) table.add(e);
  return table.rows;
}

class StepTable {
  constructor(events, policy) {
    this.events = events;
    this.policy = policy;
    this.rows = [];
    this.open = null; // the start of the attempt in flight
    this.wait = null; // { row, from } of the wait in progress
    this.timer = null; // the last timer that fired
  }

  add(e) {
    const handlers = {
      start: () => this.onStart(e),
      receipt: () => this.closeAttempt(e, observedReceipt(e)),
      failure: () => this.closeAttempt(e, observedFailure(e)),
      wait: () => this.onWait(e),
      timer: () => (this.timer = e),
      blocked: () => this.push("Blocked", seconds(e.at_s), `the site is blocked until ${seconds(e.until_s)}`),
      left: () => this.onLeft(e),
      stop: () => this.onStop(e),
    };
    handlers[e.event]?.();
  }

  push(step, elapsed, observed) {
    const last = this.rows[this.rows.length - 1];
    if (last && last[0] === "Blocked" && !last[3]) last[3] = "No request starts before then";
    this.rows.push([step, elapsed, observed, ""]);
  }

  /** Puts `decision` on the last row, or on a row of its own at `at` if that one has one. */
  decide(decision, at) {
    const last = this.rows[this.rows.length - 1];
    if (last && !last[3]) last[3] = decision;
    else this.rows.push(["Stop", seconds(at), "", decision]);
  }

  onStart(e) {
    this.endWait(e.at_s);
    this.open = e;
  }

  closeAttempt(e, observed) {
    const from = this.open ? this.open.at_s : e.at_s;
    this.open = null;
    this.push(`Attempt ${e.attempt}`, span(from, e.at_s), observed);
  }

  onWait(e) {
    const last = this.rows[this.rows.length - 1];
    if (this.wait && last && last[0] === "Blocked") {
      // A block moved the start: the wait goes on to the new start.
      last[3] = waitDecision(e, this.policy);
      this.rows[this.wait.row][2] = `${seconds(e.until_s - this.wait.from)} s`;
      return;
    }
    this.decide(waitDecision(e, this.policy), e.at_s);
    this.push("Wait", "", `${seconds(e.until_s - e.at_s)} s`);
    this.rows[this.rows.length - 1][3] = "No request in flight";
    this.wait = { row: this.rows.length - 1, from: e.at_s };
  }

  /** Ends the wait in progress at `at`; returns its row. */
  endWait(at) {
    if (!this.wait) return null;
    const row = this.rows[this.wait.row];
    row[1] = span(this.wait.from, at);
    this.wait = null;
    return row;
  }

  onLeft(e) {
    if (this.open) {
      this.push(`Attempt ${this.open.attempt}`, span(this.open.at_s, e.at_s), "you left; the response is discarded");
      this.open = null;
      return;
    }
    const row = this.endWait(e.at_s);
    if (row) {
      row[2] = `${row[2]} planned; you left at ${seconds(e.at_s)}`;
      row[3] = "";
    }
  }

  onStop(e) {
    const row = this.endWait(e.at_s);
    if (row) {
      if (this.timer && this.timer.at_s === e.at_s) row[2] = `${row[2]} planned; the timer woke at ${seconds(e.at_s)}`;
      // The stop is the decision the wait ends with, unless a block row came after it.
      if (this.rows[this.rows.length - 1] === row) row[3] = "";
    }
    this.decide(stopDecision(e, this.events, this.policy), e.at_s);
  }
}
