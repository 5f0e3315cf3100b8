//! Server faults and hostile display, live, in headless Chromium and Firefox.
//!
//! Each fault runs through the real page (`www/index.html`) and the real wasm driver against the
//! fixture server, and must end with the right outcome and visible text, while the server's log
//! shows no request beyond what the rules allow.
//!
//! Where the faults come from:
//! - scenarios of `fixtures/hostile-servers.json` (the model can express them, so they carry `expect`
//!   and the fixture walk, replay and `browsers.rs` run them too): a huge delay-seconds, two
//!   `Retry-After` lines, dates far in the future, at the end of year 9999 and in the past, and
//!   a 503 with `Retry-After`;
//! - the server's own fault file `server/transport-faults.json` (below HTTP, or in the browser's
//!   CORS checks): a cross-origin 429 without `Access-Control-Allow-Origin`, a cross-origin
//!   `Retry-After` that is not exposed, a body that never finishes, a connection reset, and a
//!   same-origin redirect. Cross-origin cases open the page at the server's main origin with
//!   `?api=` naming its second origin.
//!
//! A redirect is followed by `fetch` itself: one attempt of the driver may therefore be two
//! requests in the log (the 302 and the request it leads to), and no more.
//!
//! The scenario note tells the user to open the page with `?api=` for a fault that only shows
//! cross-origin exactly when the page has no `?api=` and the fault needs it.
//!
//! Hostile display: a `Retry-After` and a body carrying markup and script must be shown as
//! text, and nothing may run: no global set, no title changed, no Content-Security-Policy
//! violation reported (an inline handler that tried to run would report one), and no beacon
//! fetched (an `<img>` or stylesheet rendered from the payload would fetch `/beacon`). A
//! positive control proves the beacon is logged when something does fetch it, and that the
//! page's policy blocks an inline script injected into it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::Client;
use retry_budget_model::scenario::Reply;
use serde_json::{json, Value};

use e2e::{
    fixture, full_log, js, js_with, number, open_ready, palettes_only, run_log, screenshot,
    session, start_action, start_server, text_of, wait_until, Browser,
};

/// Sessions per browser that run cases at once.
const SESSIONS: usize = 2;
/// After the outcome, how long to wait before reading the log: longer than any wait these
/// scenarios could still schedule, so a request sent after the stop would be seen.
const SETTLE: Duration = Duration::from_millis(1200);
/// How long a case may take to show its outcome: far longer than any of them takes, so that
/// only "never" fails.
const OUTCOME_WITHIN: Duration = Duration::from_secs(30);
/// How soon after a reset the server takes a request of the same run for the browser's own
/// resend (`RESEND_WINDOW` in `server/src/faults.rs`).
const RESEND_WINDOW_MS: f64 = 1000.0;

/// The live wait between the first response being sent and the second request arriving, on
/// the server's clock.
struct Gap {
    /// The wait the rules give: the second request may not arrive sooner (the browser received
    /// the first response after the server sent it, then waited this long).
    at_least_s: f64,
    /// It must arrive sooner than this: the wait that a wrong reading of the response would
    /// give, or, where there is none, a generous bound that only a lost retry exceeds.
    less_than_s: f64,
}

/// What one request in the log must look like.
struct Req {
    status: Value,
    fault: Option<&'static str>,
    /// A piece of the URI it must contain.
    uri_has: Option<&'static str>,
    /// A piece of the URI it must not contain.
    uri_lacks: Option<&'static str>,
}

fn req(status: Value) -> Req {
    Req {
        status,
        fault: None,
        uri_has: None,
        uri_lacks: None,
    }
}

fn faulted(status: Value, fault: &'static str) -> Req {
    Req {
        status,
        fault: Some(fault),
        uri_has: None,
        uri_lacks: None,
    }
}

/// One fault and everything that must be true after it. Left to `Default`: same origin, no
/// forbidden text, no kind to show, no wait or abort timed, no list, no resends by the browser.
#[derive(Default)]
struct Case {
    label: &'static str,
    scenario: &'static str,
    /// Fetch `/palettes` from the server's second origin.
    cross_origin: bool,
    outcome: &'static str,
    /// The visible state's first line, exactly.
    headline: &'static str,
    /// Pieces the visible state must contain.
    state_has: Vec<&'static str>,
    /// The visible state's "Elapsed: N seconds." figure: at least this many seconds (what
    /// ended the action: it cannot end sooner), and less than two more (a timer firing late on a
    /// busy machine shows here, as the live elapsed time it is).
    elapsed_from_s: Option<f64>,
    /// Pieces the visible state and the last-response panel must not contain.
    never: Vec<&'static str>,
    last_status: &'static str,
    last_raw: Option<&'static str>,
    last_kind_has: Vec<&'static str>,
    /// The `/palettes` requests of the run, in order: exactly these.
    requests: Vec<Req>,
    /// The live wait between the first response being sent and the second request arriving.
    gap: Option<Gap>,
    /// The first request's cap, in seconds, which must be what closed it: the client closed it
    /// after its response began (not at the head), and before the next longer limit could
    /// (the default 4 s cap). Bounded on the server's clock from the request's arrival: more
    /// than half the cap (the request's own trip to the server may take the rest) and less
    /// than the cap plus two seconds.
    closed_by_cap_s: Option<f64>,
    /// List items the page must show.
    list: Vec<&'static str>,
    /// The browser may resend the first request on its own (a reset before any byte on a
    /// reused connection): entries marked `reset_resend` are counted, not failed, as long as
    /// each follows the previous reset within the server's resend window.
    browser_resends: bool,
}

/// A 429 whose `Retry-After` (shown as `last_raw`, read as `last_kind`) asks for a delay longer
/// than any budget: the action stops after its first request, and says why.
fn beyond_any_budget(
    label: &'static str,
    scenario: &'static str,
    last_raw: &'static str,
    last_kind: &'static str,
) -> Case {
    Case {
        label,
        scenario,
        outcome: "budget_exhausted",
        headline: "Stopped: retry budget cannot fit another request.",
        state_has: vec![
            "Last response: 429. Attempts: 1 of 3.",
            "The service requested a delay longer than any budget. No retry was sent.",
        ],
        last_status: "429",
        last_raw: Some(last_raw),
        last_kind_has: vec![last_kind],
        requests: vec![req(json!(429))],
        ..Case::default()
    }
}

fn cases() -> Vec<Case> {
    vec![
        beyond_any_budget(
            "429 with Retry-After: 99999999999999999999",
            "huge-retry-after-seconds",
            "\"99999999999999999999\"",
            "delay-seconds",
        ),
        Case {
            label: "two Retry-After lines (read as \"3, 4\")",
            scenario: "two-retry-after-lines",
            outcome: "attempts_exhausted",
            headline: "Stopped: both attempts were rate limited.",
            state_has: vec!["Last response: 429. Attempts: 2 of 2."],
            last_status: "429",
            last_raw: Some("\"3, 4\""),
            // The last receipt's reading; the gap below shows the fallback waited after the first.
            last_kind_has: vec!["invalid (this action has no attempt left)"],
            requests: vec![req(json!(429)), req(json!(429))],
            // The 0.5 s fallback: reading "3" or "4" would have stopped on the budget at once, or
            // waited 3 s.
            gap: Some(Gap {
                at_least_s: 0.5,
                less_than_s: 3.0,
            }),
            ..Case::default()
        },
        Case {
            label: "Retry-After date 176 years ahead",
            scenario: "retry-after-date-far-future",
            outcome: "budget_exhausted",
            headline: "Stopped: retry budget cannot fit another request.",
            state_has: vec![
                "Last response: 429. Attempts: 1 of 3.",
                // Measured against the response's own Date: exactly the scripted offset.
                "The service requested a 5554051200-second delay. No retry was sent.",
            ],
            last_status: "429",
            last_raw: None,
            last_kind_has: vec!["an HTTP-date, a 5554051200-second delay"],
            requests: vec![req(json!(429))],
            ..Case::default()
        },
        Case {
            label: "Retry-After Fri, 31 Dec 9999 23:59:59 GMT",
            scenario: "retry-after-date-year-9999",
            outcome: "budget_exhausted",
            headline: "Stopped: retry budget cannot fit another request.",
            state_has: vec![
                "Last response: 429. Attempts: 1 of 3.",
                // The exact delay to the last second an HTTP-date can write, from the live
                // receipt: its figure depends on the day the test runs.
                "The service requested a ",
                "-second delay. No retry was sent.",
            ],
            last_status: "429",
            last_raw: Some("\"Fri, 31 Dec 9999 23:59:59 GMT\""),
            last_kind_has: vec!["an HTTP-date, a "],
            requests: vec![req(json!(429))],
            ..Case::default()
        },
        Case {
            label: "Retry-After date in the past",
            scenario: "retry-after-date-in-past",
            outcome: "success",
            headline: "Loaded: the list is ready.",
            state_has: vec!["Last response: 200. Attempts: 2 of 3."],
            last_status: "200",
            last_raw: Some("(absent)"),
            requests: vec![req(json!(429)), req(json!(200))],
            // Delay 0, so the 0.3 s minimum wait; the 2 s fallback would mean it was not read.
            gap: Some(Gap {
                at_least_s: 0.3,
                less_than_s: 2.0,
            }),
            list: vec!["sea glass", "driftwood", "kelp"],
            ..Case::default()
        },
        Case {
            label: "503 with Retry-After",
            scenario: "status-503-with-retry-after",
            outcome: "not_retryable",
            headline: "Stopped: the service answered with a status that is not retried.",
            state_has: vec!["Last response: 503. Attempts: 1 of 3."],
            never: vec!["rate limited"],
            last_status: "503",
            last_raw: Some("\"1\""),
            last_kind_has: vec!["delay-seconds, a 1-second delay (not used: 503 is not retried)"],
            requests: vec![req(json!(503))],
            ..Case::default()
        },
        Case {
            label: "cross-origin 429s with CORS, the control",
            scenario: "cross-origin-429-twice",
            cross_origin: true,
            outcome: "attempts_exhausted",
            headline: "Stopped: both attempts were rate limited.",
            state_has: vec!["Last response: 429. Attempts: 2 of 2."],
            last_status: "429",
            last_raw: Some("\"1\""),
            last_kind_has: vec!["delay-seconds, a 1-second delay"],
            requests: vec![req(json!(429)), req(json!(429))],
            // The server's 1 s (the 0.3 s fallback would be sooner).
            gap: Some(Gap {
                at_least_s: 1.0,
                less_than_s: 3.0,
            }),
            ..Case::default()
        },
        Case {
            label: "cross-origin 429 without Access-Control-Allow-Origin",
            scenario: "fault-cross-origin-no-allow-origin",
            cross_origin: true,
            outcome: "transport_error",
            headline: "Stopped: the request failed (network).",
            state_has: vec!["Last response: none. Attempts: 1 of 2."],
            never: vec!["rate limited", "429"],
            last_status: "none yet",
            last_raw: Some("-"),
            requests: vec![faulted(json!(429), "omit_cors")],
            ..Case::default()
        },
        Case {
            label: "cross-origin Retry-After not exposed",
            scenario: "fault-cross-origin-retry-after-hidden",
            cross_origin: true,
            outcome: "attempts_exhausted",
            headline: "Stopped: both attempts were rate limited.",
            state_has: vec!["Last response: 429. Attempts: 2 of 2."],
            last_status: "429",
            last_raw: Some("(absent)"),
            last_kind_has: vec![
                "unavailable",
                "hidden from this page",
                "(this action has no attempt left)",
            ],
            requests: vec![
                faulted(json!(429), "omit_expose"),
                faulted(json!(429), "omit_expose"),
            ],
            // The 0.3 s fallback, not the server's 1 s.
            gap: Some(Gap {
                at_least_s: 0.3,
                less_than_s: 1.0,
            }),
            ..Case::default()
        },
        Case {
            label: "a body that never finishes",
            scenario: "fault-endless-body",
            outcome: "transport_error",
            headline: "Stopped: attempt 1 took longer than its 1-second limit.",
            state_has: vec!["Last response: none. Attempts: 1 of 3. Elapsed: "],
            elapsed_from_s: Some(1.0),
            last_status: "none yet",
            last_raw: Some("-"),
            requests: vec![faulted(json!(200), "endless_body")],
            // The cap (1 s) aborts the fetch, which closes the connection.
            closed_by_cap_s: Some(1.0),
            ..Case::default()
        },
        Case {
            label: "a connection reset",
            scenario: "fault-connection-reset",
            outcome: "transport_error",
            headline: "Stopped: the request failed (network).",
            state_has: vec!["Last response: none. Attempts: 1 of 3."],
            last_status: "none yet",
            last_raw: Some("-"),
            requests: vec![faulted(json!("reset"), "reset")],
            browser_resends: true,
            ..Case::default()
        },
        Case {
            label: "a connection reset mid-body",
            scenario: "fault-connection-reset-mid-body",
            outcome: "transport_error",
            headline: "Stopped: the request failed (network).",
            state_has: vec!["Last response: none. Attempts: 1 of 3."],
            last_status: "none yet",
            last_raw: Some("-"),
            requests: vec![faulted(json!(200), "reset_mid_body")],
            ..Case::default()
        },
        Case {
            label: "a same-origin 302, followed by fetch",
            scenario: "fault-redirect",
            outcome: "success",
            headline: "Loaded: the list is ready.",
            state_has: vec!["Last response: 200. Attempts: 1 of 3."],
            last_status: "200",
            last_raw: Some("(absent)"),
            // One attempt, two requests: the 302 and the one it leads to. No more.
            requests: vec![
                Req {
                    status: json!(302),
                    fault: Some("redirect"),
                    uri_has: None,
                    uri_lacks: Some("redirected="),
                },
                Req {
                    status: json!(200),
                    fault: None,
                    uri_has: Some("redirected=1"),
                    uri_lacks: None,
                },
            ],
            list: vec!["sea glass", "driftwood", "kelp"],
            ..Case::default()
        },
    ]
}

/// Opens the page for `scenario` (fetching from the second origin when `cross_origin`).
async fn open_for(client: &Client, base: &str, second: &str, scenario: &str, cross_origin: bool) {
    let api = if cross_origin {
        format!("&api={second}")
    } else {
        String::new()
    };
    open_ready(
        client,
        &format!("{base}/?scenario={scenario}{api}#/palettes"),
    )
    .await;
}

/// The seconds of the first "Elapsed: N second(s)." in `state`.
fn shown_elapsed_s(state: &str) -> Option<f64> {
    let (_, rest) = state.split_once("Elapsed: ")?;
    rest.split_once(" second")?.0.parse().ok()
}

/// What one case found.
struct Found {
    failures: Vec<String>,
    /// Requests the browser resent on its own.
    resends: usize,
}

/// Runs one case.
async fn check_case(
    client: &Client,
    browser: Browser,
    base: &str,
    second: &str,
    case: &Case,
) -> Found {
    let mut failures = Vec::new();
    open_for(client, base, second, case.scenario, case.cross_origin).await;
    let run = start_action(client).await;
    if !wait_until(
        client,
        "return !!document.body.dataset.outcome",
        OUTCOME_WITHIN,
    )
    .await
    {
        failures.push("no outcome on the page in time".into());
    }
    let outcome = js(client, "return document.body.dataset.outcome").await;
    if outcome.as_str() != Some(case.outcome) {
        failures.push(format!("outcome {outcome}, want {}", case.outcome));
    }
    let state = text_of(client, "state").await;
    let headline = state.lines().next().unwrap_or_default();
    if headline != case.headline {
        failures.push(format!("headline {headline:?}, want {:?}", case.headline));
    }
    for piece in &case.state_has {
        if !state.contains(piece) {
            failures.push(format!("the state {state:?} lacks {piece:?}"));
        }
    }
    if let Some(from) = case.elapsed_from_s {
        let shown = shown_elapsed_s(&state);
        if !shown.is_some_and(|s| s >= from && s < from + 2.0) {
            failures.push(format!(
                "the state {state:?} shows an elapsed time outside {from} s to {} s",
                from + 2.0
            ));
        }
    }
    let last = text_of(client, "last").await;
    for piece in &case.never {
        if state.contains(piece) || last.contains(piece) {
            failures.push(format!(
                "the page says {piece:?}: state {state:?}, last response {last:?}"
            ));
        }
    }
    let last_status = text_of(client, "last-status").await;
    if last_status != case.last_status {
        failures.push(format!(
            "last status {last_status:?}, want {:?}",
            case.last_status
        ));
    }
    if let Some(raw) = case.last_raw {
        let got = text_of(client, "last-raw").await;
        if got != raw {
            failures.push(format!("last Retry-After {got:?}, want {raw:?}"));
        }
    }
    let kind = text_of(client, "last-kind").await;
    for piece in &case.last_kind_has {
        if !kind.contains(piece) {
            failures.push(format!("\"Read as\" {kind:?} lacks {piece:?}"));
        }
    }
    let items = js(
        client,
        "return [...document.querySelectorAll('#palettes li:not(.empty)')].map(li => li.textContent)",
    )
    .await;
    let want_items: Vec<Value> = case.list.iter().map(|s| json!(s)).collect();
    if items != Value::Array(want_items) {
        failures.push(format!("the list shows {items}, want {:?}", case.list));
    }
    screenshot(client, browser, &format!("fault-{}", case.scenario)).await;

    // Nothing may follow the stop: wait past any wait the run could still schedule.
    tokio::time::sleep(SETTLE).await;
    let log = run_log(base, &run).await;
    let mut requests = palettes_only(&log);
    if requests.len() != log.len() {
        failures.push(format!("the run has non-/palettes entries: {log:?}"));
    }
    let mut resends = 0;
    if case.browser_resends {
        let mut previous_sent: Option<f64> = None;
        for entry in &requests {
            if entry["fault"] == "reset_resend" {
                resends += 1;
                let after = previous_sent.map(|sent| number(entry, "arrival_ms") - sent);
                if !after.is_some_and(|ms| ms <= RESEND_WINDOW_MS) {
                    failures.push(format!(
                        "a resend {after:?} ms after the last reset: {entry}"
                    ));
                }
            }
            previous_sent = entry["sent_ms"].as_f64();
        }
        requests.retain(|e| e["fault"] != "reset_resend");
    }
    if requests.len() != case.requests.len() {
        failures.push(format!(
            "the server saw {} requests, the rules allow {}: {requests:?}",
            requests.len(),
            case.requests.len()
        ));
    }
    for (k, (entry, want)) in requests.iter().zip(&case.requests).enumerate() {
        if entry["method"] != "GET" {
            failures.push(format!("request {}: method {}", k + 1, entry["method"]));
        }
        if entry["status"] != want.status {
            failures.push(format!(
                "request {}: status {}, want {}",
                k + 1,
                entry["status"],
                want.status
            ));
        }
        if entry["fault"].as_str() != want.fault {
            failures.push(format!(
                "request {}: fault {}, want {:?}",
                k + 1,
                entry["fault"],
                want.fault
            ));
        }
        let uri = entry["uri"].as_str().unwrap_or_default();
        if let Some(piece) = want.uri_has {
            if !uri.contains(piece) {
                failures.push(format!("request {}: uri {uri} lacks {piece}", k + 1));
            }
        }
        if let Some(piece) = want.uri_lacks {
            if uri.contains(piece) {
                failures.push(format!("request {}: uri {uri} has {piece}", k + 1));
            }
        }
        // Cross-origin requests carry the page's origin; same-origin GETs carry none.
        let want_origin = if case.cross_origin {
            json!(base)
        } else {
            Value::Null
        };
        if entry["origin"] != want_origin {
            failures.push(format!(
                "request {}: Origin {}, want {want_origin}",
                k + 1,
                entry["origin"]
            ));
        }
    }
    if let (Some(gap), [first, second, ..]) = (&case.gap, requests.as_slice()) {
        let live = (number(second, "arrival_ms") - number(first, "sent_ms")) / 1000.0;
        if live < gap.at_least_s || live >= gap.less_than_s {
            failures.push(format!(
                "the wait lasted {live:.3} s, want at least {} s and less than {} s",
                gap.at_least_s, gap.less_than_s
            ));
        }
    }
    if let (Some(cap), Some(first)) = (case.closed_by_cap_s, requests.first()) {
        match first["client_gone_ms"].as_f64() {
            Some(gone) => {
                let live = (gone - number(first, "arrival_ms")) / 1000.0;
                let head_sent = first["sent_ms"].as_f64().is_some_and(|sent| sent <= gone);
                if !head_sent || live <= cap / 2.0 || live >= cap + 2.0 {
                    failures.push(format!(
                        "the client closed the request {live:.3} s after it arrived, want its \
                         {cap} s cap to close it: {first}"
                    ));
                }
            }
            None => failures.push("the server never saw the client close the request".into()),
        }
    }
    Found { failures, resends }
}

/// The `hostile-display` scenario as written in its fixture file (read by the model's loader):
/// its `about`, the `Retry-After` of each response, and the second response's list.
fn hostile_fixture() -> (String, [String; 2], Vec<String>) {
    let scenario = fixture("hostile-display");
    let retry_after = |k: usize| {
        scenario.responses[k]
            .header("Retry-After")
            .expect("a Retry-After")
    };
    let Reply::Http {
        body: Some(Value::Array(list)),
        ..
    } = &scenario.responses[1].reply
    else {
        panic!("hostile-display's second response is a list");
    };
    let list = list
        .iter()
        .map(|v| v.as_str().expect("a string").to_owned())
        .collect();
    (
        scenario.about.clone().expect("an about"),
        [retry_after(0), retry_after(1)],
        list,
    )
}

/// The hostile-display scenario: everything shown as text, nothing run, nothing fetched.
async fn check_hostile(client: &Client, browser: Browser, base: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let (about_text, [first_raw, header], body) = hostile_fixture();

    open_ready(
        client,
        &format!("{base}/?scenario=hostile-display#/palettes"),
    )
    .await;
    let title = js(client, "return document.title").await;
    // Every text the last Retry-After shows, recorded as it changes: the first one is shown
    // only while the action waits, however briefly a busy machine lets a poll see it.
    js(
        client,
        "window.__violations = [];
         document.addEventListener('securitypolicyviolation',
           (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
         const raw = document.getElementById('last-raw');
         window.__raws = [raw.textContent];
         new MutationObserver(() => window.__raws.push(raw.textContent))
           .observe(raw, { childList: true, characterData: true, subtree: true });",
    )
    .await;
    let about = text_of(client, "scenario-about").await;
    if about != about_text {
        failures.push(format!("the about text is not shown literally: {about:?}"));
    }
    let run = start_action(client).await;
    if !wait_until(
        client,
        "return document.body.dataset.outcome === 'success'",
        OUTCOME_WITHIN,
    )
    .await
    {
        failures.push("the hostile scenario did not end in success".into());
    }
    // While it waited, the first response's hostile Retry-After was on the page, as text.
    let first_shown = serde_json::to_string(&first_raw).expect("JSON");
    let shown = js(client, "return window.__raws").await;
    if !shown
        .as_array()
        .is_some_and(|texts| texts.iter().any(|t| *t == json!(first_shown)))
    {
        failures.push(format!(
            "the first Retry-After was never shown as the text {first_shown}: {shown}"
        ));
    }
    let items = js(
        client,
        "return [...document.querySelectorAll('#palettes li')].map(li => li.textContent)",
    )
    .await;
    if items != json!(body) {
        failures.push(format!("the list shows {items}, want the literal {body:?}"));
    }
    let raw = text_of(client, "last-raw").await;
    let want_raw = serde_json::to_string(&header).expect("JSON");
    if raw != want_raw {
        failures.push(format!(
            "the last Retry-After shows {raw:?}, want {want_raw:?}"
        ));
    }
    // No element came out of the payloads: the panels hold only the page's own elements.
    let stray = js(
        client,
        "return [...document.querySelectorAll('img, script:not([src]), link:not([rel=stylesheet][href=\"style.css\"]), b, iframe, object, embed')]
           .map(e => e.outerHTML)",
    )
    .await;
    if stray != json!([]) {
        failures.push(format!("elements from the payload: {stray}"));
    }
    let executed = js(
        client,
        "return { title: document.title, pwned: typeof window.pwned,
                  violations: window.__violations }",
    )
    .await;
    if executed["title"] != title {
        failures.push(format!(
            "a payload changed the title: {}",
            executed["title"]
        ));
    }
    if executed["violations"] != json!([]) {
        failures.push(format!(
            "something tried to run or load: {}",
            executed["violations"]
        ));
    }
    screenshot(client, browser, "hostile-display").await;

    // The policy itself blocks inline script, even when it gets into the document.
    let blocked = js(
        client,
        "const s = document.createElement('script');
         s.textContent = \"window.__inline = 1; fetch('/beacon?via=injected-inline-script')\";
         document.head.append(s);
         const d = document.createElement('div');
         d.setAttribute('onclick', \"window.__handler = 1; fetch('/beacon?via=injected-handler')\");
         document.body.append(d);
         d.click();
         d.remove();
         return { inline: typeof window.__inline, handler: typeof window.__handler };",
    )
    .await;
    if blocked != json!({ "inline": "undefined", "handler": "undefined" }) {
        failures.push(format!(
            "the page's policy let inline script run: {blocked}"
        ));
    }
    let reported = wait_until(
        client,
        "return window.__violations.filter(v => v.startsWith('script-src')).length >= 2",
        Duration::from_secs(10),
    )
    .await;
    if !reported {
        let v = js(client, "return window.__violations").await;
        failures.push(format!(
            "the blocked inline script and handler were not both reported: {v}"
        ));
    }
    // Positive control: a fetch of the beacon by the page's own origin is logged.
    js(client, "new Image().src = '/beacon?via=control'").await;
    tokio::time::sleep(SETTLE).await;
    let beacons: Vec<String> = full_log(base)
        .await
        .iter()
        .filter_map(|e| e["uri"].as_str())
        .filter(|u| u.starts_with("/beacon"))
        .map(String::from)
        .collect();
    if beacons != ["/beacon?via=control"] {
        failures.push(format!(
            "beacons logged: {beacons:?}; want only the control (a payload or injected script fetched one)"
        ));
    }
    let log = run_log(base, &run).await;
    if log.len() != 2 {
        failures.push(format!("the run made {} requests, want 2", log.len()));
    }
    failures
}

/// The picker's groups, in order: (label, the fixture file it takes its scenarios from, or
/// "faulted" for the server's fault file, or "load" for the load and race pages' scenarios).
const PICKER_GROUPS: [(&str, &str); 8] = [
    (
        "Source document: schedules and stop table",
        "B62-16-schedules.json",
    ),
    ("Hostile servers", "hostile-servers.json"),
    ("Transport faults (the server injects them)", "faulted"),
    ("Load and races (the load and race test pages)", "load"),
    (
        "Shared rate limits (section 4; the model row only)",
        "shared-limits.json",
    ),
    ("Dashboard widgets", "dashboard.json"),
    (
        "RateLimit fields (read when the policy asks)",
        "ratelimit-fields.json",
    ),
    (
        "Live sharing checks (the sharing test page)",
        "live-sharing.json",
    ),
];

/// The page's scenario picker lists every scenario of every fixture file and the server's
/// faulted ones, grouped (the load and race pages' scenarios apart from the hostile servers),
/// each option titled with its scenario's `about`; a faulted scenario says what is injected.
async fn check_picker(client: &Client, base: &str, second: &str) -> Vec<String> {
    let mut failures = Vec::new();
    // (group key, name, about) of every scenario the page may pick.
    let mut listed: Vec<(String, Value, Value)> = Vec::new();
    for path in e2e::fixture_files() {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("a fixture file"))
                .expect("JSON");
        let file = path.file_name().expect("a name").to_string_lossy();
        for s in doc["scenarios"].as_array().expect("scenarios") {
            let name = s["name"].as_str().unwrap_or_default();
            let key = if name.starts_with("load-") || name.starts_with("race-") {
                "load".to_owned()
            } else {
                file.to_string()
            };
            listed.push((
                key,
                s["name"].clone(),
                json!(s["about"].as_str().unwrap_or_default()),
            ));
        }
    }
    let server_faults: Value = serde_json::from_str(
        &std::fs::read_to_string(e2e::root().join("server/transport-faults.json"))
            .expect("the fault file"),
    )
    .expect("JSON");
    for f in server_faults["faulted"].as_array().expect("faulted") {
        listed.push((
            "faulted".into(),
            f["name"].clone(),
            json!(f["about"].as_str().unwrap_or_default()),
        ));
    }
    let want: Vec<Value> = PICKER_GROUPS
        .iter()
        .map(|(label, key)| {
            let options: Vec<Value> = listed
                .iter()
                .filter(|(k, ..)| k == key)
                .map(|(_, name, about)| json!({ "name": name, "about": about }))
                .collect();
            json!({ "label": label, "options": options })
        })
        .collect();
    open_for(
        client,
        base,
        second,
        "fault-cross-origin-no-allow-origin",
        true,
    )
    .await;
    let got = js(
        client,
        "return [...document.querySelectorAll('#scenario optgroup')].map(g => ({
           label: g.label,
           options: [...g.querySelectorAll('option')].map(o => ({ name: o.value, about: o.title })) }))",
    )
    .await;
    if got != json!(want) {
        failures.push(format!("the picker lists {got}, want {}", json!(want)));
    }
    let note = text_of(client, "scenario-note").await;
    for piece in [
        "The server injects a transport fault: omit cors on response 1.",
        &format!("Requests go to another origin: {second}."),
    ] {
        if !note.contains(piece) {
            failures.push(format!("the note {note:?} lacks {piece:?}"));
        }
    }
    failures
}

/// The transport faults that only show when the page fetches from another origin: they live in
/// the browser's CORS checks (a response it may not read, a header it may not expose), so a
/// same-origin fetch never meets them.
const CROSS_ORIGIN_FAULTS: [&str; 2] = ["omit_cors", "omit_expose"];

/// The scenario note says a fault "only shows cross-origin" exactly when the page has no
/// `?api=` and the scenario's fault needs another origin: for every faulted scenario of the
/// server's fault file (which faults need it is read from the file's fault names) and a
/// scenario without a fault, picked in the page opened without `?api=` and with it.
async fn check_cross_origin_note(client: &Client, base: &str, second: &str) -> Vec<String> {
    let server_faults: Value = serde_json::from_str(
        &std::fs::read_to_string(e2e::root().join("server/transport-faults.json"))
            .expect("the fault file"),
    )
    .expect("JSON");
    let mut scenarios: Vec<(String, bool)> = server_faults["faulted"]
        .as_array()
        .expect("faulted")
        .iter()
        .map(|f| {
            let needs =
                f["faults"].as_array().expect("faults").iter().any(|k| {
                    CROSS_ORIGIN_FAULTS.contains(&k["fault"].as_str().unwrap_or_default())
                });
            (f["name"].as_str().expect("a name").to_owned(), needs)
        })
        .collect();
    scenarios.push(("schedule-a".into(), false));
    if !scenarios.iter().any(|(_, needs)| *needs) || scenarios.iter().all(|(_, needs)| *needs) {
        return vec![format!(
            "the fault file has no pair of cases to tell apart: {scenarios:?}"
        )];
    }
    let mut failures = Vec::new();
    for cross_origin in [false, true] {
        open_for(client, base, second, "schedule-a", cross_origin).await;
        for (name, needs) in &scenarios {
            let note = js_with(
                client,
                "const picker = document.getElementById('scenario');
                 picker.value = arguments[0];
                 picker.dispatchEvent(new Event('change'));
                 return [picker.value, document.getElementById('scenario-note').textContent];",
                vec![json!(name)],
            )
            .await;
            if note[0] != json!(name) {
                failures.push(format!("{name} could not be picked: {note}"));
                continue;
            }
            let says = note[1]
                .as_str()
                .unwrap_or_default()
                .contains("only shows cross-origin");
            let want = *needs && !cross_origin;
            if says != want {
                failures.push(format!(
                    "{name}, {}: the note {} \"only shows cross-origin\" (want the opposite): {}",
                    if cross_origin {
                        "with ?api="
                    } else {
                        "without ?api="
                    },
                    if says { "says" } else { "does not say" },
                    note[1]
                ));
            }
        }
    }
    failures
}

enum Job {
    Fault(Box<Case>),
    Hostile,
    Picker,
    CrossOriginNote,
}

async fn run_browser(browser: Browser) {
    let started = Instant::now();
    let server = start_server().await;
    let all = cases();
    let injected_cases = all
        .iter()
        .filter(|c| c.requests.iter().any(|r| r.fault.is_some()))
        .count();
    let controls = all
        .iter()
        .filter(|c| c.cross_origin && c.requests.iter().all(|r| r.fault.is_none()))
        .count();
    let scripted_cases = all.len() - injected_cases - controls;
    let mut jobs: Vec<Job> = all.into_iter().map(|c| Job::Fault(Box::new(c))).collect();
    jobs.insert(0, Job::Hostile);
    jobs.insert(0, Job::Picker);
    jobs.insert(0, Job::CrossOriginNote);
    let total = jobs.len();
    let jobs = Arc::new(Mutex::new(jobs));
    let results = Arc::new(Mutex::new(Vec::<(String, Vec<String>)>::new()));
    let resends = Arc::new(Mutex::new(0usize));
    let mut workers = Vec::new();
    for _ in 0..SESSIONS {
        let (jobs, results, resends) = (
            Arc::clone(&jobs),
            Arc::clone(&results),
            Arc::clone(&resends),
        );
        let (base, second) = (server.base.clone(), server.second.clone());
        workers.push(tokio::spawn(async move {
            let session = session(browser).await;
            loop {
                let job = jobs.lock().expect("jobs").pop();
                let Some(job) = job else { break };
                let (label, failures) = match job {
                    Job::Fault(case) => {
                        let found =
                            check_case(&session.client, browser, &base, &second, &case).await;
                        *resends.lock().expect("resends") += found.resends;
                        (case.label.to_string(), found.failures)
                    }
                    Job::Hostile => (
                        "hostile display".to_string(),
                        check_hostile(&session.client, browser, &base).await,
                    ),
                    Job::Picker => (
                        "the picker lists every fixture file".to_string(),
                        check_picker(&session.client, &base, &second).await,
                    ),
                    Job::CrossOriginNote => (
                        "the cross-origin note".to_string(),
                        check_cross_origin_note(&session.client, &base, &second).await,
                    ),
                };
                results.lock().expect("results").push((label, failures));
            }
            session.close().await;
        }));
    }
    for worker in workers {
        worker.await.expect("a session worker");
    }
    let log = full_log(&server.base).await;
    let injected: Vec<&str> = log.iter().filter_map(|e| e["fault"].as_str()).collect();
    let results = results.lock().expect("results");
    let mut failed = Vec::new();
    for (label, failures) in results.iter() {
        if failures.is_empty() {
            println!("{}: ok   {label}", browser.name());
        } else {
            println!("{}: FAIL {label}: {}", browser.name(), failures.join("; "));
            failed.push(label.clone());
        }
    }
    let mut kinds: Vec<&str> = injected.clone();
    kinds.sort_unstable();
    kinds.dedup();
    let summary: Vec<String> = kinds
        .iter()
        .map(|k| format!("{k} x{}", injected.iter().filter(|i| *i == k).count()))
        .collect();
    println!(
        "{}: faults injected: {} scripted in fixtures/hostile-servers.json, {} by the server ({} responses \
         faulted: {}), {} cross-origin control, plus hostile display; {} /palettes requests in \
         all ({} of them the browser's own resends of a reset GET), none beyond the rules; {:.1} s",
        browser.name(),
        scripted_cases,
        injected_cases,
        injected.len(),
        summary.join(", "),
        controls,
        palettes_only(&log).len(),
        *resends.lock().expect("resends"),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(results.len(), total);
    assert!(failed.is_empty(), "{} failed: {failed:?}", browser.name());
}

e2e::browser_tests!(run_browser: chromium_survives_server_faults_and_hostile_display, firefox_survives_server_faults_and_hostile_display);
