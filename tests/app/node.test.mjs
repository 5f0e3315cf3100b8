// The app build (crate/pkg/, what a JS app ships) run in Node against an injected fetch: the
// browser suite and the page load the full build, so this is where the shipped module itself
// is exercised (bundle.test.mjs does the same through a bundler). scripts/test runs it once the
// packages are built:
//   node --test tests/app/node.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

import {
  initSync,
  fetchWithBudget,
  rateLimits,
  runningActions,
  ownedScreens,
  isAbortError,
  defaultPolicy,
} from "../../crate/pkg/retry_budget.js";

const url = new URL("../../crate/pkg/retry_budget_bg.wasm", import.meta.url);
initSync({ module: await readFile(url) });

const API = "https://api.example/palettes?collection=coast";

// A garbage collection on demand, for the test that an ended action holds nothing.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

/** A fetch that answers from `script` in order, and records each call's signal. */
function scripted(script) {
  const calls = [];
  const fetch = (input, init) => {
    calls.push({ input, init });
    const next = script[calls.length - 1];
    if (next === "hang") {
      return new Promise((_, reject) =>
        init.signal.addEventListener("abort", () => reject(init.signal.reason)),
      );
    }
    const { status, headers = {}, body = "" } = next;
    return Promise.resolve(new Response(body, { status, headers }));
  };
  return { fetch, calls };
}

const kinds = (report) => report.events.map((e) => e.event);

test("a 429 with Retry-After: 1, then 200: one wait, two requests, the body", async () => {
  const { fetch, calls } = scripted([
    { status: 429, headers: { "Retry-After": "1" } },
    { status: 200, body: '["sea glass","driftwood"]' },
  ]);
  const updates = [];
  const report = await fetchWithBudget(API, {
    fetch,
    onUpdate: (u) => updates.push(u),
    share: "none",
  });
  assert.equal(report.outcome, "success");
  assert.equal(report.attempts, 2);
  assert.equal(calls.length, 2);
  assert.equal(calls[0].init.method, "GET");
  assert.deepEqual(report.body, ["sea glass", "driftwood"]);
  assert.deepEqual(kinds(report), [
    "start", "receipt", "wait", "timer", "start", "receipt", "stop",
  ]);
  const wait = report.events[2];
  assert.equal(wait.source, "server_seconds");
  assert.equal(wait.wait_s, 1);
  assert.ok(report.attempt_starts_s[1] >= 1, "the second start is not before the server's delay");
  assert.equal(report.last_response.status, 200);
  assert.ok(updates.length >= 3 && updates.every((u) => Array.isArray(u.visible)));
  assert.equal(updates.at(-1).outcome, "success");
  assert.equal(runningActions(), 0);
  assert.equal(ownedScreens(), 0);
});

test("a server delay that cannot fit stops at once: one request, no wait", async () => {
  const { fetch, calls } = scripted([{ status: 429, headers: { "Retry-After": "30" } }]);
  const report = await fetchWithBudget(API, { fetch, share: "none" });
  assert.equal(report.outcome, "budget_exhausted");
  assert.equal(calls.length, 1);
  assert.ok(!kinds(report).includes("wait"));
  assert.equal(report.last_response.retry_after.delay_s, 30);
  assert.ok(report.visible.length > 0);
});

test("only 429 is retried", async () => {
  const { fetch, calls } = scripted([{ status: 503, headers: { "Retry-After": "1" } }]);
  const report = await fetchWithBudget(API, { fetch, share: "none" });
  assert.equal(report.outcome, "not_retryable");
  assert.equal(calls.length, 1);
});

test("the per-attempt cap is enforced by abort", async () => {
  const { fetch, calls } = scripted(["hang"]);
  const policy = { attempt_cap_s: 0.2, max_attempts: 1, budget_s: 1 };
  const report = await fetchWithBudget(API, { fetch, policy, share: "none" });
  assert.equal(calls.length, 1);
  assert.equal(calls[0].init.signal.aborted, true);
  assert.equal(report.outcome, "transport_error");
  assert.equal(report.events.find((e) => e.event === "failure").error, "timed_out");
  assert.ok(report.elapsed_s >= 0.2, `stopped at ${report.elapsed_s} s, before the cap`);
});

test("a slow view neither shortens nor stretches the cap: sent before onUpdate, aborted before the stop's", async () => {
  const { fetch, calls } = scripted(["hang"]);
  let sentAt = null;
  let abortedAt = null;
  let markedAt = null;
  let signal = null;
  const timed = (input, init) => {
    sentAt = performance.now();
    signal = init.signal;
    signal.addEventListener("abort", () => (abortedAt = performance.now()));
    return fetch(input, init);
  };
  const told = [];
  // A view that takes longer to draw the send than the whole cap, inside the same task. When it
  // returns it arms a timer due in half a cap: a cap counted from the send is over by then, so
  // the driver's timer (armed after the view returns, due at once) fires first; a cap restarted
  // after the view would fire after it.
  const onUpdate = (update) => {
    told.push({ sent: sentAt !== null, aborted: signal !== null && signal.aborted, update });
    if (told.length === 1) {
      const until = performance.now() + 400;
      while (performance.now() < until);
      setTimeout(() => (markedAt = performance.now()), 150);
    }
  };
  const policy = { attempt_cap_s: 0.3, max_attempts: 1, budget_s: 1 };
  const report = await fetchWithBudget(API, { fetch: timed, policy, onUpdate, share: "none" });
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(calls.length, 1);
  assert.equal(report.events.find((e) => e.event === "failure").error, "timed_out");
  assert.ok(told[0].sent, "the request was sent before the view heard of it");
  assert.equal(told.at(-1).update.outcome, "transport_error");
  assert.ok(told.at(-1).aborted, "the request was aborted before the view heard of the stop");
  const held = abortedAt - sentAt;
  assert.ok(held >= 295, `not shortened: the request was aborted ${held} ms after it was sent`);
  assert.ok(markedAt !== null && abortedAt < markedAt, "not stretched: the cap ended first");
});

test("a fetch that never settles, even when aborted, keeps nothing alive past the cap", async () => {
  const collected = new Set();
  const registry = new FinalizationRegistry((name) => collected.add(name));
  // Made in a function of its own, so that nothing here holds the functions once it returns.
  const start = () => {
    const fetch = () => new Promise(() => {});
    const onUpdate = () => {};
    registry.register(fetch, "fetch");
    registry.register(onUpdate, "onUpdate");
    const policy = { attempt_cap_s: 0.2, max_attempts: 1, budget_s: 1 };
    return fetchWithBudget(API, { fetch, onUpdate, policy, share: "none" });
  };
  const report = await start();
  assert.equal(report.outcome, "transport_error");
  assert.equal(report.events.find((e) => e.event === "failure").error, "timed_out");
  assert.equal(runningActions(), 0);
  // The action's own functions are freed once it ends: nothing it held waits for the promise.
  for (let i = 0; i < 50 && collected.size < 2; i += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual([...collected].sort(), ["fetch", "onUpdate"]);
});

test("leaving during a wait rejects with an AbortError, sends nothing more", async () => {
  const { fetch, calls } = scripted([{ status: 429, headers: { "Retry-After": "2" } }]);
  const leave = new AbortController();
  const action = fetchWithBudget(API, { fetch, signal: leave.signal, share: "none" });
  setTimeout(() => leave.abort(), 300);
  const error = await action.then(
    () => assert.fail("resolved after the user left"),
    (e) => e,
  );
  assert.equal(error.name, "AbortError");
  assert.equal(error.report.outcome, "user_left");
  await new Promise((r) => setTimeout(r, 2200));
  assert.equal(calls.length, 1, "no detached retry after the user left");
  assert.equal(runningActions(), 0);
});

test("a block one action learns holds back another on the origin", async () => {
  const first = scripted([{ status: 429, headers: { "Retry-After": "2" } }]);
  const policy = { max_attempts: 1 };
  await fetchWithBudget(API, { fetch: first.fetch, policy });
  const limits = rateLimits();
  assert.equal(limits.length, 1);
  assert.equal(limits[0].scope, "https://api.example");
  assert.ok(limits[0].until_s > 1 && limits[0].until_s <= 2);
  const second = scripted([{ status: 200, body: "[]" }]);
  const report = await fetchWithBudget(API, { fetch: second.fetch });
  assert.equal(report.outcome, "success");
  assert.ok(report.attempt_starts_s[0] >= 1, "the first start waits out the block");
});

test("bad options reject with an error that names them, before anything is sent", async () => {
  const { fetch, calls } = scripted([]);
  const refused = async (url, options, type, message) => {
    let promise;
    assert.doesNotThrow(() => (promise = fetchWithBudget(url, options)), "it never throws");
    await assert.rejects(promise, (e) => e instanceof type && message.test(e.message));
  };
  await refused(API, { fetch, method: "POST" }, TypeError, /reads only/);
  await refused(API, { fetch, policy: { budget_s: -1 } }, RangeError, /options\.policy\.budget_s: -1 is negative/);
  // The cause may be the default cap: both figures are named.
  await refused(API, { fetch, policy: { budget_s: 3 } }, RangeError, /^fetchWithBudget: options\.policy\.attempt_cap_s: the per-attempt cap \(4 s\) must not exceed the budget \(3 s\)$/);
  await refused(API, { fetch, policy: { budget_s: 0.5, attempt_cap_s: 0.75 } }, RangeError, /the per-attempt cap \(0\.75 s\) must not exceed the budget \(0\.5 s\)$/);
  await refused(API, { fetch, policy: { budget_s: "20" } }, TypeError, /options\.policy\.budget_s must be a number, not "20"/);
  await refused(API, { fetch, share: "all" }, TypeError, /^fetchWithBudget: options\.share must be "page", "tabs" or "none", not "all"$/);
  await refused(API, { fetch, screen: "" }, TypeError, /options\.screen must be a non-empty string, not ""$/);
  await refused(API, { fetch, share: null, scope: 7 }, TypeError, /options\.scope must be a non-empty string, not number$/);
  await refused(API, { fetch, onUpdate: 3 }, TypeError, /options\.onUpdate/);
  await refused(API, { fetch, polcy: {} }, TypeError, /unknown option "polcy"; the options are policy, signal/);
  await refused(API, { fetch, policy: { budget: 5 } }, TypeError, /unknown policy field "budget"/);
  await refused(42, { fetch }, TypeError, /URL string or URL object/);
  // Hostile values: a Proxy whose keys throw, an array whose item's getter throws.
  const throwing = { ownKeys() { throw new Error("no keys"); } };
  await refused(API, new Proxy({}, throwing), TypeError, /^fetchWithBudget: the options cannot be listed/);
  await refused(API, { fetch, policy: new Proxy({}, throwing) }, TypeError, /the policy fields cannot be listed/);
  const statuses = Object.defineProperty([], 0, { get() { throw new Error("no item"); }, enumerable: true });
  await refused(API, { fetch, policy: { retry_statuses: statuses } }, TypeError, /options\.policy\.retry_statuses\[0\] threw when read/);
  assert.equal(calls.length, 0);
  assert.equal(runningActions(), 0);
});

test("a URL object is read by its href: its toString is never called", async () => {
  const { fetch, calls } = scripted([{ status: 200, body: "[]" }, { status: 200, body: "[]" }]);
  const real = await fetchWithBudget(new URL(API), { fetch, share: "none" });
  assert.equal(real.outcome, "success");
  const odd = { href: API, toString: () => assert.fail("toString was called") };
  const report = await fetchWithBudget(odd, { fetch, share: "none" });
  assert.equal(report.outcome, "success");
  assert.deepEqual(calls.map((c) => String(c.input)), [API, API]);
});

test("a relative URL with no page to read it against is refused, unless the caller's fetch reads it", async () => {
  // Node has no page address: the global fetch would reject a relative URL, which read as a
  // network failure the user was told of. It is refused at the call instead, with nothing sent.
  await assert.rejects(
    fetchWithBudget("/palettes?collection=coast", { share: "none" }),
    (e) => e instanceof TypeError &&
      e.message === 'fetchWithBudget: "/palettes?collection=coast" is not a URL fetch can read here (without a page address, as in Node, a URL must be absolute)',
  );
  assert.equal(runningActions(), 0);
  // A fetch of the caller's own may prefix a base: the URL is handed to it as given.
  const { fetch, calls } = scripted([{ status: 200, body: "[]" }]);
  const report = await fetchWithBudget("/palettes?collection=coast", { fetch, share: "none" });
  assert.equal(report.outcome, "success");
  assert.deepEqual(calls.map((c) => c.input), ["/palettes?collection=coast"]);
  // A URL that is not relative but cannot be read is called what it is.
  await assert.rejects(
    fetchWithBudget("http://[bad/palettes", { share: "none" }),
    (e) => e instanceof TypeError &&
      e.message === 'fetchWithBudget: "http://[bad/palettes" is not a valid URL',
  );
});

test("a URL with no origin to read is a scope of its own; a named scope shares", async () => {
  // A relative URL read by the caller's fetch may go to any service, and one with an opaque
  // origin ("null") to none: a wait the service asks of one holds back no other.
  const first = scripted([{ status: 429, headers: { "Retry-After": "30" } }]);
  await fetchWithBudget("/search?q=sea", { fetch: first.fetch, policy: { max_attempts: 1 } });
  assert.deepEqual(rateLimits().map((l) => l.scope), ["/search?q=sea"]);
  const other = scripted([{ status: 200, body: "[]" }]);
  assert.equal((await fetchWithBudget("/palettes?collection=coast", { fetch: other.fetch })).outcome, "success");
  const opaque = scripted([{ status: 429, headers: { "Retry-After": "30" } }]);
  await fetchWithBudget("data:,a", { fetch: opaque.fetch, policy: { max_attempts: 1 } });
  assert.ok(rateLimits().some((l) => l.scope === "data:,a"), JSON.stringify(rateLimits()));
  const data = scripted([{ status: 200, body: "[]" }]);
  assert.equal((await fetchWithBudget("data:,b", { fetch: data.fetch })).outcome, "success");
  // Named, they share: the second is held back by the first's 30 s, and sends nothing.
  const named = scripted([{ status: 429, headers: { "Retry-After": "30" } }]);
  await fetchWithBudget("/a", { fetch: named.fetch, scope: "api", policy: { max_attempts: 1 } });
  const held = scripted([{ status: 200, body: "[]" }]);
  const report = await fetchWithBudget("/b", { fetch: held.fetch, scope: "api" });
  assert.equal(report.outcome, "budget_exhausted");
  assert.equal(report.cause.kind, "origin_blocked");
  assert.equal(held.calls.length, 0, "nothing is sent into the service's wait");
});

test("what onUpdate throws is reported, and the action goes on", async (t) => {
  // Node has no reportError: the error goes to the console, where it was dropped before.
  const logged = t.mock.method(console, "error", () => {});
  const { fetch } = scripted([
    { status: 429, headers: { "Retry-After": "1" } },
    { status: 200, body: "[]" },
  ]);
  const broken = new Error("the view is broken");
  const report = await fetchWithBudget(API, { fetch, share: "none", onUpdate() { throw broken; } });
  assert.equal(report.outcome, "success");
  assert.equal(report.attempts, 2);
  assert.ok(logged.mock.callCount() >= 3, `reported ${logged.mock.callCount()} times`);
  assert.ok(logged.mock.calls.every((c) => c.arguments[0] === broken));
});

test("an action whose signal was aborted before it began rejects with a report: nothing was sent", async () => {
  const { fetch, calls } = scripted([{ status: 200, body: "[]" }]);
  const leave = new AbortController();
  leave.abort();
  const error = await fetchWithBudget(API, { fetch, signal: leave.signal, share: "none" }).then(
    () => assert.fail("resolved although the screen had let go"),
    (e) => e,
  );
  assert.ok(isAbortError(error));
  assert.equal(error.report.outcome, "user_left");
  assert.equal(error.report.attempts, 0);
  assert.deepEqual(error.report.visible.at(-1), "No request was sent.");
  assert.equal(calls.length, 0);
  assert.equal(isAbortError(new DOMException("x", "AbortError")), false, "not one of ours: no report");
});

test("defaultPolicy() is the policy an action runs under when it is given none", async () => {
  const { fetch } = scripted([{ status: 200, body: "[]" }]);
  const report = await fetchWithBudget(API, { fetch, share: "none" });
  assert.deepEqual(report.policy, defaultPolicy());
  assert.equal(defaultPolicy().budget_s, 20);
});
