//! What every end-to-end test file shares: the fixture server (with its second origin and the
//! test pages under `/e2e/`), headless Chromium and Firefox sessions, the server's log, and
//! page helpers. Every helper panics when the browser or the server fails it: a test has no
//! better answer.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use harness::{Measure, ServerOptions};
use serde_json::{json, Value};

pub use harness::{
    fixture, fixture_files, fixture_scenarios, live_form, plays_live, root, Browser, Session,
};

/// Defines a suite's two tests, `$chromium` and `$firefox`, each running `$run` (an
/// `async fn(Browser)`) for its browser on a multi-threaded runtime of two workers.
#[macro_export]
macro_rules! browser_tests {
    ($run:ident: $chromium:ident, $firefox:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $chromium() {
            $run($crate::Browser::Chromium).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $firefox() {
            $run($crate::Browser::Firefox).await;
        }
    };
}

/// The running fixture server (stopped when this is dropped): its main origin, where the page
/// is opened, and its second origin, for cross-origin fetches, both without a trailing slash.
pub struct Server {
    /// The main origin.
    pub base: String,
    /// The second origin.
    pub second: String,
    _server: harness::Server,
}

/// Builds (if needed) and starts the fixture server, with a second origin and the test pages
/// (`tests/e2e/pages`) under `/e2e/`. Panics unless `crate/pkg` and `crate/pkg-full` hold the
/// built packages.
pub async fn start_server() -> Server {
    build_server();
    assert!(
        root().join("crate/pkg/retry_budget_bg.wasm").exists()
            && root().join("crate/pkg-full/retry_budget_bg.wasm").exists(),
        "crate/pkg or crate/pkg-full is missing: build both packages first (scripts/test does)"
    );
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let server = harness::start_server(&ServerOptions {
        binary: &target.join("debug/fixture-server"),
        root: &root(),
        second_origin: true,
        mounts: &[("/e2e", "tests/e2e/pages")],
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let base = server.base.clone();
    let second = server.second.clone().expect("the second origin");
    assert_ne!(base, second);
    Server {
        base,
        second,
        _server: server,
    }
}

fn build_server() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "-q", "-p", "fixture-server"])
        .current_dir(root())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build -p fixture-server failed");
}

/// A headless session of `browser`, on a WebDriver server of its own.
pub async fn session(browser: Browser) -> Session {
    Session::start(browser, Measure::Nothing)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A headless session of `browser` whose window may be made as narrow as a phone's (360 px).
/// Firefox keeps its window at least 500 px wide unless its own interface allows less: its
/// session runs on a profile of its own under `target/e2e-profiles/` (named after `name`, the
/// browser and this process) whose `userChrome.css` lifts that minimum; the returned
/// [`Profile`] removes it when dropped. Chromium needs nothing of the kind.
pub async fn narrow_session(browser: Browser, name: &str) -> (Session, Profile) {
    let profile = Profile(root().join(format!(
        "target/e2e-profiles/{name}-{}-{}",
        browser.name(),
        std::process::id()
    )));
    let mut caps = harness::capabilities(browser, Measure::Nothing);
    if browser == Browser::Firefox {
        let dir = &profile.0;
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir.join("chrome")).expect("a profile folder");
        std::fs::write(
            dir.join("user.js"),
            "user_pref(\"toolkit.legacyUserProfileCustomizations.stylesheets\", true);\n",
        )
        .expect("the profile's user.js");
        std::fs::write(
            dir.join("chrome/userChrome.css"),
            ":root { min-width: 0 !important; }\n",
        )
        .expect("the profile's userChrome.css");
        let args = &mut caps["moz:firefoxOptions"]["args"];
        if let Value::Array(args) = args {
            args.extend([json!("-profile"), json!(dir.to_string_lossy())]);
        }
    }
    let session = Session::start_with(browser, caps)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (session, profile)
}

/// A browser profile folder of a narrow session, removed when dropped.
pub struct Profile(std::path::PathBuf);

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A session set up for memory figures: in Chromium, precise `performance.memory`, `gc()`,
/// and no optimising JavaScript tiers (see [`Measure::UnoptimisedMemory`]).
pub async fn memory_session(browser: Browser) -> Session {
    Session::start(browser, Measure::UnoptimisedMemory)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `GET base + path_and_query` from the test, parsed as JSON.
pub async fn get_json(base: &str, path_and_query: &str) -> Value {
    harness::get_json(base, path_and_query)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The server's log for one run.
pub async fn run_log(base: &str, run: &str) -> Vec<Value> {
    log_at(base, &format!("/log?run={run}")).await
}

/// The whole log.
pub async fn full_log(base: &str) -> Vec<Value> {
    log_at(base, "/log").await
}

/// The server's log for one run once `done` holds for it (read every 50 ms), or `None` after
/// `limit`: for waiting on an event the server records rather than on a guess of its time.
pub async fn run_log_once(
    base: &str,
    run: &str,
    done: impl Fn(&[Value]) -> bool,
    limit: Duration,
) -> Option<Vec<Value>> {
    let deadline = Instant::now() + limit;
    loop {
        let log = run_log(base, run).await;
        if done(&log) {
            return Some(log);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn log_at(base: &str, path_and_query: &str) -> Vec<Value> {
    match get_json(base, path_and_query).await {
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

/// What `script` returns in the page.
pub async fn js(client: &Client, script: &str) -> Value {
    js_with(client, script, vec![]).await
}

/// What `script` returns in the page, called with `args` as its `arguments`.
pub async fn js_with(client: &Client, script: &str, args: Vec<Value>) -> Value {
    client
        .execute(script, args)
        .await
        .unwrap_or_else(|e| panic!("script {script}: {e}"))
}

/// Whether `script` returned `true` within `limit` (asked every 50 ms).
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

/// Waits for the page's `document.body.dataset.ready`; `what` names the page if it never is.
async fn wait_ready(client: &Client, what: &str) {
    assert!(
        wait_until(
            client,
            "return document.body.dataset.ready === 'true'",
            Duration::from_secs(20)
        )
        .await,
        "{what} did not become ready"
    );
}

/// Opens `url` from a blank page, so that "ready" can only come from the new document, and
/// waits for `document.body.dataset.ready`.
pub async fn open_ready(client: &Client, url: &str) {
    client.goto("about:blank").await.expect("a blank page");
    client.goto(url).await.expect("the page opens");
    wait_ready(client, url).await;
}

/// Reloads the page (as `location.reload()` does) and waits for the new document to be ready.
pub async fn reload(client: &Client) {
    client.refresh().await.expect("the page reloads");
    wait_ready(client, "the reloaded page").await;
}

/// Sets the viewport's width to `width` (the window is sized until `innerWidth` says so).
pub async fn viewport(client: &Client, width: u32, height: u32) -> Result<(), String> {
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
            Duration::from_secs(20)
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

/// Saves a screenshot of the page as `target/e2e-artifacts/<browser>/<name>.png`, if the
/// browser takes one.
pub async fn screenshot(client: &Client, browser: Browser, name: &str) {
    let dir = root().join("target/e2e-artifacts").join(browser.name());
    std::fs::create_dir_all(&dir).expect("an artifact folder");
    if let Ok(png) = client.screenshot().await {
        std::fs::write(dir.join(format!("{name}.png")), png).expect("a screenshot file");
    }
}
