//! The page, live, in headless Chromium and Firefox, against the fixture server.
//!
//! Every scenario of every `fixtures/*.json` file runs in the real page through the real wasm
//! driver, and is checked against the pure model: the outcome, the attempts the server
//! saw, the last status on the page, and the attempt starts in the server's log. Leaving the
//! screen (by navigation and by route change, during a wait and during a request) must leave no
//! later request in the log. A screenshot of every final state is saved under
//! `target/e2e-artifacts/`.
//!
//! A response scripted to land exactly on its cap is checked as the cap aborting it (see
//! `live_form`).
//!
//! Tolerance: the server's log times an attempt by its arrival. Relative to the run's first
//! arrival, attempt k must arrive no earlier than the model's start (less 5 ms for loopback
//! jitter between two arrivals) and no later than `LATE_TOLERANCE` after it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fantoccini::Client;
use retry_budget_model::report::Report;
use retry_budget_model::scenario::Scenario;
use retry_budget_model::simulate::simulate;

use e2e::{
    arrivals, click, fixture_scenarios, js, live_form, open_page, plays_live, run_log, screenshot,
    session, start_action, start_server, wait_until, Browser,
};

/// How much later than the model an attempt may reach the server.
const LATE_TOLERANCE: Duration = Duration::from_millis(400);
/// Loopback jitter allowed between two arrivals, in the early direction.
const ARRIVAL_JITTER: Duration = Duration::from_millis(5);
/// Browser sessions that run scenarios at once, per browser.
const SESSIONS: usize = 3;

fn scenarios() -> Vec<(Scenario, Report)> {
    fixture_scenarios()
        .into_iter()
        .filter(plays_live)
        .map(|s| {
            let model = simulate(&live_form(&s)).expect("the model runs it");
            (s, model)
        })
        .collect()
}

/// Runs one scenario in the page and checks it against the model. Returns the lateness of
/// each attempt's arrival relative to the model, or the failures.
async fn check_scenario(
    client: &Client,
    browser: Browser,
    base: &str,
    scenario: &Scenario,
    model: &Report,
) -> Result<Vec<f64>, Vec<String>> {
    let mut failures = Vec::new();
    open_page(client, base, &scenario.name).await;
    let run = start_action(client).await;
    let limit = scenario.policy.budget + Duration::from_secs(15);
    if !wait_until(client, "return !!document.body.dataset.outcome", limit).await {
        failures.push("no outcome on the page in time".into());
    }
    let outcome = js(client, "return document.body.dataset.outcome").await;
    let want = model.outcome.map(|o| o.as_str()).unwrap_or_default();
    if outcome.as_str() != Some(want) {
        failures.push(format!(
            "outcome {outcome} on the page, the model says {want}"
        ));
    }
    let state = js(client, "return document.getElementById('state').innerText").await;
    let state = state.as_str().unwrap_or_default().to_owned();
    let headline = model.visible.first().cloned().unwrap_or_default();
    if !state.starts_with(&headline) {
        failures.push(format!(
            "visible state {state:?} does not start with the model's {headline:?}"
        ));
    }
    if want != "user_left" {
        let figures = format!(
            "Last response: {}. Attempts: {} of {}.",
            model
                .last_response
                .as_ref()
                .map_or("none".into(), |r| r.status.to_string()),
            model.attempts,
            scenario.policy.max_attempts
        );
        if !state.contains(&figures) {
            failures.push(format!("visible state {state:?} lacks {figures:?}"));
        }
    }
    let last = js(
        client,
        "return document.getElementById('last-status').textContent",
    )
    .await;
    let want_last = model
        .last_response
        .as_ref()
        .map_or("none yet".to_owned(), |r| r.status.to_string());
    if last.as_str() != Some(want_last.as_str()) {
        failures.push(format!(
            "last response panel says {last}, the model {want_last}"
        ));
    }
    screenshot(client, browser, &scenario.name).await;
    // Prove that nothing escapes: wait, then read the log.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let log = run_log(base, &run).await;
    let arrived = arrivals(&log);
    if arrived.len() != model.attempt_starts_s.len() {
        failures.push(format!(
            "the server saw {} requests, the model {}",
            arrived.len(),
            model.attempt_starts_s.len()
        ));
    }
    let mut lateness = Vec::new();
    if let Some(first) = arrived.first() {
        for (k, (at, want)) in arrived.iter().zip(&model.attempt_starts_s).enumerate() {
            let late = (at - first) - want.0.as_secs_f64();
            if late < -ARRIVAL_JITTER.as_secs_f64() {
                failures.push(format!(
                    "attempt {} arrived {late:.3} s before the model's start",
                    k + 1
                ));
            }
            if late > LATE_TOLERANCE.as_secs_f64() {
                failures.push(format!(
                    "attempt {} arrived {late:.3} s after the model's start",
                    k + 1
                ));
            }
            lateness.push(late);
        }
    }
    if failures.is_empty() {
        Ok(lateness)
    } else {
        Err(failures)
    }
}

enum Leave {
    Navigation,
    RouteChange,
}

enum During {
    Wait,
    Request,
}

/// Leaves schedule A's screen and proves no later request reaches the server.
async fn check_leaving(
    client: &Client,
    browser: Browser,
    base: &str,
    how: Leave,
    during: During,
) -> Result<(), String> {
    open_page(client, base, "schedule-a").await;
    let run = start_action(client).await;
    match during {
        // Attempt 1 runs from 0 to 2 s: leave in the middle of it.
        During::Request => tokio::time::sleep(Duration::from_millis(700)).await,
        During::Wait => {
            if !wait_until(
                client,
                "return document.getElementById('state').innerText.startsWith('Waiting')",
                Duration::from_secs(5),
            )
            .await
            {
                return Err("never saw the wait".into());
            }
        }
    }
    let label = match (&how, &during) {
        (Leave::Navigation, During::Wait) => "leave-by-navigation-during-wait",
        (Leave::Navigation, During::Request) => "leave-by-navigation-during-request",
        (Leave::RouteChange, During::Wait) => "leave-by-route-change-during-wait",
        (Leave::RouteChange, During::Request) => "leave-by-route-change-during-request",
    };
    match how {
        Leave::Navigation => {
            click(client, "nav-leave").await?;
            if !wait_until(
                client,
                "return location.pathname === '/away'",
                Duration::from_secs(5),
            )
            .await
            {
                return Err("the navigation did not happen".into());
            }
        }
        Leave::RouteChange => {
            click(client, "leave-route").await?;
            // `hashchange` is dispatched in a later task than the click: wait for it.
            let script =
                "return location.hash + '|' + document.getElementById('state').textContent";
            let left = wait_until(
                client,
                "return (location.hash + '|' + document.getElementById('state').textContent)
                   .startsWith('#/about|Stopped: you left this screen.')",
                Duration::from_secs(2),
            )
            .await;
            if !left {
                let state = js(client, script).await;
                return Err(format!("after the route change: {state}"));
            }
        }
    }
    screenshot(client, browser, label).await;
    // Schedule A's second attempt would start at 5 s; wait well past it.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let log = run_log(base, &run).await;
    if log.len() != 1 {
        return Err(format!(
            "{label}: the server saw {} requests after leaving; want exactly the first",
            log.len()
        ));
    }
    Ok(())
}

enum Job {
    Scenario(Box<(Scenario, Report)>),
    Leave(Leave, During),
}

async fn run_browser(browser: Browser) {
    let server = start_server().await;
    let base = server.base.clone();
    let mut jobs: Vec<Job> = scenarios()
        .into_iter()
        .map(|s| Job::Scenario(Box::new(s)))
        .collect();
    for navigation in [true, false] {
        for during in [During::Wait, During::Request] {
            let how = if navigation {
                Leave::Navigation
            } else {
                Leave::RouteChange
            };
            jobs.push(Job::Leave(how, during));
        }
    }
    // Workers pop from the end: the longest jobs go first, so the sessions finish together.
    jobs.sort_by_key(|job| match job {
        Job::Scenario(s) => s.1.elapsed_s.0,
        Job::Leave(..) => Duration::from_secs(9),
    });
    let jobs = Arc::new(Mutex::new(jobs));
    let results = Arc::new(Mutex::new(
        Vec::<(String, Result<Vec<f64>, Vec<String>>)>::new(),
    ));
    let mut workers = Vec::new();
    for _ in 0..SESSIONS {
        let (jobs, results, base) = (Arc::clone(&jobs), Arc::clone(&results), base.clone());
        workers.push(tokio::spawn(async move {
            let session = session(browser).await;
            let client = &session.client;
            loop {
                let job = jobs.lock().expect("jobs").pop();
                let Some(job) = job else { break };
                let (name, result) = match job {
                    Job::Scenario(pair) => {
                        let (scenario, model) = *pair;
                        let result =
                            check_scenario(client, browser, &base, &scenario, &model).await;
                        (scenario.name, result)
                    }
                    Job::Leave(how, during) => {
                        let name = format!(
                            "leave by {} during a {}",
                            if matches!(how, Leave::Navigation) {
                                "navigation"
                            } else {
                                "route change"
                            },
                            if matches!(during, During::Wait) {
                                "wait"
                            } else {
                                "request"
                            }
                        );
                        (
                            name,
                            check_leaving(client, browser, &base, how, during)
                                .await
                                .map(|()| Vec::new())
                                .map_err(|e| vec![e]),
                        )
                    }
                };
                results.lock().expect("results").push((name, result));
            }
            session.close().await;
        }));
    }
    for worker in workers {
        worker.await.expect("a session worker");
    }
    let results = results.lock().expect("results");
    let mut failed = Vec::new();
    let mut lateness: Vec<f64> = Vec::new();
    for (name, result) in results.iter() {
        match result {
            Ok(late) => {
                lateness.extend(late);
                println!("{}: ok   {name}", browser.name());
            }
            Err(why) => {
                println!("{}: FAIL {name}: {}", browser.name(), why.join("; "));
                failed.push(name.clone());
            }
        }
    }
    lateness.sort_by(f64::total_cmp);
    if let (Some(min), Some(max)) = (lateness.first(), lateness.last()) {
        println!(
            "{}: {} attempt arrivals; lateness vs the model min {:.3} s, max {:.3} s (tolerance {:.3} s)",
            browser.name(),
            lateness.len(),
            min,
            max,
            LATE_TOLERANCE.as_secs_f64()
        );
    }
    println!(
        "{}: {} checks, {} failed",
        browser.name(),
        results.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "{} failed: {failed:?}", browser.name());
}

e2e::browser_tests!(run_browser: chromium_runs_every_scenario_live, firefox_runs_every_scenario_live);
