// Memory, timers and listeners after many actions in one page.
//
// The timer and listener functions are wrapped here, before the module is imported, so every
// timer and listener the module sets or removes is counted: a timer is live from setTimeout
// until it fires or is cleared, a listener from addEventListener until removeEventListener (or
// until it fires, for a `once` listener). The bench's own timers use the unwrapped functions.
//
// ?actions=N&batch=B : N actions, B at a time, each with an injected fetch that answers at once
// with real Response objects (429 with `Retry-After: 0`, then 200), under a scaled-down policy.
// Of every ten actions, seven complete, one is superseded by the next one on the same screen,
// that next one completes, and one is left through its AbortSignal just after its first answer.

import { report } from "./report.js";

const native = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  add: EventTarget.prototype.addEventListener,
  remove: EventTarget.prototype.removeEventListener,
};
const live = { timeouts: new Set(), intervals: new Set(), listeners: 0, byType: new Map() };
const calls = { setTimeout: 0, clearTimeout: 0, setInterval: 0, clearInterval: 0, addEventListener: 0, removeEventListener: 0 };

globalThis.setTimeout = function setTimeout(handler, delay, ...args) {
  calls.setTimeout += 1;
  let id;
  const fire = typeof handler === "function"
    ? function (...a) {
      live.timeouts.delete(id);
      return handler.apply(this, a);
    }
    : handler;
  id = native.setTimeout.call(globalThis, fire, delay, ...args);
  live.timeouts.add(id);
  return id;
};
globalThis.setInterval = function setInterval(handler, delay, ...args) {
  calls.setInterval += 1;
  const id = native.setInterval.call(globalThis, handler, delay, ...args);
  live.intervals.add(id);
  return id;
};
// The two clear functions are interchangeable in browsers.
globalThis.clearTimeout = function clearTimeout(id) {
  calls.clearTimeout += 1;
  live.timeouts.delete(id);
  live.intervals.delete(id);
  return native.clearTimeout.call(globalThis, id);
};
globalThis.clearInterval = function clearInterval(id) {
  calls.clearInterval += 1;
  live.timeouts.delete(id);
  live.intervals.delete(id);
  return native.clearInterval.call(globalThis, id);
};

/** Listeners per target; weak, so the counting holds no target alive. */
const registry = new WeakMap();
const captureOf = (options) => (typeof options === "boolean" ? options : !!options?.capture);

function count(type, delta) {
  live.listeners += delta;
  live.byType.set(type, (live.byType.get(type) ?? 0) + delta);
}

function forget(target, entry) {
  const list = registry.get(target);
  const i = list ? list.indexOf(entry) : -1;
  if (i >= 0) {
    list.splice(i, 1);
    count(entry.type, -1);
  }
}

EventTarget.prototype.addEventListener = function addEventListener(type, listener, options) {
  calls.addEventListener += 1;
  if (listener != null) {
    const capture = captureOf(options);
    let list = registry.get(this);
    if (!list) registry.set(this, (list = []));
    // A second registration of the same (type, listener, capture) is a no-op in the DOM too.
    if (!list.some((e) => e.type === type && e.listener === listener && e.capture === capture)) {
      const entry = { type, listener, capture };
      list.push(entry);
      count(type, 1);
      if (typeof options === "object" && options?.once) {
        native.add.call(this, type, () => forget(this, entry), { once: true, capture });
      }
    }
  }
  return native.add.call(this, type, listener, options);
};

EventTarget.prototype.removeEventListener = function removeEventListener(type, listener, options) {
  calls.removeEventListener += 1;
  const capture = captureOf(options);
  const entry = registry.get(this)?.find((e) => e.type === type && e.listener === listener && e.capture === capture);
  if (entry) forget(this, entry);
  return native.remove.call(this, type, listener, options);
};

const idle = (ms) => new Promise((resolve) => native.setTimeout.call(globalThis, resolve, ms));

async function measure() {
  const params = new URLSearchParams(location.search);
  const total = Number(params.get("actions") ?? 1000);
  const batch = Number(params.get("batch") ?? 20);
  // Imported only now, so that the wrappers above are in place for everything it does.
  const { default: init, fetchWithBudget, runningActions, ownedScreens } = await import("/pkg/retry_budget.js");
  const exports = await init();

  const snapshot = () => {
    globalThis.gc?.(); // exposed in Chromium by --js-flags=--expose-gc; absent elsewhere
    return {
      wasm_memory_bytes: exports.memory.buffer.byteLength,
      js_heap_used_bytes: performance.memory?.usedJSHeapSize ?? null,
      live_timeouts: live.timeouts.size,
      live_intervals: live.intervals.size,
      live_listeners: live.listeners,
      listeners_by_type: Object.fromEntries([...live.byType].filter(([, n]) => n !== 0)),
      running_actions: runningActions(),
      owned_screens: ownedScreens(),
    };
  };
  const peak = { live_timeouts: 0, live_listeners: 0, running_actions: 0, owned_screens: 0 };
  const sample = () => {
    peak.live_timeouts = Math.max(peak.live_timeouts, live.timeouts.size);
    peak.live_listeners = Math.max(peak.live_listeners, live.listeners);
    peak.running_actions = Math.max(peak.running_actions, runningActions());
    peak.owned_screens = Math.max(peak.owned_screens, ownedScreens());
  };

  const policy = { budget_s: 2, max_attempts: 3, attempt_cap_s: 1, min_wait_s: 0.001, fallback_base_s: 0.001 };
  const tally = {};
  const kindOf = (i) => ["completes", "completes", "completes", "completes", "completes", "completes", "completes", "superseded", "supersedes", "left"][i % 10];

  async function one(i) {
    const kind = kindOf(i);
    const controller = new AbortController();
    let answered = 0;
    const fetch = () => {
      answered += 1;
      sample();
      if (kind === "left" && answered === 1) native.setTimeout.call(globalThis, () => controller.abort(), 0);
      return Promise.resolve(answered === 1
        ? new Response("", { status: 429, headers: { "Retry-After": "0" } })
        : new Response('["sea glass"]', { status: 200, headers: { "Content-Type": "application/json" } }));
    };
    let outcome;
    try {
      outcome = (await fetchWithBudget("/palettes?collection=coast", {
        policy,
        share: "none",
        fetch,
        signal: controller.signal,
        screen: `screen-${kind === "supersedes" ? i - 1 : i}`,
      })).outcome;
    } catch (e) {
      outcome = e?.name === "AbortError" ? (e.report?.outcome ?? "aborted") : `error: ${e?.message ?? e}`;
    }
    const key = `${kind}: ${outcome}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }

  await idle(50);
  const before = snapshot();
  const t0 = performance.now();
  let half = null;
  for (let start = 0; start < total; start += batch) {
    const jobs = [];
    for (let i = start; i < Math.min(start + batch, total); i += 1) jobs.push(one(i));
    await Promise.all(jobs);
    // Halfway: wasm memory that grows on from here is held by ended actions, not by the peak.
    if (half === null && start + batch >= total / 2) half = snapshot();
  }
  const ms = performance.now() - t0;
  const after = snapshot();
  await idle(250);
  const afterIdle = snapshot();
  return { actions: total, batch, policy, run_ms: ms, outcomes: tally, before, half, after, after_idle: afterIdle, peak, calls };
}

await report(measure);
