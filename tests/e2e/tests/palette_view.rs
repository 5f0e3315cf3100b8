//! The Palette List's views, live, in headless Chromium and Firefox: the step tables, the
//! outcome in words on the timeline, the refused wait drawn past the deadline, labels that
//! never overlap, a page that reads at 360 px wide (each step cell labelled with its own
//! column), and a timeline that, while a run goes on, draws what is still running up to now.
//!
//! The test carries no copy of the rules: what the page must show comes from the model's own
//! report of the same scenario, run natively (`simulate(..).report`): its step rows
//! (`report.steps()`), its visible headline, and its stop's cause. The model's table on the page
//! must be those rows exactly; the live table must have the same step names and words, and
//! numbers no further than `LIVE_TOLERANCE_S` for each attempt so far from the model's (its
//! times are measured, and lateness adds up along a run). A transport fault is
//! compared with the model of its base scenario with that response turned into a network
//! failure, which is what the live driver sees.
//!
//! Screenshots: `target/e2e-artifacts/<browser>/palette-<scenario>.png` and
//! `palette-<scenario>-360px.png`.

use std::time::Duration;

use fantoccini::Client;
use retry_budget_model::action::StopCause;
use retry_budget_model::report::Report;
use retry_budget_model::scenario::{Reply, Scenario};
use retry_budget_model::simulate::simulate;
use retry_budget_model::steps::{secs, Step};
use retry_budget_model::Outcome;
use serde_json::{json, Value};

use e2e::{
    fixture, js, live_form, narrow_session, open_page, screenshot, session, start_action,
    start_server, viewport, wait_until, Browser,
};

/// How far a live figure may be from the model's, in seconds, for each attempt up to it: every
/// step of a live run starts from the live moment before it, so a late response or timer makes
/// everything after it late too. Still far below a real scheduling mistake at full scale (a
/// wait counted from the start instead of the receipt is 2 s off in schedule A).
const LIVE_TOLERANCE_S: f64 = 0.4;
/// The normal window, tall enough for the screenshots to hold the tables.
const WIDE: (u32, u32) = (1280, 1700);
/// The narrow viewport the layout must still read at.
const NARROW: u32 = 360;

/// A scenario to run, and what the live run is to be compared with.
struct Case {
    /// The scenario the page picks.
    name: &'static str,
    /// The fixture scenario the page's model row simulates (a faulted scenario's base).
    model: &'static str,
    /// The scenario whose model the live run must match.
    live: fn(Scenario) -> Scenario,
    /// Whether the model's budget refuses a wait, to be drawn past the deadline.
    refused: bool,
}

fn as_scripted(s: Scenario) -> Scenario {
    live_form(&s)
}

/// The first response reset before its body ends: a network failure at its scripted time.
fn first_response_fails(mut s: Scenario) -> Scenario {
    s.responses[0].reply = Reply::TransportError("network".into());
    live_form(&s)
}

fn cases() -> Vec<Case> {
    let case = |name, refused| Case {
        name,
        model: name,
        live: as_scripted,
        refused,
    };
    vec![
        case("schedule-a", false),
        case("wait-exceeds-budget", true),
        case("wait-fits-attempt-does-not", true),
        case("huge-retry-after-seconds", true),
        case("two-retry-after-lines", false),
        Case {
            name: "fault-connection-reset-mid-body",
            model: "plain-200",
            live: first_response_fails,
            refused: false,
        },
    ]
}

// What the page must show, read from the model's report.

/// The model's step rows, as the page's cells.
fn rows(report: &Report) -> Vec<[String; 4]> {
    report
        .steps()
        .iter()
        .map(
            |Step {
                 step,
                 elapsed,
                 observed,
                 decision,
             }| { [step, elapsed, observed, decision].map(String::clone) },
        )
        .collect()
}

/// Whether the model's budget refused a wait (the stop's cause says so).
fn refuses(report: &Report) -> bool {
    matches!(
        report.cause,
        Some(
            StopCause::RefusedWait { .. }
                | StopCause::LateWake { .. }
                | StopCause::OriginBlocked { .. }
        )
    )
}

/// The stop's label on the timeline: when, and the model's visible headline.
fn stop_label(report: &Report) -> Option<String> {
    let headline = report.visible.first()?;
    Some(format!("{} s: {headline}", secs(report.elapsed_s.0)))
}

/// The refused wait's label on the timeline: the model's last decision.
fn refused_label(report: &Report) -> Option<String> {
    refuses(report)
        .then(|| report.steps().last().map(|s| s.decision.clone()))
        .flatten()
}

// Comparing what the page shows.

/// A text cut into its words (with `#` for each number) and its numbers, so that live
/// figures can be compared with a tolerance and everything else exactly.
fn pieces(s: &str) -> (String, Vec<f64>) {
    let (mut words, mut numbers, mut number) = (String::new(), Vec::new(), String::new());
    let mut end_number = |number: &mut String, words: &mut String| {
        if !number.is_empty() {
            numbers.push(number.parse().unwrap_or(f64::NAN));
            number.clear();
            words.push('#');
        }
    };
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let open = !number.is_empty();
        let continues = c.is_ascii_digit()
            || (open && c == '.' && chars.peek().is_some_and(char::is_ascii_digit))
            || (open
                && c == 'e'
                && chars
                    .peek()
                    .is_some_and(|n| *n == '+' || n.is_ascii_digit()))
            || (open && c == '+' && number.ends_with('e'));
        if continues {
            number.push(c);
        } else {
            end_number(&mut number, &mut words);
            words.push(c);
        }
    }
    end_number(&mut number, &mut words);
    (words, numbers)
}

/// Whether `got` says what `want` says, with every number within `tolerance` (relative for
/// numbers beyond a million).
fn close(got: &str, want: &str, tolerance: f64) -> bool {
    let (gw, gn) = pieces(got);
    let (ww, wn) = pieces(want);
    gw == ww
        && gn.len() == wn.len()
        && gn
            .iter()
            .zip(&wn)
            .all(|(g, w)| (g - w).abs() <= tolerance.max(w.abs() * 1e-2))
}

/// The rows of the page's step table `id`.
async fn table(client: &Client, id: &str) -> Vec<Vec<String>> {
    let rows = js(
        client,
        &format!(
            "return [...document.querySelectorAll('#{id} tbody tr')]
               .map(tr => [...tr.cells].map(c => c.textContent))"
        ),
    )
    .await;
    serde_json::from_value(rows).unwrap_or_default()
}

/// Compares a page's step table with the model's rows: the step names exactly, and the rest
/// with `per_attempt` seconds of tolerance for each attempt up to the row (none: exactly).
fn compare_rows(
    what: &str,
    got: &[Vec<String>],
    want: &[[String; 4]],
    per_attempt: f64,
) -> Vec<String> {
    let mut failures = Vec::new();
    if got.len() != want.len() {
        failures.push(format!(
            "{what}: {} rows on the page, {} expected: {got:?} vs {want:?}",
            got.len(),
            want.len()
        ));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let attempts = want[..=k]
            .iter()
            .filter(|row| row[0].starts_with("Attempt"))
            .count();
        let tolerance = per_attempt * attempts.max(1) as f64;
        let same = g.len() == 4
            && g[0] == w[0]
            && g.iter().zip(w).skip(1).all(|(g, w)| {
                if tolerance == 0.0 {
                    g == w
                } else {
                    close(g, w, tolerance)
                }
            });
        if !same {
            failures.push(format!("{what}, row {}: {g:?}, expected {w:?}", k + 1));
        }
    }
    failures
}

/// Every label of the timeline, with its box, and the marks the checks below measure.
const TIMELINE: &str = "
  const svg = document.querySelector('#timeline svg');
  if (!svg) return null;
  const box = (el) => { const r = el.getBoundingClientRect();
    return { x0: r.left, x1: r.right, y0: r.top, y1: r.bottom }; };
  const all = (sel) => [...svg.querySelectorAll(sel)];
  return {
    svg: box(svg),
    labels: all('text').map((t) => ({ text: t.textContent, cls: t.getAttribute('class'), ...box(t) })),
    deadline: all('line.deadline').map(box),
    stops: all('line.stop').map(box),
    past: all('rect.refused-past').map(box),
    waits: all('rect.refused-wait').map(box),
  };";

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(f64::NAN)
}

/// The labels of class `cls` in document order (model first), a wrapped label's lines joined.
fn labels_of(timeline: &Value, cls: &str) -> String {
    let lines: Vec<&str> = timeline["labels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| l["cls"] == cls)
        .filter_map(|l| l["text"].as_str())
        .collect();
    lines.join(" ")
}

/// Pairs of labels whose boxes overlap, and labels that stick out of the drawing.
fn overlaps(timeline: &Value) -> Vec<String> {
    let labels = timeline["labels"].as_array().cloned().unwrap_or_default();
    let svg = &timeline["svg"];
    let mut failures = Vec::new();
    for (i, a) in labels.iter().enumerate() {
        if f(a, "x0") < f(svg, "x0") - 0.5 || f(a, "x1") > f(svg, "x1") + 0.5 {
            failures.push(format!("label {} sticks out of the timeline", a["text"]));
        }
        for b in &labels[i + 1..] {
            let w = f(a, "x1").min(f(b, "x1")) - f(a, "x0").max(f(b, "x0"));
            let h = f(a, "y1").min(f(b, "y1")) - f(a, "y0").max(f(b, "y0"));
            if w > 0.5 && h > 0.5 {
                failures.push(format!("labels {} and {} overlap", a["text"], b["text"]));
            }
        }
    }
    failures
}

/// The checks of the timeline at the current width.
fn check_timeline(case: &Case, timeline: &Value, model: &Report, live: &Report) -> Vec<String> {
    let mut failures = overlaps(timeline);
    let labels = |f: fn(&Report) -> Option<String>| {
        [model, live]
            .into_iter()
            .filter_map(f)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (want_stops, stops) = (labels(stop_label), labels_of(timeline, "stop-label"));
    let tolerance = LIVE_TOLERANCE_S * f64::from(live.attempts.max(1));
    if !close(&stops, &want_stops, tolerance) {
        failures.push(format!("stop labels {stops:?}, expected {want_stops:?}"));
    }
    if refuses(model) != case.refused {
        failures.push(format!(
            "the model refuses a wait: {}, expected {}",
            !case.refused, case.refused
        ));
    }
    let (want, got) = (labels(refused_label), labels_of(timeline, "refused-label"));
    if !close(&got, &want, tolerance) {
        failures.push(format!("refused labels {got:?}, expected {want:?}"));
    }
    let refusing = [model, live].into_iter().filter(|r| refuses(r)).count();
    let deadline = timeline["deadline"].get(0).map_or(f64::NAN, |b| f(b, "x0"));
    let past = timeline["past"].as_array().cloned().unwrap_or_default();
    if past.len() != refusing {
        failures.push(format!(
            "{} refused parts past the deadline, expected {refusing}",
            past.len()
        ));
    }
    for p in &past {
        if !(f(p, "x0") >= deadline - 1.0 && f(p, "x1") > deadline + 4.0) {
            failures.push(format!(
                "the refused part {p} is not drawn past the deadline at {deadline}"
            ));
        }
    }
    let stops = timeline["stops"].as_array().cloned().unwrap_or_default();
    let waits = timeline["waits"].as_array().cloned().unwrap_or_default();
    for w in &waits {
        let at_a_stop = stops
            .iter()
            .any(|s| (f(w, "x0") - (f(s, "x0") + f(s, "x1")) / 2.0).abs() <= 3.0);
        if !at_a_stop {
            failures.push(format!("the refused wait {w} does not begin at a stop"));
        }
    }
    failures
}

/// The page's scroll width, the viewport's, and the innermost elements whose right edge passes
/// the viewport (tag, id or class, and the edge), to say what made a page too wide.
const WIDTHS: &str = "
    const inner = window.innerWidth;
    const past = [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > inner + 0.5)
        .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > inner + 0.5))
        .slice(0, 5)
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className ? '.' + e.className : ''} ${Math.round(e.getBoundingClientRect().right)}`);
    return [document.scrollingElement.scrollWidth, inner, past.join(', ')];
";

/// Every body cell of both step tables, with its column's header (the table head's cell at
/// the same index), the `data-label` the narrow layout writes before it, and what its
/// `::before` shows now.
const CELL_LABELS: &str = "
    return [...document.querySelectorAll('table.steps')].flatMap((table) => {
      const headers = [...table.tHead.rows[0].cells].map((th) => th.textContent);
      return [...table.tBodies[0].rows].flatMap((tr, r) => [...tr.cells].map((cell, k) => ({
        table: table.id, row: r + 1, tag: cell.tagName.toLowerCase(), header: headers[k] ?? null,
        label: cell.dataset.label ?? null, empty: cell.classList.contains('empty'),
        before: getComputedStyle(cell, '::before').content })));
    });";

/// At 360 px each row is a block and each cell after the step says which column it is: its
/// `data-label` must be its own column's header, and its `::before` must show it (Chromium
/// gives the computed text, Firefox the `attr(data-label)` it comes from). The first few
/// wrong cells are named.
async fn check_cell_labels(client: &Client) -> Vec<String> {
    let cells = js(client, CELL_LABELS).await;
    let cells = cells.as_array().cloned().unwrap_or_default();
    let data: Vec<&Value> = cells
        .iter()
        .filter(|c| c["tag"] == "td" && c["empty"] == false)
        .collect();
    if data.is_empty() {
        return vec![format!("no step table cells to label: {cells:?}")];
    }
    let wrong: Vec<String> = data
        .iter()
        .filter(|cell| {
            let header = cell["header"].as_str().unwrap_or("(no header)");
            let shown = cell["before"].as_str().unwrap_or_default();
            cell["label"].as_str() != Some(header)
                || !(shown.contains(header) || shown.contains("attr(data-label)"))
        })
        .map(|cell| {
            format!(
                "{} row {}: the cell under {} is labelled {} and shows {} before it",
                cell["table"], cell["row"], cell["header"], cell["label"], cell["before"]
            )
        })
        .collect();
    if wrong.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "{} of {} step cells mislabelled: {}",
        wrong.len(),
        data.len(),
        wrong[..wrong.len().min(3)].join("; ")
    )]
}

async fn timeline(client: &Client) -> Value {
    // The timeline redraws on the next frame after a resize.
    tokio::time::sleep(Duration::from_millis(300)).await;
    js(client, TIMELINE).await
}

/// At 360 px: no horizontal overflow, and the timeline still without overlaps.
async fn check_narrow(
    client: &Client,
    browser: Browser,
    case: &Case,
    model: &Report,
    live: &Report,
) -> Vec<String> {
    let mut failures = Vec::new();
    if let Err(e) = viewport(client, NARROW, 2400).await {
        return vec![e];
    }
    let widths = js(client, WIDTHS).await;
    let (scroll, inner) = (
        widths[0].as_f64().unwrap_or(f64::INFINITY),
        widths[1].as_f64().unwrap_or(0.0),
    );
    if scroll > inner {
        failures.push(format!(
            "at {NARROW} px the page is {scroll} px wide; past the edge: {}",
            widths[2]
        ));
    }
    let drawn = timeline(client).await;
    failures.extend(
        check_timeline(case, &drawn, model, live)
            .into_iter()
            .chain(check_cell_labels(client).await)
            .map(|f| format!("at {NARROW} px: {f}")),
    );
    screenshot(client, browser, &format!("palette-{}-360px", case.name)).await;
    failures
}

async fn check_case(client: &Client, browser: Browser, base: &str, case: &Case) -> Vec<String> {
    let model = simulate(&fixture(case.model))
        .expect("the model runs it")
        .report;
    let mut scripted = fixture(case.model);
    scripted.name = case.name.into();
    let live = simulate(&(case.live)(scripted))
        .expect("the model runs the live form")
        .report;
    if let Err(e) = viewport(client, WIDE.0, WIDE.1).await {
        return vec![e];
    }
    open_page(client, base, case.name).await;
    start_action(client).await;
    let limit = model.policy.budget + Duration::from_secs(15);
    if !wait_until(client, "return !!document.body.dataset.outcome", limit).await {
        return vec!["no outcome on the page in time".into()];
    }
    let mut failures = Vec::new();
    let outcome = js(client, "return document.body.dataset.outcome").await;
    let want = live.outcome.map(Outcome::as_str).unwrap_or_default();
    if outcome != json!(want) {
        failures.push(format!(
            "outcome {outcome}, the model of the live run says {want}"
        ));
    }
    let model_rows = table(client, "steps-model").await;
    failures.extend(compare_rows("model table", &model_rows, &rows(&model), 0.0));
    let live_rows = table(client, "steps-live").await;
    failures.extend(compare_rows(
        "live table",
        &live_rows,
        &rows(&live),
        LIVE_TOLERANCE_S,
    ));
    let drawn = timeline(client).await;
    failures.extend(check_timeline(case, &drawn, &model, &live));
    screenshot(client, browser, &format!("palette-{}", case.name)).await;
    failures.extend(check_narrow(client, browser, case, &model, &live).await);
    failures
}

/// Every fixture scenario's model table, as the page's module gives it (its `simulate`), against
/// the model's rows natively: the wasm build and the native model agree beyond the cases run
/// live.
async fn check_every_model_table(client: &Client, base: &str) -> Vec<String> {
    open_page(client, base, "schedule-a").await;
    let script = "const done = arguments[arguments.length - 1];
        // In Firefox a script's import() may get modules of its own: initialise the wasm.
        Promise.all([import('./pkg-full/retry_budget.js'), fetch('scenarios').then((r) => r.json())])
          .then((m) => m[0].default().then(() => m))
          // Indexed, not destructured: the elements must be read in the page's own terms.
          .then((m) => done(m[1].scenarios.map((s) =>
            [s.name, m[0].simulate(s).steps.map((r) => [r.step, r.elapsed, r.observed, r.decision])])))
          .catch((e) => done(String(e)));";
    let tables = client
        .execute_async(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("the page's tables: {e}"));
    let Ok(tables) = serde_json::from_value::<Vec<(String, Vec<Vec<String>>)>>(tables.clone())
    else {
        return vec![format!("the page's tables could not be read: {tables}")];
    };
    let mut failures = Vec::new();
    let mut compared = 0;
    for scenario in e2e::fixture_scenarios() {
        let Some((_, got)) = tables.iter().find(|(name, _)| *name == scenario.name) else {
            failures.push(format!("{} is not in the page's listing", scenario.name));
            continue;
        };
        let report = simulate(&scenario).expect("the model runs it").report;
        failures.extend(compare_rows(&scenario.name, got, &rows(&report), 0.0));
        compared += 1;
    }
    println!("{compared} model tables compared with the native model's");
    failures
}

async fn run_browser(browser: Browser) {
    let server = start_server().await;
    let (session, _profile) = narrow_session(browser, "palette").await;
    let mut failed = Vec::new();
    for case in cases() {
        let failures = check_case(&session.client, browser, &server.base, &case).await;
        for f in &failures {
            println!("{}: FAIL {}: {f}", browser.name(), case.name);
        }
        if failures.is_empty() {
            println!("{}: ok   {}", browser.name(), case.name);
        } else {
            failed.push(case.name);
        }
    }
    let every = check_every_model_table(&session.client, &server.base).await;
    for f in &every {
        println!("{}: FAIL every model table: {f}", browser.name());
    }
    if !every.is_empty() {
        failed.push("every model table");
    }
    session.close().await;
    assert!(failed.is_empty(), "{} failed: {failed:?}", browser.name());
}

e2e::browser_tests!(run_browser: chromium_palette_view, firefox_palette_view);

/// The live run as the page shows it at one moment: whether the state says it waits or sends,
/// the live track's wait and request bars (`[x0, x1]`, left to right: everything drawn below
/// the track's "Live run" title) and the live step table's wait and attempt rows.
const RUNNING: &str = "
  const state = document.getElementById('state').innerText;
  const svg = document.querySelector('#timeline svg');
  const title = svg && [...svg.querySelectorAll('text.row-label')].find((t) => t.textContent === 'Live run');
  if (!title) return null;
  const below = Number(title.getAttribute('y'));
  const bars = (cls) => [...svg.querySelectorAll(`rect.${cls}`)]
    .filter((r) => Number(r.getAttribute('y')) > below)
    .map((r) => { const x = Number(r.getAttribute('x')); return [x, x + Number(r.getAttribute('width'))]; })
    .sort((a, b) => a[0] - b[0]);
  const steps = [...document.querySelectorAll('#steps-live tbody tr')].map((tr) => tr.cells[0].textContent);
  return {
    waiting: state.startsWith('Waiting'),
    sending: state.startsWith('Loading: attempt'),
    waits: bars('wait'),
    requests: bars('request'),
    wait_rows: steps.filter((s) => s === 'Wait').length,
    attempt_rows: steps.filter((s) => s.startsWith('Attempt')).length,
    outcome: document.body.dataset.outcome ?? '',
  };";

/// Which part of a run is still running on the timeline, and how far it is drawn.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Open {
    /// The wait after this many wait rows; its bar's right edge.
    Wait(usize, f64),
    /// The request of this many attempt rows plus one; its bar's right edge.
    Request(usize, f64),
}

/// Checks one moment of a running run: what is still running is drawn, up to now. While the
/// state says the run waits, the live track has a bar for every wait row of the table, the
/// open wait (the table's last wait row, whose interval has no end yet) included, beginning
/// where the last request ended; while it sends, a bar for every attempt row and one more, the
/// request in flight. Returns what is open, or why the moment is wrong.
fn open_part(moment: &Value) -> Result<Option<Open>, String> {
    let bars = |key: &str| -> Vec<[f64; 2]> {
        serde_json::from_value(moment[key].clone()).unwrap_or_default()
    };
    let (waits, requests) = (bars("waits"), bars("requests"));
    let count = |key: &str| moment[key].as_u64().unwrap_or(0) as usize;
    let (wait_rows, attempt_rows) = (count("wait_rows"), count("attempt_rows"));
    if moment["waiting"] == true {
        let (Some(wait), Some(request)) = (waits.last(), requests.last()) else {
            return Err(format!("waiting, and no open wait is drawn: {moment}"));
        };
        if waits.len() != wait_rows || (wait[0] - request[1]).abs() > 1.0 {
            return Err(format!(
                "waiting with {wait_rows} wait rows: the live track draws {} waits, the last \
                 not from the last request's end: {moment}",
                waits.len()
            ));
        }
        return Ok(Some(Open::Wait(wait_rows, wait[1])));
    }
    if moment["sending"] == true {
        if requests.len() != attempt_rows + 1 {
            return Err(format!(
                "sending after {attempt_rows} attempt rows: the live track draws {} requests, \
                 want the one in flight too: {moment}",
                requests.len()
            ));
        }
        return Ok(requests.last().map(|r| Open::Request(attempt_rows, r[1])));
    }
    Ok(None)
}

/// While schedule A runs (two waits between three requests), the live track draws what is
/// still running up to now: every moment read shows the open request or wait as a bar (see
/// `open_part`), and the same open part read again later ends further right, so the bar
/// follows the time as it passes. Both an open wait and an open request must be seen to grow.
async fn check_running_timeline(client: &Client, browser: Browser, base: &str) -> Vec<String> {
    if let Err(e) = viewport(client, WIDE.0, WIDE.1).await {
        return vec![e];
    }
    open_page(client, base, "schedule-a").await;
    start_action(client).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(45);
    let (mut last, mut wait_grew, mut request_grew) = (None, false, false);
    // The first wrong moment while waiting and the first while sending: the run goes on to its
    // end, so that both are seen.
    let (mut wrong_wait, mut wrong_request) = (None, None);
    let mut failures = Vec::new();
    loop {
        let moment = js(client, RUNNING).await;
        if !moment.is_null() {
            match open_part(&moment) {
                Err(e) if moment["waiting"] == true => {
                    wrong_wait.get_or_insert(e);
                    last = None;
                }
                Err(e) => {
                    wrong_request.get_or_insert(e);
                    last = None;
                }
                Ok(now) => {
                    match (last, now) {
                        (Some(Open::Wait(k, was)), Some(Open::Wait(n, is))) if k == n => {
                            wait_grew |= is > was + 1.0;
                        }
                        (Some(Open::Request(k, was)), Some(Open::Request(n, is))) if k == n => {
                            request_grew |= is > was + 1.0;
                        }
                        _ => {}
                    }
                    last = now;
                }
            }
            if moment["outcome"] != "" {
                break;
            }
        }
        if std::time::Instant::now() > deadline {
            failures.push("schedule A did not end in time".into());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    screenshot(client, browser, "palette-running-timeline").await;
    failures.extend(wrong_wait.into_iter().chain(wrong_request));
    if failures.is_empty() && !(wait_grew && request_grew) {
        failures.push(format!(
            "an open part never grew while the run went on: wait {wait_grew}, request \
             {request_grew}"
        ));
    }
    failures
}

async fn run_running(browser: Browser) {
    let server = start_server().await;
    let session = session(browser).await;
    let failures = check_running_timeline(&session.client, browser, &server.base).await;
    session.close().await;
    for f in &failures {
        println!("{}: FAIL the running timeline: {f}", browser.name());
    }
    assert!(failures.is_empty(), "{} failed", browser.name());
    println!("{}: ok   the running timeline", browser.name());
}

e2e::browser_tests!(run_running: chromium_timeline_draws_what_is_still_running, firefox_timeline_draws_what_is_still_running);

#[cfg(test)]
mod comparing {
    use super::*;

    #[test]
    fn numbers_are_compared_within_the_tolerance_and_words_exactly() {
        assert!(close(
            "Stop at 2.13: next start 5.1",
            "Stop at 2: next start 5",
            0.4
        ));
        assert!(!close(
            "Stop at 2.5: next start 5",
            "Stop at 2: next start 5",
            0.4
        ));
        assert!(!close(
            "Halt at 2: next start 5",
            "Stop at 2: next start 5",
            0.4
        ));
        assert!(close("asked 1.84e19 s", "asked 1.84e19 s", 0.4));
    }

    #[test]
    fn a_live_row_may_be_late_by_a_tolerance_for_each_attempt_up_to_it() {
        let want = |rows: &[[&str; 4]]| -> Vec<[String; 4]> {
            rows.iter().map(|r| r.map(String::from)).collect()
        };
        let got = |rows: &[[&str; 4]]| -> Vec<Vec<String>> {
            rows.iter().map(|r| r.map(String::from).to_vec()).collect()
        };
        let model = want(&[
            ["Attempt 1", "0–2", "429; delay 3", "Next start 5"],
            ["Wait", "2–5", "3 s", "No request in flight"],
            ["Attempt 2", "5–7", "200; list returned", "Finish"],
        ]);
        // 0.3 s late at the first receipt, then another 0.3 s: 0.6 s in the last row, within
        // two attempts' tolerance though past one.
        let late = got(&[
            ["Attempt 1", "0–2.3", "429; delay 3", "Next start 5.3"],
            ["Wait", "2.3–5.3", "3 s", "No request in flight"],
            ["Attempt 2", "5.3–7.6", "200; list returned", "Finish"],
        ]);
        assert!(compare_rows("live", &late, &model, 0.4).is_empty());
        // The same lateness in the first row is past its one attempt's tolerance.
        let early_late = got(&[
            ["Attempt 1", "0–2.6", "429; delay 3", "Next start 5.6"],
            ["Wait", "2.6–5.6", "3 s", "No request in flight"],
            ["Attempt 2", "5.6–7.6", "200; list returned", "Finish"],
        ]);
        assert_eq!(compare_rows("live", &early_late, &model, 0.4).len(), 2);
        // Step names are never compared with a tolerance.
        let renamed = got(&[
            ["Attempt 1", "0–2", "429; delay 3", "Next start 5"],
            ["Wait", "2–5", "3 s", "No request in flight"],
            ["Attempt 3", "5–7", "200; list returned", "Finish"],
        ]);
        assert_eq!(compare_rows("live", &renamed, &model, 0.4).len(), 1);
        assert!(compare_rows("model", &got(&[]), &model, 0.0).len() == 1);
    }

    #[test]
    fn the_labels_come_from_the_models_report() {
        let report = simulate(&fixture("wait-exceeds-budget"))
            .expect("runs")
            .report;
        assert_eq!(
            stop_label(&report).as_deref(),
            Some("2 s: Stopped: retry budget cannot fit another request.")
        );
        let refused = refused_label(&report).expect("a refusal");
        assert!(refused.contains("next start would be 32"), "{refused}");
        assert_eq!(report.outcome, Some(Outcome::BudgetExhausted));
    }
}
