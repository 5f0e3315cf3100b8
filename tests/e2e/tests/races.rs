//! Navigation races, live, in headless Chromium and Firefox: leaving at the same moment as a
//! response arrives or a wait's timer fires must never let another request out.
//!
//! Scenario `race-429-then-200`: a 429 arrives 0.1 s into the action, the driver waits 0.3 s
//! (the minimum wait), then sends attempt 2.
//!
//! Real navigations (`NAV_PER_KIND` per kind per browser): the page (`tests/e2e/pages/load.html`) starts
//! the action and at once navigates to `/away`, which the server holds until `plus_ms` after
//! it sends the run's first response. Receipt races sweep `plus_ms` around 0 (the navigation's
//! document and the 429 leave the server within a millisecond or two of each other); timer
//! races sweep it around the 0.3 s wait. Just before the page goes, its `pagehide` listener
//! (registered before the action's own) records in `sessionStorage` how many requests the
//! action had started; the test reads it on the next page. Every request the server saw for
//! the run must be one of those: the figure "requests after leaving" is the excess, summed.
//!
//! In-page ties (`TIES_PER_KIND` per kind per browser), in one long-lived page so that a
//! leftover timer or a lost departure would have time to send something: the page leaves by
//! aborting the action's signal or by a `pagehide` event, in the same task as the response's
//! body or the timer reaches the driver (leaving must win: `user_left`, one request), or in the
//! task just after (the driver may have started the next request first; nothing after).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::Client;
use serde_json::{json, Value};

use e2e::{full_log, js, js_with, open_ready, palettes_only, session, start_server, Browser};

/// Navigation races per kind (receipt, timer) per browser.
const NAV_PER_KIND: i64 = 30;
/// In-page ties per kind per browser.
const TIES_PER_KIND: usize = 30;
/// Sessions per browser for the navigation races.
const SESSIONS: usize = 2;
/// The race scenario's wait after its first response, in milliseconds.
const WAIT_MS: i64 = 300;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Receipt,
    Timer,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Receipt => "receipt",
            Kind::Timer => "timer",
        }
    }
}

/// A script result, or the error of a page that is navigating.
async fn try_js(client: &Client, script: &str, args: Vec<Value>) -> Option<Value> {
    client.execute(script, args).await.ok()
}

/// One navigation race: returns what the page recorded at `pagehide`.
async fn navigation_race(
    client: &Client,
    base: &str,
    run: &str,
    plus_ms: i64,
) -> Result<Value, String> {
    open_ready(client, &format!("{base}/e2e/load.html")).await;
    js_with(
        client,
        "return harness.raceNavigation({ run: arguments[0], plusMs: arguments[1] })",
        vec![json!(run), json!(plus_ms)],
    )
    .await;
    // The server holds /away at most 10 s for the run's request; then the page goes anyway.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = try_js(
            client,
            "return location.pathname === '/away' && document.readyState === 'complete'
                ? sessionStorage.getItem(arguments[0]) : null",
            vec![json!(format!("race:{run}"))],
        )
        .await;
        if let Some(Value::String(text)) = seen {
            return serde_json::from_str(&text).map_err(|e| format!("{run}: {e}"));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{run}: the page never reached /away with its record"
            ));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// What the test knows about one race once it is over.
struct Outcome {
    run: String,
    kind: Kind,
    label: String,
    /// Requests the action had started when it left.
    starts_at_leave: u64,
    /// Whether the driver had already processed the response (receipt races) or the timer
    /// (timer races) when it left.
    processed_first: bool,
    /// For the in-page ties: leaving must have won (`user_left` with one request).
    must_win: bool,
    outcome: Option<String>,
    updates_after_leave: u64,
}

async fn run_browser(browser: Browser) {
    let started = Instant::now();
    let server = start_server().await;
    let mut failures: Vec<String> = Vec::new();

    // Navigation races, on SESSIONS sessions.
    let mut jobs: Vec<(Kind, i64)> = Vec::new();
    for k in 0..NAV_PER_KIND {
        // Receipt: -15 .. +14 ms around the 429's send; timer: the same around the wait's end.
        jobs.push((Kind::Receipt, k - NAV_PER_KIND / 2));
        jobs.push((Kind::Timer, WAIT_MS + k - NAV_PER_KIND / 2));
    }
    let jobs = Arc::new(Mutex::new(jobs));
    let outcomes = Arc::new(Mutex::new(Vec::<Outcome>::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut workers = Vec::new();
    for _ in 0..SESSIONS {
        let (jobs, outcomes, errors, base) = (
            Arc::clone(&jobs),
            Arc::clone(&outcomes),
            Arc::clone(&errors),
            server.base.clone(),
        );
        workers.push(tokio::spawn(async move {
            let session = session(browser).await;
            loop {
                let job = jobs.lock().expect("jobs").pop();
                let Some((kind, plus_ms)) = job else { break };
                let run = format!("{}-nav-{}-{plus_ms}", browser.name(), kind.name());
                match navigation_race(&session.client, &base, &run, plus_ms).await {
                    Ok(seen) => {
                        let processed_first = match kind {
                            Kind::Receipt => seen["receipts"].as_u64().unwrap_or(0) > 0,
                            Kind::Timer => seen["timers"].as_u64().unwrap_or(0) > 0,
                        };
                        outcomes.lock().expect("outcomes").push(Outcome {
                            run,
                            kind,
                            label: format!("navigation at {plus_ms:+} ms"),
                            starts_at_leave: seen["starts"].as_u64().unwrap_or(0),
                            processed_first,
                            must_win: false,
                            outcome: None,
                            updates_after_leave: seen["updatesAfterHide"].as_u64().unwrap_or(0),
                        });
                    }
                    Err(e) => errors.lock().expect("errors").push(e),
                }
            }
            session.close().await;
        }));
    }
    for worker in workers {
        worker.await.expect("a session worker");
    }
    failures.extend(errors.lock().expect("errors").drain(..));

    // In-page ties, in one page.
    let session = session(browser).await;
    let client = &session.client;
    open_ready(client, &format!("{}/e2e/load.html", server.base)).await;
    let mut list = Vec::new();
    for k in 0..TIES_PER_KIND {
        let how = if k % 2 == 0 { "abort" } else { "pagehide" };
        let receipt_when = if k < TIES_PER_KIND / 2 {
            "tie"
        } else {
            "next-task"
        };
        let timer_when = ["tie-before", "tie-after", "next-task"][k * 3 / TIES_PER_KIND];
        for (kind, when) in [("receipt", receipt_when), ("timer", timer_when)] {
            list.push(json!({
                "run": format!("{}-tie-{kind}-{when}-{how}-{k}", browser.name()),
                "kind": kind, "how": how, "when": when,
            }));
        }
    }
    js_with(
        client,
        "return harness.start('racesInPage', { list: arguments[0] })",
        vec![json!(list)],
    )
    .await;
    // Only "never" fails: the ties take about half a minute.
    let deadline = Instant::now() + Duration::from_secs(300);
    let result = loop {
        let state = js(
            client,
            "return { busy: harness.busy, error: harness.error, result: harness.result }",
        )
        .await;
        if let Some(error) = state["error"].as_str() {
            panic!("racesInPage threw: {error}");
        }
        if state["busy"] == false && !state["result"].is_null() {
            break state["result"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "the in-page races did not finish"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    session.close().await;
    let (after, base) = (&result["after"], &result["base"]);
    if after["running"] != 0
        || after["screens"] != 0
        || after["timers"] != base["timers"]
        || after["listeners"] != base["listeners"]
    {
        failures.push(format!(
            "in-page ties left something behind: {after} (before: {base})"
        ));
    }
    for record in result["records"].as_array().cloned().unwrap_or_default() {
        let when = record["when"].as_str().unwrap_or_default();
        let kind = if record["kind"] == "receipt" {
            Kind::Receipt
        } else {
            Kind::Timer
        };
        let starts = record["startsAtLeave"].as_u64().unwrap_or(0);
        outcomes.lock().expect("outcomes").push(Outcome {
            run: record["run"].as_str().unwrap_or_default().to_string(),
            kind,
            label: format!("in-page {} {when}", record["how"].as_str().unwrap_or("")),
            starts_at_leave: starts,
            processed_first: match kind {
                Kind::Receipt => when == "next-task",
                Kind::Timer => starts > 1,
            },
            must_win: when.starts_with("tie"),
            outcome: record["outcome"].as_str().map(String::from),
            updates_after_leave: record["updatesAfterLeave"].as_u64().unwrap_or(0),
        });
    }

    // The server: nothing beyond what each action had started when it left. The log is read
    // after a pause longer than the wait, so a request a lost departure let out would be in it.
    tokio::time::sleep(Duration::from_millis(2 * WAIT_MS as u64)).await;
    let mut by_run: BTreeMap<String, usize> = BTreeMap::new();
    for entry in palettes_only(&full_log(&server.base).await) {
        if let Some(run) = entry["run"].as_str() {
            *by_run.entry(run.to_string()).or_default() += 1;
        }
    }
    let outcomes = outcomes.lock().expect("outcomes");
    let mut after_leaving = 0;
    let mut figures: BTreeMap<(&str, &str), (usize, usize, usize)> = BTreeMap::new();
    for o in outcomes.iter() {
        let requests = by_run.get(&o.run).copied().unwrap_or(0);
        if requests == 0 {
            failures.push(format!("{}: no request reached the server", o.run));
        }
        let excess = requests.saturating_sub(usize::try_from(o.starts_at_leave).unwrap_or(0));
        after_leaving += excess;
        if excess > 0 {
            failures.push(format!(
                "{} ({}): {requests} requests, but only {} had started when it left",
                o.run, o.label, o.starts_at_leave
            ));
        }
        if o.updates_after_leave > 0 {
            failures.push(format!(
                "{}: onUpdate called {} times after leaving",
                o.run, o.updates_after_leave
            ));
        }
        if o.must_win && (o.outcome.as_deref() != Some("user_left") || requests != 1) {
            failures.push(format!(
                "{} ({}): at a tie leaving must win, but it ended {:?} with {requests} requests",
                o.run, o.label, o.outcome
            ));
        }
        let group = if o.label.starts_with("navigation") {
            "navigation"
        } else {
            "in-page"
        };
        let entry = figures.entry((group, o.kind.name())).or_default();
        entry.0 += 1;
        if o.processed_first {
            entry.1 += 1;
        } else {
            entry.2 += 1;
        }
    }
    for ((group, kind), (n, first, left_first)) in &figures {
        let what = if *kind == "receipt" {
            "response"
        } else {
            "timer"
        };
        println!(
            "{}: {group} races at a {what}: {n}; the {what} reached the driver first in \
             {first}, leaving came first in {left_first}",
            browser.name()
        );
    }
    println!(
        "{}: {} races in all, {} requests after leaving; {:.1} s",
        browser.name(),
        outcomes.len(),
        after_leaving,
        started.elapsed().as_secs_f64()
    );
    for failure in &failures {
        println!("{}: FAIL {failure}", browser.name());
    }
    let want = 2 * (usize::try_from(NAV_PER_KIND).unwrap_or(0) + TIES_PER_KIND);
    assert_eq!(outcomes.len(), want, "every race was run");
    assert!(failures.is_empty(), "{}: {failures:#?}", browser.name());
    // A race is only shown if both orders happened: a sweep that never once put the response
    // or the timer first (or leaving first) proved nothing about the other order.
    for ((group, kind), (n, first, left_first)) in &figures {
        assert!(
            *first > 0 && *left_first > 0,
            "{}: of {n} {group} races at a {kind}, {first} reached the driver first and \
             {left_first} left first: one order never happened",
            browser.name()
        );
    }
}

e2e::browser_tests!(run_browser: chromium_leaving_at_a_response_or_timer_sends_nothing_more, firefox_leaving_at_a_response_or_timer_sends_nothing_more);
