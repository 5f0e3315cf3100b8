//! The benchmark behind `scripts/bench`: size, start-up, timing fidelity, decision cost and
//! memory of the wasm package, in one run. Prints a readable table on stdout and writes every
//! figure to `target/bench/report.json`. Figures are reported, never asserted; the command
//! fails only when a part could not be measured at all.
//!
//! ```text
//! browser-bench [--root DIR] [--out DIR] [--server PATH] [--named-wasm PATH]
//!               [--named-full-wasm PATH] [--divan PATH] [--fleet-divan PATH]
//!               [--browsers chromium,firefox] [--loads N] [--rounds N] [--concurrency N]
//!               [--actions N]
//! ```
//!
//! `scripts/bench` builds what this reads: the app build's package in `crate/pkg/` and the full
//! build's in `crate/pkg-full/`, a copy of each build's module that keeps its names (for
//! twiggy), divan's tables (the model's decisions, the fleet's runs), and the fixture server.

mod divan;
mod measure;
mod render;
mod size;
mod size_report;
mod stats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use harness::{Browser, Measure, ServerOptions, Session};
use serde_json::{json, Map, Value};

struct Config {
    root: PathBuf,
    out: PathBuf,
    server: PathBuf,
    named_wasm: PathBuf,
    named_full_wasm: PathBuf,
    divan: PathBuf,
    fleet_divan: PathBuf,
    browsers: Vec<Browser>,
    loads: usize,
    rounds: usize,
    concurrency: usize,
    actions: usize,
}

fn usage(problem: &str) -> ! {
    eprintln!("browser-bench: {problem}");
    eprintln!(
        "usage: browser-bench [--root DIR] [--out DIR] [--server PATH] [--named-wasm PATH] \
         [--named-full-wasm PATH] [--divan PATH] [--fleet-divan PATH] [--browsers chromium,firefox] [--loads N] [--rounds N] \
         [--concurrency N] [--actions N]"
    );
    std::process::exit(2)
}

fn config() -> Config {
    let root = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut c = Config {
        out: root.join("target/bench"),
        server: root.join("target/release/fixture-server"),
        named_wasm: root.join("target/bench/named/retry_budget_bg.wasm"),
        named_full_wasm: root.join("target/bench/named-full/retry_budget_bg.wasm"),
        divan: root.join("target/bench/decisions.txt"),
        fleet_divan: root.join("target/bench/fleet.txt"),
        root,
        browsers: vec![Browser::Chromium, Browser::Firefox],
        loads: 30,
        rounds: 5,
        concurrency: 6,
        actions: 1000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let Some(value) = args.next() else {
            usage(&format!("{flag} needs a value"))
        };
        let count = || -> usize {
            value
                .parse()
                .unwrap_or_else(|_| usage(&format!("{flag}: not a count: {value}")))
        };
        match flag.as_str() {
            "--root" => c.root = PathBuf::from(&value),
            "--out" => c.out = PathBuf::from(&value),
            "--server" => c.server = PathBuf::from(&value),
            "--named-wasm" => c.named_wasm = PathBuf::from(&value),
            "--named-full-wasm" => c.named_full_wasm = PathBuf::from(&value),
            "--divan" => c.divan = PathBuf::from(&value),
            "--fleet-divan" => c.fleet_divan = PathBuf::from(&value),
            "--loads" => c.loads = count(),
            "--rounds" => c.rounds = count(),
            "--concurrency" => c.concurrency = count().clamp(1, 6),
            "--actions" => c.actions = count(),
            "--browsers" => {
                c.browsers = value
                    .split(',')
                    .filter(|b| !b.is_empty())
                    .map(|b| {
                        Browser::parse(b).unwrap_or_else(|| usage(&format!("unknown browser {b}")))
                    })
                    .collect();
            }
            other => usage(&format!("unknown argument {other}")),
        }
    }
    c
}

fn progress(message: &str) {
    eprintln!("bench: {message}");
}

/// Records a part that could not be measured.
fn failed(errors: &mut Vec<String>, part: &str, error: String) -> Value {
    progress(&format!("{part}: {error}"));
    errors.push(format!("{part}: {error}"));
    json!({ "error": error })
}

/// The rows of a divan table that `scripts/bench` saved at `path`, for `part` of the report.
fn divan_rows(path: &std::path::Path, part: &str, errors: &mut Vec<String>) -> Value {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let rows = divan::parse(&text);
            if rows.is_empty() {
                failed(
                    errors,
                    part,
                    format!("no benchmark rows in {}", path.display()),
                )
            } else {
                Value::Array(rows.iter().map(divan::Row::to_json).collect())
            }
        }
        Err(e) => failed(errors, part, format!("{}: {e}", path.display())),
    }
}

/// What was measured in each browser, each part by browser name.
#[derive(Default)]
struct BrowserParts {
    startup: Map<String, Value>,
    fidelity: Map<String, Value>,
    in_browser: Map<String, Value>,
    memory: Map<String, Value>,
}

/// The model of every scenario the fidelity page plays, or why there is none.
type Models = Result<BTreeMap<String, measure::Model>, String>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let c = config();
    let started = Instant::now();
    let mut errors = Vec::new();
    if let Err(e) = std::fs::create_dir_all(&c.out) {
        usage(&format!("{}: {e}", c.out.display()));
    }

    progress("size");
    let named = size_report::Named {
        app: &c.named_wasm,
        full: &c.named_full_wasm,
    };
    let size = size_report::section(&c.root, &named, &mut errors);
    let native = divan_rows(&c.divan, "decision cost", &mut errors);
    let fleet = divan_rows(&c.fleet_divan, "fleet speed", &mut errors);
    let parts = browser_parts(&c, &mut errors).await;

    let report = report(&c, started, size, [native, fleet], parts, &errors);
    let path = c.out.join("report.json");
    write(
        &path,
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
    );
    print!("{}", render::render(&report));
    println!("\nAll figures: {}", path.display());
    if !errors.is_empty() {
        eprintln!(
            "bench: {} part(s) could not be measured: see \"errors\" in the report",
            errors.len()
        );
        std::process::exit(1);
    }
}

/// Writes `text` to `path`; a failure is reported as progress, the figures being printed too.
fn write(path: &Path, text: String) {
    if let Err(e) = std::fs::write(path, text) {
        progress(&format!("{}: {e}", path.display()));
    }
}

/// Every part measured in a browser, in each browser, against one fixture server.
async fn browser_parts(c: &Config, errors: &mut Vec<String>) -> BrowserParts {
    let mut parts = BrowserParts::default();
    let models = measure::models(&c.root);
    let server = harness::start_server(&ServerOptions {
        binary: &c.server,
        root: &c.root,
        second_origin: false,
        mounts: &[("/bench", "bench/pages")],
    })
    .await;
    let server = match server {
        Ok(server) => server,
        Err(e) => {
            failed(errors, "fixture server", e);
            return parts;
        }
    };
    // One browser at a time: two cores, and timers are what this measures.
    for &browser in &c.browsers {
        measure_browser(c, browser, &server.base, &models, &mut parts, errors).await;
    }
    parts
}

/// Start-up, decision cost, memory and timing fidelity in one session of `browser`.
async fn measure_browser(
    c: &Config,
    browser: Browser,
    base: &str,
    models: &Models,
    parts: &mut BrowserParts,
    errors: &mut Vec<String>,
) {
    let name = browser.name();
    progress(&format!("{name}: starting a session"));
    let session = match Session::start(browser, Measure::Memory).await {
        Ok(s) => s,
        Err(e) => {
            let v = failed(errors, name, e);
            for part in [
                &mut parts.startup,
                &mut parts.fidelity,
                &mut parts.in_browser,
                &mut parts.memory,
            ] {
                part.insert(name.into(), v.clone());
            }
            return;
        }
    };
    let v = startup(c, &session, base, name, errors).await;
    parts.startup.insert(name.into(), v);

    progress(&format!("{name}: simulate() through the JS API"));
    let v = measure::simulate(&session, base)
        .await
        .unwrap_or_else(|e| failed(errors, &format!("{name} simulate"), e));
    parts.in_browser.insert(name.into(), v);

    progress(&format!("{name}: memory after {} actions", c.actions));
    let v = measure::memory(&session, base, c.actions)
        .await
        .unwrap_or_else(|e| failed(errors, &format!("{name} memory"), e));
    parts.memory.insert(name.into(), v);

    let v = fidelity(c, &session, base, name, models, errors).await;
    parts.fidelity.insert(name.into(), v);
    session.close().await;
}

/// The start-up figures of every build, by build; failed page loads are recorded as one error
/// per build.
async fn startup(
    c: &Config,
    session: &Session,
    base: &str,
    name: &str,
    errors: &mut Vec<String>,
) -> Value {
    let builds = &size_report::BUILDS;
    progress(&format!(
        "{name}: start-up, {} page loads",
        c.loads * 2 * builds.len()
    ));
    let say = |m: &str| progress(&format!("{name}: {m}"));
    let pkgs: Vec<&str> = builds.iter().map(|b| b.pkg).collect();
    let mut by_pkg = measure::startup(session, base, &pkgs, c.loads, &say).await;
    let mut out = Map::new();
    for build in builds {
        let s = by_pkg.remove(build.pkg).unwrap_or(Value::Null);
        if let Some(e) = s["errors"].as_array().filter(|e| !e.is_empty()) {
            errors.push(format!(
                "{name} start-up ({} build): {} loads failed: {}",
                build.name,
                e.len(),
                e[0]
            ));
        }
        out.insert(build.name.into(), s);
    }
    Value::Object(out)
}

/// The timing fidelity figures; the raw runs go to `fidelity-runs-<browser>.json`.
async fn fidelity(
    c: &Config,
    session: &Session,
    base: &str,
    name: &str,
    models: &Models,
    errors: &mut Vec<String>,
) -> Value {
    progress(&format!(
        "{name}: timing fidelity, {} rounds of every scenario, {} at a time (about {} s)",
        c.rounds,
        c.concurrency,
        c.rounds * 115 / c.concurrency.max(1) + 20
    ));
    let models = match models {
        Ok(m) => m,
        Err(e) => return failed(errors, &format!("{name} fidelity"), e.clone()),
    };
    match measure::fidelity(session, base, models, c.rounds, c.concurrency).await {
        Ok((figures, runs)) => {
            let path = c.out.join(format!("fidelity-runs-{name}.json"));
            write(
                &path,
                serde_json::to_string_pretty(&runs).unwrap_or_default(),
            );
            figures
        }
        Err(e) => failed(errors, &format!("{name} fidelity"), e),
    }
}

/// Everything `report.json` holds.
fn report(
    c: &Config,
    started: Instant,
    size: Value,
    [native, fleet]: [Value; 2],
    parts: BrowserParts,
    errors: &[String],
) -> Value {
    let generated = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    json!({
        "generated_unix_s": generated,
        "runtime_s": stats::round(started.elapsed().as_secs_f64()),
        "machine": {
            "cpus": std::thread::available_parallelism().map(usize::from).unwrap_or(0),
        },
        "config": {
            "browsers": c.browsers.iter().map(|b| b.name()).collect::<Vec<_>>(),
            "startup_loads_per_mode": c.loads,
            "startup_builds": size_report::BUILDS.iter()
                .map(|b| json!({ "build": b.name, "path": format!("/{}/", b.pkg) }))
                .collect::<Vec<_>>(),
            "fidelity_rounds": c.rounds,
            "fidelity_concurrency": c.concurrency,
            "memory_actions": c.actions,
        },
        "size": size,
        "startup": parts.startup,
        "fidelity": parts.fidelity,
        "decision": { "native": native, "browser": parts.in_browser },
        "fleet_speed": fleet,
        "memory": parts.memory,
        "errors": errors,
    })
}
