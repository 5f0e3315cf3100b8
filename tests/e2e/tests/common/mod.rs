//! What every end-to-end test file shares: the fixture server (with its second origin), the
//! WebDriver servers and sessions for headless Chromium and Firefox, the server's log, and a
//! few page helpers.
// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use retry_budget_model::scenario::{parse_file, Scenario};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Browser {
    Chromium,
    Firefox,
}

impl Browser {
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        }
    }
}

/// A child process that is killed when dropped.
pub struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

pub async fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on port {port}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The running fixture server: its main origin (`base`, where the page is opened) and its
/// second origin (`second`, for cross-origin fetches), both without a trailing slash.
pub struct Server {
    _process: Process,
    pub base: String,
    pub second: String,
}

/// Builds (if needed) and starts the fixture server, with a second origin.
pub async fn start_server() -> Server {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "-q", "-p", "fixture-server"])
        .current_dir(root())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build -p fixture-server failed");
    assert!(
        root().join("crate/pkg/retry_budget_bg.wasm").exists(),
        "crate/pkg is missing: run `wasm-pack build crate --release --target web --out-dir pkg --no-pack` first"
    );
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let mut child = Command::new(target.join("debug/fixture-server"))
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--second-port",
            "0",
            "--mount",
            "/e2e=tests/e2e/pages",
            "--root",
        ])
        .arg(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the fixture server starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut urls = Vec::new();
    for _ in 0..2 {
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("the server prints its URLs in time")
            .expect("readable stdout")
            .expect("a line");
        urls.push(
            line.rsplit(' ')
                .next()
                .expect("a URL")
                .trim_end_matches('/')
                .to_owned(),
        );
    }
    let second = urls.pop().expect("the second origin");
    let base = urls.pop().expect("the main origin");
    assert_ne!(base, second);
    Server {
        _process: Process(child),
        base,
        second,
    }
}

/// Starts a WebDriver server for `browser` on a free port.
pub async fn start_driver(browser: Browser) -> (Process, u16) {
    let port = free_port();
    let mut command = match browser {
        Browser::Chromium => {
            let mut c = Command::new("chromedriver");
            c.arg(format!("--port={port}"));
            c
        }
        Browser::Firefox => {
            let mut c = Command::new("geckodriver");
            c.args(["--port", &port.to_string()]);
            c
        }
    };
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{} driver: {e} (run scripts/setup)", browser.name()));
    wait_for_port(port, browser.name()).await;
    (Process(child), port)
}

/// A session. With `measure_memory`, Chromium also reports precise `performance.memory`
/// figures, offers `gc()`, and runs JavaScript without its optimising tiers, so that compiled
/// code appearing as functions warm up is not counted as heap growth.
pub async fn connect(browser: Browser, port: u16, measure_memory: bool) -> Client {
    let mut chromium_args = vec![
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        "--window-size=1200,1400",
        "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding",
    ];
    if measure_memory {
        chromium_args.extend([
            "--enable-precise-memory-info",
            "--js-flags=--expose-gc --no-opt --no-sparkplug --no-maglev",
        ]);
    }
    let caps = match browser {
        Browser::Chromium => json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": chromium_args
            }
        }),
        Browser::Firefox => json!({
            "browserName": "firefox",
            "moz:firefoxOptions": { "args": ["-headless", "-width=1200", "-height=1400"] }
        }),
    };
    let Value::Object(caps) = caps else {
        unreachable!()
    };
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap_or_else(|e| panic!("{} session: {e}", browser.name()))
}

/// A WebDriver server and a session on it; the driver is stopped when this is dropped.
pub struct Session {
    pub client: Client,
    _driver: Process,
}

pub async fn session(browser: Browser) -> Session {
    session_with(browser, false).await
}

/// A session set up for memory figures (see [`connect`]).
pub async fn memory_session(browser: Browser) -> Session {
    session_with(browser, true).await
}

async fn session_with(browser: Browser, measure_memory: bool) -> Session {
    let (driver, port) = start_driver(browser).await;
    let client = connect(browser, port, measure_memory).await;
    Session {
        client,
        _driver: driver,
    }
}

impl Session {
    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}

/// `GET base + path_and_query` from the test, parsed as JSON.
pub async fn get_json(base: &str, path_and_query: &str) -> Value {
    let client = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build(HttpConnector::new());
    let uri: hyper::Uri = format!("{base}{path_and_query}").parse().expect("a URI");
    let request = hyper::Request::get(uri)
        .body(Empty::<Bytes>::new())
        .expect("a request");
    let response = client.request(request).await.expect("the server answers");
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    serde_json::from_slice(&body).expect("JSON")
}

/// The server's log for one run.
pub async fn run_log(base: &str, run: &str) -> Vec<Value> {
    match get_json(base, &format!("/log?run={run}")).await {
        Value::Array(entries) => entries,
        other => panic!("the log is not an array: {other}"),
    }
}

/// The whole log.
pub async fn full_log(base: &str) -> Vec<Value> {
    match get_json(base, "/log").await {
        Value::Array(entries) => entries,
        other => panic!("the log is not an array: {other}"),
    }
}

/// Arrival times (seconds since the server started) of the run's requests, in order.
pub fn arrivals(log: &[Value]) -> Vec<f64> {
    log.iter()
        .filter_map(|e| {
            e.get("arrival_ms")
                .and_then(Value::as_f64)
                .map(|ms| ms / 1000.0)
        })
        .collect()
}

pub async fn js(client: &Client, script: &str) -> Value {
    client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("script {script}: {e}"))
}

pub async fn js_with(client: &Client, script: &str, args: Vec<Value>) -> Value {
    client
        .execute(script, args)
        .await
        .unwrap_or_else(|e| panic!("script {script}: {e}"))
}

pub async fn wait_until(client: &Client, script: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if js(client, script).await == Value::Bool(true) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Opens `url` from a blank page, so that "ready" can only come from the new document, and
/// waits for `document.body.dataset.ready`.
pub async fn open_ready(client: &Client, url: &str) {
    client.goto("about:blank").await.expect("a blank page");
    client.goto(url).await.expect("the page opens");
    assert!(
        wait_until(
            client,
            "return document.body.dataset.ready === 'true'",
            Duration::from_secs(20)
        )
        .await,
        "{url} did not become ready"
    );
}

/// Opens the Palette List with `scenario` selected.
pub async fn open_page(client: &Client, base: &str, scenario: &str) {
    open_ready(client, &format!("{base}/?scenario={scenario}#/palettes")).await;
}

/// Clicks the element with `id`, looked up at the moment of the click (a reference held across
/// a navigation goes stale).
pub async fn click(client: &Client, id: &str) -> Result<(), String> {
    let element = client
        .find(Locator::Id(id))
        .await
        .map_err(|e| format!("#{id}: {e}"))?;
    match element.click().await {
        Ok(()) => Ok(()),
        // Firefox may report the element stale if the document changed under it; click by script.
        Err(_) => client
            .execute(
                "document.getElementById(arguments[0]).click()",
                vec![json!(id)],
            )
            .await
            .map(drop)
            .map_err(|e| format!("#{id}: {e}")),
    }
}

/// Presses Load palettes; returns the new action's run id.
pub async fn start_action(client: &Client) -> String {
    click(client, "load")
        .await
        .expect("the Load button is clicked");
    assert!(
        wait_until(
            client,
            "return !!document.body.dataset.run",
            Duration::from_secs(5)
        )
        .await,
        "no run started"
    );
    js(client, "return document.body.dataset.run")
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The text of the element with `id`, as the user sees it.
pub async fn text_of(client: &Client, id: &str) -> String {
    js_with(
        client,
        "const el = document.getElementById(arguments[0]); return el ? el.innerText : null",
        vec![json!(id)],
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_owned()
}

pub async fn screenshot(client: &Client, browser: Browser, name: &str) {
    let dir = root().join("target/e2e-artifacts").join(browser.name());
    std::fs::create_dir_all(&dir).expect("an artifact folder");
    if let Ok(png) = client.screenshot().await {
        std::fs::write(dir.join(format!("{name}.png")), png).expect("a screenshot file");
    }
}

/// Every scenario of every `fixtures/*.json` file, in file-name order.
pub fn fixture_scenarios() -> Vec<Scenario> {
    let dir = root().join("fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the fixtures folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path).expect("a fixture file");
        for scenario in parse_file(&name, &text).expect("the fixture file parses") {
            all.push(scenario.expect("a valid scenario"));
        }
    }
    all
}

/// The fixture scenario called `name`.
pub fn fixture(name: &str) -> Scenario {
    fixture_scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no fixture scenario {name}"))
}

/// A numeric field of a log entry.
pub fn number(entry: &Value, field: &str) -> f64 {
    entry[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {entry}"))
}

/// The `/palettes` entries of a log (beacons and the like left out).
pub fn palettes_only(log: &[Value]) -> Vec<Value> {
    log.iter()
        .filter(|e| {
            e["uri"]
                .as_str()
                .is_some_and(|u| u.starts_with("/palettes"))
        })
        .cloned()
        .collect()
}
