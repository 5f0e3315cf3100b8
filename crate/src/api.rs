//! The JS API: `fetchWithBudget(url, options)` and `simulate(scenario)`. Structured values
//! cross as plain JSON-compatible objects; every error is a JS `Error` with a clear message.

use js_sys::{Function, Object, Promise};
#[cfg(feature = "full")]
use retry_budget_model::scenario::parse_scenario;
use retry_budget_model::scenario::{parse_policy, parse_seconds_list, Node};
#[cfg(feature = "full")]
use retry_budget_model::simulate::simulate as run_scenario;
use retry_budget_model::Policy;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::driver::{self, Request};
#[cfg(feature = "full")]
use crate::js::value_of;
use crate::js::{global, string_of, Js};
use crate::origin::{self, Share};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** A finite retry policy; absent fields take the defaults shown. */
export interface Policy {
  /** Total elapsed seconds from the first attempt's start. Default 20. */
  budget_s?: number;
  /** Attempts in all, the first included. Default 3. */
  max_attempts?: number;
  /** Per-attempt cap in seconds, reserved before every start and enforced by abort. Default 4. */
  attempt_cap_s?: number;
  /** Local floor on every wait, in seconds. Default 1. */
  min_wait_s?: number;
  /** Fallback wait after attempt n when Retry-After is missing or invalid: base * 2^(n-1). Default 2. */
  fallback_base_s?: number;
  /** Statuses that may be retried. Default [429]. */
  retry_statuses?: number[];
  /** Let the local clock interpret an HTTP-date when the response has no readable Date header. Default false. */
  trust_local_clock?: boolean;
  /** The most, in seconds, that a start may be spread after the earliest time the rules allow;
   *  never earlier, and never the cause of a stop. Default 0. Reports carry it only when set. */
  jitter_s?: number;
}

export interface FetchWithBudgetOptions {
  policy?: Policy;
  /** Aborting it ends the action at once: the request in flight is aborted and nothing more is sent. */
  signal?: AbortSignal;
  /** The fetch to use (tests, instrumented clients). Default globalThis.fetch. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Called with the visible state and the new trace events after every step; never after the screen lets go. */
  onUpdate?: (update: BudgetUpdate) => void;
  /** Only "GET": this scheduler retries reads only. */
  method?: string;
  /** A name for the screen that owns the action; a newer action for the same screen ends this one. */
  screen?: string;
  /** Who hears of the blocks this action learns ("the service asks every request to this origin
   *  to wait"), and whose it hears: "page" (the default) every action of this page or worker on
   *  the same origin; "tabs" also every other tab and worker of this page's origin that runs the
   *  module; "none" nobody. */
  share?: "page" | "tabs" | "none";
  /** Fault injection for demos and tests: arm the k-th wait's timer this many seconds late, as a
   *  throttled background tab would. The budget gate is rechecked at the real wake-up time. */
  timerLateBy_s?: number[];
}

export type Outcome = "success" | "budget_exhausted" | "attempts_exhausted" | "user_left"
  | "clock_untrusted" | "not_retryable" | "transport_error";

export interface RetryAfterReport {
  raw: string | null;
  kind: "seconds" | "date" | "missing" | "invalid";
  delay_s: number | null;
}

export type WaitSource = "server_seconds" | "server_date" | "fallback_missing" | "fallback_invalid"
  | "origin_block";

export type BudgetEvent =
  | { event: "start"; at_s: number; attempt: number; remaining_s: number }
  | { event: "receipt"; at_s: number; attempt: number; status: number; retry_after: RetryAfterReport }
  | { event: "failure"; at_s: number; attempt: number; error: string }
  | { event: "wait"; at_s: number; after_attempt: number; source: WaitSource; delay_s: number;
      wait_s: number; until_s: number; jitter_s: number; remaining_s: number }
  | { event: "blocked"; at_s: number; until_s: number }
  | { event: "timer"; at_s: number; due_s: number }
  | { event: "left"; at_s: number }
  | { event: "stop"; at_s: number; outcome: Outcome; remaining_s: number };

export interface BudgetReport {
  name: string;
  policy: Required<Omit<Policy, "trust_local_clock" | "jitter_s">> & { jitter_s?: number };
  outcome: Outcome | null;
  elapsed_s: number;
  attempts: number;
  request_s: number;
  wait_s: number;
  attempt_starts_s: number[];
  last_response: { attempt: number; status: number; at_s: number; retry_after: RetryAfterReport } | null;
  events: BudgetEvent[];
  visible: string[];
  expect_ok?: boolean;
  expect_mismatches?: string[];
}

export interface BudgetResult extends BudgetReport {
  /** On success, the body parsed as JSON (or the text when it is not JSON); otherwise null. */
  body: unknown;
}

/** An origin block in force: no request to `origin` before `until_s` seconds from now. */
export interface RateLimit {
  origin: string;
  until_s: number;
}

export interface BudgetUpdate {
  visible: string[];
  /** The trace events since the previous update. */
  events: BudgetEvent[];
  outcome: Outcome | null;
}
"#;

/// A JS `Error` with `message`.
fn error(message: &str) -> JsError {
    JsError::new(message)
}

/// A JS `Error` whose message is `fetchWithBudget: ` followed by the parts.
fn api_error(parts: &[&str]) -> JsError {
    let mut message = String::from("fetchWithBudget: ");
    for part in parts {
        message.push_str(part);
    }
    error(&message)
}

/// Loads `GET url` under a finite retry budget. Resolves with the report when the action ends
/// (on success it carries the parsed `body`); rejects with an `AbortError` carrying `report`
/// when the screen lets go, so a late result never reaches a view that no longer owns it.
#[wasm_bindgen(js_name = fetchWithBudget, unchecked_return_type = "Promise<BudgetResult>")]
pub fn fetch_with_budget(
    #[wasm_bindgen(unchecked_param_type = "string | URL")] url: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "FetchWithBudgetOptions")] options: Option<
        Object,
    >,
) -> Result<Promise, JsError> {
    let request = read_request(&url, options.map(JsValue::from))?;
    Ok(driver::start(request))
}

/// Checks and reads `fetchWithBudget`'s arguments.
fn read_request(url: &JsValue, options: Option<JsValue>) -> Result<Request, JsError> {
    let url = read_url(url)?;
    let options = Options(options.map(Js));
    options.refuse_writes()?;
    Ok(Request {
        origin: crate::js::origin_of(&url),
        share: options.share()?,
        url,
        policy: match options.set("policy") {
            None => Policy::new(),
            Some(p) => parse_policy("options", Js(p)).map_err(|e| option_error(&e))?,
        },
        fetch: match options.set("fetch") {
            None => Js(global())
                .member("fetch")
                .and_then(|f| f.0.dyn_into::<Function>().ok())
                .ok_or_else(|| {
                    error("fetchWithBudget: there is no global fetch; pass options.fetch")
                })?,
            Some(f) => function(f, "fetch")?,
        },
        on_update: options
            .set("onUpdate")
            .map(|f| function(f, "onUpdate"))
            .transpose()?,
        signal: options
            .set("signal")
            .map(|s| {
                s.dyn_into::<AbortSignal>()
                    .map_err(|_| error("fetchWithBudget: options.signal must be an AbortSignal"))
            })
            .transpose()?,
        screen: options
            .set("screen")
            .map(|s| {
                s.as_string()
                    .ok_or_else(|| error("fetchWithBudget: options.screen must be a string"))
            })
            .transpose()?,
        timer_late_by: match options.set("timerLateBy_s") {
            None => Vec::new(),
            Some(v) => parse_seconds_list("options", "timerLateBy_s", Js(v))
                .map_err(|e| option_error(&e))?,
        },
    })
}

/// The first argument: a URL string, or a URL object (its `href`).
fn read_url(url: &JsValue) -> Result<String, JsError> {
    if let Some(url) = url.as_string() {
        Ok(url)
    } else if Js(url.clone()).member("href").is_some() {
        Ok(string_of(url))
    } else {
        Err(error(
            "fetchWithBudget: the first argument must be a URL string or URL object",
        ))
    }
}

/// The options object, if any.
struct Options(Option<Js>);

impl Options {
    /// An option as given; one given as `undefined` is absent.
    fn given(&self, name: &str) -> Option<JsValue> {
        self.0.as_ref().and_then(|o| o.member(name)).map(|v| v.0)
    }

    /// An option that is set: `null` is absent too.
    fn set(&self, name: &str) -> Option<JsValue> {
        self.given(name).filter(|v| !v.is_null())
    }

    /// `share`: `"page"` (the default), `"tabs"` or `"none"`.
    fn share(&self) -> Result<Share, JsError> {
        match self.set("share").map(|s| s.as_string()) {
            None => Ok(Share::Page),
            Some(Some(s)) if s == "page" => Ok(Share::Page),
            Some(Some(s)) if s == "tabs" => Ok(Share::Tabs),
            Some(Some(s)) if s == "none" => Ok(Share::None),
            Some(_) => Err(error(
                "fetchWithBudget: options.share must be \"page\", \"tabs\" or \"none\"",
            )),
        }
    }

    /// Refuses any method but GET (`null` included): this scheduler retries reads only.
    fn refuse_writes(&self) -> Result<(), JsError> {
        let Some(method) = self.given("method") else {
            return Ok(());
        };
        if method
            .as_string()
            .unwrap_or_default()
            .eq_ignore_ascii_case("GET")
        {
            return Ok(());
        }
        Err(error(
            "fetchWithBudget retries reads only and refuses any method but GET: \
             a write needs an operation identity and a recovery contract before it may be retried",
        ))
    }
}

/// `options.NAME` as a function.
fn function(value: JsValue, name: &str) -> Result<Function, JsError> {
    value
        .dyn_into::<Function>()
        .map_err(|_| api_error(&["options.", name, " must be a function"]))
}

/// A rejected option, named: `fetchWithBudget: options.FIELD: MESSAGE`.
fn option_error(e: &retry_budget_model::scenario::ScenarioError) -> JsError {
    api_error(&["options.", &e.field, ": ", &e.message])
}

#[cfg(feature = "full")]
/// Runs the pure model on one scenario object (the scenario format's, section 1) and returns
/// the replay output for it. Throws an `Error` naming the field when the scenario is rejected.
#[wasm_bindgen(unchecked_return_type = "BudgetReport")]
pub fn simulate(
    #[wasm_bindgen(unchecked_param_type = "object")] scenario: JsValue,
) -> Result<JsValue, JsError> {
    let scenario = Js(scenario);
    let label = scenario
        .member("name")
        .and_then(|n| n.string())
        .unwrap_or_else(|| "scenario".into());
    let scenario = parse_scenario(&label, scenario).map_err(|e| error(&e.describe()))?;
    let report = run_scenario(&scenario).map_err(|e| error(&e.describe()))?;
    Ok(value_of(&report.to_json()))
}

/// The origin blocks in force now, for a page that wants to show "the service asked us to
/// wait until ..." before the user presses anything: `[{ origin, until_s }]`, `until_s` in
/// seconds from now. Blocks from other tabs are included once an action here shares with tabs.
#[wasm_bindgen(js_name = rateLimits, unchecked_return_type = "RateLimit[]")]
pub fn rate_limits() -> JsValue {
    use retry_budget_model::json::{Json, Number};
    let list = origin::in_force()
        .into_iter()
        .map(|(origin, until_s)| {
            let until = crate::clock::of_millis(until_s * 1000.0);
            Json::Object(vec![
                ("origin".into(), Json::text(origin)),
                ("until_s".into(), Json::Number(Number::Secs(until))),
            ])
        })
        .collect();
    crate::js::value_of(&Json::Array(list))
}

/// Actions running in this page right now. Zero once every action has ended: an ended action
/// keeps no listener, timer or closure.
#[wasm_bindgen(js_name = runningActions)]
pub fn running_actions() -> u32 {
    driver::running()
}

/// Screens currently owned by a running action.
#[wasm_bindgen(js_name = ownedScreens)]
pub fn owned_screens() -> u32 {
    u32::try_from(crate::leave::owned_screens()).unwrap_or(u32::MAX)
}
