//! The benchmark behind `scripts/bench`: size, start-up, timing fidelity, decision cost and
//! memory of the wasm package, in one run. Prints a readable table on stdout and writes every
//! figure to `target/bench/report.json`. Figures are reported, never asserted; the command
//! fails only when a part could not be measured at all.
//!
//! Its flags (`browser-bench --help`) say where each part's inputs are; their defaults are
//! where `scripts/bench` puts them.
//!
//! `scripts/bench` builds what this reads: the app build's package in `crate/pkg/` and the full
//! build's in `crate/pkg-full/`, a copy of each build's module that keeps its names (for
//! twiggy), divan's tables (the model's decisions, the fleet's runs), the fleet's runs at scale
//! under `/usr/bin/time -v`, and the fixture server.

mod divan;
mod fleet_scale;
mod measure;
mod render;
mod size;
mod size_report;
mod stats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::{CommandFactory, Parser};
use harness::{Browser, Measure, ServerOptions, Session};
use serde_json::{json, Map, Value};

/// What to measure, and where each part's inputs are. A relative path is read from the root.
#[derive(Debug, Parser)]
#[command(
    name = "browser-bench",
    about = "The benchmark behind scripts/bench: size, start-up, timing fidelity, decision \
             cost, memory and the fleet's speed, in one report"
)]
struct Config {
    /// The repository root
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Where report.json and the raw runs go
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// The fixture server's binary
    #[arg(long, default_value = "target/release/fixture-server")]
    server: PathBuf,
    /// The app build's module with its names kept, for twiggy
    #[arg(long, default_value = "target/bench/named/retry_budget_bg.wasm")]
    named_wasm: PathBuf,
    /// The full build's module with its names kept, for twiggy
    #[arg(long, default_value = "target/bench/named-full/retry_budget_bg.wasm")]
    named_full_wasm: PathBuf,
    /// divan's table of the model's decisions
    #[arg(long, default_value = "target/bench/decisions.txt")]
    divan: PathBuf,
    /// divan's table of the fleet's default burst scenario
    #[arg(long, default_value = "target/bench/fleet.txt")]
    fleet_divan: PathBuf,
    /// What `/usr/bin/time -v fleet ...` wrote for one run of the fleet at scale (the flag
    /// once per run)
    #[arg(long = "fleet-scale", value_name = "PATH")]
    fleet_scale: Vec<PathBuf>,
    /// The browsers, in order
    #[arg(long, value_delimiter = ',', default_value = "chromium,firefox", value_parser = browser)]
    browsers: Vec<Browser>,
    /// Page loads per start-up row
    #[arg(long, default_value_t = 30)]
    loads: usize,
    /// Rounds of every fixture scenario, for timing fidelity
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Scenarios played at once, 1 to 6
    #[arg(long, default_value_t = 6, value_parser = concurrency)]
    concurrency: usize,
    /// Actions in the memory measure
    #[arg(long, default_value_t = 1000)]
    actions: usize,
}

/// A browser by name: chromium or firefox.
fn browser(name: &str) -> Result<Browser, String> {
    Browser::parse(name).ok_or_else(|| format!("unknown browser {name}: chromium or firefox"))
}

/// How many scenarios to play at once: 1 to 6.
fn concurrency(text: &str) -> Result<usize, String> {
    match text.parse() {
        Ok(n @ 1..=6) => Ok(n),
        _ => Err(format!("{text}: a count from 1 to 6")),
    }
}

impl Config {
    /// The flags, every relative path read from the root.
    fn read() -> Config {
        let mut c = Config::parse();
        if c.root.is_relative() {
            let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            c.root = here.join(&c.root);
        }
        let root = c.root.clone();
        let paths = [
            &mut c.out,
            &mut c.server,
            &mut c.named_wasm,
            &mut c.named_full_wasm,
            &mut c.divan,
            &mut c.fleet_divan,
        ];
        for path in paths.into_iter().chain(&mut c.fleet_scale) {
            *path = root.join(&*path);
        }
        c
    }
}

/// Ends the command: a part's inputs could not be read at all.
fn usage(problem: &str) -> ! {
    Config::command()
        .error(clap::error::ErrorKind::Io, problem)
        .exit()
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
    let c = Config::read();
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
    let scale = fleet_scale::section(&c.fleet_scale, &mut errors);
    let parts = browser_parts(&c, &mut errors).await;

    let report = report(&c, started, size, [native, fleet, scale], parts, &errors);
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
    [native, fleet, scale]: [Value; 3],
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
        "fleet_scale": scale,
        "memory": parts.memory,
        "errors": errors,
    })
}
