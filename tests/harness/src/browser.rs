//! The WebDriver servers (chromedriver, geckodriver) and headless sessions of their browsers.

use std::process::Stdio;

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Map, Value};
use tokio::process::Command;

use crate::process::{free_port, wait_for_port, Process};

/// A browser the page is run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Browser {
    /// Chromium, driven by chromedriver.
    Chromium,
    /// Firefox, driven by geckodriver.
    Firefox,
}

impl Browser {
    /// The browser's name in output and file names: `chromium` or `firefox`.
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        }
    }

    /// The browser called `name` (`chromium`, also `chrome`, or `firefox`).
    pub fn parse(name: &str) -> Option<Browser> {
        match name {
            "chromium" | "chrome" => Some(Browser::Chromium),
            "firefox" => Some(Browser::Firefox),
            _ => None,
        }
    }
}

/// What a Chromium session is set up to measure beyond the page itself (Firefox sessions are
/// the same for all three).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Nothing more: the browser as the page's users run it, headless.
    Nothing,
    /// Precise `performance.memory` figures, and `gc()` offered to the page.
    Memory,
    /// As [`Measure::Memory`], and JavaScript run without its optimising tiers, so that compiled
    /// code appearing as functions warm up is not counted as heap growth.
    UnoptimisedMemory,
}

/// Chromium's flags: headless, quiet, one window size, and timers not throttled.
const CHROMIUM_ARGS: [&str; 12] = [
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

fn chromium_args(measure: Measure) -> Vec<&'static str> {
    let mut args = CHROMIUM_ARGS.to_vec();
    match measure {
        Measure::Nothing => {}
        Measure::Memory => args.extend(["--enable-precise-memory-info", "--js-flags=--expose-gc"]),
        Measure::UnoptimisedMemory => args.extend([
            "--enable-precise-memory-info",
            "--js-flags=--expose-gc --no-opt --no-sparkplug --no-maglev",
        ]),
    }
    args
}

/// The WebDriver capabilities of a headless session of `browser` (Chromium at
/// `/usr/bin/chromium`), both with a 1200x1400 window.
pub fn capabilities(browser: Browser, measure: Measure) -> Map<String, Value> {
    let caps = match browser {
        Browser::Chromium => json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": chromium_args(measure)
            }
        }),
        Browser::Firefox => json!({
            "browserName": "firefox",
            "moz:firefoxOptions": { "args": ["-headless", "-width=1200", "-height=1400"] }
        }),
    };
    match caps {
        Value::Object(caps) => caps,
        _ => Map::new(),
    }
}

/// Starts the WebDriver server of `browser` on a free port and waits until it listens;
/// returns it (killed when dropped) and its port.
pub async fn start_driver(browser: Browser) -> Result<(Process, u16), String> {
    let port = free_port()?;
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
        .map_err(|e| format!("{} driver: {e} (run scripts/setup)", browser.name()))?;
    let driver = Process::new(child);
    wait_for_port(port, browser.name()).await?;
    Ok((driver, port))
}

/// A WebDriver server and a session of its browser. [`Session::close`] ends the session; the
/// driver is killed when this is dropped.
pub struct Session {
    /// The session.
    pub client: Client,
    _driver: Process,
}

impl Session {
    /// Starts a WebDriver server for `browser` and a headless session on it, set up for
    /// `measure`.
    pub async fn start(browser: Browser, measure: Measure) -> Result<Session, String> {
        Session::start_with(browser, capabilities(browser, measure)).await
    }

    /// Starts a WebDriver server for `browser` and a session on it with `caps` (for example
    /// [`capabilities`] with more browser arguments).
    pub async fn start_with(browser: Browser, caps: Map<String, Value>) -> Result<Session, String> {
        let (driver, port) = start_driver(browser).await?;
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .map_err(|e| format!("{} session: {e}", browser.name()))?;
        Ok(Session {
            client,
            _driver: driver,
        })
    }

    /// Ends the session (an error ending it is ignored: the driver goes with it).
    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}
