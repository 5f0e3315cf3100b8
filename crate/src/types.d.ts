/** A finite retry policy (docs/rules.md); absent fields, and fields set to `null`, take the
 *  defaults shown. */
export interface Policy {
  /** Total elapsed seconds from the call. Default 20. */
  budget_s?: number | null;
  /** Attempts in all, the first included. Default 3. */
  max_attempts?: number | null;
  /** Per-attempt cap in seconds, reserved before every start and enforced by abort. Default 4. */
  attempt_cap_s?: number | null;
  /** Local floor on every wait, in seconds. Default 1. */
  min_wait_s?: number | null;
  /** Fallback wait after attempt n when Retry-After is missing or invalid: base * 2^(n-1). Default 2. */
  fallback_base_s?: number | null;
  /** Statuses that may be retried (never a 2xx). Default [429]. */
  retry_statuses?: readonly number[] | null;
  /** Let the local clock interpret an HTTP-date when the response has no readable Date header. Default false. */
  trust_local_clock?: boolean | null;
  /** The most, in seconds, that a start may be spread after the earliest time the rules allow;
   *  never earlier, and never the cause of a stop. Default 0. */
  jitter_s?: number | null;
  /** Read the RateLimit response field: a retryable response before the last attempt whose
   *  Retry-After is missing or invalid waits the `t` of a spent quota (`"default";r=0;t=3`:
   *  3 s), as a server delay, and a spent quota holds back the others sharing the limit.
   *  Default false. */
  ratelimit_fields?: boolean | null;
}

/** The policy an action ran under, as reports write it (`jitter_s` and `ratelimit_fields` only
 *  when set). */
export interface ReportPolicy {
  budget_s: number;
  max_attempts: number;
  attempt_cap_s: number;
  min_wait_s: number;
  fallback_base_s: number;
  retry_statuses: number[];
  jitter_s?: number;
  ratelimit_fields?: boolean;
}

/** What a `fetch` resolves to, read by what it has: a `Response` of any realm (an iframe's), or
 *  a fetch library's object with a numeric `status`, `headers.get(name)` and `text()`. */
export interface ResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** "GET", in any case: the only method, since this scheduler retries reads only. */
export type GetMethod = "GET" | "GEt" | "GeT" | "Get" | "gET" | "gEt" | "geT" | "get";

/** The options; each may be left out, and `null` reads as left out (except for `method`). */
export interface FetchWithBudgetOptions {
  /** The policy; absent fields take the defaults. */
  policy?: Policy | null;
  /** Aborting it ends the action at once: the request in flight is aborted and nothing more is
   *  sent. Another realm's signal, or a polyfill's, works too. */
  signal?: AbortSignal | null;
  /** The fetch to use (tests, instrumented clients, a fetch library). Default globalThis.fetch.
   *  It is given the URL as the caller gave it, so it may read a relative one its own way. */
  fetch?: ((input: string, init: RequestInit) => Promise<ResponseLike>) | null;
  /** Called with the visible state, the trace events since the previous update and the outcome
   *  after every step; never after the screen lets go. What it throws is reported (reportError,
   *  or the console where there is none) and does not stop the action. */
  onUpdate?: ((update: BudgetUpdate) => void) | null;
  /** Only "GET", in any case: this scheduler retries reads only. */
  method?: GetMethod;
  /** A name for the screen that owns the action; a newer action for the same screen ends this one. */
  screen?: string | null;
  /** Who hears of the waits the service asks of this action's limit, and whose it hears: "page"
   *  (the default) every action of this page or worker with the same scope; "tabs" also every
   *  other tab and worker of this page's origin, and pages of it that load later while the wait
   *  lasts; "none" nobody. */
  share?: "page" | "tabs" | "none" | null;
  /** The limit the request falls under, for sharing waits: a route, a resource, a key. Default:
   *  the URL's origin; a URL with none to read (a relative one in Node, read by your own
   *  fetch, or a `data:` one) is a scope of its own. */
  scope?: string | null;
}

export type Outcome = "success" | "budget_exhausted" | "attempts_exhausted" | "user_left"
  | "clock_untrusted" | "not_retryable" | "transport_error";

export interface RetryAfterReport {
  raw: string | null;
  kind: "seconds" | "date" | "missing" | "invalid";
  /** The server's delay, when the header gave a usable one. */
  delay_s: number | null;
}

/** The RateLimit field as read (only when the policy reads it and the response had one). */
export interface RateLimitReport {
  raw: string;
  kind: "exhausted" | "remaining" | "invalid";
  /** When the quota is restored, if the field says it is spent. */
  reset_s: number | null;
}

export type WaitSource = "server_seconds" | "server_date" | "ratelimit" | "fallback_missing"
  | "fallback_invalid" | "origin_block";

/** A wait the model planned (a `wait` event's fields, and a refused or late one's). */
export interface PlannedWait {
  after_attempt: number;
  source: WaitSource;
  delay_s: number;
  wait_s: number;
  jitter_s: number;
  /** The planned start of the next attempt. */
  until_s: number;
}

/** Why an action stopped, with what a view needs to explain it (docs/rules.md, "Why an action stopped"). */
export type StopCause =
  | { kind: "success" }
  | { kind: "not_retryable"; status: number }
  | { kind: "attempts_exhausted"; max_attempts: number }
  | ({ kind: "refused_wait"; cap_end_s: number; deadline_s: number } & PlannedWait)
  | ({ kind: "late_wake"; woke_s: number; cap_end_s: number; deadline_s: number } & PlannedWait)
  | { kind: "origin_blocked"; at_s: number; until_s: number; cap_end_s: number; deadline_s: number }
  | { kind: "clock_untrusted"; evidence: "untrusted_local" | "none" }
  | { kind: "transport_error"; error: string }
  | { kind: "user_left"; in_flight: boolean };

export type BudgetEvent =
  | { event: "start"; at_s: number; attempt: number; remaining_s: number }
  | { event: "receipt"; at_s: number; attempt: number; status: number; retry_after: RetryAfterReport;
      ratelimit?: RateLimitReport }
  | { event: "failure"; at_s: number; attempt: number; error: string }
  | ({ event: "wait"; at_s: number; remaining_s: number } & PlannedWait)
  | { event: "blocked"; at_s: number; until_s: number }
  | { event: "timer"; at_s: number; due_s: number }
  | { event: "left"; at_s: number }
  | { event: "stop"; at_s: number; outcome: Outcome; remaining_s: number; cause: StopCause };

/** One row of the step table: the source document's format, made by the model. */
export interface Step {
  step: string;
  elapsed: string;
  observed: string;
  decision: string;
}

export interface LastResponse {
  attempt: number;
  status: number;
  at_s: number;
  retry_after: RetryAfterReport;
  ratelimit?: RateLimitReport;
}

/** Everything one finished action did and how it ended (docs/rules.md, "The report"). */
export interface BudgetReport {
  policy: ReportPolicy;
  outcome: Outcome;
  cause: StopCause;
  elapsed_s: number;
  attempts: number;
  request_s: number;
  wait_s: number;
  attempt_starts_s: number[];
  /** The last HTTP response received, kept apart from the outcome. */
  last_response: LastResponse | null;
  events: BudgetEvent[];
  /** What the user is told. */
  visible: string[];
  /** The action as the step table's rows: in the full build (the page's), and in the replay
   *  output. The app build leaves their words out of what every page downloads. */
  steps?: Step[];
}

/** What `fetchWithBudget` resolves with: a finished action that the screen still owned. */
export interface BudgetResult<T = unknown> extends BudgetReport {
  outcome: Exclude<Outcome, "user_left">;
  /** On success, the body parsed as JSON (or the text when it is not JSON); otherwise null. */
  body: T | null;
}

/** What `fetchWithBudget` rejects with when its screen lets go: nothing more is sent, and
 *  `report` says what was done (no attempt at all when the signal was aborted before the start). */
export interface BudgetAbortError extends Error {
  name: "AbortError";
  report: BudgetReport;
}

/** What `onUpdate` is called with after every step. */
export interface BudgetUpdate {
  visible: string[];
  /** The trace events since the previous update. */
  events: BudgetEvent[];
  /** The whole action so far, as the step table's rows (the full build only). */
  steps?: Step[];
  /** null while the action runs. */
  outcome: Outcome | null;
}

/** A limit in force: no request under `scope` before `until_s` seconds from now. */
export interface RateLimit {
  scope: string;
  until_s: number;
}

/** A scenario's replay output (`simulate`, and the replay command): its name, its report, and
 *  whether the run met the scenario's expected figures. */
export interface ReplayReport extends BudgetReport {
  name: string;
  steps: Step[];
  expect_ok?: boolean;
  expect_mismatches?: string[];
}

/**
 * Loads `GET url` under a finite retry budget. Resolves with the report when the action ends;
 * rejects with a `BudgetAbortError` when the screen lets go, and with a `TypeError` or
 * `RangeError` naming the option when an argument is wrong (before anything is sent).
 */
export function fetchWithBudget<T = unknown>(url: string | URL, options?: FetchWithBudgetOptions): Promise<BudgetResult<T>>;
/** Whether `value` is the abort error `fetchWithBudget` rejects with when its screen lets go. */
export function isAbortError(value: unknown): value is BudgetAbortError;
/** The default policy, as reports write it. */
export function defaultPolicy(): ReportPolicy;
/** The limits in force now, in seconds from now. */
export function rateLimits(): RateLimit[];
/** Actions running in this page right now (0 once every action has ended). */
export function runningActions(): number;
/** Screens owned by a running action right now. */
export function ownedScreens(): number;
