//! Shared rate limits, live, in headless Chromium and Firefox against the fixture server
//! (`docs/rules.md`, rules 13-18): a 429 with `Retry-After` blocks its origin, and the other
//! actions of the page, or of other tabs with `share: "tabs"`, send nothing to it until the
//! block ends.
//!
//! Every figure is the server's: a block that a 429 announced ends no earlier than the moment
//! the server sent that 429 plus its delay (the browser received it later), so "a request
//! arrived no earlier than the block's end" is checked as `arrival_ms >= sent_ms + delay`,
//! both on the server's clock, with no tolerance.
//!
//! - `one_page_*`: two actions at once, the second's retry waits for the first's block; with
//!   `share: "none"` it comes earlier.
//! - `two_tabs_*`: a second tab learns the first tab's block and waits for it.
//! - `pressed_while_blocked_*`: an action pressed during a block sends nothing until it ends,
//!   and nothing at all when the block cannot fit its budget.
//! - `jitter_*`: actions with `policy.jitter_s` waiting on one block start after its end,
//!   spread over a range.
//! - `not_retried_*`: a 200 and a non-retried 503 carrying `Retry-After` block nobody (rule 13).
//! - `third_tab_*`: a tab opened during a `share: "page"` block learns nothing of it, even when
//!   it asks; one opened during a `"tabs"` block learns it and waits.
//! - `scopes_*`: a block on one scope never delays another scope of the origin, and holds back
//!   its own.
//! - `ratelimit_field_*`: a 429 with only `RateLimit: "default";r=0;t=3` is retried 3 s after
//!   it was sent, and the Last HTTP response panel shows the field raw and as read (rule 19).
//! - `reload_*`: a reload during a `"tabs"` block still waits for it; during a `"page"` block
//!   it does not.
//! - `dashboard_*`: the Dashboard screen of the page: its search widget's block (a scope of its
//!   own) never holds back the palettes, coast's does hold back forest, the Rate limits panel
//!   lists both scopes, and its screen-reader line announces each change of the limits in force
//!   once; screenshots under `target/e2e-artifacts/`.
//! - `dashboard_left_*`: leaving the Dashboard ends its widgets in the model's words.
//! - `dashboard_again_*`: Load dashboard pressed again while widgets run: no old run's abort
//!   report ever reaches a widget the new run owns.
//! - `dashboard_markup_*`: a widget's Last response fields show a header carrying markup as
//!   text.

use std::time::{Duration, Instant};

use fantoccini::Client;
use serde_json::{json, Value};

use e2e::{
    browser_tests, click, fixture, js, js_with, number, open_page, open_ready, reload, run_log,
    run_log_once, screenshot, session, start_action, start_server, text_of, viewport, wait_until,
    Browser,
};

/// The Dashboard's coast widget, in a page script.
const COAST: &str = "document.querySelector('[data-collection=coast]')";
/// The delay the `dashboard-coast` scenario's 429 asks for, in milliseconds.
const COAST_DELAY_MS: f64 = 3000.0;
/// The delay the `live-429-retry-after-8` scenario's 429 asks for, in milliseconds: long
/// enough to open a tab or reload the page while it lasts.
const LONG_DELAY_MS: f64 = 8000.0;
/// The `Retry-After` that `live-200-retry-after-5` and `live-503-retry-after-5` carry, in
/// milliseconds.
const NOT_RETRIED_DELAY_MS: f64 = 5000.0;
/// The quota reset (`t`) of the `RateLimit` field of `ratelimit-only-429`, in milliseconds.
const RATELIMIT_RESET_MS: f64 = 3000.0;
/// The quota reset (`t`) of the `RateLimit` field of `dashboard-search`, in milliseconds.
const SEARCH_RESET_MS: f64 = 5000.0;
/// The width of the Dashboard's screenshot, in CSS pixels.
const SCREENSHOT_WIDTH: u32 = 1280;
/// How long an action of the sharing page may take to end.
const ACTION_LIMIT: Duration = Duration::from_secs(30);
/// The jitter each action of the jitter case may add, in seconds.
const JITTER_S: f64 = 2.0;
/// How many actions wait on one block in the jitter case.
const JITTERED: usize = 6;

/// Opens the sharing test page.
async fn open_sharing(client: &Client, base: &str) {
    open_ready(client, &format!("{base}/e2e/sharing.html")).await;
}

/// Starts an action in the page: `spec` is `{ scenario, run, share, jitter_s, collection }`.
async fn start(client: &Client, spec: Value) {
    js_with(
        client,
        "return window.sharing.start(arguments[0])",
        vec![spec],
    )
    .await;
}

/// A unique run id for `what` in `browser`.
fn run_id(browser: Browser, what: &str) -> String {
    format!("{}-sharing-{what}", browser.name())
}

/// The ended action's record (outcome, attempts, blocked and wait events, visible lines).
async fn result(client: &Client, run: &str) -> Value {
    let deadline = Instant::now() + ACTION_LIMIT;
    loop {
        let record = js_with(
            client,
            "return window.sharing.result(arguments[0])",
            vec![json!(run)],
        )
        .await;
        if let Some(error) = record.get("error").and_then(Value::as_str) {
            panic!("run {run}: {error}");
        }
        if !record.is_null() {
            return record;
        }
        assert!(Instant::now() < deadline, "run {run} did not end");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The server's `/palettes` log of `run` once its first `count` responses have been sent.
async fn sent_log(base: &str, run: &str, count: usize) -> Vec<Value> {
    let sent = |log: &[Value]| log.iter().filter(|e| e["sent_ms"].is_number()).count() >= count;
    run_log_once(base, run, sent, ACTION_LIMIT)
        .await
        .unwrap_or_else(|| panic!("run {run}: {count} responses not sent"))
}

/// Starts an action for each of `specs` once `rateLimits()` in the page lists a block, in the
/// page's task that saw it (so each starts while the block is known, whatever this test's own
/// round trips take); returns the list seen.
async fn start_when_blocked(client: &Client, specs: Vec<Value>) -> Value {
    start_when_listed(client, None, specs).await
}

/// As [`start_when_blocked`], once `rateLimits()` lists a block of `scope` (any, for `None`).
async fn start_when_listed(client: &Client, scope: Option<&str>, specs: Vec<Value>) -> Value {
    let started = tokio::time::timeout(
        Duration::from_secs(20),
        js_with(
            client,
            "return window.sharing.startWhenListed(arguments[0], arguments[1])",
            vec![json!(scope), json!(specs)],
        ),
    )
    .await;
    started.unwrap_or_else(|_| panic!("rateLimits() never listed a block of {scope:?}"))
}

/// Whether a `rateLimits()` list names `scope`.
fn lists(limits: &Value, scope: &str) -> bool {
    limits
        .as_array()
        .is_some_and(|l| l.iter().any(|b| b["scope"] == scope))
}

/// What the module keeps in the origin's `localStorage` for later pages (`{ scope: until_ms }`),
/// or null.
async fn stored(client: &Client) -> Value {
    js(client, "return window.sharing.stored()").await
}

/// When the server sent a 429 asking for `delay_ms`, plus that delay: the earliest end of the
/// block it announced, in the server's milliseconds.
fn block_end(entry: &Value, delay_ms: f64) -> f64 {
    assert_eq!(entry["status"], 429, "not a 429: {entry}");
    number(entry, "sent_ms") + delay_ms
}

/// Arrival times of a log, in seconds after `zero_ms`.
fn times_after(log: &[Value], zero_ms: f64) -> Vec<String> {
    log.iter()
        .map(|e| format!("{:.3}", (number(e, "arrival_ms") - zero_ms) / 1000.0))
        .collect()
}

/// Whether the action's trace waited for the origin's block.
fn waited_for_origin(record: &Value) -> bool {
    record["waits"]
        .as_array()
        .is_some_and(|w| w.iter().any(|e| e["source"] == "origin_block"))
}

/// Whether the action went at once: it heard no block, waited for nothing, and its first
/// attempt started at its press.
fn went_at_once(record: &Value) -> bool {
    record["blocked"].as_array().is_some_and(Vec::is_empty)
        && record["waits"].as_array().is_some_and(Vec::is_empty)
        && record["attempt_starts_s"] == json!([0])
}

/// Opens a new tab on the sharing page, makes it current, and returns its handle.
async fn new_tab(client: &Client, base: &str) -> fantoccini::wd::WindowHandle {
    let tab = client.new_window(true).await.expect("a new tab").handle;
    to_tab(client, &tab).await;
    open_sharing(client, base).await;
    tab
}

/// Makes `tab` current.
async fn to_tab(client: &Client, tab: &fantoccini::wd::WindowHandle) {
    client
        .switch_to_window(tab.clone())
        .await
        .expect("to the tab");
}

/// Case (a), one share mode: coast (429, `Retry-After: 3`) and forest (429, `Retry-After: 0`)
/// start at once. Returns the two logs and forest's record.
async fn coast_and_forest(
    client: &Client,
    base: &str,
    browser: Browser,
    share: &str,
) -> (Vec<Value>, Vec<Value>, Value) {
    open_sharing(client, base).await;
    let coast = run_id(browser, &format!("pair-{share}-coast"));
    let forest = run_id(browser, &format!("pair-{share}-forest"));
    js_with(
        client,
        "window.sharing.start(arguments[0]); window.sharing.start(arguments[1]);",
        vec![
            json!({ "scenario": "dashboard-coast", "run": coast, "share": share }),
            json!({ "scenario": "dashboard-forest", "run": forest, "share": share,
                    "collection": "forest" }),
        ],
    )
    .await;
    let coast_record = result(client, &coast).await;
    let forest_record = result(client, &forest).await;
    assert_eq!(coast_record["outcome"], "success", "{coast_record}");
    assert_eq!(forest_record["outcome"], "success", "{forest_record}");
    (
        run_log(base, &coast).await,
        run_log(base, &forest).await,
        forest_record,
    )
}

/// Prints what the server saw of one mode of case (a).
fn print_pair(browser: Browser, share: &str, coast: &[Value], forest: &[Value], end: f64) {
    let zero = number(&coast[0], "arrival_ms");
    println!(
        "{} one page, share {share:?}: coast {} requests at {:?} s, forest {} requests at {:?} s; \
         the block ends by {:.3} s",
        browser.name(),
        coast.len(),
        times_after(coast, zero),
        forest.len(),
        times_after(forest, zero),
        (end - zero) / 1000.0
    );
}

async fn one_page(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    let (coast, forest, record) = coast_and_forest(client, &server.base, browser, "page").await;
    let end = block_end(&coast[0], COAST_DELAY_MS);
    print_pair(browser, "page", &coast, &forest, end);
    assert_eq!((coast.len(), forest.len()), (2, 2));
    assert!(
        number(&forest[1], "arrival_ms") >= end,
        "shared: forest's retry came before the block's end"
    );
    assert!(waited_for_origin(&record), "no origin_block wait: {record}");

    let (coast, forest, record) = coast_and_forest(client, &server.base, browser, "none").await;
    let end = block_end(&coast[0], COAST_DELAY_MS);
    print_pair(browser, "none", &coast, &forest, end);
    assert_eq!((coast.len(), forest.len()), (2, 2));
    assert!(
        number(&forest[1], "arrival_ms") < end,
        "not shared: forest's retry should not wait for coast's block"
    );
    assert!(!waited_for_origin(&record), "share none waited: {record}");
    session.close().await;
}

browser_tests!(one_page: one_page_chromium, one_page_firefox);

/// Opens a second tab on the sharing page and returns both tabs' handles (first, second),
/// the second one current.
async fn two_tabs(
    client: &Client,
    base: &str,
) -> (fantoccini::wd::WindowHandle, fantoccini::wd::WindowHandle) {
    open_sharing(client, base).await;
    let first = client.window().await.expect("the first tab");
    let second = client.new_window(true).await.expect("a second tab").handle;
    client
        .switch_to_window(second.clone())
        .await
        .expect("to the second tab");
    open_sharing(client, base).await;
    (first, second)
}

async fn tabs(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    let (first, second) = two_tabs(client, &server.base).await;
    let prime = run_id(browser, "tabs-prime");
    start(
        client,
        json!({ "scenario": "dashboard-desert", "run": prime, "share": "tabs" }),
    )
    .await;
    result(client, &prime).await;

    client
        .switch_to_window(first.clone())
        .await
        .expect("to the first tab");
    let coast = run_id(browser, "tabs-coast");
    start(
        client,
        json!({ "scenario": "dashboard-coast", "run": coast, "share": "tabs" }),
    )
    .await;
    let coast_log = sent_log(&server.base, &coast, 1).await;
    let end = block_end(&coast_log[0], COAST_DELAY_MS);

    client
        .switch_to_window(second.clone())
        .await
        .expect("to the second tab");
    let desert = run_id(browser, "tabs-desert");
    let limits = start_when_blocked(
        client,
        vec![json!({ "scenario": "dashboard-desert", "run": desert, "share": "tabs" })],
    )
    .await;
    assert_eq!(limits[0]["scope"], server.base.as_str(), "{limits}");
    let record = result(client, &desert).await;
    let desert_log = run_log(&server.base, &desert).await;
    let zero = number(&coast_log[0], "arrival_ms");
    println!(
        "{} two tabs: the second tab's rateLimits() {limits}; its request arrived at {:?} s, \
         the first tab's block ends by {:.3} s (after the first tab's 429 arrived)",
        browser.name(),
        times_after(&desert_log, zero),
        (end - zero) / 1000.0
    );
    assert_eq!(record["outcome"], "success", "{record}");
    assert_eq!(desert_log.len(), 1);
    assert!(number(&desert_log[0], "arrival_ms") >= end);
    assert!(waited_for_origin(&record), "no origin_block wait: {record}");
    session.close().await;
}

browser_tests!(tabs: two_tabs_chromium, two_tabs_firefox);

/// Part one of case (c): pressed during coast's block, a request waits for its end: its only
/// request arrives no earlier than the block's end, so nothing went out during the block.
async fn pressed_during_fitting_block(client: &Client, base: &str, browser: Browser) {
    open_sharing(client, base).await;
    let coast = run_id(browser, "pressed-coast");
    start(
        client,
        json!({ "scenario": "dashboard-coast", "run": coast }),
    )
    .await;
    let desert = run_id(browser, "pressed-desert");
    start_when_blocked(
        client,
        vec![json!({ "scenario": "dashboard-desert", "run": desert })],
    )
    .await;
    let record = result(client, &desert).await;
    let coast_log = sent_log(base, &coast, 1).await;
    let desert_log = run_log(base, &desert).await;
    let end = block_end(&coast_log[0], COAST_DELAY_MS);
    println!(
        "{} pressed while blocked (fits): {} request(s), the first arriving {:.3} s after the \
         block's end",
        browser.name(),
        desert_log.len(),
        (number(&desert_log[0], "arrival_ms") - end) / 1000.0
    );
    assert_eq!(desert_log.len(), 1);
    assert!(number(&desert_log[0], "arrival_ms") >= end);
    assert_eq!(record["blocked"][0]["at_s"], 0, "{record}");
    assert!(waited_for_origin(&record), "{record}");
}

/// Part two of case (c): pressed during a 30 s block, the action stops at once, sending
/// nothing.
async fn pressed_during_long_block(client: &Client, base: &str, browser: Browser) {
    open_sharing(client, base).await;
    let long = run_id(browser, "pressed-long");
    start(
        client,
        json!({ "scenario": "dashboard-long-block", "run": long }),
    )
    .await;
    let desert = run_id(browser, "pressed-cannot-fit");
    let limits = start_when_blocked(
        client,
        vec![json!({ "scenario": "dashboard-desert", "run": desert })],
    )
    .await;
    let record = result(client, &desert).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let desert_log = run_log(base, &desert).await;
    println!(
        "{} pressed while blocked (cannot fit): rateLimits() {limits}; outcome {}, {} attempts, \
         {} requests in the server's log; visible {}",
        browser.name(),
        record["outcome"],
        record["attempts"],
        desert_log.len(),
        record["visible"]
    );
    assert_eq!(record["outcome"], "budget_exhausted");
    assert_eq!(record["attempts"], 0);
    assert_eq!(record["last_status"], Value::Null);
    assert!(desert_log.is_empty(), "{desert_log:?}");
    let visible = record["visible"].to_string();
    assert!(visible.contains("No request was sent."), "{visible}");
    assert_eq!(result(client, &long).await["outcome"], "budget_exhausted");
}

async fn pressed(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    pressed_during_fitting_block(&session.client, &server.base, browser).await;
    pressed_during_long_block(&session.client, &server.base, browser).await;
    session.close().await;
}

browser_tests!(pressed: pressed_while_blocked_chromium, pressed_while_blocked_firefox);

async fn jitter(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    open_sharing(client, &server.base).await;
    let coast = run_id(browser, "jitter-coast");
    start(
        client,
        json!({ "scenario": "dashboard-coast", "run": coast }),
    )
    .await;
    let runs: Vec<String> = (0..JITTERED)
        .map(|k| run_id(browser, &format!("jitter-{k}")))
        .collect();
    let specs = runs
        .iter()
        .map(|run| json!({ "scenario": "dashboard-desert", "run": run, "jitter_s": JITTER_S }))
        .collect();
    start_when_blocked(client, specs).await;
    let mut starts = Vec::new();
    let mut draws = Vec::new();
    for run in &runs {
        let record = result(client, run).await;
        assert_eq!(record["outcome"], "success", "{record}");
        draws.push(origin_jitter(&record));
        starts.push(number(&run_log(&server.base, run).await[0], "arrival_ms"));
    }
    let end = block_end(&sent_log(&server.base, &coast, 1).await[0], COAST_DELAY_MS);
    let after: Vec<f64> = starts.iter().map(|s| (s - end) / 1000.0).collect();
    let spread = draws.iter().copied().fold(f64::MIN, f64::max)
        - draws.iter().copied().fold(f64::MAX, f64::min);
    println!(
        "{} jitter {JITTER_S} s: {JITTERED} actions drew {:?} s and arrived {:?} s after the \
         block's end; the draws spread {spread:.3} s",
        browser.name(),
        draws.iter().map(|d| format!("{d:.3}")).collect::<Vec<_>>(),
        after.iter().map(|a| format!("{a:.3}")).collect::<Vec<_>>()
    );
    // The server's side: no start before the block's end (exact), and none beyond the jitter
    // and a busy machine's lateness (only an unbounded jitter would go that far).
    assert!(
        after.iter().all(|a| *a >= 0.0),
        "a start before the block's end"
    );
    assert!(
        after.iter().all(|a| *a <= JITTER_S + 2.0),
        "a start far beyond the jitter"
    );
    // The drivers' side: each drew within the jitter, and the draws differ.
    assert!(
        draws.iter().all(|d| (0.0..=JITTER_S).contains(d)),
        "a draw outside 0 to {JITTER_S} s: {draws:?}"
    );
    assert!(spread >= 0.1, "the draws were not spread: {spread}");
    session.close().await;
}

/// The jitter an action's wait for the origin's block drew, in seconds.
fn origin_jitter(record: &Value) -> f64 {
    record["waits"]
        .as_array()
        .and_then(|waits| waits.iter().find(|w| w["source"] == "origin_block"))
        .and_then(|w| w["jitter_s"].as_f64())
        .unwrap_or_else(|| panic!("no origin_block wait with a jitter: {record}"))
}

browser_tests!(jitter: jitter_chromium, jitter_firefox);

/// One half of the rule 13 check: `scenario` answers once with a status the policy does not
/// retry, carrying `Retry-After: 5`; an action of the same origin pressed 2 s after the first,
/// so after that response was received, sends its first request at once: before the moment a
/// block announced by that response would have ended (the server's send plus 5 s).
async fn not_retried_delays_nobody(client: &Client, base: &str, browser: Browser, scenario: &str) {
    let first = run_id(browser, scenario);
    let pressed = Instant::now();
    start(client, json!({ "scenario": scenario, "run": first })).await;
    let first_record = result(client, &first).await;
    tokio::time::sleep_until((pressed + Duration::from_secs(2)).into()).await;
    let next = run_id(browser, &format!("{scenario}-next"));
    start(
        client,
        json!({ "scenario": "dashboard-desert", "run": next }),
    )
    .await;
    let record = result(client, &next).await;
    let first_log = run_log(base, &first).await;
    let next_log = run_log(base, &next).await;
    // When a block announced by the first response would have ended, on the server's clock.
    let would_end = number(&first_log[0], "sent_ms") + NOT_RETRIED_DELAY_MS;
    let arrival = number(&next_log[0], "arrival_ms");
    println!(
        "{} {scenario}: status {} with Retry-After {}; the next action, pressed {:.3} s after \
         that response was sent, arrived {:.3} s after its press and {:.3} s before a block \
         would have ended; its waits {}",
        browser.name(),
        first_log[0]["status"],
        first_log[0]["retry_after"],
        (number(&record, "pressed_unix_ms") - number(&first_log[0], "sent_unix_ms")) / 1000.0,
        (number(&next_log[0], "arrival_unix_ms") - number(&record, "pressed_unix_ms")) / 1000.0,
        (would_end - arrival) / 1000.0,
        record["waits"]
    );
    assert_ne!(first_log[0]["status"], 429, "{first_log:?}");
    assert_eq!(first_log[0]["retry_after"], "5", "{first_log:?}");
    assert_eq!(
        first_log.len(),
        1,
        "the first action was retried: {first_log:?}"
    );
    assert!(first_record["outcome"].is_string(), "{first_record}");
    assert_eq!(record["outcome"], "success", "{record}");
    assert!(
        arrival < would_end,
        "{scenario}: the next action was held back by a Retry-After on a status not retried"
    );
    assert!(went_at_once(&record), "{scenario}: {record}");
}

async fn not_retried(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    open_sharing(client, &server.base).await;
    for scenario in ["live-200-retry-after-5", "live-503-retry-after-5"] {
        not_retried_delays_nobody(client, &server.base, browser, scenario).await;
    }
    session.close().await;
}

browser_tests!(not_retried: not_retried_chromium, not_retried_firefox);

/// In the current (first) tab: a `share: "page"` block of the origin, then a `"tabs"` block of
/// the scope `sentinel`, the witness. Only the witness is kept for later pages; it is then
/// taken out of `localStorage`, so that a tab can learn it only from this one. Returns the page
/// block's run id.
async fn page_block_and_witness(client: &Client, base: &str, browser: Browser) -> String {
    let block = run_id(browser, "third-tab-page-block");
    start(
        client,
        json!({ "scenario": "live-429-retry-after-8", "run": block, "share": "page" }),
    )
    .await;
    start_when_listed(client, Some(base), vec![]).await;
    let witness = run_id(browser, "third-tab-witness");
    start(
        client,
        json!({ "scenario": "live-429-retry-after-8", "run": witness, "share": "tabs",
                "scope": "sentinel" }),
    )
    .await;
    start_when_listed(client, Some("sentinel"), vec![]).await;
    let kept = stored(client).await;
    assert!(
        kept.get("sentinel").is_some(),
        "the tabs block was not stored: {kept}"
    );
    assert!(
        kept.get(base).is_none(),
        "the page block was stored: {kept}"
    );
    js(client, "window.sharing.forgetStored()").await;
    block
}

/// The page-only half of the third-tab check. The first tab holds a `share: "page"` block of
/// the origin and, as a witness, a `"tabs"` block learned after it
/// ([`page_block_and_witness`]). A second tab, open all along, hears the witness but not the
/// page block. With the second tab closed, a third tab, opened during both blocks, can only
/// learn the witness by asking the first tab: once it has, it would have learned the page
/// block too (the first tab answers with its blocks in the order it learned them). It lists no
/// block of the origin, and its action (`share: "tabs"`) goes at once, before the page block
/// ends.
async fn third_tab_during_page_block(client: &Client, base: &str, browser: Browser) {
    open_sharing(client, base).await;
    let first = client.window().await.expect("the first tab");
    let second = new_tab(client, base).await;
    js(client, "return window.sharing.rateLimits()").await;
    to_tab(client, &first).await;
    let block = page_block_and_witness(client, base, browser).await;

    to_tab(client, &second).await;
    let heard = start_when_listed(client, Some("sentinel"), vec![]).await;
    client.close_window().await.expect("the second tab closes");
    to_tab(client, &first).await;
    new_tab(client, base).await;
    let press = run_id(browser, "third-tab-page-press");
    let asked = start_when_listed(
        client,
        Some("sentinel"),
        vec![json!({ "scenario": "dashboard-desert", "run": press, "share": "tabs" })],
    )
    .await;
    let record = result(client, &press).await;
    let kept = stored(client).await;
    client.close_window().await.expect("the third tab closes");
    to_tab(client, &first).await;
    let end = block_end(&sent_log(base, &block, 1).await[0], LONG_DELAY_MS);
    let arrival = number(&run_log(base, &press).await[0], "arrival_ms");
    println!(
        "{} third tab, share \"page\": the second tab heard {heard}; the third tab, once told \
         the witness, listed {asked}; its action arrived {:.3} s before the page block's end; \
         stored then {kept}",
        browser.name(),
        (end - arrival) / 1000.0
    );
    assert!(
        !lists(&heard, base),
        "the page block reached the second tab: {heard}"
    );
    assert!(
        !lists(&asked, base),
        "the page block reached the third tab: {asked}"
    );
    assert_eq!(record["outcome"], "success", "{record}");
    assert!(went_at_once(&record), "{record}");
    assert!(
        arrival < end,
        "the third tab's action waited for the page block"
    );
    assert!(
        kept.get(base).is_none(),
        "the page block was stored: {kept}"
    );
}

/// The tabs half of the third-tab check: a tab opened during a `share: "tabs"` block lists it,
/// and its action (`"tabs"`) sends nothing before the block ends.
async fn third_tab_during_tabs_block(client: &Client, base: &str, browser: Browser) {
    open_sharing(client, base).await;
    let block = run_id(browser, "third-tab-tabs-block");
    start(
        client,
        json!({ "scenario": "live-429-retry-after-8", "run": block, "share": "tabs" }),
    )
    .await;
    start_when_listed(client, Some(base), vec![]).await;
    let kept = stored(client).await;
    new_tab(client, base).await;
    let press = run_id(browser, "third-tab-tabs-press");
    let listed = start_when_listed(
        client,
        Some(base),
        vec![json!({ "scenario": "dashboard-desert", "run": press, "share": "tabs" })],
    )
    .await;
    let record = result(client, &press).await;
    let end = block_end(&sent_log(base, &block, 1).await[0], LONG_DELAY_MS);
    let log = run_log(base, &press).await;
    println!(
        "{} third tab, share \"tabs\": stored {kept}; the new tab listed {listed}; its action \
         arrived {:.3} s after the block's end",
        browser.name(),
        (number(&log[0], "arrival_ms") - end) / 1000.0
    );
    assert!(
        kept.get(base).is_some(),
        "the tabs block was not stored: {kept}"
    );
    assert_eq!(record["outcome"], "success", "{record}");
    assert_eq!(log.len(), 1);
    assert!(
        number(&log[0], "arrival_ms") >= end,
        "sent during the block"
    );
    assert!(waited_for_origin(&record), "{record}");
}

async fn third_tab(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    third_tab_during_page_block(&session.client, &server.base, browser).await;
    third_tab_during_tabs_block(&session.client, &server.base, browser).await;
    session.close().await;
}

browser_tests!(third_tab: third_tab_chromium, third_tab_firefox);

async fn scopes(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    let base = server.base.as_str();
    open_sharing(client, base).await;
    let a = run_id(browser, "scope-a-search");
    start(
        client,
        json!({ "scenario": "dashboard-coast", "run": a, "scope": "search" }),
    )
    .await;
    let (b, c) = (
        run_id(browser, "scope-b-origin"),
        run_id(browser, "scope-c-search"),
    );
    let limits = start_when_listed(
        client,
        Some("search"),
        vec![
            json!({ "scenario": "dashboard-desert", "run": b }),
            json!({ "scenario": "dashboard-desert", "run": c, "scope": "search" }),
        ],
    )
    .await;
    let (b_record, c_record) = (result(client, &b).await, result(client, &c).await);
    let end = block_end(&sent_log(base, &a, 1).await[0], COAST_DELAY_MS);
    let (b_log, c_log) = (run_log(base, &b).await, run_log(base, &c).await);
    println!(
        "{} scopes: rateLimits() {limits} when B and C were pressed; B (the origin) arrived \
         {:.3} s before the search block's end, C (search) {:.3} s after it",
        browser.name(),
        (end - number(&b_log[0], "arrival_ms")) / 1000.0,
        (number(&c_log[0], "arrival_ms") - end) / 1000.0
    );
    assert!(
        !lists(&limits, base),
        "a search block listed as the origin's: {limits}"
    );
    assert_eq!((b_log.len(), c_log.len()), (1, 1));
    assert!(
        number(&b_log[0], "arrival_ms") < end,
        "the origin's action waited for the search block"
    );
    assert!(went_at_once(&b_record), "{b_record}");
    assert!(
        number(&c_log[0], "arrival_ms") >= end,
        "the search action was sent during the search block"
    );
    assert!(waited_for_origin(&c_record), "{c_record}");
    assert_eq!(result(client, &a).await["outcome"], "success");
    session.close().await;
}

browser_tests!(scopes: scopes_chromium, scopes_firefox);

/// The Last HTTP response panel of the Palette List, as text: status, Retry-After raw and as
/// read, RateLimit field.
async fn last_response_panel(client: &Client) -> [String; 4] {
    let mut shown = [const { String::new() }; 4];
    for (text, id) in
        shown
            .iter_mut()
            .zip(["last-status", "last-raw", "last-kind", "last-ratelimit"])
    {
        *text = text_of(client, id).await;
    }
    shown
}

async fn ratelimit_field(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    open_page(client, &server.base, "ratelimit-only-429").await;
    let run = start_action(client).await;
    let on_429 = "return document.getElementById('last-status').innerText === '429'";
    assert!(
        wait_until(client, on_429, ACTION_LIMIT).await,
        "the panel never showed the 429"
    );
    let panel = last_response_panel(client).await;
    let ended = "return !!document.body.dataset.outcome";
    assert!(wait_until(client, ended, ACTION_LIMIT).await, "no outcome");
    let outcome = js(client, "return document.body.dataset.outcome").await;
    let log = run_log(&server.base, &run).await;
    assert_eq!(log.len(), 2, "{log:?}");
    let quota_back = number(&log[0], "sent_ms") + RATELIMIT_RESET_MS;
    println!(
        "{} RateLimit field: the 429 was sent at {:.3} s and the retry arrived {:.3} s after \
         it; the panel during the wait: {panel:?}; outcome {outcome}",
        browser.name(),
        number(&log[0], "sent_ms") / 1000.0,
        (number(&log[1], "arrival_ms") - number(&log[0], "sent_ms")) / 1000.0
    );
    assert_eq!(log[0]["status"], 429);
    assert_eq!(
        log[0]["retry_after"],
        Value::Null,
        "the 429 carried a Retry-After"
    );
    assert!(
        number(&log[1], "arrival_ms") >= quota_back,
        "retried before the RateLimit field's 3 s had passed"
    );
    assert_eq!(outcome, "success");
    assert_eq!(panel[0], "429");
    assert_eq!(panel[1], "(absent)");
    assert_eq!(
        panel[3],
        r#""\"default\";r=0;t=3", read as exhausted: the quota is restored in 3 s"#
    );
    session.close().await;
}

browser_tests!(ratelimit_field: ratelimit_field_chromium, ratelimit_field_firefox);

/// One half of the reload check: an action sharing as `share` gets a 429 asking for 8 s, the
/// page reloads during the block, and a new action (`share: "tabs"`) is pressed in the new
/// page. Returns what the new page listed, the new action's record, and its arrival minus the
/// block's end, in seconds.
async fn press_after_reload(
    client: &Client,
    base: &str,
    browser: Browser,
    share: &str,
) -> (Value, Value, f64) {
    open_sharing(client, base).await;
    let block = run_id(browser, &format!("reload-{share}-block"));
    start(
        client,
        json!({ "scenario": "live-429-retry-after-8", "run": block, "share": share }),
    )
    .await;
    start_when_listed(client, Some(base), vec![]).await;
    reload(client).await;
    let listed = js(client, "return window.sharing.rateLimits()").await;
    let press = run_id(browser, &format!("reload-{share}-press"));
    start(
        client,
        json!({ "scenario": "dashboard-desert", "run": press, "share": "tabs" }),
    )
    .await;
    let record = result(client, &press).await;
    let block_log = run_log(base, &block).await;
    let end = block_end(&block_log[0], LONG_DELAY_MS);
    let after = (number(&run_log(base, &press).await[0], "arrival_ms") - end) / 1000.0;
    println!(
        "{} reload during a {share:?} block: the new page listed {listed}; its action arrived \
         {after:.3} s after the block's end; waits {}",
        browser.name(),
        record["waits"]
    );
    assert_eq!(
        block_log.len(),
        1,
        "the reloaded page's action went on: {block_log:?}"
    );
    assert_eq!(record["outcome"], "success", "{record}");
    (listed, record, after)
}

async fn reloads(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let (client, base) = (&session.client, server.base.as_str());
    let (listed, record, after) = press_after_reload(client, base, browser, "page").await;
    assert!(
        !lists(&listed, base),
        "a page block outlived its page: {listed}"
    );
    assert!(
        after < 0.0,
        "the new page waited for the old page's page-only block"
    );
    assert!(went_at_once(&record), "{record}");
    let (listed, record, after) = press_after_reload(client, base, browser, "tabs").await;
    assert!(
        lists(&listed, base),
        "the reload forgot the block: {listed}"
    );
    assert!(
        after >= 0.0,
        "the new page's action was sent during the block"
    );
    assert!(waited_for_origin(&record), "{record}");
    assert_eq!(record["blocked"][0]["at_s"], 0, "{record}");
    session.close().await;
}

browser_tests!(reloads: reload_chromium, reload_firefox);

/// The run ids and outcomes of the dashboard's widgets, by collection.
async fn widgets(client: &Client) -> Value {
    js(
        client,
        "return Object.fromEntries([...document.querySelectorAll('[data-collection]')]
           .map((w) => [w.dataset.collection, { run: w.dataset.run, outcome: w.dataset.outcome }]))",
    )
    .await
}

/// Whether a text of the Rate limits panel lists a block of every scope in `scopes`.
fn lists_scopes(scopes: &[String]) -> String {
    let checks: Vec<String> = scopes
        .iter()
        .map(|s| {
            format!(
                "t.includes({})",
                json!(format!("{s}: the service asked us to wait"))
            )
        })
        .collect();
    format!("(t) => {}", checks.join(" && "))
}

/// Records every text the Rate limits panel shows, as it changes, in `window.__panels`: a
/// block is shown only while it lasts, however briefly a busy machine lets a poll see it.
async fn record_panels(client: &Client) {
    js(
        client,
        "const panel = document.getElementById('rate-limits');
         window.__panels = [panel.innerText];
         new MutationObserver(() => window.__panels.push(panel.innerText))
           .observe(panel, { childList: true, characterData: true, subtree: true });",
    )
    .await;
}

/// Records every announcement of the Rate limits panel's screen-reader line
/// (`#rate-limits-said`), in `window.__said`: its text now, then each text it is given.
async fn record_said(client: &Client) {
    js(
        client,
        "const said = document.getElementById('rate-limits-said');
         window.__said = [said.textContent];
         new MutationObserver((records) => {
           for (const r of records) {
             if (r.type === 'characterData') window.__said.push(r.target.data);
             for (const n of r.addedNodes) window.__said.push(n.textContent);
           }
         }).observe(said, { childList: true, characterData: true, subtree: true });",
    )
    .await;
}

/// The screen-reader line's announcements (`recorded`, from [`record_said`]): it said the
/// limits in force in the page's words, once with both scopes (`base`, the origin's, and
/// `search`), each change once (never the same words twice in a row, as a tick that changed
/// nothing would), and it ended with the words for none.
fn check_said(recorded: &Value, base: &str) {
    const NONE: &str = "No rate limit in force.";
    const SOME: &str = "Rate limits in force: ";
    let said: Vec<&str> = recorded
        .as_array()
        .expect("the recorded announcements")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let scopes_of = |line: &str| -> Option<Vec<String>> {
        let listed = line.strip_prefix(SOME)?.strip_suffix('.')?;
        let mut scopes: Vec<String> = listed.split(", ").map(str::to_owned).collect();
        scopes.sort();
        Some(scopes)
    };
    let mut both = vec![base.to_owned(), "search".to_owned()];
    both.sort();
    assert!(
        said.iter()
            .any(|line| scopes_of(line).as_ref() == Some(&both)),
        "the screen-reader line never announced both limits in force: {said:?}"
    );
    for line in &said[1..] {
        assert!(
            *line == NONE || scopes_of(line).is_some_and(|s| s.iter().all(|x| both.contains(x))),
            "an announcement not in the panel's words: {line:?} in {said:?}"
        );
    }
    assert!(
        said.windows(2).all(|pair| pair[0] != pair[1]),
        "the same announcement twice in a row: {said:?}"
    );
    assert_eq!(said.last(), Some(&NONE), "{said:?}");
}

/// The Dashboard's widgets by the server's log: coast's Retry-After holds back forest, the
/// search widget's block holds back neither palette, and the search widget waits what its
/// RateLimit field said. `panel` is the recorded Rate limits panel that listed both scopes.
async fn check_dashboard_logs(base: &str, browser: Browser, state: &Value, panel: &Value) {
    let log = |c: &str| run_log(base, state[c]["run"].as_str().unwrap_or_default());
    let (coast, forest, desert) = (log("coast").await, log("forest").await, log("desert").await);
    let search = log("search").await;
    let coast_end = block_end(&coast[0], COAST_DELAY_MS);
    let search_end = block_end(&search[0], SEARCH_RESET_MS);
    let zero = number(&coast[0], "arrival_ms");
    println!(
        "{} dashboard: rate limits panel {panel}; coast {:?}, forest {:?}, desert {:?}, \
         search {:?} s; coast's block ends by {:.3} s, search's by {:.3} s; widgets {state}",
        browser.name(),
        times_after(&coast, zero),
        times_after(&forest, zero),
        times_after(&desert, zero),
        times_after(&search, zero),
        (coast_end - zero) / 1000.0,
        (search_end - zero) / 1000.0
    );
    for c in ["coast", "forest", "desert", "search"] {
        assert_eq!(state[c]["outcome"], "success", "{state}");
    }
    let lengths = (coast.len(), forest.len(), desert.len(), search.len());
    assert_eq!(lengths, (2, 2, 1, 2));
    assert_eq!(search[0]["retry_after"], Value::Null, "{search:?}");
    // Coast's Retry-After holds back forest, a palette of the same (the origin's) limit.
    assert!(number(&forest[1], "arrival_ms") >= coast_end);
    // The search block was known while coast's still held (the panel listed both), so both
    // palettes' retries went out after it was announced: before its end, they did not wait.
    for (name, palette) in [("coast", &coast), ("forest", &forest)] {
        assert!(
            number(&palette[1], "arrival_ms") < search_end,
            "{name}'s retry waited for the search widget's block"
        );
    }
    // And the search widget waited what its RateLimit field said.
    assert!(number(&search[1], "arrival_ms") >= search_end);
}

async fn dashboard(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    open_ready(client, &format!("{}/#/dashboard", server.base)).await;
    viewport(client, SCREENSHOT_WIDTH, 1600)
        .await
        .expect("the window resizes");
    record_panels(client).await;
    record_said(client).await;
    click(client, "dash-load").await.expect("Load dashboard");
    // Both limits at once: the origin's (coast's Retry-After) and the search scope's (its
    // RateLimit field). The screenshot is taken as soon as the panel lists both.
    let both = lists_scopes(&[server.base.clone(), "search".into()]);
    let now_both = format!("return ({both})(document.getElementById('rate-limits').innerText)");
    let shown_now = wait_until(client, &now_both, Duration::from_secs(20)).await;
    screenshot(client, browser, "dashboard-scopes").await;
    let panel = js(
        client,
        &format!("return window.__panels.find({both}) ?? null"),
    )
    .await;
    let done = "return [...document.querySelectorAll('[data-collection]')]
                  .every((w) => w.dataset.outcome)";
    assert!(
        wait_until(client, done, ACTION_LIMIT).await,
        "widgets did not end"
    );
    screenshot(client, browser, "dashboard-done").await;
    let state = widgets(client).await;
    check_dashboard_logs(&server.base, browser, &state, &panel).await;
    assert!(
        shown_now,
        "the rate limits panel never listed both scopes at once"
    );
    assert!(panel.is_string(), "no recorded panel lists both scopes");
    let after = "return document.getElementById('rate-limits').innerText.includes('No rate limit')";
    assert!(wait_until(client, after, Duration::from_secs(20)).await);
    // The panel and its screen-reader line are written in one step: once the panel says no
    // limit is in force, the line has been given its last words.
    let said = js(client, "return window.__said").await;
    println!(
        "{} dashboard: the screen-reader line said {said}",
        browser.name()
    );
    check_said(&said, &server.base);
    session.close().await;
}

browser_tests!(dashboard: dashboard_chromium, dashboard_firefox);

/// Opens the Dashboard, presses Load dashboard, and waits until the coast widget waits: its
/// first answer is a 429 with a `Retry-After`.
async fn load_dashboard_until_coast_waits(client: &Client, base: &str) {
    open_ready(client, &format!("{base}/#/dashboard")).await;
    click(client, "dash-load").await.expect("Load dashboard");
    let waiting =
        format!("return {COAST}.querySelector('.widget-state').innerText.startsWith('Waiting')");
    assert!(
        wait_until(client, &waiting, ACTION_LIMIT).await,
        "the coast widget never waited"
    );
}

/// Leaving the Dashboard for another screen ends its running widgets: each then says what its
/// action's report says (the model's words, not the page's), and nothing more is sent.
async fn dashboard_left(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    // Leave while the coast widget waits.
    load_dashboard_until_coast_waits(client, &server.base).await;
    js(client, "location.hash = '#/'; return null").await;
    js(client, "location.hash = '#/dashboard'; return null").await;
    let left = format!("return {COAST}.dataset.outcome === 'user_left'");
    assert!(
        wait_until(client, &left, ACTION_LIMIT).await,
        "the coast widget did not end as user_left"
    );
    let lines = js(
        client,
        &format!(
            "return [...{COAST}.querySelectorAll('.widget-state p')].map((p) => p.textContent)"
        ),
    )
    .await;
    let lines: Vec<&str> = lines
        .as_array()
        .expect("lines")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        lines.first(),
        Some(&"Stopped: you left this screen."),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Last response: 429. Attempts: 1 of 3.")),
        "{lines:?}"
    );
    assert_eq!(
        lines.last(),
        Some(&"The wait was cancelled. No retry was sent."),
        "{lines:?}"
    );
    // Past the end of the wait coast's Retry-After asked for, still only its first request.
    let run = js(client, &format!("return {COAST}.dataset.run")).await;
    let run = run.as_str().expect("a run id");
    tokio::time::sleep(Duration::from_millis(COAST_DELAY_MS as u64 + 1000)).await;
    assert_eq!(
        run_log(&server.base, run).await.len(),
        1,
        "a request after leaving"
    );
    session.close().await;
}

browser_tests!(dashboard_left: dashboard_left_chromium, dashboard_left_firefox);

/// Presses Load dashboard by script, in the task that first installs a recorder on every
/// widget, so that all it records comes after the press: for each widget (by collection),
/// `window.__after[c]` holds the `oldValue` of each change of its `data-outcome`, in order (the
/// values it held before each change; with its value now, every value it took), and every line
/// its state was given. Returns each widget's run, outcome and state text just before the press.
async fn press_again_recorded(client: &Client) -> Value {
    js(
        client,
        "const before = {};
         window.__after = {};
         for (const w of document.querySelectorAll('[data-collection]')) {
           const c = w.dataset.collection;
           const state = w.querySelector('.widget-state');
           before[c] = { run: w.dataset.run, outcome: w.dataset.outcome, state: state.innerText };
           const after = (window.__after[c] = { outcomes_before: [], lines: [] });
           const observer = new MutationObserver((records) => {
             for (const r of records) {
               if (r.type === 'attributes') after.outcomes_before.push(r.oldValue);
               for (const n of r.addedNodes) after.lines.push(n.textContent);
             }
           });
           observer.observe(w, {
             attributes: true, attributeFilter: ['data-outcome'], attributeOldValue: true,
           });
           observer.observe(state, { childList: true });
         }
         document.getElementById('dash-load').click();
         return before;",
    )
    .await
}

/// Every value a widget's `data-outcome` took after the press, from its recorded `oldValue`s
/// (the first is the value the press found) and its value now.
fn outcomes_taken(recorded: &Value, now: &Value) -> Vec<Value> {
    let before = recorded["outcomes_before"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    before.into_iter().skip(1).chain([now.clone()]).collect()
}

/// Load dashboard pressed again while the widgets run (coast waits on its 429): each widget's
/// new action claims the widget's screen, which ends the old one with an abort report. That
/// report belongs to a run the widget no longer shows: from the press on, no widget is ever
/// told "Stopped…" or `user_left`, and each ends with its new run's outcome. The old coast run
/// was stopped indeed: past the new run's end (which waited for the same block and then for a
/// 429 of its own), the server still has only its first request.
async fn dashboard_again(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    load_dashboard_until_coast_waits(client, &server.base).await;
    let before = press_again_recorded(client).await;
    let done = format!(
        "const before = {before};
         return [...document.querySelectorAll('[data-collection]')].every((w) =>
           w.dataset.run !== before[w.dataset.collection].run && w.dataset.outcome === 'success')"
    );
    let ended = wait_until(client, &done, ACTION_LIMIT).await;
    let after = js(client, "return window.__after").await;
    let state = widgets(client).await;
    println!(
        "{} dashboard pressed again: before the press {before}; recorded after it {after}; \
         widgets now {state}",
        browser.name()
    );
    // The old coast run was running at the press (waiting for its retry): there was a run to
    // stop.
    assert_eq!(before["coast"]["outcome"], "", "{before}");
    assert!(
        before["coast"]["state"]
            .as_str()
            .is_some_and(|s| s.starts_with("Waiting")),
        "{before}"
    );
    for c in ["coast", "forest", "desert", "search"] {
        let lines = after[c]["lines"].as_array().cloned().unwrap_or_default();
        assert!(
            !lines
                .iter()
                .any(|l| l.as_str().is_some_and(|l| l.starts_with("Stopped"))),
            "{c}: an old run's abort report was shown after the press: {lines:?}"
        );
        let taken = outcomes_taken(&after[c], &state[c]["outcome"]);
        assert!(
            !taken.contains(&json!("user_left")),
            "{c}: an old run's outcome was set after the press: {taken:?}"
        );
    }
    assert!(
        ended,
        "the widgets did not all end with a new run's success: {state}"
    );
    let old_coast = before["coast"]["run"].as_str().expect("the old coast run");
    let new_coast = state["coast"]["run"].as_str().expect("the new coast run");
    let new_log = run_log(&server.base, new_coast).await;
    assert_eq!(
        new_log.last().map(|e| &e["status"]),
        Some(&json!(200)),
        "{new_log:?}"
    );
    let old_log = run_log(&server.base, old_coast).await;
    assert_eq!(old_log.len(), 1, "the old coast run went on: {old_log:?}");
    session.close().await;
}

browser_tests!(dashboard_again: dashboard_again_chromium, dashboard_again_firefox);

/// The `Retry-After` of each response of the `hostile-display` scenario (markup), as its
/// fixture file writes it.
fn hostile_retry_afters() -> [String; 2] {
    let scenario = fixture("hostile-display");
    [0, 1].map(|k| {
        scenario.responses[k]
            .header("Retry-After")
            .expect("a Retry-After")
    })
}

/// A widget's Last response fields are text, never markup. No dashboard scenario carries
/// markup, and the widgets name their scenarios themselves, so the page's `fetch` is wrapped
/// to ask for the fixture server's `hostile-display` scenario (a `Retry-After` of markup in
/// each response) where the coast widget asks for `dashboard-coast`; the server answers as
/// scripted. From the press on, the coast widget's fields are recorded: no element is ever
/// added to them, the first `Retry-After` was shown as its literal text while the widget
/// waited, and the last one is shown so at the end.
async fn dashboard_markup(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let client = &session.client;
    open_ready(client, &format!("{}/#/dashboard", server.base)).await;
    let title = js(client, "return document.title").await;
    js(
        client,
        "const fetch = window.fetch;
         window.fetch = (url, init) => fetch.call(window,
           typeof url === 'string'
             ? url.replace('scenario=dashboard-coast&', 'scenario=hostile-display&')
             : url,
           init);
         const fields = document.querySelector('[data-collection=coast] dl');
         window.__fields = { elements: [], raws: [] };
         const raw = fields.querySelectorAll('dd')[1];
         new MutationObserver((records) => {
           for (const r of records) {
             for (const n of r.addedNodes) {
               if (n.nodeType === Node.ELEMENT_NODE) window.__fields.elements.push(n.outerHTML);
             }
             if (r.target === raw) window.__fields.raws.push(raw.textContent);
           }
         }).observe(fields, { childList: true, characterData: true, subtree: true });",
    )
    .await;
    click(client, "dash-load").await.expect("Load dashboard");
    let ended = wait_until(
        client,
        &format!("return !!{COAST}.dataset.outcome"),
        ACTION_LIMIT,
    )
    .await;
    let recorded = js(client, "return window.__fields").await;
    let now = js(
        client,
        &format!(
            "return {{ outcome: {COAST}.dataset.outcome, run: {COAST}.dataset.run,
                       raw: {COAST}.querySelectorAll('dl dd')[1].textContent,
                       title: document.title }}"
        ),
    )
    .await;
    println!(
        "{} dashboard markup: coast widget now {now}; recorded {recorded}",
        browser.name()
    );
    assert!(ended, "the coast widget did not end");
    let run = now["run"].as_str().expect("the coast run");
    let log = run_log(&server.base, run).await;
    assert!(
        !log.is_empty() && log.iter().all(|e| e["scenario"] == "hostile-display"),
        "the coast widget did not play hostile-display: {log:?}"
    );
    assert_eq!(
        recorded["elements"],
        json!([]),
        "markup became elements in the Last response fields"
    );
    let [first, last] =
        hostile_retry_afters().map(|raw| json!(serde_json::to_string(&raw).unwrap()));
    assert!(
        recorded["raws"]
            .as_array()
            .is_some_and(|raws| raws.contains(&first)),
        "the first Retry-After was never shown as the text {first}: {recorded}"
    );
    assert_eq!(now["raw"], last, "{now}");
    assert_eq!(now["title"], title, "a payload changed the title");
    session.close().await;
}

browser_tests!(dashboard_markup: dashboard_markup_chromium, dashboard_markup_firefox);
