//! The Palette List's views, live, in headless Chromium and Firefox: the step tables, the
//! outcome in words on the timeline, the refused wait drawn past the deadline, labels that
//! never overlap, and a page that reads at 360 px wide.
//!
//! The expected step rows come from the model's report of the same scenario, turned into rows
//! by the rules below (written here again, in Rust, apart from the page's `www/steps.js`). The
//! model's table must match them exactly; the live table must have the same words, and numbers
//! no further than `LIVE_TOLERANCE_S` from the model's (its times are measured). A transport
//! fault is compared with the model of its base scenario with that response turned into a
//! network failure, which is what the live driver sees.
//!
//! Screenshots: `target/e2e-artifacts/<browser>/palette-<scenario>.png` and
//! `palette-<scenario>-360px.png`.

use std::time::Duration;

use fantoccini::Client;
use retry_budget_model::report::Report;
use retry_budget_model::scenario::{Reply, Scenario};
use retry_budget_model::simulate::simulate;
use retry_budget_model::{Event, Outcome, RetryAfter, WaitSource};
use serde_json::{json, Value};

use e2e::{
    fixture, js, live_form, narrow_session, open_page, screenshot, start_action, start_server,
    wait_until, Browser,
};

/// How far a live figure may be from the model's, in seconds.
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

// The row rules, as the page states them (Step, Elapsed interval, Observed, Decision).

/// Seconds as the page writes them: a whole number as it is, else at most two decimals.
fn secs(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn d(x: Duration) -> String {
    secs(x.as_secs_f64())
}

/// A delay that may be far past any budget: three significant digits from a million on.
fn amount(x: f64) -> String {
    if x < 1e6 {
        return secs(x);
    }
    let s = format!("{x:.2e}");
    match s.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
        _ => s,
    }
}

fn outcome_words(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success: the list is loaded",
        Outcome::BudgetExhausted => "stopped: the budget cannot fit another request",
        Outcome::AttemptsExhausted => "stopped: every attempt was used",
        Outcome::UserLeft => "stopped: you left the screen",
        Outcome::ClockUntrusted => "stopped: no trusted clock to read the server's date",
        Outcome::NotRetryable => "stopped: this status is not retried",
        Outcome::TransportError => "stopped: the request failed",
    }
}

/// What the budget refused: the would-be start, and why it was that late.
struct Refused {
    start: f64,
    cause: Cause,
}

enum Cause {
    Asked(f64),
    Fallback(f64),
    Block(f64),
    Late,
}

fn refused(report: &Report) -> Option<Refused> {
    let [.., before, Event::Stop { outcome, .. }] = report.events.as_slice() else {
        return None;
    };
    if *outcome != Outcome::BudgetExhausted {
        return None;
    }
    let p = &report.policy;
    let block = report
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Blocked { until, .. } => Some(until.as_secs_f64()),
            _ => None,
        })
        .fold(0.0, f64::max);
    match before {
        Event::Receipt {
            at, attempt, delay, ..
        } => {
            let (asked, server) = match delay {
                Some(delay) => (delay.as_secs_f64(), true),
                None => (p.fallback_wait(*attempt).as_secs_f64(), false),
            };
            let own = at.as_secs_f64() + asked.max(p.min_wait.as_secs_f64());
            let cause = match (own >= block, server) {
                (false, _) => Cause::Block(block),
                (true, true) => Cause::Asked(asked),
                (true, false) => Cause::Fallback(asked),
            };
            Some(Refused {
                start: own.max(block),
                cause,
            })
        }
        Event::Blocked { until, .. } => Some(Refused {
            start: until.as_secs_f64(),
            cause: Cause::Block(until.as_secs_f64()),
        }),
        Event::Timer { at, .. } => Some(Refused {
            start: at.as_secs_f64(),
            cause: Cause::Late,
        }),
        _ => None,
    }
}

/// The refused wait's label on the timeline.
fn refused_label(r: &Refused, report: &Report) -> String {
    let budget = report.policy.budget.as_secs_f64();
    let cap_end = secs(r.start + report.policy.attempt_cap.as_secs_f64());
    let start = if r.start > budget {
        format!("next start would be {} s", amount(r.start))
    } else {
        format!("next start {} s, its cap to {cap_end} s", secs(r.start))
    };
    match r.cause {
        Cause::Asked(delay) => format!("asked {} s: {start}", amount(delay)),
        Cause::Fallback(delay) => format!("fallback {} s: {start}", amount(delay)),
        Cause::Block(until) => format!("site blocked until {} s: {start}", secs(until)),
        Cause::Late => format!(
            "woke at {} s: its cap would run to {cap_end} s",
            secs(r.start)
        ),
    }
}

/// The stop's label on the timeline.
fn stop_label(report: &Report) -> Option<String> {
    report.events.iter().rev().find_map(|e| match e {
        Event::Stop { at, outcome, .. } => {
            Some(format!("{} (at {} s)", outcome_words(*outcome), d(*at)))
        }
        _ => None,
    })
}

fn observed_receipt(status: u16, retry_after: &RetryAfter, delay: Option<Duration>) -> String {
    if (200..300).contains(&status) {
        return format!("{status}; list returned");
    }
    let raw = retry_after.raw().unwrap_or_default();
    let header = match retry_after {
        RetryAfter::Missing => "no Retry-After".to_owned(),
        RetryAfter::Seconds { .. } => {
            format!("delay {}", amount(delay.unwrap_or_default().as_secs_f64()))
        }
        RetryAfter::Date { .. } => format!("date {raw}"),
        RetryAfter::Invalid { .. } => format!("invalid Retry-After \"{raw}\""),
    };
    format!("{status}; {header}")
}

fn wait_decision(plan: &retry_budget_model::action::PlannedWait, cap: Duration) -> String {
    let (wait, delay) = (plan.wait.as_secs_f64(), plan.delay.as_secs_f64());
    let raised = if wait > delay {
        format!(", raised to {} s", secs(wait))
    } else {
        String::new()
    };
    let mut reason = match plan.source {
        WaitSource::ServerSeconds if raised.is_empty() => format!("wait {} s as asked", secs(wait)),
        WaitSource::ServerSeconds => format!("delay {}{raised}", amount(delay)),
        WaitSource::ServerDate => format!("date minus receipt = {}{raised}", amount(delay)),
        WaitSource::FallbackMissing | WaitSource::FallbackInvalid => {
            format!("fallback wait {} s", secs(wait))
        }
        WaitSource::OriginBlock => {
            format!("the site is blocked until {}", d(plan.until - plan.jitter))
        }
    };
    if !plan.jitter.is_zero() {
        reason.push_str(&format!(", + {} s jitter", d(plan.jitter)));
    }
    let mut decision = format!(
        "{reason}; next start {}; full cap fits by {}",
        d(plan.until),
        secs(plan.until.as_secs_f64() + cap.as_secs_f64())
    );
    decision[..1].make_ascii_uppercase();
    decision
}

fn stop_decision(report: &Report, at: Duration, outcome: Outcome) -> String {
    let stop = format!("Stop at {}", d(at));
    let p = &report.policy;
    let last_status = report.last_response.as_ref().map(|r| r.status.to_string());
    match outcome {
        Outcome::Success => format!("Finish at {} with the received list", d(at)),
        Outcome::BudgetExhausted => match refused(report) {
            Some(r) if r.start > p.budget.as_secs_f64() => format!(
                "{stop}: next start would be {}, past the {} s budget; no shortened wait, no further attempt",
                amount(r.start),
                d(p.budget)
            ),
            Some(r) => format!(
                "{stop}: next start {} needs its cap through {}, past {}; no further attempt",
                secs(r.start),
                secs(r.start + p.attempt_cap.as_secs_f64()),
                d(p.budget)
            ),
            None => format!("{stop}: the budget cannot fit another request"),
        },
        Outcome::AttemptsExhausted => format!(
            "{stop}: all {} attempts used; no further request",
            p.max_attempts
        ),
        Outcome::UserLeft => format!("{stop}: you left; nothing more is sent"),
        Outcome::ClockUntrusted => {
            format!("{stop}: no trusted clock to read the date, and it is never read as zero")
        }
        Outcome::NotRetryable => format!(
            "{stop}: {} is not retried",
            last_status.unwrap_or_else(|| "this status".into())
        ),
        Outcome::TransportError => format!("{stop}: the request failed; no retry"),
    }
}

/// The rows being built: every row ends when the next event says how, and the decision
/// taken at its end goes in its last cell.
#[derive(Default)]
struct Table {
    rows: Vec<[String; 4]>,
    /// The attempt in flight: its number and start.
    in_flight: Option<(u32, Duration)>,
    /// The wait in progress: its row and start.
    waiting: Option<(usize, Duration)>,
    /// When the last timer fired.
    timer_at: Option<Duration>,
}

impl Table {
    fn row(&mut self, step: String, elapsed: String, observed: String) {
        if let Some(last) = self.rows.last_mut() {
            if last[0] == "Blocked" && last[3].is_empty() {
                last[3] = "No request starts before then".into();
            }
        }
        self.rows.push([step, elapsed, observed, String::new()]);
    }

    fn decide(&mut self, decision: String, at: Duration) {
        match self.rows.last_mut() {
            Some(last) if last[3].is_empty() => last[3] = decision,
            _ => self
                .rows
                .push(["Stop".into(), d(at), String::new(), decision]),
        }
    }

    fn end_wait(&mut self, at: Duration) -> Option<usize> {
        let (row, from) = self.waiting.take()?;
        self.rows[row][1] = format!("{}–{}", d(from), d(at));
        Some(row)
    }

    fn attempt(&mut self, attempt: u32, at: Duration, observed: String) {
        let from = self.in_flight.take().map_or(at, |(_, from)| from);
        self.row(
            format!("Attempt {attempt}"),
            format!("{}–{}", d(from), d(at)),
            observed,
        );
    }
}

/// The step table of a report, as the page must show it.
fn step_rows(report: &Report) -> Vec<[String; 4]> {
    let cap = report.policy.attempt_cap;
    let mut t = Table::default();
    for event in &report.events {
        match event {
            Event::Start { at, attempt, .. } => {
                t.end_wait(*at);
                t.in_flight = Some((*attempt, *at));
            }
            Event::Receipt {
                at,
                attempt,
                status,
                retry_after,
                delay,
            } => t.attempt(
                *attempt,
                *at,
                observed_receipt(*status, retry_after, *delay),
            ),
            Event::Failure { at, attempt, error } => {
                let observed = match error.as_str() {
                    "timed_out" => "no response: the cap ran out".to_owned(),
                    word => format!("no response: {word} error"),
                };
                t.attempt(*attempt, *at, observed);
            }
            Event::Wait { at, plan, .. } => {
                let moved = t.waiting.is_some() && t.rows.last().is_some_and(|r| r[0] == "Blocked");
                if moved {
                    let (row, from) = t.waiting.expect("a wait in progress");
                    t.rows[row][2] = format!("{} s", secs((plan.until - from).as_secs_f64()));
                    t.rows.last_mut().expect("the block's row")[3] = wait_decision(plan, cap);
                } else {
                    t.decide(wait_decision(plan, cap), *at);
                    t.row(
                        "Wait".into(),
                        String::new(),
                        format!("{} s", d(plan.until - *at)),
                    );
                    t.rows.last_mut().expect("the wait's row")[3] = "No request in flight".into();
                    t.waiting = Some((t.rows.len() - 1, *at));
                }
            }
            Event::Timer { at, .. } => t.timer_at = Some(*at),
            Event::Blocked { at, until } => t.row(
                "Blocked".into(),
                d(*at),
                format!("the site is blocked until {}", d(*until)),
            ),
            Event::Left { at } => match t.in_flight.take() {
                Some((attempt, from)) => t.row(
                    format!("Attempt {attempt}"),
                    format!("{}–{}", d(from), d(*at)),
                    "you left; the response is discarded".into(),
                ),
                None => {
                    if let Some(row) = t.end_wait(*at) {
                        t.rows[row][2] =
                            format!("{} planned; you left at {}", t.rows[row][2], d(*at));
                        t.rows[row][3].clear();
                    }
                }
            },
            Event::Stop { at, outcome, .. } => {
                if let Some(row) = t.end_wait(*at) {
                    if t.timer_at == Some(*at) {
                        t.rows[row][2] =
                            format!("{} planned; the timer woke at {}", t.rows[row][2], d(*at));
                    }
                    if row == t.rows.len() - 1 {
                        t.rows[row][3].clear();
                    }
                }
                t.decide(stop_decision(report, *at, *outcome), *at);
            }
        }
    }
    t.rows
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
            || (open && c == 'e' && chars.peek() == Some(&'+'))
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

fn compare_rows(
    what: &str,
    got: &[Vec<String>],
    want: &[[String; 4]],
    tolerance: f64,
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
        let same = g.len() == 4
            && g.iter().zip(w).all(|(g, w)| {
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
    let want_stops = format!(
        "{} {}",
        stop_label(model).unwrap_or_default(),
        stop_label(live).unwrap_or_default()
    );
    let stops = labels_of(timeline, "stop-label");
    if !close(&stops, &want_stops, LIVE_TOLERANCE_S) {
        failures.push(format!("stop labels {stops:?}, expected {want_stops:?}"));
    }
    if refused(model).is_some() != case.refused {
        failures.push(format!(
            "the model refuses a wait: {}, expected {}",
            !case.refused, case.refused
        ));
    }
    // The tracks (model, then live) whose budget refused a wait.
    let refusing: Vec<&Report> = [model, live]
        .into_iter()
        .filter(|r| refused(r).is_some())
        .collect();
    let want: Vec<String> = refusing
        .iter()
        .filter_map(|r| refused(r).map(|x| refused_label(&x, r)))
        .collect();
    let want = want.join(" ");
    let got = labels_of(timeline, "refused-label");
    if !close(&got, &want, LIVE_TOLERANCE_S) {
        failures.push(format!("refused labels {got:?}, expected {want:?}"));
    }
    let deadline = timeline["deadline"].get(0).map_or(f64::NAN, |b| f(b, "x0"));
    let past = timeline["past"].as_array().cloned().unwrap_or_default();
    if past.len() != refusing.len() {
        failures.push(format!(
            "{} refused parts past the deadline, expected {}",
            past.len(),
            refusing.len()
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

/// Sets the viewport's width to `width` (the window is sized until `innerWidth` says so).
async fn viewport(client: &Client, width: u32, height: u32) -> Result<(), String> {
    let mut outer = width;
    for _ in 0..3 {
        client
            .set_window_size(outer, height)
            .await
            .map_err(|e| format!("set_window_size: {e}"))?;
        let inner = js(client, "return window.innerWidth")
            .await
            .as_u64()
            .unwrap_or(0) as u32;
        if inner == width {
            return Ok(());
        }
        outer = (outer + width).saturating_sub(inner);
    }
    let inner = js(client, "return window.innerWidth").await;
    Err(format!(
        "the viewport could not be made {width} px wide (innerWidth {inner})"
    ))
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
    let widths = js(
        client,
        "return [document.scrollingElement.scrollWidth, window.innerWidth]",
    )
    .await;
    let (scroll, inner) = (
        widths[0].as_f64().unwrap_or(f64::INFINITY),
        widths[1].as_f64().unwrap_or(0.0),
    );
    if scroll > inner {
        failures.push(format!("at {NARROW} px the page is {scroll} px wide"));
    }
    let drawn = timeline(client).await;
    failures.extend(
        check_timeline(case, &drawn, model, live)
            .into_iter()
            .map(|f| format!("at {NARROW} px: {f}")),
    );
    screenshot(client, browser, &format!("palette-{}-360px", case.name)).await;
    failures
}

async fn check_case(client: &Client, browser: Browser, base: &str, case: &Case) -> Vec<String> {
    let model = simulate(&fixture(case.model)).expect("the model runs it");
    let mut scripted = fixture(case.model);
    scripted.name = case.name.into();
    let live = simulate(&(case.live)(scripted)).expect("the model runs the live form");
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
    failures.extend(compare_rows(
        "model table",
        &model_rows,
        &step_rows(&model),
        0.0,
    ));
    let live_rows = table(client, "steps-live").await;
    failures.extend(compare_rows(
        "live table",
        &live_rows,
        &step_rows(&live),
        LIVE_TOLERANCE_S,
    ));
    let drawn = timeline(client).await;
    failures.extend(check_timeline(case, &drawn, &model, &live));
    screenshot(client, browser, &format!("palette-{}", case.name)).await;
    failures.extend(check_narrow(client, browser, case, &model, &live).await);
    failures
}

/// Every fixture scenario's model table, as the page's own `stepRows` builds it from the
/// page's `simulate`, against the rules above: the rules and the page agree beyond the cases
/// run live.
async fn check_every_model_table(client: &Client, base: &str) -> Vec<String> {
    open_page(client, base, "schedule-a").await;
    let script = "const done = arguments[arguments.length - 1];
        // In Firefox a script's import() may get modules of its own: initialise the wasm.
        Promise.all([import('/steps.js'), import('/pkg-full/retry_budget.js'),
                     fetch('/scenarios').then((r) => r.json())])
          .then((m) => m[1].default().then(() => m))
          // Indexed, not destructured: the elements must be read in the page's own terms.
          .then((m) => done(m[2].scenarios.map((s) =>
            [s.name, m[0].stepRows(m[1].simulate(s).events, m[0].policyOf(s))])))
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
        let Some((_, rows)) = tables.iter().find(|(name, _)| *name == scenario.name) else {
            failures.push(format!("{} is not in the page's listing", scenario.name));
            continue;
        };
        let report = simulate(&scenario).expect("the model runs it");
        failures.extend(compare_rows(&scenario.name, rows, &step_rows(&report), 0.0));
        compared += 1;
    }
    println!("{compared} model tables compared with the rules");
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

#[cfg(test)]
mod rules {
    use super::*;

    #[test]
    fn schedule_a_reads_like_the_source_document() {
        let rows = step_rows(&simulate(&fixture("schedule-a")).expect("runs"));
        assert_eq!(
            rows[0],
            [
                "Attempt 1",
                "0–2",
                "429; delay 3",
                "Wait 3 s as asked; next start 5; full cap fits by 9"
            ]
            .map(String::from)
        );
        assert_eq!(
            rows[1],
            ["Wait", "2–5", "3 s", "No request in flight"].map(String::from)
        );
        assert_eq!(rows[4][3], "Finish at 14 with the received list");
    }

    #[test]
    fn a_refused_wait_names_the_start_it_would_have_had() {
        let report = simulate(&fixture("wait-exceeds-budget")).expect("runs");
        let r = refused(&report).expect("a refusal");
        assert_eq!(
            refused_label(&r, &report),
            "asked 30 s: next start would be 32 s"
        );
    }

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
        assert!(close(
            "asked 1.84e+19 s",
            &format!("asked {} s", amount(1.8446744073709552e19)),
            0.4
        ));
    }
}
