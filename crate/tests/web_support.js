// Test support for tests/web.rs: a scripted fetch that answers with real `Response` objects after
// real delays and records what the driver did with each request, an onUpdate log, and a one-shot
// patch of the global setTimeout that makes one wait's timer fire late or early.
//
// The helpers keep their own reference to the real setTimeout, so patching the global one for the
// driver never changes the scripted delays.

const originalSetTimeout = globalThis.setTimeout;
const originalClearTimeout = globalThis.clearTimeout;
const realSetTimeout = (handler, ms) => originalSetTimeout.call(globalThis, handler, ms);
const realClearTimeout = (id) => originalClearTimeout.call(globalThis, id);

/** Now on the clock documents of one browser share, as the module keeps blocks on it. */
export function sharedNowMs() {
  return performance.timeOrigin + performance.now();
}

export function nowMs() {
  return performance.now();
}

export function wallMs() {
  return Date.now();
}

/** Resolves after `ms` real milliseconds, whatever the global setTimeout is at the time. */
export function sleep(ms) {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}

/** Named gates that scripted responses can wait on, each opened once by `openGate`. */
const gates = new Map();

function gate(name) {
  if (!gates.has(name)) {
    let open;
    const opened = new Promise((resolve) => { open = resolve; });
    gates.set(name, { opened, open });
  }
  return gates.get(name);
}

/** Opens gate `name`: every response waiting on it arrives, all in the same task. */
export function openGate(name) {
  gate(name).open();
}

function abortError() {
  return new DOMException("The operation was aborted.", "AbortError");
}

/**
 * The headers of a scripted response, built at response time. A string value is sent as is; an
 * object `{ date_offset_s: n }` is an IMF-fixdate n seconds after the current whole second of the
 * local clock, so `Date: {date_offset_s: 0}` with `Retry-After: {date_offset_s: 4}` asks for
 * exactly four seconds by the response's own clock.
 */
function headersFor(entry) {
  const headers = new Headers();
  const second = Math.floor(Date.now() / 1000) * 1000;
  for (const [name, value] of Object.entries(entry.headers || {})) {
    if (typeof value === "string") {
      headers.set(name, value);
    } else if (value && typeof value.date_offset_s === "number") {
      headers.set(name, new Date(second + value.date_offset_s * 1000).toUTCString());
    } else {
      throw new Error(`web_support: unreadable header spec for ${name}`);
    }
  }
  return headers;
}

/**
 * A fetch that follows `scriptJson` (a JSON array, one entry per call, in order):
 * - `{duration_s, status, headers?, body?}`: a real Response after `duration_s`;
 * - `{duration_s, transport_error}`: rejects with a TypeError after `duration_s`, as fetch does;
 * - `{duration_s, status, hang: "body"}`: the Response arrives, its body never finishes;
 * - `{hang: "headers"}`: nothing ever arrives;
 * - `{gate: "name", status, headers?, body?}`: the Response arrives when `openGate("name")` is
 *   called, together with every other response waiting on that gate.
 * Like the real fetch, an abort of `init.signal` rejects the pending promise (or errors the body
 * stream) with an AbortError DOMException, unless the entry says `ignore_abort: true`, in which
 * case the result still arrives late. Every call is recorded, with when its signal fired.
 */
export class ScriptedFetch {
  constructor(scriptJson) {
    this.script = JSON.parse(scriptJson);
    this.calls = [];
    this.waiters = [];
    this.fetch = (input, init) => this.call(input, init);
  }

  call(input, init) {
    const index = this.calls.length;
    const entry = this.script[index];
    const signal = init ? init.signal : undefined;
    const record = {
      url: String(input),
      method: init && init.method !== undefined ? String(init.method) : null,
      start_ms: performance.now(),
      start_wall_ms: Date.now(),
      has_signal: signal instanceof AbortSignal,
      aborted_ms: null,
      settled: null,
      settled_ms: null,
      headers: null,
    };
    this.calls.push(record);
    this.waiters.push([]);
    if (signal) {
      if (signal.aborted) {
        record.aborted_ms = record.start_ms;
      } else {
        signal.addEventListener("abort", () => { record.aborted_ms = performance.now(); }, { once: true });
      }
    }
    if (!entry) {
      record.settled = "unscripted";
      return Promise.reject(new TypeError(`the test script has no response for call ${index + 1}`));
    }
    const settle = (how) => {
      record.settled = how;
      record.settled_ms = performance.now();
      for (const resolve of this.waiters[index].splice(0)) resolve(record.settled_ms);
    };
    return new Promise((resolve, reject) => {
      const honour = signal && !entry.ignore_abort;
      let timer = null;
      const onAbort = () => {
        if (timer !== null) realClearTimeout(timer);
        timer = null;
        settle("aborted");
        reject(abortError());
      };
      if (honour) {
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener("abort", onAbort, { once: true });
      }
      if (entry.hang === "headers") return;
      const arrive = () => {
        timer = null;
        if (honour) signal.removeEventListener("abort", onAbort);
        if (entry.transport_error !== undefined) {
          settle("transport_error");
          reject(new TypeError("Failed to fetch"));
          return;
        }
        const headers = headersFor(entry);
        record.headers = Object.fromEntries(headers.entries());
        let body = null;
        if (entry.hang === "body") {
          body = new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode("["));
              if (honour) {
                signal.addEventListener("abort", () => {
                  settle("body_aborted");
                  controller.error(abortError());
                }, { once: true });
              }
            },
          });
        } else if (entry.body !== undefined) {
          body = JSON.stringify(entry.body);
        }
        settle(entry.hang === "body" ? "headers_only" : "response");
        resolve(new Response(body, { status: entry.status, headers }));
      };
      if (entry.gate !== undefined) {
        gate(entry.gate).opened.then(() => {
          if (record.settled === null) arrive();
        });
      } else {
        timer = realSetTimeout(arrive, (entry.duration_s || 0) * 1000);
      }
    });
  }

  /** Resolves when call `index` (from 0) has settled, however it settled: its response or
   *  failure arrived, or its abort was honoured. */
  whenSettled(index) {
    return new Promise((resolve) => {
      const record = this.calls[index];
      if (!record) throw new Error(`web_support: no call ${index} yet`);
      if (record.settled !== null) resolve(record.settled_ms);
      else this.waiters[index].push(resolve);
    });
  }

  /** The calls so far, as JSON. */
  callsJson() {
    return JSON.stringify(this.calls);
  }

  count() {
    return this.calls.length;
  }
}

/**
 * An onUpdate that records every update with the time it came. `hook`, when set, sees each update
 * after it is recorded.
 */
export class UpdateLog {
  constructor() {
    this.updates = [];
    this.hook = null;
    this.waiting = [];
    this.onUpdate = (update) => {
      this.updates.push({ at_ms: performance.now(), update: JSON.parse(JSON.stringify(update)) });
      this.waiting = this.waiting.filter(({ kind, resolve }) => {
        if (!update.events.some((e) => e.event === kind)) return true;
        resolve(this.updates.length);
        return false;
      });
      if (this.hook) this.hook(update);
    };
  }

  /** Resolves once an update has carried an event of `kind` ("start", "wait", ...): at once if
   *  one already has. A test waits for a step this way rather than for a guessed time. */
  until(kind) {
    return new Promise((resolve) => {
      if (this.updates.some((u) => u.update.events.some((e) => e.event === kind))) {
        resolve(this.updates.length);
      } else {
        this.waiting.push({ kind, resolve });
      }
    });
  }

  updatesJson() {
    return JSON.stringify(this.updates);
  }

  count() {
    return this.updates.length;
  }
}

/**
 * Makes the timer of the first wait that `log` reports fire `shiftMs` late (positive) or early
 * (negative; never below zero). The driver arms that timer right after the update that reports
 * the wait, so the patch is installed from the update hook and takes the next global setTimeout
 * call only, then puts the real one back.
 */
export class TimerShift {
  constructor(log, shiftMs) {
    this.shiftMs = shiftMs;
    this.used = null;
    this.armed = false;
    log.hook = (update) => {
      if (this.armed || this.used !== null) return;
      if (!update.events.some((e) => e.event === "wait")) return;
      this.armed = true;
      const shift = this;
      globalThis.setTimeout = function patchedSetTimeout(handler, delay, ...rest) {
        shift.restore();
        const requested = Number(delay) || 0;
        const used = Math.max(0, requested + shift.shiftMs);
        shift.used = { requested_ms: requested, used_ms: used, at_ms: performance.now() };
        return originalSetTimeout.call(globalThis, handler, used, ...rest);
      };
    };
  }

  /** Puts the real setTimeout back (idempotent). */
  restore() {
    this.armed = false;
    globalThis.setTimeout = originalSetTimeout;
  }

  /** `{requested_ms, used_ms, at_ms}` of the shifted timer, or null if none was shifted. */
  usedJson() {
    return JSON.stringify(this.used);
  }

  /** Whether the global setTimeout is the real one again. */
  static isRestored() {
    return globalThis.setTimeout === originalSetTimeout;
  }
}

export function newAbortController() {
  return new AbortController();
}

/** Fires `pagehide` on the window, then (after `gapMs`) a `pageshow` as if restored from the bfcache. */
export async function hideThenShow(gapMs) {
  window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: true }));
  const hiddenAt = performance.now();
  await sleep(gapMs);
  window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }));
  return hiddenAt;
}

/** `{name, message, is_error, report}` of a rejection or thrown value, as JSON. */
export function describeError(error) {
  return JSON.stringify({
    is_error: error instanceof Error,
    name: error && error.name !== undefined ? String(error.name) : null,
    message: error && error.message !== undefined ? String(error.message) : null,
    report: error && error.report !== undefined ? error.report : null,
  });
}

/**
 * Another tab, as the module's BroadcastChannel sees one: a channel of the same name in this
 * document (a message reaches every other channel of that name, the sender's own excepted).
 * `announce` posts a block ending `inMs` from now on the shared clock, `tell` one ending at
 * `untilMs` on it; `heard` lists what the
 * module sent, as JSON.
 */
export class OtherTab {
  constructor() {
    this.messages = [];
    this.channel = new BroadcastChannel("retry-budget:blocks");
    this.channel.onmessage = (event) => this.messages.push(event.data);
  }
  announce(scope, inMs) {
    this.channel.postMessage({ scope, until_ms: performance.timeOrigin + performance.now() + inMs });
  }
  ask() {
    this.channel.postMessage({ ask: true });
  }
  tell(scope, untilMs) {
    this.channel.postMessage({ scope, until_ms: untilMs });
  }
  heardJson() {
    return JSON.stringify(this.messages);
  }
  close() {
    this.channel.close();
  }
}

/**
 * Options a hostile or careless caller might pass, each as `[options, words]`: `words` are what
 * the refusal's message must contain. Revoked proxies, getters that throw, a list whose length
 * throws, a proxy of a real signal, an array for the options.
 */
export function hostileOptions(fetch) {
  const revoked = () => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    return r.proxy;
  };
  const boom = () => { throw new Error("boom"); };
  const badLength = () => new Proxy([429], {
    get(target, key) {
      if (key === "length") boom();
      return target[key];
    },
  });
  return [
    [revoked(), "options threw when read"],
    [[], "options must be an object, not an array"],
    [{ fetch, signal: revoked() }, "options.signal must be an AbortSignal, not object"],
    [{ fetch, signal: new Proxy(new AbortController().signal, {}) }, "options.signal must be an AbortSignal"],
    [{ fetch, signal: Object.create(AbortSignal.prototype) }, "options.signal must be an AbortSignal"],
    [{ fetch, policy: revoked() }, "options.policy threw when read"],
    [{ fetch, get signal() { boom(); } }, "options.signal threw when read"],
    [{ get fetch() { boom(); } }, "options.fetch threw when read"],
    [{ fetch, get method() { boom(); } }, "options.method threw when read"],
    [{ fetch, method: "POST" }, 'options.method must be "GET" (it retries reads only'],
    [{ fetch, policy: { get budget_s() { boom(); } } }, "options.policy.budget_s threw when read"],
    [{ fetch, policy: { retry_statuses: badLength() } }, "options.policy.retry_statuses.length threw when read"],
    [{ fetch, testOnlyTimerLateBy_s: badLength() }, "options.testOnlyTimerLateBy_s.length threw when read"],
  ];
}

/**
 * Options whose list claims 2^32 - 1 entries, each one 429, as a `Proxy` may: reading them all
 * would take a minute and gigabytes before anything could be refused.
 */
export function endlessLists(fetch) {
  const endless = () => new Proxy([], { get: (_, key) => (key === "length" ? 2 ** 32 - 1 : 429) });
  return [
    { fetch, policy: { retry_statuses: endless() } },
    { fetch, testOnlyTimerLateBy_s: endless() },
  ];
}

/**
 * Fetches, by name, that answer with something other than a Response of this realm: a Response
 * of another realm (an iframe's), an object that only looks like one, an object made from
 * `Response.prototype` whose getters throw, one whose `status` getter throws, a network error
 * (`Response.error()`, status 0), an `AbortError` from below, and a promise
 * whose `constructor` getter throws.
 */
export function oddFetches() {
  const frame = document.createElement("iframe");
  document.body.append(frame);
  const OtherResponse = frame.contentWindow.Response;
  const OtherHeaders = frame.contentWindow.Headers;
  const list = JSON.stringify(["sea glass", "driftwood", "kelp"]);
  let otherRealmCalls = 0;
  return {
    otherRealm: async () => (otherRealmCalls++ === 0
      ? new OtherResponse("", { status: 429, headers: new OtherHeaders({ "Retry-After": "0" }) })
      : new OtherResponse(list, { status: 200 })),
    lookalike: async () => ({
      status: 200,
      headers: { get: (name) => (name === "Date" ? new Date().toUTCString() : null) },
      text: async () => list,
    }),
    madeFromPrototype: async () => Object.create(Response.prototype),
    networkError: async () => Response.error(),
    // An AbortError no abort of the driver's caused: Firefox rejects a body cut off by a reset so.
    abortedFromBelow: async () => {
      throw new DOMException("the connection was reset", "AbortError");
    },
    statusThrows: async () => ({
      get status() { throw new Error("boom"); },
      headers: new Headers(),
      text: async () => list,
    }),
    constructorThrows: () => {
      const sent = Promise.resolve(new Response(list));
      Object.defineProperty(sent, "constructor", { get() { throw new TypeError("boom"); } });
      return sent;
    },
    // A fetch that rejects with what is not an Error: a string has no name.
    rejectsNameless: () => Promise.reject("offline"),
    // An error whose name is empty tells no more than one with none.
    rejectsEmptyName: () => {
      const error = new Error("offline");
      error.name = "";
      return Promise.reject(error);
    },
    // A fetch that throws before it returns a promise, with an error of its own name.
    throwsNamed: () => {
      const error = new Error("blocked by policy");
      error.name = "SecurityError";
      throw error;
    },
    fractionalStatus: async () => ({ status: 200.5, headers: { get: () => null }, text: async () => list }),
    // A status HTTP does not define is still a status: not retried, not a broken response.
    status700: async () => ({ status: 700, headers: { get: () => null }, text: async () => list }),
    noText: async () => ({ status: 200, headers: { get: () => null } }),
    headersGetThrows: async () => ({
      status: 200,
      headers: { get: () => { throw new Error("boom"); } },
      text: async () => list,
    }),
    // The body fails part way, as a reset connection's does.
    bodyFails: async () => ({ status: 200, headers: new Headers(), text: () => Promise.reject(new TypeError("reset")) }),
    plainText: async () => new Response("plain words", { status: 200 }),
  };
}

/** Whether `promise` settles within `ms` milliseconds. */
export function settlesWithin(promise, ms) {
  return Promise.race([
    promise.then(() => true, () => true),
    new Promise((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
}

/** A signal whose `addEventListener` throws: the module cannot hear it abort. */
export function refusingSignal() {
  return { aborted: false, addEventListener() { throw new Error("no listeners here"); }, removeEventListener() {} };
}

/**
 * A fetch whose 429 carries a `Date` in the obsolete RFC 850 form (a two-digit year), and a
 * `Retry-After` one second after it as an IMF-fixdate; then a 200.
 */
export function rfc850DateFetch() {
  let calls = 0;
  return async () => {
    if (calls++ > 0) return new Response("[]", { status: 200 });
    const second = Math.floor(Date.now() / 1000) * 1000;
    const d = new Date(second);
    const days = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
    const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    const two = (x) => String(x).padStart(2, "0");
    const date = `${days[d.getUTCDay()]}, ${two(d.getUTCDate())}-${months[d.getUTCMonth()]}-`
      + `${two(d.getUTCFullYear() % 100)} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:`
      + `${two(d.getUTCSeconds())} GMT`;
    const retryAfter = new Date(second + 1000).toUTCString();
    return new Response("", { status: 429, headers: { Date: date, "Retry-After": retryAfter } });
  };
}

/** A scenario named "named-one" whose responses cannot be read. */
export function unreadableNamedScenario() {
  return { name: "named-one", get responses() { throw new Error("boom"); } };
}

/**
 * Scenario objects `simulate` must refuse, each as `[scenario, words]`: a revoked proxy, a getter
 * that throws, and a number JSON cannot carry.
 */
export function hostileScenarios() {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const ok = [{ duration_s: 1, status: 200 }];
  return [
    [revoked.proxy, "cannot be read as JSON: reading it threw"],
    [{ name: "getter", get responses() { throw new Error("boom"); } }, "cannot be read as JSON: reading it threw"],
    [{ name: "infinite", policy: { budget_s: Infinity }, responses: ok }, "field `policy.budget_s`"],
    [undefined, "expected an object"],
  ];
}

/**
 * Abort signals that are not this realm's `AbortSignal`, by name, each as `{ signal, abort }`:
 * an iframe's, and a polyfill's (an `EventTarget` with an `aborted` flag, as the
 * abort-controller package makes).
 */
export function foreignSignals() {
  const frame = document.createElement("iframe");
  document.body.append(frame);
  const controller = new frame.contentWindow.AbortController();
  const polyfill = new EventTarget();
  polyfill.aborted = false;
  return {
    iframe: { signal: controller.signal, abort: () => controller.abort() },
    polyfill: {
      signal: polyfill,
      abort: () => {
        polyfill.aborted = true;
        polyfill.dispatchEvent(new Event("abort"));
      },
    },
  };
}

/**
 * An iframe's abort signal, as `{ signal, abort }`, whose `abort()` removes the iframe first:
 * a signal whose realm is gone is marked aborted, but no `abort` event is fired.
 */
export function detachedSignal() {
  const frame = document.createElement("iframe");
  document.body.append(frame);
  const controller = new frame.contentWindow.AbortController();
  return {
    signal: controller.signal,
    abort: () => {
      frame.remove();
      controller.abort();
    },
  };
}

/**
 * Replaces `reportError` with a recorder until `restore()`, so that a test sees what the module
 * reports without raising an error event in the test page. `count()` is how many errors it was
 * given; `allAre(error)` whether each was `error`.
 */
export class ReportRecorder {
  constructor() {
    this.original = globalThis.reportError;
    this.seen = [];
    globalThis.reportError = (error) => this.seen.push(error);
  }
  count() {
    return this.seen.length;
  }
  allAre(error) {
    return this.seen.every((seen) => seen === error);
  }
  restore() {
    globalThis.reportError = this.original;
  }
}

/** An `onUpdate` that throws `error` every time it is called. */
export function throwingView(error) {
  return () => {
    throw error;
  };
}

/**
 * Records the delay of every timer the module asks the global setTimeout for, until `stop()`:
 * what a timer was armed for, which no busy machine changes. The helpers here keep their own
 * setTimeout, so only the module's timers are recorded.
 */
export class TimerLog {
  constructor() {
    this.requested = [];
    globalThis.setTimeout = (handler, delay, ...rest) => {
      this.requested.push(Number(delay) || 0);
      return originalSetTimeout.call(globalThis, handler, delay, ...rest);
    };
  }
  stop() {
    globalThis.setTimeout = originalSetTimeout;
  }
  requestedJson() {
    return JSON.stringify(this.requested);
  }
}

/**
 * Counts the listeners the module adds and removes: `pagehide` ones on the window (through the
 * window's own addEventListener and removeEventListener, put in front of the prototype's until
 * `stop()`), and `abort` ones on `signal`, a polyfill-like signal (an `EventTarget` with an
 * `aborted` flag) that counts its own.
 */
export class ListenerWatch {
  constructor() {
    this.counts = { pagehide: { added: 0, removed: 0 }, abort: { added: 0, removed: 0 } };
    const counting = (target, type) => {
      const add = target.addEventListener;
      const remove = target.removeEventListener;
      target.addEventListener = (kind, ...rest) => {
        if (kind === type) this.counts[type].added++;
        return add.call(target, kind, ...rest);
      };
      target.removeEventListener = (kind, ...rest) => {
        if (kind === type) this.counts[type].removed++;
        return remove.call(target, kind, ...rest);
      };
    };
    counting(window, "pagehide");
    this.signal = new EventTarget();
    this.signal.aborted = false;
    counting(this.signal, "abort");
  }
  stop() {
    delete window.addEventListener;
    delete window.removeEventListener;
  }
  countsJson() {
    return JSON.stringify(this.counts);
  }
}

/** Makes `log`'s onUpdate abort `controller` when an update first reports a wait. */
export function abortOnWait(log, controller) {
  log.hook = (update) => {
    if (update.events.some((e) => e.event === "wait")) controller.abort();
  };
}

/**
 * A fetch whose answer is a 200 with `body` that, once its body has been read, aborts
 * `controller` before the driver runs again: the whole response and the leaving are both there
 * when the driver next looks.
 */
export function answerThenLeave(controller, body) {
  return async () => ({
    status: 200,
    headers: new Headers(),
    text() {
      const read = Promise.resolve(body);
      read.then(() => controller.abort());
      return read;
    },
  });
}

/**
 * Polyfill-like signals whose `aborted` reads `false` the first time (when the options are
 * read) and then, when the action claims its screen, `true` (aborted in between) or throws.
 */
export function changingSignals() {
  const changing = (later) => {
    const signal = new EventTarget();
    let reads = 0;
    Object.defineProperty(signal, "aborted", { get: () => (reads++ === 0 ? false : later()) });
    return signal;
  };
  return [
    changing(() => true),
    changing(() => {
      throw new Error("gone");
    }),
  ];
}
