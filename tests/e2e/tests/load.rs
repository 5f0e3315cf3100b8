//! Load, live, in headless Chromium and Firefox: one page (`tests/e2e/pages/load.html`) runs 1,000 actions
//! back to back, then 50 at once, each with its own budget (its own policy object, signal and
//! screen), against the fixture server; then 20 pairs where a newer action supersedes an older
//! one on the same screen.
//!
//! Checked: every action ends in the outcome the model gives its scenario; after every action
//! no action is running, no screen is owned, and the page holds exactly the timers and event
//! listeners it held before (counted by wrapping `setTimeout`/`clearTimeout` and
//! `EventTarget.prototype.add/removeEventListener` before the module runs); no `onUpdate` comes
//! after an action settled; the wasm memory does not grow after a warm-up, and neither (beyond
//! a small allowance) does the collected JS heap where the browser reports it (Chromium); a
//! superseded action ends as `user_left`, its request is aborted, and it never writes to the
//! view after the newer action claimed the screen; and the server saw exactly the requests the
//! model allows for every run.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use fantoccini::Client;
use retry_budget_model::simulate::simulate;
use serde_json::{json, Value};

use e2e::{
    fixture, full_log, js, js_with, memory_session, open_ready, palettes_only, start_server,
    Browser,
};

const BACK_TO_BACK: u64 = 1000;
const AT_ONCE: u64 = 50;
const SUPERSEDED: u64 = 20;
/// Growth of Chromium's collected JS heap allowed between 200 and 1,000 actions: 32 bytes an
/// action. Measured with the optimising tiers off (see `e2e::memory_session`), the engine's own
/// bookkeeping grows by about 6-9 bytes an action (plain `fetch` calls alone: about 3 bytes a
/// request); one leaked closure, listener, promise or abort controller per action would be
/// several times the allowance.
const HEAP_ALLOWANCE: f64 = 32.0 * 800.0;
/// The scenarios the harness cycles through, in its order (`MIX` in `www/load.js`).
const MIX: [&str; 4] = [
    "load-ok",
    "load-retry-then-ok",
    "load-budget",
    "load-not-retryable",
];

/// Starts `job` in the harness and waits for its result. `limit` only catches a job that never
/// ends: it is several times what the job takes.
async fn harness(client: &Client, job: &str, args: Value, limit: Duration) -> Value {
    js_with(
        client,
        "return harness.start(arguments[0], arguments[1])",
        vec![json!(job), args],
    )
    .await;
    let deadline = Instant::now() + limit;
    loop {
        let state = js(
            client,
            "return { busy: harness.busy, error: harness.error, result: harness.result }",
        )
        .await;
        if let Some(error) = state["error"].as_str() {
            panic!("{job} threw: {error}");
        }
        if state["busy"] == false && !state["result"].is_null() {
            return state["result"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "{job} did not finish in {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// How many requests the model allows each load scenario.
fn attempts_of(name: &str) -> usize {
    simulate(&fixture(name))
        .expect("the model runs it")
        .report
        .attempt_starts_s
        .len()
}

/// Failures of the "nothing left behind" figures in `result`.
fn leftovers(result: &Value, what: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let (after, base) = (&result["after"], &result["base"]);
    if after["running"] != 0 || after["screens"] != 0 {
        failures.push(format!("{what}: still running or owning a screen: {after}"));
    }
    if after["timers"] != base["timers"] || after["listeners"] != base["listeners"] {
        failures.push(format!(
            "{what}: timers/listeners {}/{} after, {}/{} before",
            after["timers"], after["listeners"], base["timers"], base["listeners"]
        ));
    }
    failures
}

/// Checks the server's log against the runs the page reports: `[run, scenario]` pairs.
fn check_requests(
    log_by_run: &BTreeMap<String, Vec<Value>>,
    runs: &Value,
    allowed: &dyn Fn(&str) -> usize,
    what: &str,
) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut total = 0;
    for pair in runs.as_array().expect("runs") {
        let run = pair[0].as_str().expect("a run id");
        let name = pair[1].as_str().expect("a scenario");
        let entries = log_by_run.get(run).map_or(&[][..], Vec::as_slice);
        total += entries.len();
        if entries.len() != allowed(name) {
            failures.push(format!(
                "{what}: run {run} ({name}) made {} requests, the model {}",
                entries.len(),
                allowed(name)
            ));
        }
    }
    (total, failures)
}

/// The `/palettes` log once every superseded run of `runs` (`[run, scenario, role]`) has its
/// client gone, or after 10 s (far longer than the server takes to notice), as it is then.
async fn superseded_gone(base: &str, runs: &Value) -> Vec<Value> {
    let superseded: Vec<&str> = runs
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|pair| pair[2] == "superseded")
        .filter_map(|pair| pair[0].as_str())
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = palettes_only(&full_log(base).await);
        let gone = |run: &str| {
            log.iter()
                .any(|e| e["run"] == run && !e["client_gone_ms"].is_null())
        };
        if superseded.iter().all(|run| gone(run)) || Instant::now() >= deadline {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn run_browser(browser: Browser) {
    let started = Instant::now();
    let server = start_server().await;
    let session = memory_session(browser).await;
    let client = &session.client;
    let mut failures: Vec<String> = Vec::new();
    open_ready(client, &format!("{}/e2e/load.html", server.base)).await;
    let batch = format!("{}-load", browser.name());

    let b2b = harness(
        client,
        "backToBack",
        json!({ "n": BACK_TO_BACK, "batch": batch }),
        Duration::from_secs(600),
    )
    .await;
    let once = harness(
        client,
        "atOnce",
        json!({ "n": AT_ONCE, "batch": batch }),
        Duration::from_secs(120),
    )
    .await;
    let superseded = harness(
        client,
        "supersede",
        json!({ "n": SUPERSEDED, "batch": batch }),
        Duration::from_secs(300),
    )
    .await;

    // Back to back.
    for (what, result) in [("back to back", &b2b), ("at once", &once)] {
        if result["mismatches"] != json!([]) {
            failures.push(format!("{what}: outcomes differ: {}", result["mismatches"]));
        }
        if result["lateUpdates"] != 0 {
            failures.push(format!(
                "{what}: {} onUpdate calls after an action settled",
                result["lateUpdates"]
            ));
        }
        failures.extend(leftovers(result, what));
    }
    if b2b["leftovers"] != json!([]) {
        let list = b2b["leftovers"].as_array().map_or(0, Vec::len);
        failures.push(format!(
            "back to back: {list} actions left something behind, first: {}",
            b2b["leftovers"][0]
        ));
    }
    if once["peakRunning"] != AT_ONCE || once["peakScreens"] != AT_ONCE {
        failures.push(format!(
            "at once: {} running and {} screens at the peak, want {AT_ONCE}",
            once["peakRunning"], once["peakScreens"]
        ));
    }
    // Memory: samples after 1, 100, 200, ... 1,000 actions.
    let samples = b2b["memory"].as_array().cloned().unwrap_or_default();
    let at = |n: u64| {
        samples
            .iter()
            .find(|s| s["after"] == n)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let (warm, end) = (at(200), at(BACK_TO_BACK));
    if warm["wasmBytes"] != end["wasmBytes"] || warm["wasmBytes"].is_null() {
        failures.push(format!(
            "wasm memory grew from {} to {} bytes between 200 and {BACK_TO_BACK} actions",
            warm["wasmBytes"], end["wasmBytes"]
        ));
    }
    let heap_growth = match (warm["heap"].as_f64(), end["heap"].as_f64()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    if let Some(growth) = heap_growth {
        if growth > HEAP_ALLOWANCE {
            failures.push(format!(
                "the collected JS heap grew by {growth:.0} bytes between 200 and {BACK_TO_BACK} actions"
            ));
        }
    }
    if browser == Browser::Chromium && heap_growth.is_none() {
        failures.push("Chromium reported no performance.memory".into());
    }

    // Superseded actions.
    if superseded["aOutcomes"] != json!({ "user_left": SUPERSEDED })
        || superseded["bOutcomes"] != json!({ "success": SUPERSEDED })
    {
        failures.push(format!(
            "supersede: A ended {}, B ended {}",
            superseded["aOutcomes"], superseded["bOutcomes"]
        ));
    }
    if superseded["aUpdatesAfterClaim"] != 0 {
        failures.push(format!(
            "supersede: superseded actions wrote to the view {} times after the newer one claimed it",
            superseded["aUpdatesAfterClaim"]
        ));
    }
    let want_view = format!("B {}: Loaded: the list is ready.", SUPERSEDED - 1);
    if superseded["lastView"] != json!(want_view) {
        failures.push(format!(
            "supersede: the view reads {}, want {want_view:?}",
            superseded["lastView"]
        ));
    }
    let views = superseded["views"].as_array().cloned().unwrap_or_default();
    if views
        .iter()
        .any(|v| !v.as_str().unwrap_or_default().starts_with('B'))
    {
        failures.push(format!(
            "supersede: the view showed A after B claimed it: {views:?}"
        ));
    }
    failures.extend(leftovers(&superseded, "supersede"));

    // The server: exactly the requests the model allows, per run. Read after a pause, so that a
    // request sent after its action settled would be in it, and once the server has seen every
    // superseded request's client go (it notices a closed connection on its own time).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let log = superseded_gone(&server.base, &superseded["runs"]).await;
    let mut by_run: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for entry in log {
        if let Some(run) = entry["run"].as_str() {
            by_run
                .entry(run.to_string())
                .or_default()
                .push(entry.clone());
        }
    }
    let allowed: BTreeMap<&str, usize> = [
        "load-ok",
        "load-retry-then-ok",
        "load-budget",
        "load-not-retryable",
        "load-slow",
    ]
    .into_iter()
    .map(|n| (n, attempts_of(n)))
    .collect();
    let allowed = |name: &str| allowed.get(name).copied().unwrap_or(0);
    let b2b_runs: Vec<Value> = (0..BACK_TO_BACK)
        .map(|i| json!([format!("{batch}-b2b-{i}"), MIX[(i % 4) as usize]]))
        .collect();
    let (b2b_requests, f) = check_requests(&by_run, &json!(b2b_runs), &allowed, "back to back");
    failures.extend(f);
    let (once_requests, f) = check_requests(&by_run, &once["runs"], &allowed, "at once");
    failures.extend(f);
    let (sup_requests, f) = check_requests(&by_run, &superseded["runs"], &allowed, "supersede");
    failures.extend(f);
    // A superseded action's request was aborted: the server saw its client go.
    let mut aborted = 0;
    for pair in superseded["runs"].as_array().expect("runs") {
        if pair[2] == "superseded" {
            let run = pair[0].as_str().unwrap_or_default();
            if by_run
                .get(run)
                .and_then(|e| e.first())
                .is_some_and(|e| !e["client_gone_ms"].is_null() && e["status"].is_null())
            {
                aborted += 1;
            }
        }
    }
    if aborted != SUPERSEDED {
        failures.push(format!(
            "supersede: the server saw {aborted} of {SUPERSEDED} superseded requests aborted"
        ));
    }

    let heap = heap_growth.map_or("not reported".into(), |g| format!("{g:+.0} bytes"));
    println!(
        "{}: actions run: {BACK_TO_BACK} back to back in {:.1} s ({}), {AT_ONCE} at once in {:.2} s \
         (peak {} running), {SUPERSEDED} superseded + {SUPERSEDED} superseding; {} onUpdate calls, \
         none late; requests: {b2b_requests} + {once_requests} + {sup_requests}, each run exactly as \
         the model allows; wasm memory {} -> {} bytes (after 200 -> {BACK_TO_BACK} actions), \
         collected JS heap {heap}; timers/listeners after: {}/{} (before {}/{}); {:.1} s",
        browser.name(),
        b2b["seconds"].as_f64().unwrap_or_default(),
        b2b["outcomes"],
        once["seconds"].as_f64().unwrap_or_default(),
        once["peakRunning"],
        b2b["updates"],
        warm["wasmBytes"],
        end["wasmBytes"],
        b2b["after"]["timers"],
        b2b["after"]["listeners"],
        b2b["base"]["timers"],
        b2b["base"]["listeners"],
        started.elapsed().as_secs_f64()
    );
    for failure in &failures {
        println!("{}: FAIL {failure}", browser.name());
    }
    session.close().await;
    assert!(failures.is_empty(), "{}: {failures:#?}", browser.name());
}

e2e::browser_tests!(run_browser: chromium_runs_a_thousand_actions_without_leaks, firefox_runs_a_thousand_actions_without_leaks);
