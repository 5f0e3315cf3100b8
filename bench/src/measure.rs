//! The browser measurements: each opens a page of `bench/pages/` and reads what it left in
//! `window.benchResult`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use fantoccini::wd::TimeoutConfiguration;
use harness::{live_form, Session};
use retry_budget_model::scenario::{parse_file, Scenario};
use retry_budget_model::simulate::simulate as model_run;
use serde_json::{json, Map, Value};

use crate::stats::{round, summarize, summary_json};

fn numbers(value: Option<&Value>) -> Vec<f64> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

/// Summary of a sample plus its first value (the session's first, cold, page load).
fn with_first(values: &[f64]) -> Value {
    let mut summary = summary_json(values);
    if let (Value::Object(map), Some(first)) = (&mut summary, values.first()) {
        map.insert("first".into(), json!(round(*first)));
    }
    summary
}

/// What the start-up page reports of one load, by the report's key.
const STARTUP_KEYS: [&str; 6] = [
    "init_ms",
    "ready_ms",
    "fetch_ms",
    "compile_ms",
    "instantiate_ms",
    "compile_instantiate_ms",
];

/// One build's start-up figures, as they are collected.
#[derive(Default)]
struct Startup {
    series: BTreeMap<&'static str, Vec<f64>>,
    memory: Option<Value>,
    errors: Vec<String>,
}

impl Startup {
    /// Adds one page load's result.
    fn add(&mut self, result: Result<Value, String>) {
        let v = match result {
            Ok(v) => v,
            Err(e) => {
                self.errors.push(e);
                return;
            }
        };
        for key in STARTUP_KEYS {
            if let Some(x) = v.get(key).and_then(Value::as_f64) {
                self.series.entry(key).or_default().push(x);
            }
        }
        if self.memory.is_none() {
            self.memory = v.get("wasm_memory_bytes").cloned();
        }
    }

    /// The figures, as the report holds them.
    fn to_json(&self, loads: usize) -> Value {
        let mut out = Map::new();
        out.insert("loads_per_mode".into(), json!(loads));
        for (key, values) in &self.series {
            out.insert((*key).into(), with_first(values));
        }
        out.insert(
            "wasm_memory_bytes_after_init".into(),
            self.memory.clone().unwrap_or(Value::Null),
        );
        out.insert("errors".into(), json!(self.errors));
        Value::Object(out)
    }
}

/// Start-up of each package of `pkgs` (its path on the server: `pkg`, `pkg-full`): `loads` page
/// loads measuring `init()`, interleaved with `loads` measuring fetch, compile and instantiate
/// one by one, the packages taking turns load by load (in an order that changes every pair of
/// loads). The figures by package.
pub async fn startup(
    session: &Session,
    base: &str,
    pkgs: &[&str],
    loads: usize,
    progress: &dyn Fn(&str),
) -> Map<String, Value> {
    let mut by_pkg: Vec<Startup> = pkgs.iter().map(|_| Startup::default()).collect();
    let total = loads * 2 * pkgs.len();
    for i in 0..loads * 2 {
        let mode = if i % 2 == 0 { "init" } else { "split" };
        for turn in 0..pkgs.len() {
            // Which package goes first changes every pair of loads, so that neither always
            // follows the other in either mode.
            let p = (turn + i / 2) % pkgs.len();
            let (pkg, n) = (pkgs[p], i * pkgs.len() + turn);
            let url = format!("{base}/bench/startup.html?pkg={pkg}&mode={mode}&load={n}");
            by_pkg[p].add(page_result(session, &url, Duration::from_secs(20)).await);
            if (n + 1).is_multiple_of(20) {
                progress(&format!("start-up: {} of {total} page loads", n + 1));
            }
        }
    }
    pkgs.iter()
        .zip(&by_pkg)
        .map(|(pkg, s)| ((*pkg).to_owned(), s.to_json(loads)))
        .collect()
}

/// `simulate()` per call through the JS API, and the floor of one call into the module.
pub async fn simulate(session: &Session, base: &str) -> Result<Value, String> {
    page_result(
        session,
        &format!("{base}/bench/simulate.html"),
        Duration::from_secs(60),
    )
    .await
}

/// Memory, timers and listeners before and after `actions` actions in one page.
pub async fn memory(session: &Session, base: &str, actions: usize) -> Result<Value, String> {
    page_result(
        session,
        &format!("{base}/bench/memory.html?actions={actions}&batch=20"),
        Duration::from_secs(120),
    )
    .await
}

/// What the model says of one scenario: its attempt starts (seconds) and its outcome.
pub struct Model {
    starts_s: Vec<f64>,
    outcome: String,
}

/// The model of every scenario of the fixture file the fidelity page plays, as a live run can
/// play it.
pub fn models(root: &Path) -> Result<BTreeMap<String, Model>, String> {
    let path = root.join("fixtures/B62-16-schedules.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let scenarios = parse_file("B62-16-schedules.json", &text).map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    for scenario in scenarios {
        let scenario = scenario.map_err(|e| e.to_string())?;
        out.insert(scenario.name.clone(), model_of(&scenario)?);
    }
    Ok(out)
}

/// What the model says of `scenario` played live (see [`live_form`]).
fn model_of(scenario: &Scenario) -> Result<Model, String> {
    let report = model_run(&live_form(scenario))
        .map_err(|e| e.to_string())?
        .report;
    Ok(Model {
        starts_s: report
            .attempt_starts_s
            .iter()
            .map(|s| s.0.as_secs_f64())
            .collect(),
        outcome: report
            .outcome
            .map(|o| o.as_str())
            .unwrap_or_default()
            .to_owned(),
    })
}

/// Lateness of one run's attempts, in milliseconds, by three clocks.
#[derive(Default)]
struct Lateness {
    /// The driver's own trace: attempt k's start minus the model's (k >= 2).
    trace: Vec<f64>,
    /// The server's log: attempt k's arrival after attempt 1's, minus the model's start.
    server: Vec<f64>,
    /// The driver's trace: an attempt's start minus the end of the wait before it.
    wake: Vec<f64>,
}

impl Lateness {
    /// Appends `other`'s figures to these.
    fn extend(&mut self, other: &Lateness) {
        self.trace.extend(&other.trace);
        self.server.extend(&other.server);
        self.wake.extend(&other.wake);
    }
}

fn lateness(run: &Value, model: &[f64]) -> Lateness {
    let trace = numbers(run.get("trace_starts_s"));
    let arrivals = numbers(run.get("arrivals_ms"));
    let mut out = Lateness::default();
    for (k, want) in model.iter().enumerate().skip(1) {
        if let Some(t) = trace.get(k) {
            out.trace.push((t - want) * 1000.0);
        }
        if let (Some(first), Some(at)) = (arrivals.first(), arrivals.get(k)) {
            out.server.push((at - first) - want * 1000.0);
        }
    }
    let mut until = None;
    for event in run
        .get("events")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let at = event.get("at_s").and_then(Value::as_f64);
        match event.get("event").and_then(Value::as_str) {
            Some("wait") => until = event.get("until_s").and_then(Value::as_f64),
            Some("start") => {
                if let (Some(due), Some(at)) = (until.take(), at) {
                    out.wake.push((at - due) * 1000.0);
                }
            }
            Some("stop" | "left") => until = None,
            _ => {}
        }
    }
    out
}

fn late_json(values: &[f64]) -> Value {
    let mut summary = summary_json(values);
    if let Value::Object(map) = &mut summary {
        map.insert(
            "early".into(),
            json!(values.iter().filter(|v| **v < 0.0).count()),
        );
    }
    summary
}

/// Timing fidelity: every fixture scenario `rounds` times, live, `concurrency` at a time.
/// Returns the figures and the raw runs.
pub async fn fidelity(
    session: &Session,
    base: &str,
    models: &BTreeMap<String, Model>,
    rounds: usize,
    concurrency: usize,
) -> Result<(Value, Value), String> {
    // About 114 s of scripted time per round, run `concurrency` at a time, plus slack.
    let limit = Duration::from_secs((rounds as u64 * 130) / concurrency.max(1) as u64 + 90);
    let result = page_result(
        session,
        &format!("{base}/bench/fidelity.html?rounds={rounds}&concurrency={concurrency}"),
        limit,
    )
    .await?;
    let runs = result
        .get("runs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut checked = Checked::default();
    for run in &runs {
        checked.add(run, models);
    }
    let figures = json!({
        "rounds": rounds,
        "concurrency": concurrency,
        "runs": runs.len(),
        "wall_s": result.get("wall_s").and_then(Value::as_f64).map(round),
        "trace_late_ms": late_json(&checked.all.trace),
        "server_late_ms": late_json(&checked.all.server),
        "wake_late_ms": late_json(&checked.all.wake),
        "by_scenario": by_scenario_json(checked.by_scenario),
        "outcome_mismatches": checked.outcome_mismatches,
        "attempt_count_mismatches": checked.attempt_mismatches,
        "errors": checked.errors,
    });
    Ok((figures, Value::Array(runs)))
}

/// The live runs compared with the model: their lateness, in all and by scenario, and what
/// did not match.
#[derive(Default)]
struct Checked {
    all: Lateness,
    by_scenario: BTreeMap<String, Lateness>,
    outcome_mismatches: Vec<String>,
    attempt_mismatches: Vec<String>,
    errors: Vec<String>,
}

impl Checked {
    /// Compares one live run with the model of its scenario.
    fn add(&mut self, run: &Value, models: &BTreeMap<String, Model>) {
        let name = run
            .get("scenario")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let label = format!(
            "{name} (round {})",
            run.get("round").unwrap_or(&Value::Null)
        );
        if let Some(error) = run.get("error").and_then(Value::as_str) {
            self.errors.push(format!("{label}: {error}"));
        }
        let Some(model) = models.get(&name) else {
            self.errors
                .push(format!("{label}: no such scenario in the fixture file"));
            return;
        };
        self.compare_counts(&label, run, model);
        let late = lateness(run, &model.starts_s);
        self.all.extend(&late);
        self.by_scenario.entry(name).or_default().extend(&late);
    }

    /// Records where the run's outcome or its number of attempts differs from the model's.
    fn compare_counts(&mut self, label: &str, run: &Value, model: &Model) {
        let outcome = run.get("outcome").and_then(Value::as_str).unwrap_or("none");
        if outcome != model.outcome {
            self.outcome_mismatches
                .push(format!("{label}: live {outcome}, model {}", model.outcome));
        }
        let trace = numbers(run.get("trace_starts_s")).len();
        let arrived = numbers(run.get("arrivals_ms")).len();
        let want = model.starts_s.len();
        if trace != want || arrived != want {
            self.attempt_mismatches.push(format!(
                "{label}: model {want} attempts, driver trace {trace}, server {arrived}"
            ));
        }
    }
}

/// The largest lateness of each scenario that retried, by both clocks.
fn by_scenario_json(by_scenario: BTreeMap<String, Lateness>) -> Map<String, Value> {
    by_scenario
        .into_iter()
        .filter(|(_, l)| !l.trace.is_empty() || !l.server.is_empty())
        .map(|(name, l)| {
            let max = |v: &[f64]| summarize(v).map(|s| round(s.max));
            (
                name,
                json!({
                    "retries": l.trace.len(),
                    "trace_max_ms": max(&l.trace),
                    "server_max_ms": max(&l.server),
                }),
            )
        })
        .collect()
}

/// Opens `url` (a page of `bench/pages/`) from a blank page and waits (up to `limit`) for the
/// result the page hands to `window.benchDone`. One asynchronous script call, not polling:
/// polling the page with WebDriver calls while it runs delays Firefox's timers by tens of
/// milliseconds.
async fn page_result(session: &Session, url: &str, limit: Duration) -> Result<Value, String> {
    session
        .client
        .update_timeouts(TimeoutConfiguration::new(
            Some(limit),
            Some(Duration::from_secs(30)),
            None,
        ))
        .await
        .map_err(|e| format!("timeouts: {e}"))?;
    session
        .client
        .goto("about:blank")
        .await
        .map_err(|e| format!("about:blank: {e}"))?;
    session
        .client
        .goto(url)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let value = session
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             if (window.benchDone) window.benchDone.then(done, (e) => done({ error: String(e) }));
             else done({ error: 'the page did not start (its script failed to load)' });",
            vec![],
        )
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    match value.get("error").and_then(Value::as_str) {
        Some(error) => Err(format!("{url}: {error}")),
        None if value.is_null() => Err(format!("{url}: no result")),
        None => Ok(value),
    }
}
