// The page's Last HTTP response panel: what it says of a receipt, and that how the Retry-After
// was used comes from the model's next event (its wait source or its stop cause), never from
// the page's own reading of the policy. Runs in Node: view.js touches the DOM only when asked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { article, fixed, lastReceipt, lastResponse, listItems, runId } from "../../www/view.js";

const receipt = (status, retry_after, extra = {}) => ({
  event: "receipt", at_s: 2, attempt: 1, status, retry_after, ...extra,
});
const missing = { raw: null, kind: "missing", delay_s: null };
const invalid = { raw: "soon", kind: "invalid", delay_s: null };

test("no receipt yet: every field says so", () => {
  assert.deepEqual(lastResponse(null), { status: "none yet", raw: "-", reading: "-", ratelimit: "-" });
  assert.deepEqual(lastReceipt([]), { receipt: null, next: undefined });
});

test("the last receipt is paired with the event the model recorded after it", () => {
  const events = [
    { event: "start", at_s: 0, attempt: 1, remaining_s: 20 },
    receipt(429, missing),
    { event: "wait", at_s: 2, source: "fallback_missing", delay_s: 2, wait_s: 2, until_s: 4, remaining_s: 18 },
    { event: "start", at_s: 4, attempt: 2, remaining_s: 16 },
    receipt(200, missing, { at_s: 6, attempt: 2 }),
  ];
  const { receipt: last, next } = lastReceipt(events);
  assert.equal(last.attempt, 2);
  assert.equal(next, undefined, "the model has not decided on it yet");
  assert.equal(lastReceipt(events.slice(0, 3)).next.source, "fallback_missing");
});

test("how the reading was used is the model's: wait source or stop cause", () => {
  const cases = [
    [undefined, ""],
    [{ event: "wait", source: "fallback_invalid" }, "; the local fallback applies"],
    [{ event: "wait", source: "fallback_missing" }, "; the local fallback applies"],
    [{ event: "wait", source: "ratelimit" }, "; the RateLimit field's reading applies"],
    [{ event: "wait", source: "server_seconds" }, ""],
    [{ event: "stop", cause: { kind: "refused_wait", source: "fallback_invalid" } }, "; the local fallback and a full attempt after it would not fit in the budget, so no retry"],
    [{ event: "stop", cause: { kind: "refused_wait", source: "server_seconds" } }, "; its delay and a full attempt after it would not fit in the budget, so no retry"],
    [{ event: "stop", cause: { kind: "refused_wait", source: "ratelimit" } }, "; the RateLimit field's reading and a full attempt after it would not fit in the budget, so no retry"],
    [{ event: "stop", cause: { kind: "success" } }, " (not needed: the request succeeded)"],
    [{ event: "stop", cause: { kind: "not_retryable", status: 418 } }, " (not used: 418 is not retried)"],
    [{ event: "stop", cause: { kind: "attempts_exhausted", max_attempts: 3 } }, " (this action has no attempt left)"],
  ];
  for (const [next, tail] of cases) {
    assert.equal(lastResponse(receipt(429, invalid), next).reading, `invalid${tail}`, JSON.stringify(next));
  }
});

test("every field of the panel, for a delay-seconds header of zero on a status not retried", () => {
  const next = { event: "stop", cause: { kind: "not_retryable", status: 503 } };
  assert.deepEqual(lastResponse(receipt(503, { raw: "0", kind: "seconds", delay_s: 0 }), next), {
    status: "503",
    raw: '"0"',
    reading: "delay-seconds, a 0-second delay (not used: 503 is not retried)",
    ratelimit: "(not read, or absent)",
  });
});

test("an empty Retry-After is shown as sent, not as absent", () => {
  const { raw, reading } = lastResponse(receipt(429, { raw: "", kind: "invalid", delay_s: null }));
  assert.equal(raw, '""');
  assert.equal(reading, "invalid");
});

test("a run whose only event is a receipt has that receipt as its last", () => {
  const only = receipt(200, missing);
  assert.deepEqual(lastReceipt([only]), { receipt: only, next: undefined });
  assert.equal(lastResponse(lastReceipt([only]).receipt).status, "200");
});

test("a missing Retry-After may have been hidden by CORS, and the panel says so", () => {
  const { reading, raw } = lastResponse(receipt(429, missing));
  assert.equal(raw, "(absent)");
  assert.match(reading, /^unavailable: .*hidden from this page/);
});

test("delays are exact whole seconds up to 2^53, then a magnitude", () => {
  const date = (delay_s) => receipt(429, { raw: "x", kind: "date", delay_s });
  assert.equal(lastResponse(date(5554051200)).reading, "an HTTP-date, a 5554051200-second delay");
  assert.equal(lastResponse(date(2 ** 53 - 1)).reading, `an HTTP-date, a ${2 ** 53 - 1}-second delay`);
  assert.equal(lastResponse(date(1e20)).reading, "an HTTP-date, a 1.00e+20-second delay");
  assert.equal(lastResponse(date(1.5)).reading, "an HTTP-date, a 1.5-second delay");
  // At most two decimals, without trailing zeros or a bare point.
  assert.equal(lastResponse(date(1.25)).reading, "an HTTP-date, a 1.25-second delay");
  assert.equal(lastResponse(date(2.001)).reading, "an HTTP-date, a 2-second delay");
});

test("a delay takes the article it is read aloud with", () => {
  const date = (delay_s) => receipt(429, { raw: "x", kind: "date", delay_s });
  assert.equal(lastResponse(date(8)).reading, "an HTTP-date, an 8-second delay");
  assert.equal(lastResponse(date(18)).reading, "an HTTP-date, an 18-second delay");
  assert.equal(lastResponse(date(11000)).reading, "an HTTP-date, an 11000-second delay");
  assert.equal(lastResponse(date(8e20)).reading, "an HTTP-date, an 8.00e+20-second delay");
  assert.equal(lastResponse(date(110)).reading, "an HTTP-date, a 110-second delay");
  for (const f of ["8", "8.5", "80", "800", "8000", "11", "18", "11000", "18000000"]) assert.equal(article(f), "an", f);
  for (const f of ["0", "0.5", "1", "3", "110", "180", "1100", "1800", "111", "", "2.8", "1.84e+19"]) assert.equal(article(f), "a", f);
});

test("the RateLimit field's reset is written as the step table writes seconds, zero included", () => {
  const reset = (reset_s) => lastResponse(receipt(429, invalid, {
    ratelimit: { raw: `r=0;t=${reset_s}`, kind: "exhausted", reset_s },
  })).ratelimit;
  assert.equal(reset(0), '"r=0;t=0", read as exhausted: the quota is restored in 0 s');
  assert.equal(reset(999999), '"r=0;t=999999", read as exhausted: the quota is restored in 999999 s');
  assert.equal(reset(1e6), '"r=0;t=1000000", read as exhausted: the quota is restored in 1.00e+6 s');
});

test("raw values are quoted as sent, and a RateLimit field shows raw and read", () => {
  const shown = lastResponse(receipt(429, { raw: "3, 4", kind: "invalid", delay_s: null }, {
    ratelimit: { raw: '"default";r=0;t=3', kind: "exhausted", reset_s: 3 },
  }));
  assert.equal(shown.raw, '"3, 4"');
  // Quoted as JSON, like the Retry-After: the field's own quotes are escaped.
  assert.equal(shown.ratelimit, '"\\"default\\";r=0;t=3", read as exhausted: the quota is restored in 3 s');
  assert.equal(lastResponse(receipt(200, missing)).ratelimit, "(not read, or absent)");
});

test("run ids are version-4 UUIDs, also where crypto.randomUUID is missing (plain http)", () => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  assert.match(runId(), uuid);
  const own = Object.getOwnPropertyDescriptor(crypto, "randomUUID");
  Object.defineProperty(crypto, "randomUUID", { value: undefined, configurable: true });
  try {
    const ids = new Set(Array.from({ length: 100 }, runId));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, uuid);
  } finally {
    if (own) Object.defineProperty(crypto, "randomUUID", own);
    else delete crypto.randomUUID;
  }
  assert.equal(typeof crypto.randomUUID, "function");
});

test("a loaded body shows as its items: an array's, or any other body as one, objects as JSON", () => {
  assert.deepEqual(listItems(["kelp", 3]), ["kelp", "3"]);
  assert.deepEqual(listItems([{ id: 1 }, null]), ['{"id":1}', "null"]);
  assert.deepEqual(listItems({ palettes: ["kelp"] }), ['{"palettes":["kelp"]}']);
  assert.deepEqual(listItems("plain text"), ["plain text"]);
  assert.deepEqual(listItems(null), []);
  assert.deepEqual(listItems(undefined), []);
});

test("a fleet figure is written rounded half up from its decimal value, as the command writes it", () => {
  // The command's table (fleet::report::fixed) and these agree; toFixed rounds the double's
  // binary value, which put 2.63 in the command's table and 2.62 in the page's, or the reverse.
  const cases = [
    [2.625, 2, "2.63"], [1.005, 2, "1.01"], [2.675, 2, "2.68"], [0.125, 2, "0.13"],
    [1.6666667, 2, "1.67"], [12.345, 1, "12.3"], [12.35, 1, "12.4"], [60, 1, "60.0"],
    [0, 2, "0.00"], [1.994999999, 2, "1.99"], [1.995, 2, "2.00"], [0.857143 * 100, 1, "85.7"],
    [4e6, 2, "4000000.00"],
    // Outside the figures' range, as toFixed writes it.
    [9.3e9, 2, "9300000000.00"], [-1.5, 1, "-1.5"], [NaN, 2, "NaN"],
  ];
  for (const [value, places, text] of cases) assert.equal(fixed(value, places), text, `${value} to ${places}`);
});
