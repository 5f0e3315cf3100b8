//! The page from a plain static server, in headless Chromium and Firefox: the folder
//! `scripts/site` builds (`target/site/`) served by `python3 -m http.server`, with no fixture
//! server anywhere. The page starts and knows it is not served by the fixture server; its
//! picker lists every scenario of the site's `scenarios.json`, every fixture scenario among
//! them; for a few scenarios, Load sends nothing, says that a live run needs the fixture
//! server, and draws the model's prediction: its step table is the model's own rows, run
//! natively (`simulate(..).report.steps()`), and its timeline is drawn; and the Fleet view runs.
//!
//! Screenshots: `target/e2e-artifacts/<browser>/static-<scenario>.png` and `static-fleet.png`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::Client;
use retry_budget_model::simulate::simulate;
use retry_budget_model::steps::Step;
use serde_json::Value;
use tokio::process::{Child, Command};

use e2e::{
    browser_tests, click, fixture, fixture_scenarios, js, open_page, open_ready, root, screenshot,
    session, text_of, wait_until, Browser,
};

/// Scenarios whose prediction is checked: a success, a refused wait, the fallback wait, the
/// attempt cap, and a RateLimit field's wait (a scenario with no clock mapping and no date).
const CASES: [&str; 5] = [
    "schedule-a",
    "wait-exceeds-budget",
    "missing-header",
    "attempt-cap",
    "ratelimit-only-429",
];

/// The built site, `python3 -m http.server` serving it, killed when this is dropped.
struct StaticServer {
    base: String,
    site: PathBuf,
    _child: Child,
}

/// Serves `target/site/` on a free port. Panics unless `scripts/site` has built it.
async fn serve_site() -> StaticServer {
    let site = root().join("target/site");
    for file in [
        "index.html",
        "scenarios.json",
        "away.html",
        "pkg-full/retry_budget_bg.wasm",
    ] {
        assert!(
            site.join(file).is_file(),
            "target/site/{file} is missing: build the site first with scripts/site (scripts/test does)"
        );
    }
    let port = harness::free_port().unwrap_or_else(|e| panic!("{e}"));
    let child = Command::new("python3")
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .arg("--directory")
        .arg(&site)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 -m http.server starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "python3 -m http.server did not listen on port {port} in 20 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    StaticServer {
        base: format!("http://127.0.0.1:{port}"),
        site,
        _child: child,
    }
}

/// The scenario names of the site's `scenarios.json`, sorted.
fn site_listing(site: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(site.join("scenarios.json")).expect("scenarios.json");
    let listing: Value = serde_json::from_str(&text).expect("scenarios.json is JSON");
    let mut names: Vec<String> = listing["scenarios"]
        .as_array()
        .expect("a scenarios array")
        .iter()
        .filter_map(|s| s["name"].as_str().map(String::from))
        .collect();
    names.sort();
    names
}

/// The page started from the static server, and its picker lists the site's listing, which
/// holds every fixture scenario.
async fn check_start(client: &Client, server: &StaticServer) -> Vec<String> {
    open_page(client, &server.base, CASES[0]).await;
    let mut failures = Vec::new();
    let served = js(client, "return document.body.dataset.served").await;
    if served != "false" {
        failures.push(format!("the page says served = {served}, not false"));
    }
    let options = js(
        client,
        "return [...document.querySelectorAll('#scenario option')].map((o) => o.value)",
    )
    .await;
    let mut picker: Vec<String> = serde_json::from_value(options).unwrap_or_default();
    picker.sort();
    let listing = site_listing(&server.site);
    if picker != listing {
        failures.push(format!(
            "the picker lists {picker:?}, scenarios.json {listing:?}"
        ));
    }
    for scenario in fixture_scenarios() {
        if !picker.contains(&scenario.name) {
            failures.push(format!(
                "the picker lacks the fixture scenario {}",
                scenario.name
            ));
        }
    }
    failures
}

/// The rows of the page's step table `id`.
async fn table(client: &Client, id: &str) -> Vec<[String; 4]> {
    let script = format!(
        "return [...document.querySelectorAll('#{id} tbody tr')]
           .map((tr) => [...tr.cells].map((c) => c.textContent))"
    );
    serde_json::from_value(js(client, &script).await).unwrap_or_default()
}

/// A count the page returned (0 for anything else).
fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// The model's own step rows for the fixture scenario `name`.
fn model_rows(name: &str) -> Vec<[String; 4]> {
    let report = simulate(&fixture(name)).expect("the model runs it").report;
    report
        .steps()
        .into_iter()
        .map(|s: Step| [s.step, s.elapsed, s.observed, s.decision])
        .collect()
}

/// Load on the static site: nothing sent, the message that live runs need the fixture server,
/// the model's rows in the model's table, and a timeline with no live track, said so.
async fn check_prediction(
    client: &Client,
    browser: Browser,
    base: &str,
    name: &str,
) -> Vec<String> {
    open_page(client, base, name).await;
    click(client, "load").await.expect("Load is pressed");
    let drawn = "return document.querySelectorAll('#steps-model tbody tr').length > 0";
    if !wait_until(client, drawn, Duration::from_secs(10)).await {
        return vec![format!(
            "{name}: no model step table; the page says {:?}",
            text_of(client, "state").await
        )];
    }
    let mut failures = Vec::new();
    let state = text_of(client, "state").await;
    if !(state.contains("No live run") && state.contains("fixture server")) {
        failures.push(format!(
            "{name}: Load says {state:?}, not that a live run needs the fixture server"
        ));
    }
    let (got, want) = (table(client, "steps-model").await, model_rows(name));
    if got != want {
        failures.push(format!(
            "{name}: the model table is {got:?}, the model's rows {want:?}"
        ));
    }
    let timeline = js(
        client,
        "const svg = document.querySelector('#timeline svg');
         return svg ? [svg.querySelectorAll('rect').length, svg.querySelectorAll('text.stop-label').length] : null",
    )
    .await;
    if count(&timeline[0]) == 0 || count(&timeline[1]) == 0 {
        failures.push(format!(
            "{name}: the timeline is not drawn ({timeline} rects and stop labels)"
        ));
    }
    // What a screen reader hears and the live table's caption say there was no live run, not
    // that one is running.
    let said = js(
        client,
        "return [document.getElementById('timeline').getAttribute('aria-label'),
                 document.querySelector('#steps-live caption')?.textContent ?? '']",
    )
    .await;
    let (label, caption) = (
        said[0].as_str().unwrap_or(""),
        said[1].as_str().unwrap_or(""),
    );
    if !label.ends_with("No live run.") || label.contains("Live run:") {
        failures.push(format!("{name}: the timeline is described as {label:?}"));
    }
    if !caption.starts_with("No live run") {
        failures.push(format!("{name}: the live table's caption is {caption:?}"));
    }
    // No scenario here has a Retry-After date: nothing needs a clock.
    let note = text_of(client, "scenario-note").await;
    if note.contains("clock") {
        failures.push(format!(
            "{name}: the scenario's note speaks of a clock: {note:?}"
        ));
    }
    let sent = js(
        client,
        "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/palettes')).length",
    )
    .await;
    if sent != 0 {
        failures.push(format!("{name}: the page requested /palettes {sent} times"));
    }
    screenshot(client, browser, &format!("static-{name}")).await;
    failures
}

/// The Fleet view runs its defaults and shows a table and a chart.
async fn check_fleet(client: &Client, browser: Browser, base: &str) -> Vec<String> {
    open_ready(client, &format!("{base}/#/fleet")).await;
    let done = "return document.getElementById('screen-fleet').dataset.state === 'done'";
    if !wait_until(client, done, Duration::from_secs(30)).await {
        return vec![format!(
            "the Fleet view did not run: {:?}",
            text_of(client, "fleet-status").await
        )];
    }
    let shown = js(
        client,
        "return [document.querySelectorAll('#fleet-table td[data-field]').length,
                 document.querySelectorAll('#fleet-chart svg polyline').length]",
    )
    .await;
    screenshot(client, browser, "static-fleet").await;
    if count(&shown[0]) == 0 || count(&shown[1]) == 0 {
        return vec![format!("the Fleet view shows {shown} cells and lines")];
    }
    Vec::new()
}

async fn static_site(browser: Browser) {
    let server = serve_site().await;
    let session = session(browser).await;
    let client = &session.client;
    let mut failures = check_start(client, &server).await;
    for name in CASES {
        failures.extend(check_prediction(client, browser, &server.base, name).await);
    }
    failures.extend(check_fleet(client, browser, &server.base).await);
    // Closed before the verdict: a session only dropped leaves its browser running.
    session.close().await;
    assert!(
        failures.is_empty(),
        "{} from a static server:\n{}",
        browser.name(),
        failures.join("\n")
    );
}

browser_tests!(static_site: static_site_chromium, static_site_firefox);
