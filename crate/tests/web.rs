//! Browser tests: the real driver, real timers and real `AbortController`s, in headless Chrome
//! and Firefox.
//!
//! Every request goes through a scripted fetch (`tests/web_support.js`) that answers with a real
//! `Response`, real headers and a real body after a real delay, honours its abort signal the way
//! `fetch` does, and records each call: its method, when it started, and when its signal fired.
//! Cancellation is shown by what did *not* happen: each test that stops an action pauses past
//! the moment a runaway retry would have been sent and then checks that no request started.
//!
//! The two schedules of the source document run at full scale in real time (about 14 s, side by
//! side); every other test is about logic and runs under a scaled-down policy in well under a
//! second or two. wasm-bindgen-test runs one test at a time, so each test ends by checking that
//! nothing it started is still running.
#![cfg(target_arch = "wasm32")]

use js_sys::{Function, Object, Promise, Reflect};
use serde::Deserialize;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{AbortController, AbortSignal};

wasm_bindgen_test_configure!(run_in_browser);

mod support;
use support::{now_ms, set, sleep, to_json, OtherTab, ScriptedFetch};

#[wasm_bindgen(module = "/tests/web_support.js")]
extern "C" {
    #[wasm_bindgen(js_name = sharedNowMs)]
    fn shared_now_ms() -> f64;
    #[wasm_bindgen(js_name = hideThenShow)]
    fn hide_then_show(gap_ms: f64) -> Promise;
    #[wasm_bindgen(js_name = hostileOptions)]
    fn hostile_options(fetch: &Function) -> js_sys::Array;
    #[wasm_bindgen(js_name = endlessLists)]
    fn endless_lists(fetch: &Function) -> js_sys::Array;
    #[wasm_bindgen(js_name = hostileScenarios)]
    fn hostile_scenarios() -> js_sys::Array;
    #[wasm_bindgen(js_name = foreignSignals)]
    fn foreign_signals() -> Object;
    #[wasm_bindgen(js_name = detachedSignal)]
    fn detached_signal() -> Object;
    #[wasm_bindgen(js_name = oddFetches)]
    fn odd_fetches() -> Object;
    #[wasm_bindgen(js_name = settlesWithin)]
    fn settles_within(promise: &Promise, ms: f64) -> Promise;
    #[wasm_bindgen(js_name = refusingSignal)]
    fn refusing_signal() -> JsValue;
    #[wasm_bindgen(js_name = rfc850DateFetch)]
    fn rfc850_date_fetch() -> Function;
    #[wasm_bindgen(js_name = unreadableNamedScenario)]
    fn unreadable_named_scenario() -> JsValue;
    #[wasm_bindgen(js_name = openGate)]
    fn open_gate(name: &str);
    #[wasm_bindgen(js_name = describeError)]
    fn describe_error(error: &JsValue) -> String;

    type UpdateLog;
    #[wasm_bindgen(constructor)]
    fn new() -> UpdateLog;
    #[wasm_bindgen(method, getter, js_name = onUpdate)]
    fn on_update(this: &UpdateLog) -> Function;
    #[wasm_bindgen(method, js_name = updatesJson)]
    fn updates_json(this: &UpdateLog) -> String;
    #[wasm_bindgen(method, js_name = until)]
    fn until_promise(this: &UpdateLog, kind: &str) -> Promise;

    type TimerShift;
    #[wasm_bindgen(constructor)]
    fn new(log: &UpdateLog, shift_ms: f64) -> TimerShift;
    #[wasm_bindgen(method)]
    fn restore(this: &TimerShift);
    #[wasm_bindgen(method, js_name = usedJson)]
    fn used_json(this: &TimerShift) -> String;
    #[wasm_bindgen(static_method_of = TimerShift, js_name = isRestored)]
    fn is_restored() -> bool;

    type ReportRecorder;
    #[wasm_bindgen(constructor)]
    fn new() -> ReportRecorder;
    #[wasm_bindgen(method)]
    fn count(this: &ReportRecorder) -> u32;
    #[wasm_bindgen(method, js_name = allAre)]
    fn all_are(this: &ReportRecorder, error: &JsValue) -> bool;
    #[wasm_bindgen(method)]
    fn restore(this: &ReportRecorder);
    #[wasm_bindgen(js_name = throwingView)]
    fn throwing_view(error: &JsValue) -> Function;

    type ListenerWatch;
    #[wasm_bindgen(constructor)]
    fn new() -> ListenerWatch;
    #[wasm_bindgen(method, getter)]
    fn signal(this: &ListenerWatch) -> JsValue;
    #[wasm_bindgen(method)]
    fn stop(this: &ListenerWatch);
    #[wasm_bindgen(method, js_name = countsJson)]
    fn counts_json(this: &ListenerWatch) -> String;

    #[wasm_bindgen(js_name = changingSignals)]
    fn changing_signals() -> js_sys::Array;
    #[wasm_bindgen(js_name = answerThenLeave)]
    fn answer_then_leave(controller: &AbortController, body: &str) -> Function;
    #[wasm_bindgen(js_name = abortOnWait)]
    fn abort_on_wait(log: &UpdateLog, controller: &AbortController);

    type TimerLog;
    #[wasm_bindgen(constructor)]
    fn new() -> TimerLog;
    #[wasm_bindgen(method)]
    fn stop(this: &TimerLog);
    #[wasm_bindgen(method, js_name = requestedJson)]
    fn requested_json(this: &TimerLog) -> String;
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// How late one live step may be: a start after the end of the wait before it (or the first
/// start after the action began), 500 ms. Nothing live is ever allowed to be *earlier* than
/// its cause or than the model's figure. Lateness is bounded per step, never along a whole
/// schedule, where it adds up (each step starts from the live receipt before it). Measured over
/// repeated runs of the full-scale schedules: headless Chrome is 4-13 ms late; headless Firefox
/// is often as prompt, but when the page is otherwise idle it holds a multi-second timer back
/// by 100-330 ms now and then (333 ms was the worst seen), so 300 ms would be flaky there.
/// 500 ms is still far below any scheduling mistake worth catching: a wait measured from the
/// start instead of the receipt, or a doubled or skipped wait, is off by a whole second or
/// more.
const TOLERANCE_S: f64 = 0.5;

/// The grain of `performance.now()`: browsers coarsen it (Firefox to a millisecond outside
/// cross-origin isolation), so two readings of one instant may differ by that much. Lower bounds
/// on times the recorder took are measured from a reading the test took *before* it started the
/// action, which the driver's clock origin cannot precede, so this grain is their only slack: a
/// busy machine can delay the driver, never make it early.
const CLOCK_GRAIN_S: f64 = 0.002;

/// One call the scripted fetch received.
#[derive(Debug, Deserialize)]
struct Call {
    url: String,
    method: Option<String>,
    start_ms: f64,
    start_wall_ms: f64,
    has_signal: bool,
    aborted_ms: Option<f64>,
    settled: Option<String>,
    settled_ms: Option<f64>,
    headers: Option<serde_json::Map<String, Value>>,
}

/// One onUpdate call.
#[derive(Debug, Deserialize)]
struct Update {
    at_ms: f64,
    update: Value,
}

/// The timer a [`TimerShift`] moved: asked for `requested_ms` when it was armed, at `at_ms`.
#[derive(Debug, Deserialize)]
struct Shifted {
    requested_ms: f64,
    used_ms: f64,
    at_ms: f64,
}

/// Until the view has been told of an event of `kind`: a test waits for the step it needs, not
/// for a time it guesses the step takes.
async fn told(log: &UpdateLog, kind: &str) {
    JsFuture::from(log.until_promise(kind))
        .await
        .expect("an update");
}

/// Until call `index` (from 0) of `fetch` has settled, however it settled.
async fn call_settled(fetch: &ScriptedFetch, index: u32) {
    JsFuture::from(fetch.when_settled(index))
        .await
        .expect("the call settles");
}

fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).expect("valid JSON")
}

fn calls(fetch: &ScriptedFetch) -> Vec<Call> {
    serde_json::from_str(&fetch.calls_json()).expect("calls")
}

fn updates(log: &UpdateLog) -> Vec<Update> {
    serde_json::from_str(&log.updates_json()).expect("updates")
}

/// The options object for `fetchWithBudget`. The tests run side by side in one page against
/// one origin, and each is about one action alone, so none shares origin blocks (the sharing
/// tests set `share` themselves).
fn options(policy: &Value, fetch: &ScriptedFetch, log: &UpdateLog) -> Object {
    let options = Object::new();
    set(&options, "share", &JsValue::from_str("none"));
    set(&options, "policy", &to_js(policy));
    set(&options, "fetch", &fetch.fetch());
    set(&options, "onUpdate", &log.on_update());
    options
}

/// The options for `fetchWithBudget` with `fetch` any function, sharing nothing.
fn calling(policy: &Value, fetch: &JsValue) -> Object {
    let options = Object::new();
    set(&options, "share", &JsValue::from_str("none"));
    set(&options, "policy", &to_js(policy));
    set(&options, "fetch", fetch);
    options
}

/// Starts one action.
fn start(url: &str, options: &Object) -> Promise {
    retry_budget::fetch_with_budget(JsValue::from_str(url), options.clone().into())
}

/// Awaits an action: `Ok(report)` when it resolves, `Err({is_error, name, message, report})`
/// when it rejects.
async fn settle(promise: Promise) -> Result<Value, Value> {
    match JsFuture::from(promise).await {
        Ok(report) => Ok(to_json(&report)),
        Err(error) => Err(serde_json::from_str(&describe_error(&error)).expect("description")),
    }
}

/// An action that must resolve.
async fn resolved(promise: Promise) -> Value {
    match settle(promise).await {
        Ok(report) => report,
        Err(error) => panic!("the action rejected: {error}"),
    }
}

/// An action that must reject as the screen letting go: an `Error` named `AbortError`
/// carrying a `user_left` report. Returns the report.
async fn left(promise: Promise) -> Value {
    match settle(promise).await {
        Ok(report) => panic!("the action resolved although its screen let go: {report}"),
        Err(error) => {
            assert_eq!(error["is_error"], true, "rejects with an Error: {error}");
            assert_eq!(error["name"], "AbortError", "{error}");
            let report = error["report"].clone();
            assert_eq!(report["outcome"], "user_left", "{error}");
            report
        }
    }
}

/// A refusal of the arguments: the promise rejects (it never throws), with the error as
/// `{is_error, name, message}`.
async fn refused(url: JsValue, options: &Object) -> Value {
    let promise = retry_budget::fetch_with_budget(url, options.clone().into());
    match settle(promise).await {
        Ok(report) => panic!("fetchWithBudget accepted options it should refuse: {report}"),
        Err(error) => error,
    }
}

/// Runs the pure model on a scenario built from `policy`, `responses` and any `extra` fields.
fn model(name: &str, policy: &Value, responses: &Value, extra: Value) -> Value {
    let mut scenario = json!({ "name": name, "policy": policy, "responses": responses });
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            scenario[key] = value;
        }
    }
    let report = retry_budget::simulate(to_js(&scenario))
        .map_err(JsValue::from)
        .expect("the model accepts the scenario");
    to_json(&report)
}

fn num(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("a number: {value}"))
}

fn events<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["event"] == kind)
        .collect()
}

fn kinds(report: &Value) -> Vec<String> {
    report["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["event"].as_str().expect("event name").to_owned())
        .collect()
}

fn visible(report: &Value) -> String {
    report["visible"]
        .as_array()
        .expect("visible")
        .iter()
        .map(|line| line.as_str().expect("a line"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn attempt_starts(report: &Value) -> Vec<f64> {
    report["attempt_starts_s"]
        .as_array()
        .expect("attempt_starts_s")
        .iter()
        .map(num)
        .collect()
}

/// Nothing this test started is still running, no screen is still owned, and the real
/// setTimeout is in place.
fn assert_clean() {
    assert_eq!(retry_budget::running_actions(), 0, "running actions");
    assert_eq!(retry_budget::owned_screens(), 0, "owned screens");
    assert!(TimerShift::is_restored(), "setTimeout restored");
}

/// A policy scaled down for tests about logic.
fn scaled() -> Value {
    json!({
        "budget_s": 2, "max_attempts": 3, "attempt_cap_s": 0.4,
        "min_wait_s": 0.05, "fallback_base_s": 0.1
    })
}

const LIST: &str = r#"["sea glass", "driftwood", "kelp"]"#;

fn list() -> Value {
    serde_json::from_str(LIST).expect("list")
}

// ---------------------------------------------------------------------------------------------
// The source document's schedules, full scale, real time
// ---------------------------------------------------------------------------------------------

const FIXTURES: &str = include_str!("../../fixtures/B62-16-schedules.json");

fn fixture(name: &str) -> Value {
    let file: Value = serde_json::from_str(FIXTURES).expect("fixture file");
    file["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("fixture {name}"))
        .clone()
}

/// The fixture's responses as a live script. A `Retry-After` date (which the fixture writes on
/// its supplied wall clock) becomes a date the same number of seconds after the live response's
/// own `Date` header, taken from the model's reading of it, so the live server asks for the
/// same delay by its own clock.
fn live_script(scenario: &Value, model: &Value) -> Value {
    let date_delays: Vec<(u64, f64)> = events(model, "receipt")
        .iter()
        .filter(|r| r["retry_after"]["kind"] == "date")
        .map(|r| {
            (
                r["attempt"].as_u64().expect("attempt"),
                num(&r["retry_after"]["delay_s"]),
            )
        })
        .collect();
    let mut script = scenario["responses"].clone();
    for (i, response) in script
        .as_array_mut()
        .expect("responses")
        .iter_mut()
        .enumerate()
    {
        let attempt = i as u64 + 1;
        if let Some(&(_, delay)) = date_delays.iter().find(|(a, _)| *a == attempt) {
            response["headers"]["Retry-After"] = json!({ "date_offset_s": delay });
            response["headers"]["Date"] = json!({ "date_offset_s": 0 });
        }
    }
    script
}

/// Checks a live full-scale run against the model's report for the same fixture, and returns
/// the largest lateness of a live start after its cause (by the driver's clock and by the
/// recorder's). `started_ms` is `now_ms()` read just before the action was started.
fn compare_with_model(
    name: &str,
    live: &Value,
    model: &Value,
    calls: &[Call],
    started_ms: f64,
) -> f64 {
    assert_eq!(live["outcome"], model["outcome"], "{name}: outcome");
    assert_eq!(live["attempts"], model["attempts"], "{name}: attempts");
    assert_eq!(
        live["last_response"]["status"], model["last_response"]["status"],
        "{name}: last status"
    );
    assert_eq!(
        live["last_response"]["retry_after"], model["last_response"]["retry_after"],
        "{name}: last Retry-After"
    );
    // The same waits, from the same source, for the same delays.
    let waits = |r: &Value| -> Vec<(Value, Value, Value)> {
        events(r, "wait")
            .iter()
            .map(|w| {
                (
                    w["source"].clone(),
                    w["delay_s"].clone(),
                    w["wait_s"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(waits(live), waits(model), "{name}: waits");
    // The same trace, apart from timer events: a live timer may wake early and re-arm.
    let without_timers =
        |r: &Value| -> Vec<String> { kinds(r).into_iter().filter(|k| k != "timer").collect() };
    assert_eq!(without_timers(live), without_timers(model), "{name}: trace");

    let live_starts = attempt_starts(live);
    let model_starts = attempt_starts(model);
    assert_eq!(live_starts.len(), model_starts.len(), "{name}: starts");
    assert_eq!(calls.len(), model_starts.len(), "{name}: requests sent");
    for (i, (&live_at, &model_at)) in live_starts.iter().zip(&model_starts).enumerate() {
        let seen = (calls[i].start_ms - started_ms) / 1000.0;
        assert!(
            live_at >= model_at,
            "{name}: attempt {} started at {live_at} s, before the model's {model_at} s",
            i + 1
        );
        assert!(
            seen >= model_at - CLOCK_GRAIN_S,
            "{name}: request {} was sent at {seen} s, before the model's {model_at} s",
            i + 1
        );
    }
    // Each start is timed from its own cause: the first from the action's start, each later
    // one from the end of the wait before it (by the driver's clock), or from the 429 settling
    // plus the wait's length (by the recorder's, which saw the 429 before the driver did).
    let first_seen = (calls[0].start_ms - started_ms) / 1000.0;
    let mut worst = live_starts[0].max(first_seen);
    for (i, wait) in events(live, "wait").iter().enumerate() {
        let next = live_starts[i + 1];
        let late = next - num(&wait["until_s"]);
        let settled = calls[i].settled_ms.expect("settled");
        let length = num(&wait["until_s"]) - num(&wait["at_s"]);
        let seen_late = (calls[i + 1].start_ms - settled) / 1000.0 - length;
        assert!(
            late >= 0.0 && seen_late >= -CLOCK_GRAIN_S,
            "{name}: attempt {} started {late} s (sent {seen_late} s) after its wait ended",
            i + 2
        );
        worst = worst.max(late).max(seen_late);
    }
    assert!(
        worst <= TOLERANCE_S,
        "{name}: a start came {worst} s after its cause, more than {TOLERANCE_S} s"
    );
    // The totals: never less than the model's, and late by at most a tolerance a step.
    let steps = live_starts.len() as f64;
    for field in ["elapsed_s", "request_s", "wait_s"] {
        let (l, m) = (num(&live[field]), num(&model[field]));
        assert!(
            l >= m - 1e-9 && l - m <= TOLERANCE_S * steps,
            "{name}: {field} live {l} vs model {m}"
        );
    }
    worst
}

/// Schedule A (Retry-After 3 then 4) and Schedule B (Retry-After dates four seconds after each
/// response's own `Date`) at full scale, in real time, side by side: each takes 14 s. The live
/// trace must match the model's for the same fixture: the same outcome, attempts, waits, trace
/// and last response; every start no earlier than the model's and at most [`TOLERANCE_S`]
/// (500 ms) later, by the driver's clock and by when the request really reached fetch; and the
/// same elapsed, request and wait time within the same tolerance.
#[wasm_bindgen_test]
async fn schedules_a_and_b_full_scale_match_the_model() {
    let a = fixture("schedule-a");
    let b = fixture("schedule-b");
    let model_a = model(
        "schedule-a",
        &a["policy"],
        &a["responses"],
        json!({
            "wall_clock_at_start": a["wall_clock_at_start"],
        }),
    );
    let model_b = model(
        "schedule-b",
        &b["policy"],
        &b["responses"],
        json!({
            "wall_clock_at_start": b["wall_clock_at_start"],
        }),
    );
    assert_eq!(model_a["elapsed_s"], json!(14));
    assert_eq!(model_b["elapsed_s"], json!(14));

    let fetch_a = ScriptedFetch::new(&live_script(&a, &model_a).to_string());
    let fetch_b = ScriptedFetch::new(&live_script(&b, &model_b).to_string());
    let log_a = UpdateLog::new();
    let log_b = UpdateLog::new();
    let started_ms = now_ms();
    let run_a = start(
        "/palettes?collection=coast&schedule=a",
        &options(&a["policy"], &fetch_a, &log_a),
    );
    let run_b = start(
        "/palettes?collection=coast&schedule=b",
        &options(&b["policy"], &fetch_b, &log_b),
    );
    sleep(10.0).await; // the actions begin on their first poll
    assert_eq!(retry_budget::running_actions(), 2);
    let live_a = resolved(run_a).await;
    let live_b = resolved(run_b).await;

    let calls_a = calls(&fetch_a);
    let calls_b = calls(&fetch_b);
    let late_a = compare_with_model("schedule A", &live_a, &model_a, &calls_a, started_ms);
    let late_b = compare_with_model("schedule B", &live_b, &model_b, &calls_b, started_ms);
    // Shown with --nocapture, to keep an eye on the margin under the tolerance.
    for (name, late, live, model) in [
        ("A", late_a, &live_a, &model_a),
        ("B", late_b, &live_b, &model_b),
    ] {
        console_log!(
            "schedule {name}: latest live start {:.1} ms after its cause; elapsed {:+.1} ms",
            late * 1000.0,
            (num(&live["elapsed_s"]) - num(&model["elapsed_s"])) * 1000.0
        );
    }

    assert_eq!(live_a["outcome"], "success");
    assert_eq!(live_a["body"], list());
    assert_eq!(live_b["body"], list());
    assert_eq!(live_a["visible"][0], "Loaded: the list is ready.");
    // Schedule B's waits really were read from dates against the response's Date header.
    for call in &calls_b[..2] {
        let headers = call.headers.as_ref().expect("headers");
        assert!(headers.contains_key("date"), "{headers:?}");
        assert!(headers["retry-after"]
            .as_str()
            .expect("date")
            .ends_with(" GMT"));
    }
    assert_eq!(
        events(&live_b, "wait")
            .iter()
            .map(|w| w["source"].clone())
            .collect::<Vec<_>>(),
        [json!("server_date"), json!("server_date")]
    );
    // Every request was a GET with its own signal, to the caller's URL, and none was aborted.
    for call in calls_a.iter().chain(&calls_b) {
        assert_eq!(call.method.as_deref(), Some("GET"));
        assert!(call.has_signal);
        assert!(call.url.starts_with("/palettes?collection=coast"));
        assert_eq!(call.aborted_ms, None);
        assert_eq!(call.settled.as_deref(), Some("response"));
    }
    // onUpdate saw every event, in order, and the final state.
    for (log, live) in [(&log_a, &live_a), (&log_b, &live_b)] {
        let seen: Vec<Value> = updates(log)
            .iter()
            .flat_map(|u| u.update["events"].as_array().expect("events").clone())
            .collect();
        assert_eq!(&Value::Array(seen), &live["events"]);
        let last = updates(log).pop().expect("an update");
        assert_eq!(last.update["visible"], live["visible"]);
        assert_eq!(last.update["outcome"], "success");
    }
    sleep(300.0).await;
    assert_eq!(fetch_a.count(), 3);
    assert_eq!(fetch_b.count(), 3);
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Fallbacks and the gate
// ---------------------------------------------------------------------------------------------

/// A missing `Retry-After` falls back to `fallback_base * 2^(n-1)` (0.1 s, then 0.2 s); an
/// invalid one (`1.5`, `-1`, `tomorrow`, `NaN`, empty, `3, 4`) is recorded raw and falls back the
/// same way: one retry after 0.1 s, not a loop. Each live run matches the model's outcome,
/// attempts and waits, and no retry starts before its fallback wait is over.
#[wasm_bindgen_test]
async fn missing_and_invalid_retry_after_fall_back() {
    let policy = scaled();
    let ok = json!({ "duration_s": 0.05, "status": 200, "body": list() });
    let mut cases = vec![(
        "missing".to_owned(),
        json!([
            { "duration_s": 0.05, "status": 429 },
            { "duration_s": 0.05, "status": 429 },
            ok.clone()
        ]),
    )];
    for raw in ["1.5", "-1", "tomorrow", "NaN", "", "3, 4"] {
        cases.push((
            format!("invalid {raw:?}"),
            json!([
                { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": raw } },
                ok.clone()
            ]),
        ));
    }
    let mut running = Vec::new();
    for (name, script) in &cases {
        let fetch = ScriptedFetch::new(&script.to_string());
        let log = UpdateLog::new();
        let promise = start("/palettes", &options(&policy, &fetch, &log));
        running.push((name, script, fetch, promise));
    }
    for (name, script, fetch, promise) in running {
        let live = resolved(promise).await;
        let model = model(name, &policy, script, json!({}));
        assert_eq!(live["outcome"], "success", "{name}");
        assert_eq!(live["outcome"], model["outcome"], "{name}");
        assert_eq!(live["attempts"], model["attempts"], "{name}");
        assert_eq!(live["body"], list(), "{name}");
        let live_waits = events(&live, "wait");
        let model_waits = events(&model, "wait");
        assert_eq!(live_waits.len(), model_waits.len(), "{name}");
        for (l, m) in live_waits.iter().zip(&model_waits) {
            assert_eq!(l["source"], m["source"], "{name}");
            assert_eq!(l["delay_s"], m["delay_s"], "{name}");
        }
        let receipt = &events(&live, "receipt")[0];
        if name == "missing" {
            assert_eq!(receipt["retry_after"]["kind"], "missing");
            assert_eq!(live_waits[0]["source"], "fallback_missing");
            assert_eq!(live_waits[1]["source"], "fallback_missing");
            assert_eq!(live_waits[0]["delay_s"], json!(0.1));
            assert_eq!(live_waits[1]["delay_s"], json!(0.2));
        } else {
            let raw = script[0]["headers"]["Retry-After"].clone();
            assert_eq!(receipt["retry_after"]["kind"], "invalid", "{name}");
            assert_eq!(receipt["retry_after"]["raw"], raw, "{name}");
            assert_eq!(live_waits[0]["source"], "fallback_invalid", "{name}");
            assert_eq!(live_waits[0]["delay_s"], json!(0.1), "{name}");
        }
        let starts = attempt_starts(&live);
        let calls = calls(&fetch);
        assert_eq!(calls.len(), starts.len(), "{name}");
        for (i, wait) in live_waits.iter().enumerate() {
            let after = num(&wait["until_s"]);
            assert!((after - num(&wait["at_s"]) - num(&wait["delay_s"])).abs() < 1e-9);
            assert!(
                starts[i + 1] >= after,
                "{name}: retry {i} at {} s",
                starts[i + 1]
            );
            let gap = (calls[i + 1].start_ms - calls[i].settled_ms.expect("settled")) / 1000.0;
            assert!(
                gap >= num(&wait["delay_s"]) - CLOCK_GRAIN_S,
                "{name}: the retry went out {gap} s after the 429"
            );
        }
    }
    assert_clean();
}

/// A 429 asking for 30 s stops at once as `budget_exhausted`: no shortened wait, no second
/// request, even well after the stop. And a wait that fits while a full cap after it does not
/// (a 429 at 0.2 s, min wait 1 s, cap 1.5 s, budget 2 s; the wait would fit even if the 429
/// came 0.8 s late) stops at once too, saying so.
#[wasm_bindgen_test]
async fn a_wait_past_the_budget_stops_with_no_second_request() {
    let too_long = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "30" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&too_long.to_string());
    let run = start("/palettes", &options(&scaled(), &fetch, &UpdateLog::new()));

    let mut tight = scaled();
    tight["min_wait_s"] = json!(1);
    tight["attempt_cap_s"] = json!(1.5);
    let no_cap = json!([
        { "duration_s": 0.2, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch_tight = ScriptedFetch::new(&no_cap.to_string());
    let run_tight = start(
        "/palettes",
        &options(&tight, &fetch_tight, &UpdateLog::new()),
    );

    let report = resolved(run).await;
    let model_report = model("wait-exceeds-budget", &scaled(), &too_long, json!({}));
    assert_eq!(report["outcome"], "budget_exhausted");
    assert_eq!(report["outcome"], model_report["outcome"]);
    assert_eq!(report["attempts"], 1);
    assert_eq!(report["wait_s"], json!(0));
    assert_eq!(report["last_response"]["retry_after"]["delay_s"], json!(30));
    // It stopped at the receipt itself, not after any wait.
    assert_eq!(report["elapsed_s"], events(&report, "receipt")[0]["at_s"]);
    assert_eq!(
        report["visible"][0],
        "Stopped: retry budget cannot fit another request."
    );
    assert!(report["visible"][1]
        .as_str()
        .expect("figures")
        .starts_with("Last response: 429. Attempts: 1 of 3. Elapsed: "));
    assert_eq!(
        report["visible"][2],
        "The service requested a 30-second delay. No retry was sent."
    );

    let report_tight = resolved(run_tight).await;
    assert_eq!(report_tight["outcome"], "budget_exhausted");
    assert_eq!(report_tight["attempts"], 1);
    assert!(
        visible(&report_tight).contains("past the 2-second budget"),
        "{}",
        visible(&report_tight)
    );

    // Well past the moment any retry could have gone out (the 1 s wait included).
    sleep(400.0).await;
    assert_eq!(
        fetch.count(),
        1,
        "no second request after a 30 s Retry-After"
    );
    assert_eq!(calls(&fetch)[0].aborted_ms, None);
    sleep(1_600.0).await;
    assert_eq!(
        fetch_tight.count(),
        1,
        "no second request without room for its cap"
    );
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Leaving
// ---------------------------------------------------------------------------------------------

/// Leaving during a wait (the caller aborts its signal once the view has been told of a 0.6 s
/// fallback wait) and during a request (aborted once the view has been told of the start of a
/// 0.6 s request whose server ignores the abort and answers anyway). Both reject with an
/// `AbortError` carrying a `user_left` report; the in-flight request's own signal fired before
/// the next task; no request starts afterwards, even past the moment the wait would have ended;
/// the late response changes nothing; and onUpdate is never called after leaving.
#[wasm_bindgen_test]
async fn leaving_during_a_wait_or_a_request_ends_the_action() {
    let mut policy = scaled();
    policy["fallback_base_s"] = json!(0.6);
    policy["attempt_cap_s"] = json!(1);

    // During a wait.
    let waiting = json!([
        { "duration_s": 0.05, "status": 429 },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch_wait = ScriptedFetch::new(&waiting.to_string());
    let log_wait = UpdateLog::new();
    let leave_wait = AbortController::new().expect("AbortController");
    let opts = options(&policy, &fetch_wait, &log_wait);
    set(&opts, "signal", &leave_wait.signal());
    let run_wait = start("/palettes", &opts);

    // During a request whose server answers after the abort anyway.
    let in_flight = json!([
        { "duration_s": 0.6, "status": 200, "body": list(), "ignore_abort": true },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch_flight = ScriptedFetch::new(&in_flight.to_string());
    let log_flight = UpdateLog::new();
    let leave_flight = AbortController::new().expect("AbortController");
    let opts = options(&policy, &fetch_flight, &log_flight);
    set(&opts, "signal", &leave_flight.signal());
    let run_flight = start("/palettes", &opts);

    told(&log_flight, "start").await;
    let flight_left_at = now_ms();
    leave_flight.abort();
    sleep(0.0).await;
    let next_task_at = now_ms();
    told(&log_wait, "wait").await;
    let wait_left_at = now_ms();
    leave_wait.abort();

    let report_wait = left(run_wait).await;
    let report_flight = left(run_flight).await;

    // The wait.
    assert_eq!(report_wait["attempts"], 1);
    assert_eq!(
        kinds(&report_wait),
        ["start", "receipt", "wait", "left", "stop"]
    );
    let left_s = num(&events(&report_wait, "left")[0]["at_s"]);
    assert!(left_s < num(&events(&report_wait, "wait")[0]["until_s"]));
    let receipt_s = num(&events(&report_wait, "receipt")[0]["at_s"]);
    assert!((num(&report_wait["wait_s"]) - (left_s - receipt_s)).abs() < 1e-6);
    assert!(
        visible(&report_wait).contains("The wait was cancelled. No retry was sent."),
        "{}",
        visible(&report_wait)
    );
    assert_eq!(report_wait["last_response"]["status"], 429);

    // The request.
    assert_eq!(report_flight["attempts"], 1);
    assert_eq!(kinds(&report_flight), ["start", "left", "stop"]);
    assert_eq!(report_flight["last_response"], Value::Null);
    assert!(
        visible(&report_flight).contains("The request in flight was abandoned"),
        "{}",
        visible(&report_flight)
    );
    let call = &calls(&fetch_flight)[0];
    let aborted = call
        .aborted_ms
        .expect("the in-flight request saw its signal abort");
    assert!(
        (flight_left_at..=next_task_at).contains(&aborted),
        "the request's signal fired at {aborted} ms: not between leaving ({flight_left_at} ms) \
         and the next task ({next_task_at} ms)"
    );

    // Past the late answer, and past the end of the cancelled wait (0.6 s after its 429: a
    // timer armed later fires later).
    call_settled(&fetch_flight, 0).await;
    sleep(650.0).await;
    assert_eq!(
        fetch_wait.count(),
        1,
        "no request after leaving during the wait"
    );
    assert_eq!(
        fetch_flight.count(),
        1,
        "no request after leaving during the request"
    );
    let late = &calls(&fetch_flight)[0];
    assert_eq!(
        late.settled.as_deref(),
        Some("response"),
        "the late answer did arrive"
    );
    assert!(late.settled_ms.expect("settled") > flight_left_at);
    for (log, at, name) in [
        (&log_wait, wait_left_at, "wait"),
        (&log_flight, flight_left_at, "request"),
    ] {
        let all = updates(log);
        assert!(!all.is_empty());
        for update in &all {
            assert!(
                update.at_ms < at,
                "{name}: onUpdate called after leaving: {:?}",
                update.update
            );
            assert_ne!(update.update["outcome"], "user_left");
        }
    }
    assert_clean();
}

/// A `pagehide` on the window ends a waiting action as `user_left`; a `pageshow` that follows
/// (a page restored from the back/forward cache) resumes nothing: no request, ever.
#[wasm_bindgen_test]
async fn pagehide_ends_the_action_and_pageshow_resumes_nothing() {
    let mut policy = scaled();
    policy["fallback_base_s"] = json!(0.6);
    let script = json!([
        { "duration_s": 0.05, "status": 429 },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let log = UpdateLog::new();
    let run = start("/palettes", &options(&policy, &fetch, &log));
    told(&log, "wait").await;
    let hidden_at = JsFuture::from(hide_then_show(20.0))
        .await
        .expect("events dispatched")
        .as_f64()
        .expect("a time");
    let report = left(run).await;
    assert_eq!(report["attempts"], 1);
    assert!(visible(&report).contains("The wait was cancelled."));
    // Past the end of the cancelled wait (0.05 + 0.6 s).
    sleep(650.0).await;
    assert_eq!(fetch.count(), 1, "nothing resumed after pageshow");
    assert!(updates(&log).iter().all(|u| u.at_ms < hidden_at));
    assert_clean();
}

/// A second action for the same screen supersedes the first: the first rejects as
/// `user_left`, its in-flight request's signal is aborted when the second starts (before the
/// next task), its onUpdate
/// is never called again, and nothing more is sent for it; its server's late answer (which
/// ignores the abort) reaches nobody; the second completes normally with its own result.
#[wasm_bindgen_test]
async fn a_newer_action_for_the_same_screen_supersedes_the_stale_one() {
    let mut policy = scaled();
    policy["attempt_cap_s"] = json!(1);
    // The old server answers anyway, after the new action has finished.
    let slow = json!([
        { "duration_s": 0.6, "status": 200, "body": ["stale"], "ignore_abort": true }
    ]);
    let fresh = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch_old = ScriptedFetch::new(&slow.to_string());
    let log_old = UpdateLog::new();
    let opts = options(&policy, &fetch_old, &log_old);
    set(&opts, "screen", &JsValue::from_str("palettes"));
    let run_old = start("/palettes?old", &opts);
    told(&log_old, "start").await;
    assert_eq!(retry_budget::owned_screens(), 1);

    let fetch_new = ScriptedFetch::new(&fresh.to_string());
    let log_new = UpdateLog::new();
    let opts = options(&policy, &fetch_new, &log_new);
    set(&opts, "screen", &JsValue::from_str("palettes"));
    let superseded_at = now_ms();
    let run_new = start("/palettes?new", &opts);
    sleep(0.0).await;
    let next_task_at = now_ms();
    assert_eq!(retry_budget::owned_screens(), 1, "one screen, one owner");

    let old = left(run_old).await;
    assert_eq!(old["attempts"], 1);
    assert_eq!(old["last_response"], Value::Null);
    let new = resolved(run_new).await;
    assert_eq!(new["outcome"], "success");
    assert_eq!(new["attempts"], 2);
    assert_eq!(new["body"], list());

    let old_call = &calls(&fetch_old)[0];
    let aborted = old_call.aborted_ms.expect("the stale request was aborted");
    assert!(
        (superseded_at..=next_task_at).contains(&aborted),
        "the stale request's signal fired at {aborted} ms: not between the new start \
         ({superseded_at} ms) and the next task ({next_task_at} ms)"
    );
    call_settled(&fetch_old, 0).await;
    let old_call = &calls(&fetch_old)[0];
    assert_eq!(
        old_call.settled.as_deref(),
        Some("response"),
        "the stale answer did arrive"
    );
    assert!(old_call.settled_ms.expect("settled") > superseded_at);
    assert_eq!(fetch_old.count(), 1);
    assert_eq!(fetch_new.count(), 2);
    assert!(updates(&log_old).iter().all(|u| u.at_ms < superseded_at));
    assert_eq!(
        updates(&log_new).pop().expect("update").update["outcome"],
        "success"
    );
    assert_clean();
}

/// Two calls for one screen in one task (a component mounted twice, as React's StrictMode
/// mounts it) send one request: the older lets go at the newer's call, before its task
/// begins, and rejects having sent nothing. A call whose signal was aborted before it takes no
/// screen: the action that holds the screen goes on.
#[wasm_bindgen_test]
async fn two_calls_for_one_screen_in_one_task_send_one_request() {
    let ok = json!([{ "duration_s": 0.05, "status": 200, "body": list() }]);
    let with_screen = |fetch: &ScriptedFetch, signal: Option<AbortSignal>| {
        let opts = options(&scaled(), fetch, &UpdateLog::new());
        set(&opts, "screen", &JsValue::from_str("mounted twice"));
        if let Some(signal) = signal {
            set(&opts, "signal", &signal);
        }
        opts
    };
    let fetch_first = ScriptedFetch::new(&ok.to_string());
    let fetch_second = ScriptedFetch::new(&ok.to_string());
    let first = start("/palettes?first", &with_screen(&fetch_first, None));
    let second = start("/palettes?second", &with_screen(&fetch_second, None));
    let report = left(first).await;
    assert_eq!(report["attempts"], 0, "{report}");
    assert_eq!(fetch_first.count(), 0, "the older action sent a request");

    // While the second runs, a call for its screen whose signal is already aborted.
    let gone = AbortController::new().expect("AbortController");
    gone.abort();
    let fetch_gone = ScriptedFetch::new(&ok.to_string());
    let stillborn = start(
        "/palettes?gone",
        &with_screen(&fetch_gone, Some(gone.signal())),
    );
    assert_eq!(left(stillborn).await["attempts"], 0);
    assert_eq!(resolved(second).await["outcome"], "success");
    assert_eq!(fetch_second.count(), 1);
    assert_eq!(fetch_gone.count(), 0);
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// The cap, and timers that do not fire on time
// ---------------------------------------------------------------------------------------------

/// The per-attempt cap (0.3 s) is enforced for real: a response whose body never finishes, a
/// request whose headers never come, and an injected fetch whose promise never settles (not
/// even when its signal aborts) are all aborted at the cap, never before, and stop as a
/// timed-out `transport_error` (not retried, although the budget has room); the screen says the
/// attempt took longer than its limit, and none of them keeps its action running.
#[wasm_bindgen_test]
async fn the_cap_aborts_a_slow_response() {
    let mut policy = scaled();
    policy["attempt_cap_s"] = json!(0.3);
    let slow_body = json!([
        { "duration_s": 0.05, "status": 200, "hang": "body" },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let no_headers = json!([
        { "hang": "headers" },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let never = json!([
        { "hang": "headers", "ignore_abort": true },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch_body = ScriptedFetch::new(&slow_body.to_string());
    let fetch_headers = ScriptedFetch::new(&no_headers.to_string());
    let fetch_never = ScriptedFetch::new(&never.to_string());
    let timers = TimerLog::new();
    let started_ms = now_ms();
    let run_body = start(
        "/palettes",
        &options(&policy, &fetch_body, &UpdateLog::new()),
    );
    let run_headers = start(
        "/palettes",
        &options(&policy, &fetch_headers, &UpdateLog::new()),
    );
    let run_never = start(
        "/palettes",
        &options(&policy, &fetch_never, &UpdateLog::new()),
    );
    let body = resolved(run_body).await;
    let headers = resolved(run_headers).await;
    let never = resolved(run_never).await;
    timers.stop();
    assert_clean();
    // Each cap's timer was armed for what was left of its 300 ms, never more: a timer armed
    // late or long would abort late, which the bounds below, from below, cannot see.
    let requested: Vec<f64> = serde_json::from_str(&timers.requested_json()).expect("delays");
    assert!(requested.len() >= 3, "the caps' timers: {requested:?}");
    assert!(
        requested.iter().all(|&ms| ms <= 300.0),
        "a timer armed past the cap: {requested:?}"
    );
    for (name, report, fetch, settled) in [
        ("slow body", &body, &fetch_body, Some("body_aborted")),
        ("no headers", &headers, &fetch_headers, Some("aborted")),
        ("never settles", &never, &fetch_never, None),
    ] {
        assert_eq!(report["outcome"], "transport_error", "{name}");
        assert_eq!(report["attempts"], 1, "{name}");
        assert_eq!(report["body"], Value::Null, "{name}");
        let failure = &events(report, "failure")[0];
        assert_eq!(failure["error"], "timed_out", "{name}");
        let stop = num(&failure["at_s"]);
        assert!(stop >= 0.3, "{name}: stopped at {stop} s, before the cap");
        assert_eq!(
            report["visible"][0], "Stopped: attempt 1 took longer than its 0.3-second limit.",
            "{name}"
        );
        let call = &calls(fetch)[0];
        // The driver arms the cap when the attempt starts, a moment before it calls fetch, so
        // the abort is measured from before the action began, not from the recorded call.
        let aborted_ms = call.aborted_ms.expect("aborted at the cap");
        assert!(
            aborted_ms >= call.start_ms,
            "{name}: aborted before it was sent"
        );
        let aborted_after = (aborted_ms - started_ms) / 1000.0;
        assert!(
            aborted_after >= 0.3 - CLOCK_GRAIN_S,
            "{name}: aborted {aborted_after} s after the action started, before the cap"
        );
        assert_eq!(call.settled.as_deref(), settled, "{name}");
    }
    // Not retried: the budget had room for three more, and none went out.
    sleep(300.0).await;
    assert_eq!(fetch_body.count(), 1);
    assert_eq!(fetch_headers.count(), 1);
    assert_eq!(fetch_never.count(), 1);
    assert_clean();
}

/// A wait's timer that fires 1.6 s late (the global setTimeout is patched for that one call):
/// the gate is checked again at the real wake-up time. After a 429 at 0.1 s with Retry-After 0,
/// the wait ends at 0.15 s and a 1 s cap fits in the 2 s budget (the 429 could come 0.85 s late
/// and it would still fit), but waking at about 1.75 s leaves no room for the cap, so the action
/// stops as `budget_exhausted` with no second request, like the model with
/// `timer_late_by_s: [1.6]`.
#[wasm_bindgen_test]
async fn a_late_timer_rechecks_the_gate() {
    let mut policy = scaled();
    policy["attempt_cap_s"] = json!(1);
    let script = json!([
        { "duration_s": 0.1, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let log = UpdateLog::new();
    let shift = TimerShift::new(&log, 1_600.0);
    let run = start("/palettes", &options(&policy, &fetch, &log));
    let settled = settle(run).await;
    shift.restore();
    let report = settled.expect("resolves");
    let shifted: Shifted = serde_json::from_str(&shift.used_json()).expect("a timer was shifted");
    assert!(
        shifted.requested_ms <= 60.0,
        "the wait's timer: {shifted:?}"
    );
    assert_eq!(shifted.used_ms, shifted.requested_ms + 1_600.0);

    let model = model(
        "late",
        &policy,
        &script,
        json!({ "timer_late_by_s": [1.6] }),
    );
    assert_eq!(model["outcome"], "budget_exhausted");
    assert_eq!(report["outcome"], model["outcome"]);
    assert_eq!(report["attempts"], 1);
    let wait = &events(&report, "wait")[0];
    assert!(
        num(&wait["until_s"]) + 1.0 <= 2.0,
        "the wait itself fit: {wait}"
    );
    let timer = &events(&report, "timer")[0];
    let woke = num(&timer["at_s"]);
    assert!(woke >= num(&timer["due_s"]) + 1.55, "{timer}");
    assert_eq!(num(&events(&report, "stop")[0]["at_s"]), woke);
    assert!((num(&report["elapsed_s"]) - num(&model["elapsed_s"])).abs() <= TOLERANCE_S);
    assert!(
        visible(&report)
            .contains("too late to reserve a 1-second attempt before the 2-second deadline"),
        "{}",
        visible(&report)
    );
    sleep(300.0).await;
    assert_eq!(fetch.count(), 1, "no attempt after the late wake-up");
    assert_clean();
}

/// A wait's timer that fires early (a 1 s server delay whose timer is patched to fire after
/// about 50 ms): the driver reads the clock, sees the wait is not over, and waits the rest.
/// No attempt starts before the server's delay is over, by the driver's clock or by when the
/// request reached fetch.
#[wasm_bindgen_test]
async fn an_early_timer_waits_the_rest() {
    let script = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let log = UpdateLog::new();
    let shift = TimerShift::new(&log, -950.0);
    let run = start("/palettes", &options(&scaled(), &fetch, &log));
    let settled = settle(run).await;
    shift.restore();
    let report = settled.expect("resolves");
    let shifted: Shifted = serde_json::from_str(&shift.used_json()).expect("a timer was shifted");
    let calls = calls(&fetch);
    let settled = calls[0].settled_ms.expect("settled");
    // The shifted timer is the wait's: it was aimed at the end of the 1 s counted from the 429's
    // receipt, which the recorder saw settle first. (It is armed a moment after the receipt,
    // for what is left of the wait by then.)
    let aimed_after = (shifted.at_ms + shifted.requested_ms - settled) / 1000.0;
    assert!(
        (1.0 - CLOCK_GRAIN_S..=1.0 + TOLERANCE_S).contains(&aimed_after),
        "the wait's timer, aimed {aimed_after} s after the 429: {shifted:?}"
    );

    assert_eq!(report["outcome"], "success");
    assert_eq!(report["attempts"], 2);
    let wait = &events(&report, "wait")[0];
    let until = num(&wait["until_s"]);
    assert_eq!(wait["delay_s"], json!(1));
    let timers = events(&report, "timer");
    assert_eq!(
        timers.len(),
        2,
        "an early wake-up, then the real one: {timers:?}"
    );
    assert!(num(&timers[0]["at_s"]) < until, "{:?}", timers[0]);
    assert!(num(&timers[1]["at_s"]) >= until, "{:?}", timers[1]);
    let starts = attempt_starts(&report);
    assert!(
        starts[1] >= until,
        "attempt 2 at {} s, before {until} s",
        starts[1]
    );
    assert!(starts[1] - until <= TOLERANCE_S);
    let gap = (calls[1].start_ms - settled) / 1000.0;
    assert!(
        gap >= 1.0 - CLOCK_GRAIN_S,
        "the retry went out {gap} s after the 429"
    );
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Clock evidence
// ---------------------------------------------------------------------------------------------

/// A `Retry-After` date with no `Date` header: under the default policy the local clock is not
/// trusted, so the action stops at once as `clock_untrusted` after one request. With
/// `trust_local_clock: true` the local clock measures the date (the next whole second, so less
/// than a second away) and the retry goes out no earlier than that date.
#[wasm_bindgen_test]
async fn a_date_without_clock_evidence_is_untrusted_unless_the_policy_trusts_the_local_clock() {
    let script = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": { "date_offset_s": 1 } } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let opts = Object::new();
    set(&opts, "fetch", &fetch.fetch());
    let report = resolved(start("/palettes", &opts)).await;
    assert_eq!(report["outcome"], "clock_untrusted");
    assert_eq!(report["attempts"], 1);
    assert_eq!(report["last_response"]["retry_after"]["kind"], "date");
    assert_eq!(
        report["last_response"]["retry_after"]["delay_s"],
        Value::Null
    );
    assert_eq!(
        report["visible"][0],
        "Stopped: the service's retry time needs a clock this page cannot trust."
    );
    let header = calls(&fetch)[0].headers.clone().expect("headers");
    assert!(!header.contains_key("date"));

    let mut trusting = scaled();
    trusting["trust_local_clock"] = json!(true);
    trusting["budget_s"] = json!(3);
    let fetch_trust = ScriptedFetch::new(&script.to_string());
    let report = resolved(start(
        "/palettes",
        &options(&trusting, &fetch_trust, &UpdateLog::new()),
    ))
    .await;
    assert_eq!(report["outcome"], "success");
    assert_eq!(report["attempts"], 2);
    let wait = &events(&report, "wait")[0];
    assert_eq!(wait["source"], "server_date");
    let delay = num(&wait["delay_s"]);
    assert!((0.0..=1.0).contains(&delay), "{wait}");
    let calls = calls(&fetch_trust);
    let retry_after = calls[0].headers.as_ref().expect("headers")["retry-after"]
        .as_str()
        .expect("a date")
        .to_owned();
    let target = js_sys::Date::parse(&retry_after);
    assert!(
        calls[1].start_wall_ms >= target - 5.0,
        "the retry went out at {} ms, before the requested {target} ({retry_after})",
        calls[1].start_wall_ms
    );
    sleep(100.0).await;
    assert_eq!(fetch.count(), 1);
    assert_eq!(fetch_trust.count(), 2);
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Refusals and cleanup
// ---------------------------------------------------------------------------------------------

/// Anything but GET is refused at once with an `Error` that says why; nothing is sent.
#[wasm_bindgen_test]
async fn a_non_get_is_refused_and_nothing_is_sent() {
    let fetch = ScriptedFetch::new("[]");
    for method in ["POST", "put", "DELETE", "PATCH"] {
        let opts = options(&scaled(), &fetch, &UpdateLog::new());
        set(&opts, "method", &JsValue::from_str(method));
        let error = refused(JsValue::from_str("/palettes"), &opts).await;
        assert_eq!(error["is_error"], true, "{method}: {error}");
        assert_eq!(error["name"], "TypeError", "{method}: {error}");
        let message = error["message"].as_str().expect("message");
        assert!(message.contains("reads only"), "{method}: {message}");
        assert!(message.contains("GET"), "{method}: {message}");
    }
    // A null method is refused too: only a method left out means GET.
    let opts = options(&scaled(), &fetch, &UpdateLog::new());
    set(&opts, "method", &JsValue::NULL);
    let error = refused(JsValue::from_str("/palettes"), &opts).await;
    assert_eq!(error["name"], "TypeError", "null: {error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("reads only")),
        "null: {error}"
    );
    // An explicit GET, any case, is accepted.
    let ok = ScriptedFetch::new(
        &json!([{ "duration_s": 0.01, "status": 200, "body": list() }]).to_string(),
    );
    let opts = options(&scaled(), &ok, &UpdateLog::new());
    set(&opts, "method", &JsValue::from_str("get"));
    assert_eq!(
        resolved(start("/palettes", &opts)).await["outcome"],
        "success"
    );
    sleep(50.0).await;
    assert_eq!(fetch.count(), 0, "a refused method sends nothing");
    assert_clean();
}

/// Bad options are refused at once with a JS `Error` whose message names the problem, and
/// nothing is sent or left running.
#[wasm_bindgen_test]
async fn bad_options_give_clear_errors() {
    let fetch = ScriptedFetch::new("[]");
    // Valid options but for `key`, set to `value`.
    let with = |key: &str, value: &JsValue| {
        let o = options(&scaled(), &fetch, &UpdateLog::new());
        set(&o, key, value);
        o
    };
    let cases: Vec<(&str, Object, &str)> = vec![
        (
            "zero budget",
            options(&json!({ "budget_s": 0 }), &fetch, &UpdateLog::new()),
            "options.policy.budget_s",
        ),
        (
            "cap over budget",
            options(
                &json!({ "budget_s": 2, "attempt_cap_s": 5 }),
                &fetch,
                &UpdateLog::new(),
            ),
            "options.policy.attempt_cap_s",
        ),
        (
            "a typo in the policy",
            options(&json!({ "budget": 5 }), &fetch, &UpdateLog::new()),
            "unknown policy field \"budget\"",
        ),
        (
            "a typo in the options (a misspelt signal loses the caller's abort)",
            with(
                "signla",
                &AbortController::new().expect("controller").signal(),
            ),
            "unknown option \"signla\"; the options are policy, signal,",
        ),
        (
            "a number where a number of seconds belongs, written as a string",
            options(&json!({ "budget_s": "20" }), &fetch, &UpdateLog::new()),
            "options.policy.budget_s must be a number, not \"20\"",
        ),
        (
            "negative",
            options(&json!({ "min_wait_s": -1 }), &fetch, &UpdateLog::new()),
            "options.policy.min_wait_s",
        ),
        (
            "fetch not a function",
            with("fetch", &JsValue::from_f64(42.0)),
            "options.fetch must be a function",
        ),
        (
            "onUpdate not a function",
            with("onUpdate", &JsValue::from_str("log")),
            "options.onUpdate must be a function",
        ),
        (
            "signal not a signal",
            with("signal", &Object::new()),
            "options.signal must be an AbortSignal",
        ),
        (
            "a signal's look without its listeners",
            with("signal", &to_js(&json!({ "aborted": false }))),
            "options.signal must be an AbortSignal",
        ),
        (
            "an empty scope",
            with("scope", &JsValue::from_str("")),
            "options.scope must be a non-empty string, not \"\"",
        ),
        (
            "an empty screen",
            with("screen", &JsValue::from_str("")),
            "options.screen must be a non-empty string, not \"\"",
        ),
        (
            "a share word that is not one of the three",
            with("share", &JsValue::from_str("tab")),
            "options.share must be \"page\", \"tabs\" or \"none\", not \"tab\"",
        ),
        (
            "a status written as a string, named by its place in the list",
            options(
                &json!({ "retry_statuses": [429, "503"] }),
                &fetch,
                &UpdateLog::new(),
            ),
            "options.policy.retry_statuses[1] must be a number, not \"503\"",
        ),
        (
            "a yes-or-no written as a string",
            options(
                &json!({ "trust_local_clock": "false" }),
                &fetch,
                &UpdateLog::new(),
            ),
            "options.policy.trust_local_clock must be true or false, not \"false\"",
        ),
    ];
    for (name, opts, needle) in cases {
        let error = refused(JsValue::from_str("/palettes"), &opts).await;
        assert_eq!(error["is_error"], true, "{name}: {error}");
        assert!(
            error["name"] == "TypeError" || error["name"] == "RangeError",
            "{name}: {error}"
        );
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains(needle),
            "{name}: {message:?} should name {needle:?}"
        );
    }
    // The list of options offered leaves out the test hook it takes.
    let typo = options(&scaled(), &fetch, &UpdateLog::new());
    set(&typo, "sginal", &JsValue::TRUE);
    let error = refused(JsValue::from_str("/palettes"), &typo).await;
    let message = error["message"].as_str().expect("message");
    assert!(
        message.ends_with(
            "the options are policy, signal, fetch, onUpdate, method, screen, share, scope"
        ),
        "{message}"
    );
    let error = refused(
        JsValue::from_f64(7.0),
        &options(&scaled(), &fetch, &UpdateLog::new()),
    )
    .await;
    assert!(
        error["message"].as_str().expect("message").contains("URL"),
        "{error}"
    );
    sleep(20.0).await;
    assert_eq!(fetch.count(), 0);
    assert_clean();
}

/// Hostile options (revoked proxies, getters and list lengths that throw, lists that claim
/// billions of entries, a proxy of a real signal, an array) are refused with an error naming
/// the option, as a rejected promise, and never break the module: a JS exception that crossed
/// its frames would leave every later call failing. After several hundred such calls a valid
/// action still runs.
#[wasm_bindgen_test]
async fn hostile_options_are_refused_and_the_module_keeps_working() {
    let ok = json!([{ "duration_s": 0.01, "status": 200, "body": list() }]);
    let fetch = ScriptedFetch::new(&ok.to_string());
    let cases: Vec<(JsValue, String)> = hostile_options(&fetch.fetch())
        .iter()
        .map(|case| {
            let case: &js_sys::Array = case.unchecked_ref();
            (case.get(0), case.get(1).as_string().expect("words"))
        })
        .collect();
    for (opts, words) in &cases {
        let error = refused(JsValue::from_str("/palettes"), opts.unchecked_ref()).await;
        assert_eq!(error["name"], "TypeError", "{words}: {error}");
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains(words.as_str()),
            "{message:?} should say {words:?}"
        );
    }
    // A list that claims 2^32 - 1 entries is refused by its length, before any is read.
    for opts in endless_lists(&fetch.fetch()).iter() {
        let error = refused(JsValue::from_str("/palettes"), opts.unchecked_ref()).await;
        assert_eq!(error["name"], "RangeError", "{error}");
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains("has 4294967295 entries, more than the 1000 read"),
            "{message:?}"
        );
    }
    for _ in 0..50 {
        for (opts, _) in &cases {
            let promise = retry_budget::fetch_with_budget("/palettes".into(), opts.clone());
            assert!(settle(promise).await.is_err());
        }
    }
    assert_eq!(fetch.count(), 0, "nothing was sent");
    let valid = start("/palettes", &options(&scaled(), &fetch, &UpdateLog::new()));
    assert_eq!(resolved(valid).await["outcome"], "success");
    assert_clean();
}

/// A signal is read by what it has: an iframe's and a polyfill's are taken, and aborting either
/// ends the action during its request, which is aborted.
#[wasm_bindgen_test]
async fn a_signal_of_another_realm_or_a_polyfill_ends_the_action() {
    let signals = foreign_signals();
    for name in ["iframe", "polyfill"] {
        let pair = Reflect::get(&signals, &name.into()).expect("a signal");
        let signal = Reflect::get(&pair, &"signal".into()).expect("signal");
        let abort: Function = Reflect::get(&pair, &"abort".into()).expect("abort").into();
        let fetch = ScriptedFetch::new(r#"[{ "hang": "headers" }]"#);
        let opts = options(&scaled(), &fetch, &UpdateLog::new());
        set(&opts, "signal", &signal);
        let run = start("/palettes", &opts);
        // The first request goes out in the microtasks after the call.
        sleep(50.0).await;
        assert_eq!(fetch.count(), 1, "{name}: the request went out");
        abort.call0(&JsValue::NULL).expect("aborted");
        let report = left(run).await;
        assert_eq!(report["attempts"], 1, "{name}: {report}");
        assert!(
            calls(&fetch)[0].aborted_ms.is_some(),
            "{name}: the request was aborted"
        );
    }
    assert_clean();
}

/// A signal whose realm is gone (a removed iframe's) is marked aborted without an `abort`
/// event: the action still ends at its next step, the wait's end, before it sends anything
/// more; aborted so right after the call, it sends nothing.
#[wasm_bindgen_test]
async fn a_signal_aborted_without_an_event_ends_the_action_at_its_next_step() {
    let pair = detached_signal();
    let signal = Reflect::get(&pair, &"signal".into()).expect("signal");
    let abort: Function = Reflect::get(&pair, &"abort".into()).expect("abort").into();
    let script = json!([
        { "duration_s": 0.02, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.02, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let log = UpdateLog::new();
    let opts = options(&scaled(), &fetch, &log);
    set(&opts, "signal", &signal);
    let run = start("/palettes", &opts);
    told(&log, "wait").await;
    abort.call0(&JsValue::NULL).expect("aborted");
    let aborted = Reflect::get(&signal, &"aborted".into()).ok();
    assert_eq!(
        aborted.and_then(|a| a.as_bool()),
        Some(true),
        "marked aborted"
    );
    let report = left(run).await;
    assert_eq!(report["attempts"], 1, "{report}");
    assert_eq!(fetch.count(), 1, "nothing more was sent: {report}");
    // Aborted so right after the call, before the action begins: nothing is sent at all.
    let pair = detached_signal();
    let signal = Reflect::get(&pair, &"signal".into()).expect("signal");
    let abort: Function = Reflect::get(&pair, &"abort".into()).expect("abort").into();
    let fetch = ScriptedFetch::new(&one_ok().to_string());
    let opts = options(&scaled(), &fetch, &UpdateLog::new());
    set(&opts, "signal", &signal);
    let run = start("/palettes", &opts);
    abort.call0(&JsValue::NULL).expect("aborted");
    let report = left(run).await;
    assert_eq!(report["attempts"], 0, "{report}");
    assert_eq!(fetch.count(), 0, "nothing was sent: {report}");
    assert_clean();
}

/// `simulate` reads a scenario object as the JSON it stands for: one that cannot be read (a
/// revoked proxy, a getter that throws) is refused with an error, never thrown through the
/// module, and a number JSON cannot carry is refused naming its field. A valid scenario still
/// runs after a few hundred refusals.
#[wasm_bindgen_test]
fn simulate_refuses_a_scenario_it_cannot_read_as_json() {
    let message = |error: JsValue| {
        Reflect::get(&error, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_default()
    };
    let cases = hostile_scenarios();
    for _ in 0..100 {
        for case in cases.iter() {
            let case: &js_sys::Array = case.unchecked_ref();
            let words = case.get(1).as_string().expect("words");
            match retry_budget::simulate(case.get(0)) {
                Ok(report) => panic!("{words}: accepted: {}", to_json(&report)),
                Err(e) => {
                    let text = message(e.into());
                    assert!(text.contains(&words), "{text:?} should say {words:?}");
                }
            }
        }
    }
    // A scenario that has a name is named in what refuses it.
    match retry_budget::simulate(unreadable_named_scenario()) {
        Ok(report) => panic!("accepted: {}", to_json(&report)),
        Err(e) => {
            let text = message(e.into());
            assert!(text.contains("\"named-one\""), "{text:?}");
        }
    }
    let report = model("after", &scaled(), &one_ok(), json!({}));
    assert_eq!(report["outcome"], "success", "{report}");
}

/// What the view throws is handed to `reportError`, as the platform reports an error a listener
/// throws (it was dropped unseen), and the action goes on: a 429, its wait, the 200.
#[wasm_bindgen_test]
async fn what_the_view_throws_is_reported_and_the_action_goes_on() {
    let script = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let broken: JsValue = js_sys::Error::new("the view is broken").into();
    let opts = Object::new();
    set(&opts, "share", &JsValue::from_str("none"));
    set(&opts, "policy", &to_js(&scaled()));
    set(&opts, "fetch", &fetch.fetch());
    set(&opts, "onUpdate", &throwing_view(&broken));
    let recorder = ReportRecorder::new();
    let settled = settle(start("/palettes", &opts)).await;
    recorder.restore();
    let report = settled.unwrap_or_else(|e| panic!("the action rejected: {e}"));
    assert_eq!(report["outcome"], "success", "{report}");
    assert_eq!(report["attempts"], 2, "{report}");
    assert!(recorder.count() >= 3, "reported {} times", recorder.count());
    assert!(recorder.all_are(&broken));
    assert_clean();
}

/// A response is read by what it has, not by its class: a Response of another realm and an
/// object that only looks like one are read (a 429 honoured, a body returned); an object made
/// from `Response.prototype`, whose getters throw, or one whose `status` throws, ends the
/// action at once as `not_a_response`, as do a status that is not a whole number, a response
/// without `text` and headers whose `get` throws; a network error (`Response.error()`, status
/// 0), an `AbortError` the driver did not cause, a promise whose `constructor` throws, a
/// rejection with no name or an empty one, and a body that fails part way fail as `network`; a
/// fetch that throws at once is named by its error; a status of 700 is a status, not retried.
/// None of them keeps an action alive or breaks the module.
#[wasm_bindgen_test]
async fn a_response_is_read_by_what_it_has() {
    let fetches = odd_fetches();
    let cases = [
        ("otherRealm", "success", json!(null), 2),
        ("lookalike", "success", json!(null), 1),
        (
            "madeFromPrototype",
            "transport_error",
            json!("not_a_response"),
            1,
        ),
        (
            "statusThrows",
            "transport_error",
            json!("not_a_response"),
            1,
        ),
        ("networkError", "transport_error", json!("network"), 1),
        ("abortedFromBelow", "transport_error", json!("network"), 1),
        ("constructorThrows", "transport_error", json!("network"), 1),
        ("rejectsNameless", "transport_error", json!("network"), 1),
        ("rejectsEmptyName", "transport_error", json!("network"), 1),
        ("throwsNamed", "transport_error", json!("SecurityError"), 1),
        ("bodyFails", "transport_error", json!("network"), 1),
        (
            "fractionalStatus",
            "transport_error",
            json!("not_a_response"),
            1,
        ),
        ("noText", "transport_error", json!("not_a_response"), 1),
        (
            "headersGetThrows",
            "transport_error",
            json!("not_a_response"),
            1,
        ),
        ("status700", "not_retryable", json!(null), 1),
    ];
    for (name, outcome, error, attempts) in cases {
        let fetch = Reflect::get(&fetches, &name.into()).expect("a fetch");
        let report = resolved(start("/palettes", &calling(&scaled(), &fetch))).await;
        assert_eq!(report["outcome"], outcome, "{name}: {report}");
        assert_eq!(report["cause"]["error"], error, "{name}: {report}");
        assert_eq!(report["attempts"], attempts, "{name}: {report}");
        if outcome == "success" {
            assert_eq!(report["body"], list(), "{name}: {report}");
        }
    }
    assert_clean();
}

/// An action that ends takes its listeners with it: the `abort` listener off the caller's
/// signal (which may be reused for the next action, and whose later abort must not reach a
/// freed callback) and its `pagehide` listener off the window, whether it succeeded or stopped.
#[wasm_bindgen_test]
async fn an_ended_action_leaves_no_listener_behind() {
    let watch = ListenerWatch::new();
    let scripts = [one_ok(), json!([{ "duration_s": 0.05, "status": 503 }])];
    for script in &scripts {
        let fetch = ScriptedFetch::new(&script.to_string());
        let opts = options(&scaled(), &fetch, &UpdateLog::new());
        set(&opts, "signal", &watch.signal());
        resolved(start("/palettes", &opts)).await;
    }
    watch.stop();
    let counts: Value = serde_json::from_str(&watch.counts_json()).expect("counts");
    for kind in ["abort", "pagehide"] {
        assert_eq!(counts[kind]["added"], 2, "{kind}: {counts}");
        assert_eq!(counts[kind]["removed"], 2, "{kind}: {counts}");
    }
    assert_clean();
}

/// The counters go up while actions run and back to zero when they end, however they end:
/// success, stop, leaving, supersession, an already-aborted signal.
#[wasm_bindgen_test]
async fn ended_actions_leave_nothing_behind() {
    assert_clean();
    let policy = scaled();
    let ok = json!([{ "duration_s": 0.1, "status": 200, "body": list() }]);
    let stop = json!([{ "duration_s": 0.05, "status": 503 }]);

    let fetch_ok = ScriptedFetch::new(&ok.to_string());
    let fetch_stop = ScriptedFetch::new(&stop.to_string());
    let fetch_screen = ScriptedFetch::new(&ok.to_string());
    let opts = options(&policy, &fetch_screen, &UpdateLog::new());
    set(&opts, "screen", &JsValue::from_str("cleanup"));
    let run_screen = start("/palettes", &opts);
    let run_ok = start("/palettes", &options(&policy, &fetch_ok, &UpdateLog::new()));
    let run_stop = start(
        "/palettes",
        &options(&policy, &fetch_stop, &UpdateLog::new()),
    );
    sleep(10.0).await; // the actions begin on their first poll
    assert_eq!(retry_budget::running_actions(), 3);
    assert_eq!(retry_budget::owned_screens(), 1);

    // An action whose signal is already aborted rejects as an AbortError and sends nothing,
    // not even a first attempt, and never calls onUpdate.
    let fetch_pre = ScriptedFetch::new(&ok.to_string());
    let log_pre = UpdateLog::new();
    let gone = AbortController::new().expect("AbortController");
    gone.abort();
    let opts = options(&policy, &fetch_pre, &log_pre);
    set(&opts, "signal", &gone.signal());
    let error = settle(start("/palettes", &opts))
        .await
        .expect_err("an aborted signal rejects");
    assert_eq!(error["is_error"], true, "{error}");
    assert_eq!(error["name"], "AbortError", "{error}");
    let said = error["message"].as_str().unwrap_or_default();
    assert!(said.contains("nothing was sent"), "{error}");
    // Its report is there all the same, and says nothing was sent.
    assert_eq!(error["report"]["outcome"], "user_left", "{error}");
    assert_eq!(error["report"]["attempts"], 0, "{error}");
    assert_eq!(
        error["report"]["visible"][2], "No request was sent.",
        "{error}"
    );

    assert_eq!(resolved(run_ok).await["outcome"], "success");
    assert_eq!(resolved(run_stop).await["outcome"], "not_retryable");
    assert_eq!(resolved(run_screen).await["outcome"], "success");
    assert_clean();
    assert_eq!(fetch_pre.count(), 0, "an aborted signal sends nothing");
    assert!(updates(&log_pre).is_empty());
    sleep(100.0).await;
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Shared blocks (docs/rules.md, rules 13-18)
// ---------------------------------------------------------------------------------------------

/// `options` that share the service's blocks the way `share` says.
fn sharing(share: &str, policy: &Value, fetch: &ScriptedFetch, log: &UpdateLog) -> Object {
    let options = options(policy, fetch, log);
    set(&options, "share", &JsValue::from_str(share));
    options
}

/// A scaled policy whose 4 s budget has room for a 1 s block.
fn roomy() -> Value {
    let mut policy = scaled();
    policy["budget_s"] = json!(4);
    policy
}

/// One 200 after 50 ms.
fn one_ok() -> Value {
    json!([{ "duration_s": 0.05, "status": 200, "body": list() }])
}

/// Starts an action on `url`, sharing with the page, whose first response is a 429 asking for
/// 1 s (then a 200), and returns once its receipt is told, so that the origin is blocked for
/// about 1 s from then: the clock at its start, its promise, and its fetch (kept alive).
async fn start_blocker(url: &str, policy: &Value) -> (f64, Promise, ScriptedFetch) {
    let blocker = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&blocker.to_string());
    let log = UpdateLog::new();
    let t0 = now_ms();
    let run = start(url, &sharing("page", policy, &fetch, &log));
    told(&log, "receipt").await;
    (t0, run, fetch)
}

/// A 429 whose `Retry-After: 1` blocks the origin: the other action on the origin, rate
/// limited with no wait of its own to speak of, sends its next request no earlier than the
/// block ends, and says why it waited; with `share: "none"` it goes at once. `rateLimits()`
/// shows the block while it lasts, and forgets it after.
#[wasm_bindgen_test]
async fn a_429_blocks_the_origin_for_the_other_actions_of_the_page() {
    let blocker = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let other = json!([
        { "duration_s": 0.2, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let policy = roomy();
    for (share, url) in [
        ("page", "http://shared.invalid/palettes"),
        ("none", "http://alone.invalid/palettes"),
    ] {
        let fetch_a = ScriptedFetch::new(&blocker.to_string());
        let fetch_b = ScriptedFetch::new(&other.to_string());
        let log_a = UpdateLog::new();
        let t0 = now_ms();
        let a = start(url, &sharing(share, &policy, &fetch_a, &log_a));
        let b = start(url, &sharing(share, &policy, &fetch_b, &UpdateLog::new()));
        // A has been told of its 429, which it announced first.
        told(&log_a, "receipt").await;
        let limits = to_json(&retry_budget::rate_limits());
        let listed = limits
            .as_array()
            .expect("an array")
            .iter()
            .find(|l| url.starts_with(l["scope"].as_str().unwrap_or("?")))
            .cloned();
        let (report_a, report_b) = (resolved(a).await, resolved(b).await);
        assert_eq!(report_a["outcome"], "success", "{share}: {report_a}");
        assert_eq!(report_b["outcome"], "success", "{share}: {report_b}");
        let second_b = calls(&fetch_b)[1].start_ms - t0;
        let waits: Vec<&str> = events(&report_b, "wait")
            .iter()
            .filter_map(|w| w["source"].as_str())
            .collect();
        if share == "page" {
            assert!(
                second_b >= 1_050.0 - 5.0,
                "{share}: B's retry at {second_b} ms, before the block ends"
            );
            assert_eq!(waits, ["origin_block"], "{report_b}");
            assert_eq!(events(&report_b, "blocked").len(), 1, "{report_b}");
            let left = num(&listed.expect("the block is listed")["until_s"]);
            assert!(left > 0.0 && left <= 1.0, "until_s {left}");
        } else {
            let second_a = calls(&fetch_a)[1].start_ms - t0;
            assert!(
                second_b < second_a,
                "{share}: B's retry at {second_b} ms waited for A's block (A retried at \
                 {second_a} ms)"
            );
            assert_eq!(waits, ["server_seconds"], "{report_b}");
            assert!(listed.is_none(), "share none announces nothing: {limits}");
        }
    }
    sleep(200.0).await;
    let limits = to_json(&retry_budget::rate_limits());
    assert!(
        !limits.to_string().contains("shared.invalid"),
        "an ended block is forgotten: {limits}"
    );
    assert_clean();
}

/// Two blocks that reach an action at once are both heard, as the model hears each block: A
/// and B are answered in the same task, with `Retry-After: 1` and `Retry-After: 2`, while C's
/// request is in flight. C's trace has a `blocked` event for each, in the order they were
/// announced (an inbox that kept only the latest end lost A's), and it succeeds when its
/// response comes. B hears A's block before its own response, which came with it.
#[wasm_bindgen_test]
async fn blocks_that_arrive_together_are_each_heard() {
    let url = "http://together.invalid/palettes";
    let policy = roomy();
    let gated = |retry_after: &str| {
        json!([
            { "gate": "together", "status": 429, "headers": { "Retry-After": retry_after } },
            { "duration_s": 0.05, "status": 200, "body": list() }
        ])
    };
    let slow = json!([{ "duration_s": 0.3, "status": 200, "body": list() }]);
    let fetches = [gated("1"), gated("2"), slow].map(|s| ScriptedFetch::new(&s.to_string()));
    let t0 = now_ms();
    let runs: Vec<Promise> = fetches
        .iter()
        .map(|fetch| start(url, &sharing("page", &policy, fetch, &UpdateLog::new())))
        .collect();
    sleep(100.0).await;
    open_gate("together");
    let mut reports = Vec::new();
    for run in runs {
        reports.push(resolved(run).await);
    }
    let c = &reports[2];
    assert_eq!(c["outcome"], "success", "{c}");
    let until: Vec<f64> = events(c, "blocked")
        .iter()
        .map(|b| num(&b["until_s"]))
        .collect();
    assert_eq!(until.len(), 2, "one `blocked` event for each block: {c}");
    // A's block ends 1 s after its receipt and B's 2 s after, both at about 0.1 s on C's clock;
    // A was answered first, and C's trace has the blocks in the order they were announced.
    let received = (calls(&fetches[0])[0].settled_ms.expect("settled") - t0) / 1000.0;
    assert!(until[1] - until[0] > 0.9, "A's block and B's: {until:?}");
    assert!(
        until[0] >= 1.0 + received - 0.05,
        "{until:?}, A answered at {received} s"
    );
    // B's own 429 came in the same task as A's block, so that block counts at B's receipt
    // (rule 18): B hears it before it reads its response, and waits for its own, later, delay.
    let b = &reports[1];
    let order: Vec<&str> = b["events"]
        .as_array()
        .expect("B's events")
        .iter()
        .filter_map(|e| e["event"].as_str())
        .filter(|e| ["blocked", "receipt", "wait"].contains(e))
        .take(3)
        .collect();
    assert_eq!(order, ["blocked", "receipt", "wait"], "{b}");
    assert_eq!(events(b, "wait")[0]["source"], "server_seconds", "{b}");
    assert_clean();
}

/// An action pressed while the origin is blocked sends nothing until the block ends; one whose
/// budget cannot fit the block stops at once, sends nothing at all, and says so.
#[wasm_bindgen_test]
async fn an_action_pressed_while_blocked_waits_first_or_sends_nothing() {
    let url = "http://pressed.invalid/palettes";
    let ok = one_ok();
    let policy = roomy();
    let (t0, a, _fetch_a) = start_blocker(url, &policy).await;

    let fetch_c = ScriptedFetch::new(&ok.to_string());
    let c = start(url, &sharing("page", &policy, &fetch_c, &UpdateLog::new()));
    let mut tight = scaled();
    tight["budget_s"] = json!(1);
    let fetch_d = ScriptedFetch::new(&ok.to_string());
    let d = start(url, &sharing("page", &tight, &fetch_d, &UpdateLog::new()));

    let report_d = resolved(d).await;
    assert_eq!(report_d["outcome"], "budget_exhausted", "{report_d}");
    assert_eq!(report_d["attempts"], 0, "{report_d}");
    assert_eq!(
        fetch_d.count(),
        0,
        "nothing is sent when the block cannot fit"
    );
    assert!(
        visible(&report_d).contains("No request was sent."),
        "{}",
        visible(&report_d)
    );
    assert!(
        visible(&report_d).contains("Last response: none. Attempts: 0 of 3."),
        "{}",
        visible(&report_d)
    );

    let report_c = resolved(c).await;
    assert_eq!(report_c["outcome"], "success", "{report_c}");
    let first_c = calls(&fetch_c)[0].start_ms - t0;
    assert!(
        first_c >= 1_050.0 - 5.0,
        "C's first request at {first_c} ms, inside the block"
    );
    assert_eq!(
        events(&report_c, "wait")[0]["source"],
        "origin_block",
        "{report_c}"
    );
    assert_eq!(
        events(&report_c, "wait")[0]["after_attempt"],
        0,
        "{report_c}"
    );
    assert_eq!(resolved(a).await["outcome"], "success");
    assert_clean();
}

/// Jitter spreads the starts of actions that were all told to wait for the same instant:
/// every one after the block's end, none later than the end plus `jitter_s`, and not all at
/// one instant.
#[wasm_bindgen_test]
async fn jitter_spreads_starts_after_a_shared_block_never_before() {
    let url = "http://jitter.invalid/palettes";
    let ok = one_ok();
    let mut policy = roomy();
    policy["jitter_s"] = json!(0.6);
    let (t0, a, _fetch_a) = start_blocker(url, &policy).await;
    let waiting: Vec<(ScriptedFetch, Promise)> = (0..6)
        .map(|_| {
            let fetch = ScriptedFetch::new(&ok.to_string());
            let run = start(url, &sharing("page", &policy, &fetch, &UpdateLog::new()));
            (fetch, run)
        })
        .collect();
    let mut starts = Vec::new();
    let mut jitters = Vec::new();
    for (fetch, run) in waiting {
        let report = resolved(run).await;
        assert_eq!(report["outcome"], "success", "{report}");
        let wait = events(&report, "wait")[0].clone();
        let jitter = num(&wait["jitter_s"]);
        assert!((0.0..=0.6).contains(&jitter), "jitter {jitter}");
        assert!(
            attempt_starts(&report)[0] >= num(&wait["until_s"]),
            "a start before its jittered wait ended: {report}"
        );
        jitters.push(jitter);
        starts.push(calls(&fetch)[0].start_ms - t0);
    }
    resolved(a).await;
    let first = starts.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        first >= 1_050.0 - 5.0,
        "a start before the block ended: {starts:?}"
    );
    let spread = jitters.iter().copied().fold(f64::MIN, f64::max)
        - jitters.iter().copied().fold(f64::MAX, f64::min);
    assert!(spread > 0.02, "six draws gave one instant: {jitters:?}");
    assert_clean();
}

/// The block `rateLimits()` lists for `origin`, once a message from another tab has brought it
/// (a message is delivered in a task of its own: this waits for it, 2 s at most).
async fn heard_of(origin: &str) -> Value {
    for _ in 0..200 {
        let limits = to_json(&retry_budget::rate_limits());
        let listed = limits
            .as_array()
            .and_then(|all| all.iter().find(|l| l["scope"] == origin).cloned());
        if let Some(listed) = listed {
            return listed;
        }
        sleep(10.0).await;
    }
    panic!("the other tab's block of {origin} is never listed")
}

/// A signal is read again when the action claims its screen: one that was aborted since the
/// options were read, or whose `aborted` now throws, ends the action before anything is sent.
#[wasm_bindgen_test]
async fn a_signal_that_changes_before_the_claim_ends_the_action_unsent() {
    let fetch = ScriptedFetch::new(&one_ok().to_string());
    for signal in changing_signals().iter() {
        let opts = options(&scaled(), &fetch, &UpdateLog::new());
        set(&opts, "signal", &signal);
        let report = left(start("/palettes", &opts)).await;
        assert_eq!(report["attempts"], 0, "{report}");
    }
    assert_eq!(fetch.count(), 0, "nothing was sent");
    assert_clean();
}

/// Leaving wins over a response heard in the same turn: the list has arrived in full, but the
/// screen let go before the driver next ran, so the action leaves and the list is never shown.
#[wasm_bindgen_test]
async fn leaving_wins_over_a_response_heard_in_the_same_turn() {
    let leave = AbortController::new().expect("AbortController");
    let log = UpdateLog::new();
    let opts = Object::new();
    set(&opts, "share", &JsValue::from_str("none"));
    set(&opts, "policy", &to_js(&scaled()));
    set(&opts, "fetch", &answer_then_leave(&leave, LIST));
    set(&opts, "signal", &leave.signal());
    set(&opts, "onUpdate", &log.on_update());
    let report = left(start("/palettes", &opts)).await;
    assert_eq!(kinds(&report), ["start", "left", "stop"], "{report}");
    assert_eq!(report["cause"]["in_flight"], true, "{report}");
    let updates: Value = serde_json::from_str(&log.updates_json()).expect("updates");
    assert!(
        !updates.to_string().contains("success"),
        "the view heard of a success: {updates}"
    );
    assert_clean();
}

/// Leaving wins over a block heard in the same turn (rule 12): B's 429 announces a block later
/// than A's planned start, and B's view, told of B's wait, aborts A's signal, so A has both to
/// hear before it next runs. A leaves: it records no block and plans no new wait.
#[wasm_bindgen_test]
async fn leaving_wins_over_a_block_heard_in_the_same_turn() {
    let url = "http://leave-first.invalid/palettes";
    let retry = |after: &str, duration: f64| {
        json!([
            { "duration_s": duration, "status": 429, "headers": { "Retry-After": after } },
            { "duration_s": 0.05, "status": 200, "body": list() }
        ])
    };
    let fetch_a = ScriptedFetch::new(&retry("1", 0.05).to_string());
    let fetch_b = ScriptedFetch::new(&retry("2", 0.1).to_string());
    let leave_a = AbortController::new().expect("AbortController");
    let opts_a = sharing("page", &roomy(), &fetch_a, &UpdateLog::new());
    set(&opts_a, "signal", &leave_a.signal());
    let log_b = UpdateLog::new();
    abort_on_wait(&log_b, &leave_a);
    let a = start(url, &opts_a);
    let b = start(url, &sharing("page", &roomy(), &fetch_b, &log_b));
    let report_a = left(a).await;
    assert_eq!(
        kinds(&report_a),
        ["start", "receipt", "wait", "left", "stop"],
        "{report_a}"
    );
    assert_eq!(report_a["cause"]["in_flight"], false, "{report_a}");
    assert_eq!(resolved(b).await["outcome"], "success");
    assert_eq!(fetch_a.count(), 1, "A sent nothing after it left");
    assert_clean();
}

/// `share` left out is `"page"`: a 429's wait holds back the page's next action on the origin,
/// and nothing of it is kept for other tabs or later pages.
#[wasm_bindgen_test]
async fn sharing_within_the_page_is_the_default() {
    let url = "http://default-share.invalid/palettes";
    let unshared = |fetch: &ScriptedFetch, log: &UpdateLog| {
        let opts = options(&roomy(), fetch, log);
        Reflect::delete_property(&opts, &JsValue::from_str("share")).expect("deletable");
        opts
    };
    let blocker = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch_a = ScriptedFetch::new(&blocker.to_string());
    let log_a = UpdateLog::new();
    let t0 = now_ms();
    let a = start(url, &unshared(&fetch_a, &log_a));
    told(&log_a, "receipt").await;
    let fetch_b = ScriptedFetch::new(&one_ok().to_string());
    let b = start(url, &unshared(&fetch_b, &UpdateLog::new()));
    let (report_a, report_b) = (resolved(a).await, resolved(b).await);
    assert_eq!(report_a["outcome"], "success", "{report_a}");
    assert_eq!(report_b["outcome"], "success", "{report_b}");
    // A's 429 settled no earlier than 50 ms after t0, so the block ends 1,050 ms after it.
    let first_b = calls(&fetch_b)[0].start_ms - t0;
    assert!(
        first_b >= 1_050.0 - CLOCK_GRAIN_S * 1000.0,
        "B's request at {first_b} ms, inside A's block"
    );
    assert_eq!(
        events(&report_b, "wait")[0]["source"],
        "origin_block",
        "{report_b}"
    );
    let kept = stored_blocks();
    assert!(
        !kept.to_string().contains("default-share.invalid"),
        "a page block was kept for other tabs: {kept}"
    );
    assert_clean();
}

/// A message from another tab whose end is not a finite time (`Infinity`, `NaN`) is no block:
/// `rateLimits()` never lists its scope, and a tabs-sharing action on it goes at once.
#[wasm_bindgen_test]
async fn a_block_from_another_tab_that_never_ends_is_refused() {
    to_json(&retry_budget::rate_limits());
    let tab = OtherTab::new();
    tab.tell("http://forever.invalid", f64::INFINITY);
    tab.tell("http://nan.invalid", f64::NAN);
    // Messages arrive in order: once this later block is listed, the two before it were read.
    tab.announce("http://heard.invalid", 400.0);
    heard_of("http://heard.invalid").await;
    let listed = to_json(&retry_budget::rate_limits());
    assert!(
        !listed.to_string().contains("forever.invalid")
            && !listed.to_string().contains("nan.invalid"),
        "{listed}"
    );
    let fetch = ScriptedFetch::new(&one_ok().to_string());
    let url = "http://forever.invalid/palettes";
    let report = resolved(start(
        url,
        &sharing("tabs", &roomy(), &fetch, &UpdateLog::new()),
    ))
    .await;
    assert_eq!(kinds(&report), ["start", "receipt", "stop"], "{report}");
    tab.close();
    assert_clean();
}

/// With `share: "tabs"`, a block another tab announces reaches this page: `rateLimits()` lists
/// it and a tabs-sharing action waits for it, while a page-sharing one does not hear it; a tab
/// that asks is told the blocks this page knows.
#[wasm_bindgen_test]
async fn a_block_from_another_tab_reaches_the_actions_that_share_with_tabs() {
    let origin = "http://tabs.invalid";
    let url = "http://tabs.invalid/palettes";
    let ok = one_ok();
    let policy = roomy();
    // Listening to the other tabs starts with the first look.
    to_json(&retry_budget::rate_limits());
    let tab = OtherTab::new();
    let t0 = now_ms();
    tab.announce(origin, 800.0);
    let listed = heard_of(origin).await;
    let left = num(&listed["until_s"]);
    assert!(left > 0.0 && left <= 0.8, "until_s {left}");
    // While the block lasts, a tab that asks is told of it.
    tab.ask();

    let fetch_tabs = ScriptedFetch::new(&ok.to_string());
    let tabs = start(
        url,
        &sharing("tabs", &policy, &fetch_tabs, &UpdateLog::new()),
    );
    let fetch_page = ScriptedFetch::new(&ok.to_string());
    let page = start(
        url,
        &sharing("page", &policy, &fetch_page, &UpdateLog::new()),
    );
    let (report_tabs, report_page) = (resolved(tabs).await, resolved(page).await);
    assert_eq!(report_tabs["outcome"], "success", "{report_tabs}");
    assert_eq!(report_page["outcome"], "success", "{report_page}");
    let first_tabs = calls(&fetch_tabs)[0].start_ms - t0;
    let first_page = calls(&fetch_page)[0].start_ms - t0;
    assert!(
        first_tabs >= 800.0 - 5.0,
        "the tabs action went at {first_tabs} ms, inside the block"
    );
    assert_eq!(
        kinds(&report_page),
        ["start", "receipt", "stop"],
        "a page-sharing action heard another tab: its request went at {first_page} ms"
    );

    let heard: Value = serde_json::from_str(&tab.heard_json()).expect("messages");
    tab.close();
    assert!(
        heard
            .as_array()
            .expect("messages")
            .iter()
            .any(|m| m["scope"] == origin),
        "an asking tab is told the blocks in force: {heard}"
    );
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// What a block covers: its status, its scope, its page, and the pages that come later
// ---------------------------------------------------------------------------------------------

/// The origin's `localStorage`, where blocks shared with tabs are kept for later pages.
fn storage() -> web_sys::Storage {
    Reflect::get(&js_sys::global(), &JsValue::from_str("localStorage"))
        .expect("localStorage")
        .unchecked_into()
}

/// The start of the key the module keeps a scope's block under; the scope follows it.
const STORED: &str = "retry-budget:block:";

/// Stores `text` as the kept end of `scope`'s block, as another page would.
fn keep_block(scope: &str, text: &str) {
    storage()
        .set_item(&format!("{STORED}{scope}"), text)
        .expect("stored");
}

/// What is kept for `scope`, as stored, if anything.
fn kept_block(scope: &str) -> Option<String> {
    storage()
        .get_item(&format!("{STORED}{scope}"))
        .ok()
        .flatten()
}

/// Every block kept, `{ scope: until_ms }`, read as the module stores them.
fn stored_blocks() -> Value {
    let storage = storage();
    let mut kept = serde_json::Map::new();
    for i in 0..storage.length().expect("length") {
        let key = storage.key(i).ok().flatten().expect("a key");
        if let Some(scope) = key.strip_prefix(STORED) {
            let text = storage.get_item(&key).ok().flatten().expect("an entry");
            let until = serde_json::from_str(&text).unwrap_or(Value::String(text));
            kept.insert(scope.to_owned(), until);
        }
    }
    Value::Object(kept)
}

/// An action pressed while `url`'s origin may be blocked: when its first request went, in ms
/// from `t0`, and whether it went at once (its trace has no wait).
async fn first_request_ms(url: &str, share: &str, scope: Option<&str>, t0: f64) -> (f64, bool) {
    let ok = json!([{ "duration_s": 0.02, "status": 200, "body": list() }]);
    let fetch = ScriptedFetch::new(&ok.to_string());
    let policy = roomy();
    let opts = sharing(share, &policy, &fetch, &UpdateLog::new());
    if let Some(scope) = scope {
        set(&opts, "scope", &JsValue::from_str(scope));
    }
    let report = resolved(start(url, &opts)).await;
    assert_eq!(report["outcome"], "success", "{report}");
    let at_once = kinds(&report) == ["start", "receipt", "stop"];
    (calls(&fetch)[0].start_ms - t0, at_once)
}

/// Rule 13: only a status the policy retries announces its Retry-After. A 200 and a 503 that
/// carry `Retry-After: 1` block nobody: an action pressed right after goes at once.
#[wasm_bindgen_test]
async fn a_retry_after_on_a_status_not_retried_blocks_nobody() {
    for (status, url) in [
        (200, "http://status-200.invalid/palettes"),
        (503, "http://status-503.invalid/palettes"),
    ] {
        let answer = json!([{ "duration_s": 0.02, "status": status,
                              "headers": { "Retry-After": "1" }, "body": list() }]);
        let fetch = ScriptedFetch::new(&answer.to_string());
        let first = start(url, &sharing("page", &scaled(), &fetch, &UpdateLog::new()));
        resolved(first).await;
        let t0 = now_ms();
        let (went, at_once) = first_request_ms(url, "page", None, t0).await;
        assert!(at_once, "{status}: the next action waited {went} ms");
        let limits = to_json(&retry_budget::rate_limits());
        assert!(
            !limits
                .to_string()
                .contains(&url[..url.len() - "/palettes".len()]),
            "{status} is listed as a block: {limits}"
        );
    }
    assert_clean();
}

/// A block on one scope never delays another scope of the same origin, and holds back the
/// actions that name the same scope.
#[wasm_bindgen_test]
async fn a_block_on_one_scope_never_delays_another() {
    let url = "http://scopes.invalid/search";
    let limited = json!([
        { "duration_s": 0.02, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.02, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&limited.to_string());
    let policy = roomy();
    let opts = sharing("page", &policy, &fetch, &UpdateLog::new());
    set(&opts, "scope", &JsValue::from_str("search"));
    let log = UpdateLog::new();
    set(&opts, "onUpdate", &log.on_update());
    let searching = start(url, &opts);
    told(&log, "receipt").await;
    // The block began at the 429's receipt, which the recorder saw settle first.
    let t0 = calls(&fetch)[0].settled_ms.expect("settled");
    let (palettes, at_once) =
        first_request_ms("http://scopes.invalid/palettes", "page", None, t0).await;
    assert!(
        at_once,
        "the origin's scope waited {palettes} ms for the search block"
    );
    let (search, at_once) = first_request_ms(url, "page", Some("search"), t0).await;
    assert!(
        !at_once && search >= 1_000.0 - CLOCK_GRAIN_S * 1000.0,
        "the search scope went {search} ms after the 429, inside its block"
    );
    let limits = to_json(&retry_budget::rate_limits());
    assert!(
        limits
            .as_array()
            .expect("array")
            .iter()
            .all(|l| l["scope"] != "http://scopes.invalid"),
        "the origin is listed as blocked: {limits}"
    );
    assert_eq!(resolved(searching).await["outcome"], "success");
    assert_clean();
}

/// A block on one scope is not heard by a running action of another scope on the same origin:
/// the palettes' action, waiting out its own 429's second, is not moved by the search scope's
/// later and longer block, and its trace has no `blocked` event.
#[wasm_bindgen_test]
async fn a_running_action_of_another_scope_does_not_hear_a_block() {
    let origin = "http://scopes-running.invalid";
    let own = json!([
        { "duration_s": 0.02, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.02, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&own.to_string());
    let log = UpdateLog::new();
    let palettes = start(
        &format!("{origin}/palettes"),
        &sharing("page", &roomy(), &fetch, &log),
    );
    told(&log, "wait").await;
    // While the palettes wait, the search scope is asked for 2 s; one attempt, so it stops at
    // its receipt, having announced the block to its scope.
    let limited = json!([{ "duration_s": 0.02, "status": 429, "headers": { "Retry-After": "2" } }]);
    let search_fetch = ScriptedFetch::new(&limited.to_string());
    let mut once = roomy();
    once["max_attempts"] = json!(1);
    let opts = sharing("page", &once, &search_fetch, &UpdateLog::new());
    set(&opts, "scope", &JsValue::from_str("search"));
    let search = resolved(start(&format!("{origin}/search"), &opts)).await;
    assert_eq!(search["outcome"], "attempts_exhausted", "{search}");
    let listed = to_json(&retry_budget::rate_limits());
    assert!(
        listed.to_string().contains("\"search\""),
        "the search block is in force: {listed}"
    );
    let report = resolved(palettes).await;
    assert_eq!(report["outcome"], "success", "{report}");
    assert!(events(&report, "blocked").is_empty(), "{report}");
    let waits = events(&report, "wait");
    assert_eq!(waits.len(), 1, "the wait was never moved: {report}");
    assert_eq!(waits[0]["source"], "server_seconds", "{report}");
    assert_clean();
}

/// A block learned with `share: "page"` never leaves its page: a tab that asks is not told of
/// it, and nothing is kept for later pages. One learned with `"tabs"` is told and kept.
#[wasm_bindgen_test]
async fn a_page_only_block_never_leaves_the_page() {
    to_json(&retry_budget::rate_limits());
    let tab = OtherTab::new();
    let page_scope = "http://page-only.invalid";
    let tabs_scope = "http://for-tabs.invalid";
    // A 2 s block: the asks below are answered well inside it.
    let answer = json!([
        { "duration_s": 0.02, "status": 429, "headers": { "Retry-After": "2" } },
        { "duration_s": 0.02, "status": 200, "body": list() }
    ]);
    let mut policy = scaled();
    policy["budget_s"] = json!(4);
    let mut actions = Vec::new();
    // The page-only block is learned first, so an answer that wrongly named it would name it
    // before the tabs block.
    for (share, scope) in [("page", page_scope), ("tabs", tabs_scope)] {
        let fetch = ScriptedFetch::new(&answer.to_string());
        let log = UpdateLog::new();
        let url = format!("{scope}/palettes");
        actions.push((start(&url, &sharing(share, &policy, &fetch, &log)), fetch));
        told(&log, "receipt").await;
    }
    // The tabs block is announced when it is learned, then named in each answer to an ask. A
    // second answer comes after everything the first one sent: one sender's messages arrive in
    // order.
    let announced = told_of(&tab, tabs_scope, 1).await;
    tab.ask();
    told_of(&tab, tabs_scope, announced + 1).await;
    tab.ask();
    told_of(&tab, tabs_scope, announced + 2).await;
    let heard = tab.heard_json();
    assert!(
        !heard.contains(page_scope),
        "a page-only block reached a tab: {heard}"
    );
    let kept = stored_blocks();
    assert!(
        kept.get(page_scope).is_none(),
        "a page-only block was kept: {kept}"
    );
    assert!(
        kept.get(tabs_scope).is_some(),
        "a tabs block was not kept: {kept}"
    );
    for (action, _fetch) in actions {
        assert_eq!(resolved(action).await["outcome"], "success");
    }
    tab.close();
    assert_clean();
}

/// A block that comes back from another tab (its answer to a third tab's question repeats
/// what this page announced) is not news: the action that announced it, waiting it out, does
/// not hear it again, so its trace has no `blocked` event. A later block from the tab is.
#[wasm_bindgen_test]
async fn a_block_that_comes_back_from_another_tab_is_not_heard_again() {
    let tab = OtherTab::new();
    let scope = "echoed";
    let responses = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&responses.to_string());
    let opts = options(&scaled(), &fetch, &UpdateLog::new());
    set(&opts, "share", &JsValue::from_str("tabs"));
    set(&opts, "scope", &JsValue::from_str(scope));
    let action = start("/palettes", &opts);
    told_of(&tab, scope, 1).await;
    let announced = messages_naming(&tab, scope)
        .first()
        .map(|m| num(&m["until_ms"]))
        .expect("the block was posted");
    tab.tell(scope, announced);
    tab.tell(scope, announced - 100.0);
    // Later by 50 ms: news, heard once, and the start moves to it.
    tab.tell(scope, announced + 50.0);
    let report = resolved(action).await;
    let blocked = events(&report, "blocked");
    assert_eq!(blocked.len(), 1, "{report}");
    tab.close();
    assert_clean();
}

/// The messages `tab` has heard that name `scope`, in order.
fn messages_naming(tab: &OtherTab, scope: &str) -> Vec<Value> {
    let heard: Value = serde_json::from_str(&tab.heard_json()).expect("messages");
    let heard = heard.as_array().expect("an array");
    heard
        .iter()
        .filter(|m| m["scope"] == scope)
        .cloned()
        .collect()
}

/// Until `tab` has heard at least `count` messages naming `scope` (2 s at most), and how many.
async fn told_of(tab: &OtherTab, scope: &str, count: usize) -> usize {
    for _ in 0..200 {
        let naming = messages_naming(tab, scope).len();
        if naming >= count {
            return naming;
        }
        sleep(10.0).await;
    }
    panic!("the other tab was told of {scope} fewer than {count} times")
}

/// A page that loads during a block shared with tabs (a reload, a new tab) still waits for it:
/// the block is read from `localStorage`, as an earlier page wrote it. `rateLimits()` lists it,
/// a page-sharing action does not hear it, and stored entries that ended or cannot be read are
/// forgotten.
#[wasm_bindgen_test]
async fn blocks_shared_with_tabs_survive_a_reload() {
    let url = "http://reloaded.invalid/palettes";
    let scope = "http://reloaded.invalid";
    // Read first: the stored block is timed from `shared_now`, which cannot precede it.
    let t0 = now_ms();
    let shared_now = shared_now_ms();
    keep_block(scope, &(shared_now + 800.0).to_string());
    keep_block("http://ended.invalid", &(shared_now - 5.0).to_string());
    // What the page keeps under keys of its own is not the module's to read or remove.
    storage()
        .set_item("retry-budget:blocked", "the page's own")
        .expect("stored");
    let listed = heard_of(scope).await;
    assert!(num(&listed["until_s"]) <= 0.8, "{listed}");
    let (page, at_once) = first_request_ms(url, "page", None, t0).await;
    assert!(
        at_once,
        "a page-sharing action heard a stored block: {page} ms"
    );
    let (tabs, _) = first_request_ms(url, "tabs", None, t0).await;
    assert!(
        tabs >= 800.0 - CLOCK_GRAIN_S * 1000.0,
        "the tabs action went at {tabs} ms, inside the stored block"
    );
    assert_eq!(
        kept_block("http://ended.invalid"),
        None,
        "an ended block is still kept"
    );

    // An entry that is no end (not JSON, JSON but not a number) is ignored and removed.
    for (scope, text) in [
        ("http://corrupt.invalid", "{not json"),
        ("http://listed.invalid", "[]"),
        ("http://named.invalid", r#""soon""#),
    ] {
        keep_block(scope, text);
        assert!(to_json(&retry_budget::rate_limits())
            .as_array()
            .expect("array")
            .iter()
            .all(|l| l["scope"] != scope));
        assert_eq!(kept_block(scope), None, "{text} is still kept");
    }
    // A stored end that is no number a clock can reach is ignored, not waited for forever.
    keep_block("http://forever.invalid", "1e999");
    let (forever, at_once) =
        first_request_ms("http://forever.invalid/palettes", "tabs", None, now_ms()).await;
    assert!(
        at_once,
        "a tabs action waited {forever} ms for an endless stored block"
    );
    assert_eq!(
        storage().get_item("retry-budget:blocked").ok().flatten(),
        Some("the page's own".to_owned())
    );
    storage()
        .remove_item("retry-budget:blocked")
        .expect("removed");
    assert_clean();
}

/// A page's first action that shares with tabs reads the blocks earlier pages kept, without
/// anything (such as `rateLimits()`) having read them first.
#[wasm_bindgen_test]
async fn the_first_action_sharing_with_tabs_reads_the_kept_blocks_itself() {
    let t0 = now_ms();
    keep_block(
        "http://kept-first.invalid",
        &(shared_now_ms() + 800.0).to_string(),
    );
    let (went, at_once) =
        first_request_ms("http://kept-first.invalid/palettes", "tabs", None, t0).await;
    assert!(
        !at_once && went >= 800.0 - CLOCK_GRAIN_S * 1000.0,
        "the action went at {went} ms, inside the kept block"
    );
    assert_clean();
}

/// A block another tab stored reaches this page's running actions that share with tabs as soon
/// as the page reads the store, before the other tab's message: a tab stores a block right
/// after it posts it, and `rateLimits()` (or a new action) may read the store in between, after
/// which the message is no news. An action that shares only within the page hears nothing.
#[wasm_bindgen_test]
async fn a_stored_block_read_before_its_message_reaches_the_running_actions() {
    let url = "http://stored-first.invalid/palettes";
    let scope = "http://stored-first.invalid";
    let policy = json!({ "budget_s": 6, "max_attempts": 3, "attempt_cap_s": 1.5,
                         "min_wait_s": 0.05, "fallback_base_s": 0.1 });
    // A 429 without Retry-After after 1 s: told nothing, an action tries again 0.1 s later.
    let script = json!([
        { "duration_s": 1.0, "status": 429 },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ])
    .to_string();
    let (fetch_tabs, fetch_page) = (ScriptedFetch::new(&script), ScriptedFetch::new(&script));
    let tabs = start(
        url,
        &sharing("tabs", &policy, &fetch_tabs, &UpdateLog::new()),
    );
    let page = start(
        url,
        &sharing("page", &policy, &fetch_page, &UpdateLog::new()),
    );
    while fetch_tabs.count() == 0 || fetch_page.count() == 0 {
        sleep(5.0).await;
    }
    // Read first: the stored block is timed from the shared clock, read after it.
    let before = now_ms();
    keep_block(scope, &(shared_now_ms() + 2500.0).to_string());
    let read = now_ms();
    to_json(&retry_budget::rate_limits());
    let (report_tabs, report_page) = (resolved(tabs).await, resolved(page).await);
    let answered = calls(&fetch_tabs)[0].settled_ms.expect("answered");
    assert!(
        read < answered,
        "the store was read {read} ms, after the first answer at {answered} ms"
    );
    assert_eq!(report_tabs["outcome"], "success", "{report_tabs}");
    assert_eq!(events(&report_tabs, "blocked").len(), 1, "{report_tabs}");
    let second = calls(&fetch_tabs)[1].start_ms - before;
    assert!(
        second >= 2500.0 - CLOCK_GRAIN_S * 1000.0,
        "the tabs action tried again {second} ms after the block was stored, inside it"
    );
    assert_eq!(report_page["outcome"], "success", "{report_page}");
    assert!(
        events(&report_page, "blocked").is_empty(),
        "a page-sharing action heard a stored block: {report_page}"
    );
    assert_clean();
}

/// Two blocks on one scope: the later end holds, whichever is heard last, in the page (for the
/// next action and `rateLimits()`) and in what is kept for later pages. A: `Retry-After: 3`
/// heard at about 0.1 s; B: `Retry-After: 1` heard at about 0.15 s, after A's. Once its block
/// has ended, a scope is no longer listed.
#[wasm_bindgen_test]
async fn of_two_blocks_on_one_scope_the_later_end_holds() {
    let policy = json!({ "budget_s": 5, "max_attempts": 3, "attempt_cap_s": 0.4,
                         "min_wait_s": 0.05, "fallback_base_s": 0.1 });
    let answers = |duration_s: f64, retry_after: &str| {
        let script = json!([
            { "duration_s": duration_s, "status": 429, "headers": { "Retry-After": retry_after } },
            { "duration_s": 0.05, "status": 200, "body": list() }
        ]);
        ScriptedFetch::new(&script.to_string())
    };
    for (share, origin) in [
        ("page", "http://later-page.invalid"),
        ("tabs", "http://later-tabs.invalid"),
    ] {
        let url = format!("{origin}/palettes");
        let (fetch_a, fetch_b) = (answers(0.05, "3"), answers(0.1, "1"));
        let (log_a, log_b) = (UpdateLog::new(), UpdateLog::new());
        let t0 = now_ms();
        let a = start(&url, &sharing(share, &policy, &fetch_a, &log_a));
        let b = start(&url, &sharing(share, &policy, &fetch_b, &log_b));
        told(&log_a, "receipt").await;
        told(&log_b, "receipt").await;
        let listed = heard_of(origin).await;
        assert!(num(&listed["until_s"]) > 2.5, "{share}: {listed}");
        if share == "tabs" {
            let kept = stored_blocks();
            let left_ms = kept[origin].as_f64().map(|u| u - shared_now_ms());
            assert!(left_ms.is_some_and(|l| l > 2_500.0), "{share}: kept {kept}");
        }
        let (went, _) = first_request_ms(&url, share, None, t0).await;
        assert!(
            went >= 3_000.0,
            "{share}: the next action went at {went} ms"
        );
        resolved(a).await;
        resolved(b).await;
    }
    // Once a 1 s page block has ended (the action that heard it has sent again after it, and
    // succeeded), nothing is listed for its scope.
    let (_, blocker, _fetch) = start_blocker("http://ended-page.invalid/palettes", &roomy()).await;
    resolved(blocker).await;
    let limits = to_json(&retry_budget::rate_limits());
    assert!(
        !limits.to_string().contains("ended-page.invalid"),
        "an ended block is listed: {limits}"
    );
    assert_clean();
}

/// A block heard from another tab and one learned in the page are kept apart: a page action's
/// own 2 s block is not folded into the other tab's shorter one, so an action pressed after it
/// waits the 2 s.
#[wasm_bindgen_test]
async fn a_page_block_is_kept_apart_from_another_tabs_block_of_its_scope() {
    let origin = "http://apart.invalid";
    let url = "http://apart.invalid/palettes";
    to_json(&retry_budget::rate_limits());
    let tab = OtherTab::new();
    tab.announce(origin, 1_500.0);
    heard_of(origin).await;
    let blocker = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "2" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&blocker.to_string());
    let log = UpdateLog::new();
    let t0 = now_ms();
    let blocked = start(url, &sharing("page", &roomy(), &fetch, &log));
    told(&log, "receipt").await;
    let (went, _) = first_request_ms(url, "page", None, t0).await;
    resolved(blocked).await;
    tab.close();
    assert!(went >= 2_000.0, "the next page action went at {went} ms");
    assert_clean();
}

/// A stop under a named scope says what its block covers: every request under this rate
/// limit, not the whole site.
#[wasm_bindgen_test]
async fn a_stop_under_a_named_scope_says_what_its_block_covers() {
    let url = "http://named-words.invalid/search";
    let blocker = json!([
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "1" } },
        { "duration_s": 0.05, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&blocker.to_string());
    let log = UpdateLog::new();
    let opts = sharing("page", &roomy(), &fetch, &log);
    set(&opts, "scope", &JsValue::from_str("search"));
    let blocking = start(url, &opts);
    told(&log, "receipt").await;
    let mut tight = scaled();
    tight["budget_s"] = json!(1);
    let late = ScriptedFetch::new(&one_ok().to_string());
    let opts = sharing("page", &tight, &late, &UpdateLog::new());
    set(&opts, "scope", &JsValue::from_str("search"));
    let stopped = resolved(start(url, &opts)).await;
    resolved(blocking).await;
    assert_eq!(stopped["outcome"], "budget_exhausted", "{stopped}");
    let words = visible(&stopped);
    assert!(words.contains("under this rate limit"), "{words}");
    assert!(!words.contains("this site"), "{words}");
    assert_eq!(late.count(), 0);
    assert_clean();
}

/// Rule 19: with `policy.ratelimit_fields`, a 429 with no Retry-After but `RateLimit:
/// "default";r=0;t=1` is retried 1 s after its receipt, not at the fallback (0.1 s); without
/// the option the field is not read and the fallback applies.
#[wasm_bindgen_test]
async fn a_ratelimit_field_is_waited_for_as_a_server_delay() {
    let answers = json!([
        { "duration_s": 0.02, "status": 429, "headers": { "RateLimit": "\"default\";r=0;t=1" } },
        { "duration_s": 0.02, "status": 200, "body": list() }
    ]);
    for read in [true, false] {
        let fetch = ScriptedFetch::new(&answers.to_string());
        let mut policy = scaled();
        policy["budget_s"] = json!(4);
        policy["ratelimit_fields"] = json!(read);
        let report = resolved(start(
            "/palettes",
            &options(&policy, &fetch, &UpdateLog::new()),
        ))
        .await;
        assert_eq!(report["outcome"], "success", "{report}");
        let all = calls(&fetch);
        let gap = all[1].start_ms - all[0].settled_ms.expect("the 429 settled");
        let wait = events(&report, "wait")[0].clone();
        if read {
            assert!(
                gap >= 1_000.0 - 5.0,
                "retried {gap} ms after the 429, before t=1"
            );
            assert_eq!(wait["source"], "ratelimit", "{report}");
            let field = &events(&report, "receipt")[0]["ratelimit"];
            assert_eq!(field["kind"], "exhausted", "{report}");
            assert_eq!(field["reset_s"], 1, "{report}");
        } else {
            assert!(gap < 900.0, "the unread field was waited for: {gap} ms");
            assert_eq!(wait["source"], "fallback_missing", "{report}");
            assert!(
                events(&report, "receipt")[0].get("ratelimit").is_none(),
                "{report}"
            );
        }
    }
    assert_clean();
}

/// Rules 13 and 20 on the last attempt: a 429 with `Retry-After: 0` and `RateLimit:
/// "default";r=0;t=1` stops its own action (no attempt is left) and blocks the page's other
/// actions for the later of the two, 1 s from its receipt: the shorter `Retry-After` does not
/// hide the spent quota.
#[wasm_bindgen_test]
async fn a_last_attempt_announces_the_later_of_its_retry_after_and_its_ratelimit_reading() {
    let url = "http://last-attempt.invalid/palettes";
    let last = json!([{ "duration_s": 0.05, "status": 429, "headers": {
        "Retry-After": "0", "RateLimit": "\"default\";r=0;t=1"
    } }]);
    let mut policy = roomy();
    policy["max_attempts"] = json!(1);
    policy["ratelimit_fields"] = json!(true);
    let fetch_a = ScriptedFetch::new(&last.to_string());
    let log_a = UpdateLog::new();
    let t0 = now_ms();
    let a = start(url, &sharing("page", &policy, &fetch_a, &log_a));
    told(&log_a, "receipt").await;
    let fetch_b = ScriptedFetch::new(&one_ok().to_string());
    let b = start(url, &sharing("page", &roomy(), &fetch_b, &UpdateLog::new()));
    let (report_a, report_b) = (resolved(a).await, resolved(b).await);
    assert_eq!(report_a["outcome"], "attempts_exhausted", "{report_a}");
    assert_eq!(report_b["outcome"], "success", "{report_b}");
    // A's 429 settled no earlier than 50 ms after t0, so the block ends 1,050 ms after it.
    let first_b = calls(&fetch_b)[0].start_ms - t0;
    assert!(
        first_b >= 1_050.0 - 5.0,
        "B's request at {first_b} ms, before the quota's reset"
    );
    let waits = events(&report_b, "wait");
    assert_eq!(waits.len(), 1, "{report_b}");
    assert_eq!(waits[0]["source"], "origin_block", "{report_b}");
    assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Timers, dates, signals and scopes at their edges
// ---------------------------------------------------------------------------------------------

/// Each wait takes one timer, armed for its whole delay rounded up to the millisecond, so that
/// none fires before it is due and has to be armed again: three 429s asking no delay wait the
/// 50 ms floor three times, with three `timer` events, each at or after its due time. The report
/// and the last update carry the step table's seven rows (four attempts, three waits).
#[wasm_bindgen_test]
async fn each_wait_takes_one_timer_that_never_fires_early() {
    let mut policy = scaled();
    policy["max_attempts"] = json!(4);
    let zero = json!({ "duration_s": 0.01, "status": 429, "headers": { "Retry-After": "0" } });
    let done = json!({ "duration_s": 0.01, "status": 200, "body": list() });
    let script = json!([zero, zero, zero, done]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let log = UpdateLog::new();
    let report = resolved(start("/palettes", &options(&policy, &fetch, &log))).await;
    assert_eq!(report["outcome"], "success", "{report}");
    let timers = events(&report, "timer");
    assert_eq!(timers.len(), 3, "{report}");
    for timer in timers {
        assert!(num(&timer["at_s"]) >= num(&timer["due_s"]), "{timer}");
    }
    let rows = |value: &Value| value["steps"].as_array().map_or(0, Vec::len);
    assert_eq!(rows(&report), 7, "{report}");
    let last = updates(&log).pop().expect("updates");
    assert_eq!(rows(&last.update), 7, "{}", last.update);
    assert_clean();
}

/// A cap longer than `setTimeout` can hold (2^31 - 1 ms, about 24.8 days) is armed at that
/// most, never past it (a browser reads a longer delay as none and fires at once, and the
/// driver would arm it again and again).
#[wasm_bindgen_test]
async fn a_cap_longer_than_a_timer_can_hold_is_armed_at_the_most_it_takes() {
    let fetch = ScriptedFetch::new(&json!([{ "hang": "headers" }]).to_string());
    let leave = AbortController::new().expect("AbortController");
    let policy = json!({ "budget_s": 3_000_000, "max_attempts": 1, "attempt_cap_s": 2_500_000 });
    let opts = options(&policy, &fetch, &UpdateLog::new());
    set(&opts, "signal", &leave.signal());
    let log = TimerLog::new();
    let run = start("/palettes", &opts);
    sleep(300.0).await;
    leave.abort();
    left(run).await;
    log.stop();
    let requested: Vec<f64> = serde_json::from_str(&log.requested_json()).expect("delays");
    assert!(
        requested.len() < 5,
        "{} timers: {requested:?}",
        requested.len()
    );
    assert!(
        requested.contains(&2_147_483_647.0)
            && requested
                .iter()
                .all(|ms| (0.0..=2_147_483_647.0).contains(ms)),
        "{requested:?}"
    );
    assert_clean();
}

/// A `Date` in the obsolete RFC 850 form (a two-digit year) is read in this century, as a
/// recipient must: a `Retry-After` date one second after it is a server delay of 1 s, and the
/// retry succeeds (read as 1926, the date would be no clock at all, and the action would stop).
#[wasm_bindgen_test]
async fn an_rfc850_date_header_is_read_in_this_century() {
    let mut policy = scaled();
    policy["budget_s"] = json!(4);
    let report = resolved(start("/palettes", &calling(&policy, &rfc850_date_fetch()))).await;
    assert_eq!(report["outcome"], "success", "{report}");
    assert_eq!(report["attempts"], 2, "{report}");
    assert_eq!(
        events(&report, "wait")[0]["source"],
        "server_date",
        "{report}"
    );
    assert_clean();
}

/// A signal the module cannot listen to (its `addEventListener` throws) could never stop the
/// action, so the action ends at the call as a screen that let go, having sent nothing.
#[wasm_bindgen_test]
async fn a_signal_that_refuses_a_listener_ends_the_action_unsent() {
    let fetch = ScriptedFetch::new(&one_ok().to_string());
    let opts = options(&scaled(), &fetch, &UpdateLog::new());
    set(&opts, "signal", &refusing_signal());
    let error = settle(start("/palettes", &opts))
        .await
        .expect_err("the action rejects");
    assert_eq!(error["name"], "AbortError", "{error}");
    assert_eq!(fetch.count(), 0, "nothing was sent");
    assert_clean();
}

/// A relative URL is limited under the page's own origin, as an absolute URL of that origin
/// is: the last attempt's 429 on "/relative-scope" blocks the page's origin for 1 s.
#[wasm_bindgen_test]
async fn a_relative_url_is_limited_under_the_pages_origin() {
    let mut policy = scaled();
    policy["max_attempts"] = json!(1);
    let script = json!([{ "duration_s": 0.01, "status": 429, "headers": { "Retry-After": "1" } }]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let opts = sharing("page", &policy, &fetch, &UpdateLog::new());
    let report = resolved(start("/relative-scope", &opts)).await;
    assert_eq!(report["outcome"], "attempts_exhausted", "{report}");
    let location = Reflect::get(&js_sys::global(), &"location".into()).expect("location");
    let origin = Reflect::get(&location, &"origin".into()).expect("origin");
    let limits = to_json(&retry_budget::rate_limits());
    assert!(
        (limits.as_array().expect("a list").iter()).any(|l| l["scope"] == to_json(&origin)),
        "{limits} names {origin:?}"
    );
    assert_clean();
}

/// `isAbortError` is true of the module's own abort errors only: not of a `DOMException` named
/// `AbortError` (a plain `fetch` aborted by the app), nor of a plain object dressed as one.
#[wasm_bindgen_test]
fn only_the_modules_own_abort_errors_are_abort_errors() {
    let dom = js_sys::eval("new DOMException('x', 'AbortError')").expect("a DOMException");
    assert!(!retry_budget::is_abort_error(&dom));
    let plain = js_sys::eval("({ name: 'AbortError', report: {} })").expect("an object");
    assert!(!retry_budget::is_abort_error(&plain));
}

/// A block another tab announces reaches a waiting action when it is announced, not when the
/// action's own timer next fires: A waits out `Retry-After: 20` under a 30 s budget; another tab
/// then blocks the origin for 40 s, which A's budget cannot fit, so A stops then.
#[wasm_bindgen_test]
async fn a_waiting_action_hears_another_tabs_block_when_it_is_announced() {
    let url = "http://wakes.invalid/palettes";
    let script = json!([
        { "duration_s": 0.01, "status": 429, "headers": { "Retry-After": "20" } },
        { "duration_s": 0.01, "status": 200, "body": list() }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let policy = json!({
        "budget_s": 30, "max_attempts": 2, "attempt_cap_s": 1,
        "min_wait_s": 0.05, "fallback_base_s": 0.1
    });
    let (leave, log, tab) = (
        AbortController::new().expect("ctl"),
        UpdateLog::new(),
        OtherTab::new(),
    );
    let opts = sharing("tabs", &policy, &fetch, &log);
    set(&opts, "signal", &leave.signal());
    let run = start(url, &opts);
    told(&log, "wait").await;
    tab.announce("http://wakes.invalid", 40_000.0);
    let prompt = JsFuture::from(settles_within(&run, 5_000.0))
        .await
        .expect("a race");
    if prompt != JsValue::TRUE {
        leave.abort();
    }
    let report = settle(run)
        .await
        .unwrap_or_else(|error| error["report"].clone());
    tab.close();
    assert_eq!(prompt, JsValue::TRUE, "A went on waiting: {report}");
    assert_eq!(report["cause"]["kind"], "origin_blocked", "{report}");
    assert_clean();
}

/// A body that is not JSON comes back as its text, not as `null`.
#[wasm_bindgen_test]
async fn a_body_that_is_not_json_comes_back_as_its_text() {
    let fetch = Reflect::get(&odd_fetches(), &"plainText".into()).expect("a fetch");
    let report = resolved(start("/palettes", &calling(&scaled(), &fetch))).await;
    assert_eq!(report["outcome"], "success", "{report}");
    assert_eq!(report["body"], "plain words", "{report}");
    assert_clean();
}
