// The Palette List's timeline, what it decides before any drawing: the intervals of a trace
// (requests from start to receipt, failure, leaving or now; waits from the first wait to the
// next start or the stop; a cap reserved at each start; the blocks heard; the stop), shifted by
// the drawing's offset, and a track's stop words and refused wait, taken from the report. The
// event lists are the native replay's (`replay fixtures/...json`), copied as it printed them.
// Runs in Node: timeline.js touches the DOM only when it draws.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spanOf, spans, tickStep, track } from "../../www/timeline.js";

const missing = { raw: null, kind: "missing", delay_s: null };
const ra = (raw) => ({ raw, kind: "seconds", delay_s: Number(raw) });
const start = (at_s, attempt, remaining_s) => ({ event: "start", at_s, attempt, remaining_s });
const receipt = (at_s, attempt, status, retry_after) => ({ event: "receipt", at_s, attempt, status, retry_after });
const wait = (at_s, after_attempt, source, delay_s, until_s, remaining_s, jitter_s = 0) => ({
  event: "wait", at_s, after_attempt, source, delay_s, wait_s: delay_s, jitter_s, until_s, remaining_s,
});
const timer = (at_s, due_s = at_s) => ({ event: "timer", at_s, due_s });
const stop = (at_s, outcome, remaining_s, cause) => ({ event: "stop", at_s, outcome, remaining_s, cause });
const success = { kind: "success" };

// B62-16-schedules.json, schedule-a (cap 4 s).
const scheduleA = [
  start(0, 1, 20),
  receipt(2, 1, 429, ra("3")),
  wait(2, 1, "server_seconds", 3, 5, 18),
  timer(5),
  start(5, 2, 15),
  receipt(7, 2, 429, ra("4")),
  wait(7, 2, "server_seconds", 4, 11, 13),
  timer(11),
  start(11, 3, 9),
  receipt(14, 3, 200, missing),
  stop(14, "success", 6, success),
];

// B62-16-schedules.json, transport-error-after-429.
const transportError = [
  start(0, 1, 20),
  receipt(2, 1, 429, ra("1")),
  wait(2, 1, "server_seconds", 1, 3, 18),
  timer(3),
  start(3, 2, 17),
  { event: "failure", at_s: 4, attempt: 2, error: "network" },
  stop(4, "transport_error", 16, { kind: "transport_error", error: "network" }),
];

// B62-16-schedules.json, user-leaves-during-request and user-leaves-while-waiting.
const leavesDuringRequest = [
  start(0, 1, 20),
  { event: "left", at_s: 1 },
  stop(1, "user_left", 19, { kind: "user_left", in_flight: true }),
];
const leavesWhileWaiting = [
  start(0, 1, 20),
  receipt(2, 1, 429, ra("8")),
  wait(2, 1, "server_seconds", 8, 10, 18),
  { event: "left", at_s: 5 },
  stop(5, "user_left", 15, { kind: "user_left", in_flight: false }),
];

// B62-16-schedules.json, late-wake: the timer due at 5 woke at 17.
const lateWakeCause = {
  kind: "late_wake", after_attempt: 1, source: "server_seconds", delay_s: 3, wait_s: 3, jitter_s: 0,
  until_s: 5, woke_s: 17, cap_end_s: 21, deadline_s: 20,
};
const lateWake = [
  start(0, 1, 20),
  receipt(2, 1, 429, ra("3")),
  wait(2, 1, "server_seconds", 3, 5, 18),
  timer(17, 5),
  stop(17, "budget_exhausted", 3, lateWakeCause),
];

// shared-limits.json, block-during-request: a block heard while the request is in flight.
const blockDuringRequest = [
  start(0, 1, 20),
  { event: "blocked", at_s: 1, until_s: 8 },
  receipt(2, 1, 429, ra("1")),
  wait(2, 1, "origin_block", 6, 8, 18),
  timer(8),
  start(8, 2, 12),
  receipt(10, 2, 200, missing),
  stop(10, "success", 10, success),
];

// shared-limits.json, block-during-wait-moves-start: a second wait event moves the start.
const blockMovesStart = [
  start(0, 1, 20),
  receipt(2, 1, 429, ra("3")),
  wait(2, 1, "server_seconds", 3, 5, 18),
  { event: "blocked", at_s: 3, until_s: 7 },
  wait(3, 1, "origin_block", 5, 7, 17),
  timer(7),
  start(7, 2, 13),
  receipt(9, 2, 200, missing),
  stop(9, "success", 11, success),
];

// shared-limits.json, origin-wait-stopped-by-a-later-block: no request is ever sent.
const originStoppedCause = { kind: "origin_blocked", at_s: 3, until_s: 18, cap_end_s: 22, deadline_s: 20 };
const originStopped = [
  { event: "blocked", at_s: 0, until_s: 4 },
  wait(0, 0, "origin_block", 4, 4, 20),
  { event: "blocked", at_s: 3, until_s: 18 },
  stop(3, "budget_exhausted", 17, originStoppedCause),
];

// B62-16-schedules.json, wait-exceeds-budget.
const refusedCause = {
  kind: "refused_wait", after_attempt: 1, source: "server_seconds", delay_s: 30, wait_s: 30, jitter_s: 0,
  until_s: 32, cap_end_s: 36, deadline_s: 20,
};
const waitExceedsBudget = [
  start(0, 1, 20),
  receipt(2, 1, 429, ra("30")),
  stop(2, "budget_exhausted", 18, refusedCause),
];

test("requests run from their start to their receipt, labelled with its status", () => {
  const s = spans(scheduleA, { cap_s: 4 });
  assert.deepEqual(s.requests, [[0, 2, 429], [5, 7, 429], [11, 14, 200]]);
});

test("waits run from the wait to the next start, and a timer event ends nothing", () => {
  assert.deepEqual(spans(scheduleA, { cap_s: 4 }).waits, [[2, 5], [7, 11]]);
});

test("a full cap is reserved at each start, cap_s long, whenever the request ends", () => {
  assert.deepEqual(spans(scheduleA, { cap_s: 4 }).caps, [[0, 4], [5, 9], [11, 15]]);
  assert.deepEqual(spans(scheduleA, { cap_s: 2.5 }).caps, [[0, 2.5], [5, 7.5], [11, 13.5]]);
  assert.deepEqual(spans(originStopped, { cap_s: 4 }).caps, [], "no start, no cap");
});

test("the stop is the stop event's time; a trace without one has none", () => {
  assert.equal(spans(scheduleA, { cap_s: 4 }).stop, 14);
  assert.equal(spans(originStopped, { cap_s: 4 }).stop, 3);
  assert.equal(spans(scheduleA.slice(0, -1), { cap_s: 4 }).stop, null);
  assert.equal(spans([], { cap_s: 4 }).stop, null);
});

test("a stop at time zero is a stop, not none", () => {
  // shared-limits.json, leave-at-press-while-blocked-sends-nothing.
  const s = spans([{ event: "left", at_s: 0 }, stop(0, "user_left", 20, { kind: "user_left", in_flight: false })], { cap_s: 4 });
  assert.deepEqual(s, { requests: [], waits: [], caps: [], blocks: [], stop: 0 });
});

test("a failed request ends at the failure, labelled with its error", () => {
  const s = spans(transportError, { cap_s: 4 });
  assert.deepEqual(s.requests, [[0, 2, 429], [3, 4, "network"]]);
  assert.deepEqual(s.waits, [[2, 3]]);
  assert.equal(s.stop, 4);
});

test("leaving ends the request in flight, labelled as left", () => {
  const s = spans(leavesDuringRequest, { cap_s: 4 });
  assert.deepEqual(s.requests, [[0, 1, "left"]]);
  assert.deepEqual(s.caps, [[0, 4]], "the cap reserved stays whole");
  assert.equal(s.stop, 1);
});

test("leaving ends the wait where the user left, not at its planned start", () => {
  const s = spans(leavesWhileWaiting, { cap_s: 4 });
  assert.deepEqual(s.waits, [[2, 5]]);
  assert.deepEqual(s.requests, [[0, 2, 429]]);
  assert.equal(s.stop, 5);
});

test("a wait the stop cut short ends at the stop, with no start after it", () => {
  const s = spans(lateWake, { cap_s: 4 });
  assert.deepEqual(s.waits, [[2, 17]]);
  assert.deepEqual(s.caps, [[0, 4]], "no cap for the start that never came");
  assert.equal(s.stop, 17);
});

test("a wait moved by a later wait event is one wait, from the first", () => {
  const s = spans(blockMovesStart, { cap_s: 4 });
  assert.deepEqual(s.waits, [[2, 7]]);
  assert.deepEqual(s.requests, [[0, 2, 429], [7, 9, 200]]);
  assert.deepEqual(s.blocks, [[3, 7]]);
});

test("blocks heard run from when they were heard to their end, during a request too", () => {
  const s = spans(blockDuringRequest, { cap_s: 4 });
  assert.deepEqual(s.blocks, [[1, 8]]);
  assert.deepEqual(s.requests, [[0, 2, 429], [8, 10, 200]], "a block does not end the request");
  assert.deepEqual(s.waits, [[2, 8]]);
});

test("a trace that never started: its blocks, its wait up to the stop, and no request", () => {
  assert.deepEqual(spans(originStopped, { cap_s: 4 }), {
    requests: [], waits: [[0, 3]], caps: [], blocks: [[0, 4], [3, 18]], stop: 3,
  });
});

test("the offset shifts every interval and the stop, and labels stay", () => {
  const shifted = (events, offset) => spans(events, { cap_s: 4, offset });
  assert.deepEqual(shifted(scheduleA, 3), {
    requests: [[3, 5, 429], [8, 10, 429], [14, 17, 200]],
    waits: [[5, 8], [10, 14]],
    caps: [[3, 7], [8, 12], [14, 18]],
    blocks: [],
    stop: 17,
  });
  assert.deepEqual(shifted(originStopped, 0.5), {
    requests: [], waits: [[0.5, 3.5]], caps: [], blocks: [[0.5, 4.5], [3.5, 18.5]], stop: 3.5,
  });
  assert.deepEqual(shifted(leavesDuringRequest, 2).requests, [[2, 3, "left"]]);
  assert.deepEqual(shifted(transportError, 1).requests, [[1, 3, 429], [4, 5, "network"]]);
  assert.deepEqual(spans(scheduleA, { cap_s: 4, offset: 0 }), spans(scheduleA, { cap_s: 4 }), "no offset is zero");
});

test("now closes the request still in flight, up to now on the drawing's clock", () => {
  // A live run so far: schedule-a up to its second start.
  const running = scheduleA.slice(0, 5);
  assert.deepEqual(spans(running, { cap_s: 4, now: 6 }).requests, [[0, 2, 429], [5, 6, "…"]]);
  // With an offset, `now` is already on the drawing's clock: it is where the bar ends.
  const s = spans(running, { cap_s: 4, now: 9, offset: 3 });
  assert.deepEqual(s.requests, [[3, 5, 429], [8, 9, "…"]]);
  assert.deepEqual(s.waits, [[5, 8]]);
  assert.deepEqual(s.caps, [[3, 7], [8, 12]]);
  assert.equal(s.stop, null);
});

test("now closes the wait still running, up to now", () => {
  const waiting = scheduleA.slice(0, 3);
  assert.deepEqual(spans(waiting, { cap_s: 4, now: 4 }).waits, [[2, 4]]);
  assert.deepEqual(spans(waiting, { cap_s: 4, now: 4 }).requests, [[0, 2, 429]], "nothing in flight to close");
  assert.deepEqual(spans(waiting, { cap_s: 4, now: 4.5, offset: 0.5 }).waits, [[2.5, 4.5]]);
});

test("a now of zero is a now: the first request, just sent, is drawn from 0 to 0", () => {
  // The page's clock starts at 0 with the run, and the model's first start is at 0.
  assert.deepEqual(spans(scheduleA.slice(0, 1), { cap_s: 4, now: 0 }).requests, [[0, 0, "…"]]);
});

test("without now, what is still running is not drawn, and a finished trace ignores now", () => {
  const running = scheduleA.slice(0, 5);
  const s = spans(running, { cap_s: 4 });
  assert.deepEqual(s.requests, [[0, 2, 429]]);
  assert.deepEqual(s.waits, [[2, 5]]);
  assert.deepEqual(s.caps, [[0, 4], [5, 9]], "its cap is reserved all the same");
  assert.deepEqual(spans(scheduleA.slice(0, 3), { cap_s: 4 }).waits, []);
  assert.deepEqual(spans(scheduleA, { cap_s: 4, now: 20 }), spans(scheduleA, { cap_s: 4 }));
  assert.deepEqual(spans(lateWake, { cap_s: 4, now: 30, offset: 1 }), spans(lateWake, { cap_s: 4, offset: 1 }));
});

// A report as the replay prints it (only the fields track reads; of the step table, its
// decisions, the last one given, or all of them in order).
const report = (events, cause, visible, decisions, elapsed_s) => ({
  outcome: cause?.kind ?? null, cause, elapsed_s, events, visible,
  steps: [decisions].flat().map((decision) => ({ decision })),
});

test("the stop words are the stop's time in seconds and the visible state's headline", () => {
  const t = track(report(scheduleA, success, [
    "Loaded: the list is ready.",
    "Last response: 200. Attempts: 3 of 3. Elapsed: 14 seconds.",
  ], "Finish with the received list", 14), 4);
  assert.equal(t.stopWords, "14 s: Loaded: the list is ready.");
  assert.equal(t.refused, null);
  assert.deepEqual(t.caps, [[0, 4], [5, 9], [11, 15]], "cap_s is the caps' length");
  assert.deepEqual(t.requests, spans(scheduleA, { cap_s: 4 }).requests);
});

test("the stop's time is written as the step table writes seconds", () => {
  // hostile-servers.json, 429-then-200: a stop at 1.1.
  const tenths = [
    start(0, 1, 3),
    receipt(0.05, 1, 429, ra("1")),
    wait(0.05, 1, "server_seconds", 1, 1.05, 2.95),
    timer(1.05),
    start(1.05, 2, 1.95),
    receipt(1.1, 2, 200, missing),
    stop(1.1, "success", 1.9, success),
  ];
  const headline = ["Loaded: the list is ready."];
  const t = track(report(tenths, success, headline, "", 1.1), 1);
  assert.equal(t.stopWords, "1.1 s: Loaded: the list is ready.");
  assert.deepEqual(t.caps, [[0, 1], [1.05, 2.05]], "cap_s is the caps' length");
  // A live run's clock is not whole: at most two decimals, no trailing zeros.
  const live = [start(0, 1, 3), receipt(2.3456, 1, 200, missing), stop(2.3456, "success", 0.6544, success)];
  assert.equal(track(report(live, success, headline, "", 2.3456), 1).stopWords, "2.35 s: Loaded: the list is ready.");
  const half = [start(0, 1, 3), receipt(1.5, 1, 200, missing), stop(1.5, "success", 1.5, success)];
  assert.equal(track(report(half, success, headline, "", 1.5), 2).stopWords, "1.5 s: Loaded: the list is ready.");
  const zero = [{ event: "left", at_s: 0 }, stop(0, "user_left", 20, { kind: "user_left", in_flight: false })];
  assert.equal(
    track(report(zero, zero[1].cause, ["Stopped: you left this screen."], "", 0), 4).stopWords,
    "0 s: Stopped: you left this screen.",
  );
});

test("a run still going has no stop words, and now draws what is running", () => {
  // The live run as the page holds it while running: its events, steps and visible lines so far.
  const live = { events: scheduleA.slice(0, 5), steps: [], visible: ["Waiting…"], cause: null };
  const t = track(live, 4, 6);
  assert.equal(t.stop, null);
  assert.equal(t.stopWords, null);
  assert.equal(t.refused, null);
  assert.deepEqual(t.requests, [[0, 2, 429], [5, 6, "…"]]);
  assert.deepEqual(t.caps, [[0, 4], [5, 9]]);
  // The stop event and its visible lines have come, but the report (and its cause) not yet:
  // no words until the report says why.
  const stopped = { events: scheduleA, steps: [], visible: ["Loaded: the list is ready."], cause: null };
  assert.equal(track(stopped, 4, 15).stop, 14);
  assert.equal(track(stopped, 4, 15).stopWords, null);
});

test("a refused wait is drawn from the stop, to the start it would have given and its cap's end", () => {
  const decision = "Stop at 2: asked 30 s; next start would be 32, past the 20 s budget; no shortened wait, no further attempt";
  const t = track(report(waitExceedsBudget, refusedCause, [
    "Stopped: retry budget cannot fit another request.",
    "Last response: 429. Attempts: 1 of 3. Elapsed: 2 seconds.",
    "The service requested a 30-second delay. No retry was sent.",
  ], decision, 2), 4);
  assert.equal(t.stopWords, "2 s: Stopped: retry budget cannot fit another request.");
  assert.deepEqual(t.refused, { from: 2, start: 32, capEnd: 36, words: decision });
});

test("a late wake is refused from when the timer woke, not when it was due, in the last step's words", () => {
  const decision = "Stop at 17: the timer was due at 5 and woke at 17; its cap would run to 21, past 20; no further attempt";
  const steps = ["Next start 5; full cap fits by 9", decision];
  const t = track(report(lateWake, lateWakeCause, ["Stopped: retry budget cannot fit another request."], steps, 17), 4);
  assert.deepEqual(t.refused, { from: 17, start: 17, capEnd: 21, words: decision });
  assert.equal(t.stopWords, "17 s: Stopped: retry budget cannot fit another request.");
});

test("a block that cannot fit is refused from when it was heard to its end and a cap past it", () => {
  const decision = "Stop at 3: blocked until 18; an attempt then would run to 22, past 20; no further request";
  const steps = ["Blocked until 4; next start 4; full cap fits by 8", "No request in flight; the next full cap fits by 8", decision];
  const t = track(report(originStopped, originStoppedCause, [
    "Stopped: the service asked every request to this site to wait 15 s, and this action's budget cannot fit that.",
  ], steps, 3), 4);
  assert.deepEqual(t.refused, { from: 3, start: 18, capEnd: 22, words: decision });
  assert.equal(
    t.stopWords,
    "3 s: Stopped: the service asked every request to this site to wait 15 s, and this action's budget cannot fit that.",
  );
});

test("a refusal without a step table (the app build) has empty words; other stops refuse nothing", () => {
  const bare = { ...report(waitExceedsBudget, refusedCause, ["Stopped: retry budget cannot fit another request."], "", 2), steps: [] };
  assert.deepEqual(track(bare, 4).refused, { from: 2, start: 32, capEnd: 36, words: "" });
  const causes = [
    [transportError, { kind: "transport_error", error: "network" }],
    [leavesWhileWaiting, { kind: "user_left", in_flight: false }],
    [scheduleA, success],
  ];
  for (const [events, cause] of causes) {
    assert.equal(track(report(events, cause, ["Stopped."], "Stop", 0), 4).refused, null, cause.kind);
  }
});

test("the axis covers the budget, stretched to a late stop, a request's end or a refused cap's end, at most twice the budget", () => {
  const policy = { budget_s: 20 };
  const done = track(report(scheduleA, success, ["Loaded: the list is ready."], "", 14), 4);
  assert.equal(spanOf([done], policy), 20, "a run inside the budget: the budget");
  assert.equal(spanOf([], policy), 20);
  const late = track(report(lateWake, lateWakeCause, ["Stopped: retry budget cannot fit another request."], "", 17), 4);
  assert.equal(spanOf([done, late], policy), 21, "the late wake's refused cap ends at 21");
  const refused = track(report(waitExceedsBudget, refusedCause, ["Stopped: retry budget cannot fit another request."], "", 2), 4);
  assert.equal(spanOf([refused], policy), 36, "the refused wait's cap ends at 36");
  assert.equal(spanOf([refused], { budget_s: 10 }), 20, "never past twice the budget");
  // A stop, or a request still drawn up to now, past the budget stretches it too.
  const stopLate = { stop: 23, refused: null, requests: [] };
  const runningLate = { stop: null, refused: null, requests: [[19, 24.5, "…"]] };
  assert.equal(spanOf([stopLate], policy), 23);
  assert.equal(spanOf([runningLate], policy), 24.5);
});

test("ticks are 1, 2, 5, 10, ... s apart, at least 36 px, and an axis too narrow for that still ends", () => {
  // 20 s over 584 px: 29.2 px a second, so 2 s (58.4 px) is the first step of 36 px or more.
  assert.equal(tickStep(20, 29.2), 2);
  assert.equal(tickStep(20, 36), 1);
  assert.equal(tickStep(20, 7), 10, "5 s is 35 px");
  assert.equal(tickStep(36, 3), 20);
  // The whole span 36 px or more: its two ends are the ticks.
  assert.equal(tickStep(20, 36 / 20), 20);
  // Narrower than 36 px for the whole span (the drawing under 52 px wide): a tick at 0 alone,
  // where the search for 36 px once never ended and froze the page.
  assert.equal(tickStep(20, 35 / 20), Infinity);
  assert.equal(tickStep(20, 0), Infinity);
  assert.equal(tickStep(20, -0.4), Infinity, "a drawing narrower than its padding");
  assert.equal(tickStep(23, 0.5), Infinity);
  assert.equal(tickStep(0, 10), Infinity, "an axis of no seconds");
});
