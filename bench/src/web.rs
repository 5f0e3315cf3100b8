//! The fixture server, the WebDriver servers and the browser sessions (after tests/e2e).

use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fantoccini::wd::TimeoutConfiguration;
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

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

    pub fn parse(name: &str) -> Option<Browser> {
        match name {
            "chromium" | "chrome" => Some(Browser::Chromium),
            "firefox" => Some(Browser::Firefox),
            _ => None,
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

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

async fn wait_for_port(port: u16, what: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() >= deadline {
            return Err(format!("{what} did not listen on port {port}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// Starts the fixture server binary on a free port; returns it and its base URL.
pub async fn start_server(binary: &Path, root: &Path) -> Result<(Process, String), String> {
    let mut child = Command::new(binary)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--mount",
            "/bench=bench/pages",
            "--root",
        ])
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .map_err(|_| "the fixture server printed no URL in 20 s".to_owned())?
        .map_err(|e| format!("the fixture server's stdout: {e}"))?
        .ok_or("the fixture server exited before printing its URL")?;
    let base = line
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_owned();
    Ok((Process(child), base))
}

/// A WebDriver server and a session of its browser; the session is closed by [`Session::close`]
/// and the driver killed when dropped.
pub struct Session {
    pub client: Client,
    _driver: Process,
}

impl Session {
    pub async fn start(browser: Browser) -> Result<Session, String> {
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
        let driver = Process(child);
        wait_for_port(port, browser.name()).await?;
        let caps = match browser {
            // tests/e2e's flags, plus exact JS heap figures and gc() for the memory page.
            Browser::Chromium => json!({
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": "/usr/bin/chromium",
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             "--disable-background-networking", "--disable-component-update", "--disable-sync",
                             "--no-first-run", "--disable-quic", "--window-size=1200,1400",
                             "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                             "--enable-precise-memory-info", "--js-flags=--expose-gc"]
                }
            }),
            Browser::Firefox => json!({
                "browserName": "firefox",
                "moz:firefoxOptions": { "args": ["-headless", "-width=1200", "-height=1400"] }
            }),
        };
        let Value::Object(caps) = caps else {
            return Err("capabilities are not an object".into());
        };
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

    pub async fn close(self) {
        let _ = self.client.close().await;
    }

    /// Opens `url` from a blank page and waits (up to `limit`) for the result the page hands
    /// to `window.benchDone`. One asynchronous script call, not polling: polling the page with
    /// WebDriver calls while it runs delays Firefox's timers by tens of milliseconds.
    pub async fn result(&self, url: &str, limit: Duration) -> Result<Value, String> {
        self.client
            .update_timeouts(TimeoutConfiguration::new(
                Some(limit),
                Some(Duration::from_secs(30)),
                None,
            ))
            .await
            .map_err(|e| format!("timeouts: {e}"))?;
        self.client
            .goto("about:blank")
            .await
            .map_err(|e| format!("about:blank: {e}"))?;
        self.client
            .goto(url)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        let value = self
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
}
