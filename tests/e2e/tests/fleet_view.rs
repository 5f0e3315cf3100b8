//! The page's Fleet view (`#/fleet`) in headless Chromium and Firefox: the simulation the page
//! runs with the full build's `simulateFleet` gives the figures the `fleet` library gives
//! natively for the same inputs and seed, every cell of the table and every point of every
//! line, exactly; each row of the table is labelled with the figure it shows and writes it as
//! the reader reads it; the chart has one line per policy and a legend with the limiter's
//! capacity, and its logarithmic scale redraws the y axis in decades; a bad input is named, not
//! run; and through a run of a million widgets the page keeps responding: the run is in a
//! worker, and a timer and a click on the page are handled while it still runs. Screenshots of
//! the view at a desktop width and at 360 px go to `target/e2e-artifacts/`.

use std::time::Duration;

use fantoccini::Client;
use serde_json::{json, Value};

use e2e::{
    browser_tests, click, js, js_with, narrow_session, open_ready, screenshot, start_server,
    text_of, wait_until, Browser,
};

/// The scenario the test types in: small, a fixed window, HTTP-date `Retry-After`, a seed.
const INPUTS: [(&str, &str); 8] = [
    ("fleet-pages", "400"),
    ("fleet-widgets", "3"),
    ("fleet-arrive", "2"),
    ("fleet-limiter", "window"),
    ("fleet-limit", "60"),
    ("fleet-window", "2"),
    ("fleet-retry-after", "date"),
    ("fleet-seed", "42"),
];

/// The same scenario for the native library, as JSON.
fn native() -> Value {
    report_of(fleet::Options {
        pages: 400,
        widgets: 3,
        arrive_over_s: 2.0,
        limiter: fleet::LimiterKind::Window,
        limit: 60,
        window_s: 2,
        retry_after: fleet::service::RetryAfterMode::Date,
        seed: 42,
        ..fleet::Options::default()
    })
}

/// The native library's report of the run `options` describe, as JSON.
fn report_of(options: fleet::Options) -> Value {
    let scenario = options.scenario().expect("a valid scenario");
    serde_json::to_value(fleet::simulate(&scenario).report()).expect("the library's report")
}

/// Types `inputs` into the view's inputs (a select's `change` shows its inputs).
async fn fill(client: &Client, inputs: &[(&str, &str)]) {
    let pairs: Vec<Value> = inputs.iter().map(|(id, v)| json!([id, v])).collect();
    js_with(
        client,
        "for (const [id, v] of arguments[0]) {
           const el = document.getElementById(id);
           el.value = v;
           el.dispatchEvent(new Event('change'));
         }",
        vec![Value::Array(pairs)],
    )
    .await;
}

/// Presses Run and waits for that run to end; returns the view's state ("done" or "error").
async fn run(client: &Client) -> String {
    let before = js(
        client,
        "return Number(document.getElementById('screen-fleet').dataset.runs ?? 0)",
    )
    .await;
    click(client, "fleet-run").await.expect("Run the fleet");
    let script = format!(
        "return Number(document.getElementById('screen-fleet').dataset.runs ?? 0) > {before}"
    );
    assert!(
        wait_until(client, &script, Duration::from_secs(30)).await,
        "the run did not end"
    );
    js(
        client,
        "return document.getElementById('screen-fleet').dataset.state",
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_owned()
}

/// What the page shows: every table cell `{ policy, field, value }`, and every line of the
/// chart `{ policy, values }`, and the legend's entries.
async fn shown(client: &Client) -> Value {
    js(
        client,
        "const cells = [...document.querySelectorAll('#fleet-table td[data-field]')]
           .map((td) => ({ policy: td.dataset.policy, field: td.dataset.field, value: Number(td.dataset.value) }));
         const lines = [...document.querySelectorAll('#fleet-chart svg polyline')]
           .map((l) => ({ policy: l.dataset.policy, cls: l.getAttribute('class'),
                          values: l.dataset.values.split(',').map(Number),
                          points: l.getAttribute('points').split(' ').length }));
         const legend = [...document.querySelectorAll('#fleet-legend li')].map((li) => li.textContent);
         return { cells, lines, legend };",
    )
    .await
}

/// A figure of a policy's native JSON by its dotted path.
fn figure<'a>(policy: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(policy, |v, key| &v[key])
}

/// The page's figures and lines equal the native run's, exactly.
fn check_against_native(page: &Value, native: &Value) {
    let policies = native["policies"].as_array().expect("policies");
    let cells = page["cells"].as_array().expect("cells");
    assert_eq!(
        cells.len(),
        11 * policies.len(),
        "one cell per figure and policy"
    );
    for cell in cells {
        let policy = policies
            .iter()
            .find(|p| p["policy"] == cell["policy"])
            .unwrap_or_else(|| panic!("no native policy for {cell}"));
        let field = cell["field"].as_str().unwrap_or_default();
        let expected = figure(policy, field).as_f64();
        assert_eq!(cell["value"].as_f64(), expected, "{cell}");
    }
    let lines = page["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), policies.len(), "one line per policy");
    let mut classes: Vec<&str> = lines.iter().filter_map(|l| l["cls"].as_str()).collect();
    classes.sort_unstable();
    classes.dedup();
    assert_eq!(classes.len(), policies.len(), "a class (colour) per line");
    for (line, policy) in lines.iter().zip(policies) {
        assert_eq!(line["policy"], policy["policy"]);
        let native: Vec<f64> = policy["requests_per_s"]
            .as_array()
            .expect("a series")
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        let drawn: Vec<f64> = line["values"]
            .as_array()
            .expect("values")
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        assert_eq!(drawn, native, "{}", policy["policy"]);
        assert_eq!(
            line["points"].as_u64(),
            Some(2 * native.len() as u64),
            "a step per bin"
        );
    }
    assert_eq!(
        page["legend"].as_array().map(Vec::len),
        Some(policies.len() + 1)
    );
}

/// The table's rows as a reader sees them: each row's label, the figure it must show (a path
/// in a policy's native JSON) and how the page writes it. Written here from the figures' meaning,
/// not read from the page: a row that shows another figure, or writes one against the wrong
/// total, fails.
const ROWS: [(&str, &str, Written); 11] = [
    ("requests received", "requests", Written::Plain),
    ("peak requests / s", "peak_per_s", Written::Plain),
    ("answered 429", "share_429", Written::Percent),
    ("actions with data", "with_data", Written::OfActions),
    ("time to data p50", "time_to_data_s.p50", Written::Seconds),
    ("time to data p95", "time_to_data_s.p95", Written::Seconds),
    ("time to data max", "time_to_data_s.max", Written::Seconds),
    (
        "longest wait for outcome",
        "longest_wait_for_outcome_s",
        Written::Seconds,
    ),
    (
        "requests / action mean",
        "requests_per_action.mean",
        Written::TwoPlaces,
    ),
    (
        "requests / action max",
        "requests_per_action.max",
        Written::Plain,
    ),
    (
        "requests after outcome",
        "requests_after_outcome",
        Written::Plain,
    ),
];

/// How a figure is written in its cell.
#[derive(Clone, Copy)]
enum Written {
    /// As it is: `3366`.
    Plain,
    /// A share as a percentage to one place: `92.7%`.
    Percent,
    /// A count of the policy's actions: `240 / 1200`.
    OfActions,
    /// Seconds to two places: `1.93 s`.
    Seconds,
    /// Two places: `2.81`.
    TwoPlaces,
}

impl Written {
    fn write(self, value: f64, policy: &Value) -> String {
        match self {
            Written::Plain => format!("{value}"),
            Written::Percent => format!("{}%", half_up(value * 100.0, 1)),
            Written::OfActions => format!("{value} / {}", policy["actions"]),
            Written::Seconds => format!("{} s", half_up(value, 2)),
            Written::TwoPlaces => half_up(value, 2),
        }
    }
}

/// `value`, a decimal of at most nine places (seconds from nanoseconds; shares and means to
/// six), rounded half up to `places` (1 or 2), as the fleet command writes its table (the
/// library's own `fixed`): the tie 2.625 is 2.63, where `{:.2}` writes 2.62.
fn half_up(value: f64, places: u32) -> String {
    fleet::report::fixed(value, places)
}

#[test]
fn a_tie_is_written_half_up() {
    assert_eq!(half_up(2.625, 2), "2.63");
    assert_eq!(half_up(1.005, 2), "1.01");
    assert_eq!(half_up(0.857143 * 100.0, 1), "85.7");
    assert_eq!(half_up(12.35, 1), "12.4");
    assert_eq!(half_up(1.994_999_999, 2), "1.99");
}

/// Every row of the table says what it shows: its label, in the order above, over one cell per
/// policy whose text is that figure of that policy, written as above.
async fn check_rows(client: &Client, native: &Value) {
    let rows = js(
        client,
        "return [...document.querySelectorAll('#fleet-table tbody tr')].map((tr) => ({
           label: tr.querySelector('th').textContent,
           cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
         }));",
    )
    .await;
    let rows = rows.as_array().expect("rows");
    let policies = native["policies"].as_array().expect("policies");
    assert_eq!(rows.len(), ROWS.len(), "one row per figure: {rows:?}");
    for (row, (label, path, written)) in rows.iter().zip(ROWS) {
        assert_eq!(row["label"], label, "{row}");
        let expected: Vec<String> = policies
            .iter()
            .map(|p| match figure(p, path).as_f64() {
                Some(value) => written.write(value, p),
                None => "-".into(), // a time to data where no action had data
            })
            .collect();
        assert_eq!(row["cells"], json!(expected), "the row {label}");
    }
}

/// The y axis's tick labels and its title.
async fn y_axis(client: &Client) -> Value {
    js(
        client,
        "const svg = document.querySelector('#fleet-chart svg');
         return {
           ticks: [...svg.querySelectorAll('text.tick[text-anchor=end]')].map((t) => t.textContent),
           title: [...svg.querySelectorAll('text.axis-label')].map((t) => t.textContent).join(' | '),
         };",
    )
    .await
}

/// The logarithmic scale box redraws the chart: ticked (as the view starts), the y axis counts
/// decades from 1 and says so; unticked, it is linear from 0. Each state is checked, then the
/// box is clicked: after two clicks it is as it was. The figures drawn stay the native ones.
async fn check_log_scale(client: &Client, native: &Value) {
    for _ in 0..2 {
        let log = js(
            client,
            "return document.getElementById('fleet-log').checked",
        )
        .await;
        let axis = y_axis(client).await;
        let ticks: Vec<&str> = axis["ticks"]
            .as_array()
            .expect("ticks")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let title = axis["title"].as_str().unwrap_or_default();
        if log == json!(true) {
            // The peak here is over 1,000 requests a second: at least four decades.
            let decades = ["1", "10", "100", "1k", "10k", "100k", "1M"];
            assert!(ticks.len() >= 4, "{axis}");
            assert_eq!(ticks, decades[..ticks.len()], "{axis}");
            assert!(title.contains("(log)"), "{axis}");
        } else {
            assert_eq!(
                ticks.first(),
                Some(&"0"),
                "a linear axis starts at 0: {axis}"
            );
            assert!(!title.contains("(log)"), "{axis}");
        }
        check_against_native(&shown(client).await, native);
        click(client, "fleet-log").await.expect("the log scale box");
    }
}

/// Opens the Fleet view and waits for its first run (the defaults) to end.
async fn open_fleet(client: &Client, base: &str) {
    open_ready(client, &format!("{base}/#/fleet")).await;
    let first = "return document.getElementById('screen-fleet').dataset.state === 'done'";
    assert!(
        wait_until(client, first, Duration::from_secs(30)).await,
        "the view's first run did not end: {}",
        text_of(client, "fleet-status").await
    );
}

/// A run whose figures fall on ties: eight pages of one widget against a bucket of one token
/// a second, where ours sends 21 requests for 8 actions, a mean of exactly 2.625. Its cells
/// are the command's (2.63, rounded half up), where `toFixed` once wrote 2.63 and `{:.2}` 2.62.
async fn check_a_tie(client: &Client) {
    let inputs = [
        ("fleet-pages", "8"),
        ("fleet-widgets", "1"),
        ("fleet-arrive", "0"),
        ("fleet-limiter", "bucket"),
        ("fleet-rate", "1"),
        ("fleet-burst", "1"),
        ("fleet-retry-after", "seconds"),
        ("fleet-seed", "1"),
    ];
    fill(client, &inputs).await;
    assert_eq!(run(client).await, "done");
    let native = report_of(fleet::Options {
        pages: 8,
        widgets: 1,
        arrive_over_s: 0.0,
        limiter: fleet::LimiterKind::Bucket,
        rate: 1.0,
        burst: 1.0,
        retry_after: fleet::service::RetryAfterMode::Seconds,
        seed: 1,
        ..fleet::Options::default()
    });
    assert_eq!(
        native["policies"][0]["requests_per_action"]["mean"],
        json!(2.625),
        "the run this check was chosen for: {native}"
    );
    check_against_native(&shown(client).await, &native);
    check_rows(client, &native).await;
}

async fn fleet_view(browser: Browser) {
    let server = start_server().await;
    // A session whose Firefox window may be narrower than its usual 500 px minimum.
    let (session, _profile) = narrow_session(browser, "fleet").await;
    let client = &session.client;
    client
        .set_window_size(1280, 1000)
        .await
        .expect("a window size");
    open_fleet(client, &server.base).await;
    fill(client, &INPUTS).await;
    assert_eq!(
        run(client).await,
        "done",
        "{}",
        text_of(client, "fleet-status").await
    );
    let status = text_of(client, "fleet-status").await;
    let page = shown(client).await;
    let native = native();
    println!("{} fleet view: {status}", browser.name());
    check_against_native(&page, &native);
    check_rows(client, &native).await;
    // A window of 60 requests per 2 s lets 30 a second through.
    assert_eq!(
        page["legend"].as_array().and_then(|l| l.last()),
        Some(&json!("the limiter's capacity, 30 requests / s")),
        "{}",
        page["legend"]
    );
    check_log_scale(client, &native).await;
    screenshot(client, browser, "fleet").await;

    client
        .set_window_size(360, 900)
        .await
        .expect("a narrow window");
    let narrow = "return window.innerWidth <= 360 &&
                  document.querySelector('#fleet-chart svg').viewBox.baseVal.width < window.innerWidth";
    assert!(
        wait_until(client, narrow, Duration::from_secs(5)).await,
        "the chart was not redrawn for a narrow window: {}",
        js(client, "return [window.innerWidth, document.querySelector('#fleet-chart svg').viewBox.baseVal.width]").await
    );
    let width = js(client, "return window.innerWidth").await;
    println!("{} fleet view at {width} px", browser.name());
    let overflow = js(
        client,
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
    )
    .await;
    assert_eq!(
        overflow.as_f64(),
        Some(0.0),
        "the page scrolls sideways at 360 px"
    );
    check_against_native(&shown(client).await, &native);
    screenshot(client, browser, "fleet-narrow").await;
    check_a_tie(client).await;

    fill(client, &[("fleet-pages", "0")]).await;
    assert_eq!(run(client).await, "error");
    let message = text_of(client, "fleet-status").await;
    assert!(
        message.contains("options.pages must be a whole number from 1"),
        "{message}"
    );
    responsive_through_a_million(client, browser).await;
    session.close().await;
}

/// The largest run the view allows, a million widgets (333,333 pages of 3 over ten minutes):
/// while it runs, a timer set after the press fires and a click on the page's logarithmic
/// scale box is handled, both seen while the view still says "running". A run on the page's
/// main thread would hold both until it ended, and the view would say "done".
async fn responsive_through_a_million(client: &Client, browser: Browser) {
    let million = [
        ("fleet-pages", "333333"),
        ("fleet-widgets", "3"),
        ("fleet-arrive", "600"),
        ("fleet-limiter", "bucket"),
        ("fleet-rate", "500"),
        ("fleet-burst", "1000"),
        ("fleet-seed", "1"),
    ];
    fill(client, &million).await;
    let before = js(
        client,
        "return document.getElementById('fleet-log').checked",
    )
    .await;
    click(client, "fleet-run").await.expect("Run the fleet");
    let probe = js(
        client,
        "const screen = document.getElementById('screen-fleet');
         const box = document.getElementById('fleet-log');
         return new Promise((resolve) => setTimeout(() => {
           const atTimer = screen.dataset.state;
           box.click();
           resolve({ atTimer, afterClick: screen.dataset.state, checked: box.checked });
         }, 0));",
    )
    .await;
    println!(
        "{} a million widgets, while running: {probe}",
        browser.name()
    );
    assert_eq!(probe["atTimer"], "running", "{probe}");
    assert_eq!(probe["afterClick"], "running", "{probe}");
    assert_ne!(probe["checked"], before, "the click was handled: {probe}");
    let done = "return document.getElementById('screen-fleet').dataset.state !== 'running'";
    assert!(
        wait_until(client, done, Duration::from_secs(600)).await,
        "the million did not end"
    );
    let status = text_of(client, "fleet-status").await;
    println!("{} a million widgets: {status}", browser.name());
    assert!(status.contains("999999 actions each"), "{status}");
}

browser_tests!(fleet_view: fleet_view_chromium, fleet_view_firefox);
