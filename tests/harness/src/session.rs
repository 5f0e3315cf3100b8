//! A headless browser session on a WebDriver server of its own, started so that it holds on a
//! fresh or busy machine.
//!
//! A fresh machine's first run once failed at its first Firefox session with "webdriver server
//! did not respond", and passed on a rerun. So a start:
//! - waits until the server *says* it is ready (`GET /status` answering `"ready": true`, the W3C
//!   WebDriver "Status" command), not merely until its port accepts a connection: the port may
//!   be open before the server answers, or be another process's after a lost race for it;
//! - gives the first session of each browser in a process longer than later ones (a browser
//!   never run on the machine creates its profile and reads a cold disk), and bounds every wait,
//!   so a server that never answers fails the start instead of hanging the run;
//! - runs one start at a time in a process, so that parallel sessions do not launch their
//!   browsers all at once on two cores;
//! - if a start fails, tries once more on a new WebDriver server (a new process on a new port),
//!   and if that fails too, says both reasons.

use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Map, Value};
use tokio::process::Command;
use tokio::sync::Mutex;

use crate::browser::{capabilities, Browser, Measure};
use crate::http::get_json;
use crate::process::{free_port, Process};

/// How often a starting WebDriver server is asked whether it is ready.
const POLL: Duration = Duration::from_millis(100);
/// How long one `GET /status` may take before it counts as "no answer yet".
const STATUS_WITHIN: Duration = Duration::from_secs(5);

/// How long a start may take, step by step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Limits {
    /// From launching the WebDriver server to its `/status` saying ready.
    ready: Duration,
    /// The new-session request, which launches the browser.
    session: Duration,
}

/// The first start of a browser in a process: the browser may never have run on this machine.
const FIRST_START: Limits = Limits {
    ready: Duration::from_secs(60),
    session: Duration::from_secs(120),
};
/// Every later start of the same browser. Still generous: each wait ends as soon as its step is
/// done, so only a start that is failing anyway waits this long.
const LATER_START: Limits = Limits {
    ready: Duration::from_secs(30),
    session: Duration::from_secs(60),
};

/// Whether a session of each browser (Chromium, Firefox) has started in this process.
static STARTED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// Held while a session starts: one start at a time in a process.
static STARTING: Mutex<()> = Mutex::const_new(());

fn started_flag(browser: Browser) -> &'static AtomicBool {
    match browser {
        Browser::Chromium => &STARTED[0],
        Browser::Firefox => &STARTED[1],
    }
}

/// The limits of the next start of `browser`.
fn limits_for(browser: Browser) -> Limits {
    if started_flag(browser).load(Ordering::Relaxed) {
        LATER_START
    } else {
        FIRST_START
    }
}

/// A WebDriver server and a session of its browser. [`Session::close`] ends the session; the
/// server and every process of its browser are killed when this is dropped, closed or not.
pub struct Session {
    /// The session.
    pub client: Client,
    driver: Process,
}

impl Session {
    /// Starts a WebDriver server for `browser` and a headless session on it, set up for
    /// `measure`.
    pub async fn start(browser: Browser, measure: Measure) -> Result<Session, String> {
        Session::start_with(browser, capabilities(browser, measure)).await
    }

    /// Starts a WebDriver server for `browser` and a session on it with `caps` (for example
    /// [`capabilities`] with more browser arguments): see the module's documentation for how
    /// the start holds on a busy machine.
    pub async fn start_with(browser: Browser, caps: Map<String, Value>) -> Result<Session, String> {
        let _one_at_a_time = STARTING.lock().await;
        let what = format!("{} session", browser.name());
        let launch = || launch_driver(browser);
        let (client, driver) = start_retrying(&what, launch, &caps, limits_for(browser)).await?;
        started_flag(browser).store(true, Ordering::Relaxed);
        Ok(Session { client, driver })
    }

    /// The WebDriver server's process id while it runs: also the id of the process group of
    /// the browser it launched, all of which is killed when the session is dropped.
    pub fn driver_id(&self) -> Option<u32> {
        self.driver.id()
    }

    /// Ends the session (an error ending it is ignored: the driver goes with it).
    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}

/// Something the harness launched that serves WebDriver until it is dropped, and can say
/// whether it has already exited.
trait Launched {
    /// `Some(how)` once it has exited (a driver that could not bind its port exits at once).
    fn exited(&mut self) -> Option<String>;
}

impl Launched for Process {
    fn exited(&mut self) -> Option<String> {
        self.exit_status()
            .map(|status| format!("exited ({status})"))
    }
}

/// Launches the WebDriver server of `browser` on a free port; returns it (killed when dropped)
/// and its URL.
async fn launch_driver(browser: Browser) -> Result<(Process, String), String> {
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
    // A group of its own, which its browser joins: dropping the server kills them all.
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{} driver: {e} (run scripts/setup)", browser.name()))?;
    Ok((
        Process::leading_group(child),
        format!("http://127.0.0.1:{port}"),
    ))
}

/// Starts a session with `launch` and `caps` within `limits`; if that fails, once more with a
/// new launch (the failed server is dropped first). `what` names the session in messages.
async fn start_retrying<D, L, F>(
    what: &str,
    mut launch: L,
    caps: &Map<String, Value>,
    limits: Limits,
) -> Result<(Client, D), String>
where
    D: Launched,
    L: FnMut() -> F,
    F: Future<Output = Result<(D, String), String>>,
{
    let first = match start_once(launch(), caps, limits).await {
        Ok(started) => return Ok(started),
        Err(first) => first,
    };
    eprintln!(
        "harness: {what} did not start ({first}); trying once more on a new WebDriver server"
    );
    start_once(launch(), caps, limits)
        .await
        .map_err(|second| format!("{what}: {second}; a first try had failed too: {first}"))
}

/// One start: the server `launched` brings up (its process and URL), ready, then a session on
/// it.
async fn start_once<D: Launched>(
    launched: impl Future<Output = Result<(D, String), String>>,
    caps: &Map<String, Value>,
    limits: Limits,
) -> Result<(Client, D), String> {
    let (mut driver, url) = launched.await?;
    wait_until_ready(&url, &mut driver, limits.ready).await?;
    let mut builder = ClientBuilder::new(HttpConnector::new());
    builder.capabilities(caps.clone());
    let client = tokio::time::timeout(limits.session, builder.connect(&url))
        .await
        .map_err(|_| {
            format!(
                "the WebDriver server at {url} opened no session within {} s",
                limits.session.as_secs()
            )
        })?
        .map_err(|e| format!("the WebDriver server at {url}: {e}"))?;
    Ok((client, driver))
}

/// Waits until the WebDriver server at `url` answers `GET /status` with `"ready": true`, for
/// at most `within`; fails at once if `driver` exits first.
async fn wait_until_ready(
    url: &str,
    driver: &mut impl Launched,
    within: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(how) = driver.exited() {
            return Err(format!(
                "the WebDriver server for {url} {how} before it was ready"
            ));
        }
        let last = match tokio::time::timeout(STATUS_WITHIN, get_json(url, "/status")).await {
            Ok(Ok(status)) if status["value"]["ready"] == true => return Ok(()),
            Ok(Ok(status)) => format!("its /status said {status}"),
            Ok(Err(e)) => e,
            Err(_) => format!(
                "its /status gave no answer in {} s",
                STATUS_WITHIN.as_secs()
            ),
        };
        if Instant::now() >= deadline {
            return Err(format!(
                "the WebDriver server at {url} was not ready within {} s (last: {last})",
                within.as_secs()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    //! The start against fake WebDriver servers, each an HTTP server in this process whose
    //! answers are scripted: a server that drops the new-session request (what "webdriver
    //! server did not respond" is), one that is not ready at first, one that is not a WebDriver
    //! server at all, one that exits, one that never opens a session.

    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    use http_body_util::Full;
    use hyper::body::{Bytes, Incoming};
    use hyper::{Request, Response};
    use hyper_util::rt::TokioIo;
    use serde_json::json;
    use tokio::net::TcpListener;
    use tokio::task::JoinHandle;

    use super::*;

    /// How a fake WebDriver server behaves.
    #[derive(Clone, Copy, Debug)]
    enum Fake {
        /// Ready after this many `/status` answers of `"ready": false`; then opens sessions.
        ReadyAfter(usize),
        /// Ready, but closes the connection of a new-session request without answering.
        DropsNewSession,
        /// Ready, but never answers a new-session request.
        HangsNewSession,
        /// Answers everything with a 404 page: a port that accepts, but no WebDriver server.
        NotWebDriver,
        /// Exits as soon as it is launched.
        Exits,
    }

    /// A fake server: its task is stopped when this is dropped.
    struct FakeDriver {
        task: JoinHandle<()>,
        exits: bool,
    }

    impl Launched for FakeDriver {
        fn exited(&mut self) -> Option<String> {
            self.exits.then(|| "exited (status 1)".to_owned())
        }
    }

    impl Drop for FakeDriver {
        fn drop(&mut self) {
            self.task.abort();
        }
    }

    fn json_response(status: u16, body: Value) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
        *response.status_mut() = hyper::StatusCode::from_u16(status).expect("a status");
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json; charset=utf-8"),
        );
        response
    }

    /// The answer of a `fake` server to `request`; `None` drops the connection unanswered.
    async fn answer(
        fake: Fake,
        polls: &AtomicUsize,
        request: &Request<Incoming>,
    ) -> Option<Response<Full<Bytes>>> {
        let path = request.uri().path();
        let status_ready = |ready: bool| json_response(200, json!({ "value": { "ready": ready } }));
        match (fake, path) {
            (Fake::NotWebDriver, _) => Some(json_response(404, json!("not found"))),
            (Fake::ReadyAfter(n), "/status") => {
                Some(status_ready(polls.fetch_add(1, Ordering::SeqCst) >= n))
            }
            (_, "/status") => Some(status_ready(true)),
            (Fake::DropsNewSession, "/session") => None,
            (Fake::HangsNewSession, "/session") => std::future::pending().await,
            (_, "/session") => Some(json_response(
                200,
                json!({ "value": { "sessionId": "fake", "capabilities": {} } }),
            )),
            _ => Some(json_response(200, json!({ "value": null }))),
        }
    }

    /// Launches a fake server behaving as `fake`; `polls` counts its `/status` answers.
    async fn launch_fake(fake: Fake, polls: Arc<AtomicUsize>) -> (FakeDriver, String) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let polls = Arc::clone(&polls);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let polls = Arc::clone(&polls);
                        async move {
                            // An error from the service closes the connection unanswered.
                            answer(fake, &polls, &request)
                                .await
                                .ok_or_else(|| std::io::Error::other("dropped unanswered"))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        let exits = matches!(fake, Fake::Exits);
        (FakeDriver { task, exits }, url)
    }

    /// Limits for a start that should succeed: a real later start's, as each wait ends when
    /// its step is done.
    const PATIENT: Limits = LATER_START;
    /// Limits for starts that fail by running out of time, so that they fail quickly; still
    /// seconds, for a fake server in this process to answer on a busy machine.
    const QUICK: Limits = Limits {
        ready: Duration::from_secs(5),
        session: Duration::from_secs(2),
    };

    /// Starts a session within `limits` with one fake server per launch, in order; returns the
    /// result and how many servers were launched.
    async fn start_on(
        fakes: &[Fake],
        polls: &Arc<AtomicUsize>,
        limits: Limits,
    ) -> (Result<(), String>, usize) {
        let launched = AtomicUsize::new(0);
        let launch = || {
            let k = launched.fetch_add(1, Ordering::SeqCst);
            let fake = fakes.get(k).copied();
            let polls = Arc::clone(polls);
            async move {
                let fake = fake.ok_or("launched more servers than scripted")?;
                Ok(launch_fake(fake, polls).await)
            }
        };
        let result =
            start_retrying::<FakeDriver, _, _>("fake session", launch, &Map::new(), limits)
                .await
                .map(drop);
        (result, launched.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn a_start_that_fails_once_is_tried_again_on_a_new_server() {
        let polls = Arc::new(AtomicUsize::new(0));
        let (result, launched) = start_on(
            &[Fake::DropsNewSession, Fake::ReadyAfter(0)],
            &polls,
            PATIENT,
        )
        .await;
        assert_eq!(result, Ok(()));
        assert_eq!(launched, 2);
    }

    #[tokio::test]
    async fn a_start_that_works_launches_one_server() {
        let polls = Arc::new(AtomicUsize::new(0));
        let (result, launched) = start_on(&[Fake::ReadyAfter(0)], &polls, PATIENT).await;
        assert_eq!((result, launched), (Ok(()), 1));
    }

    #[tokio::test]
    async fn a_server_not_ready_yet_is_waited_for_not_replaced() {
        let polls = Arc::new(AtomicUsize::new(0));
        let (result, launched) = start_on(&[Fake::ReadyAfter(3)], &polls, PATIENT).await;
        assert_eq!((result, launched), (Ok(()), 1));
        // Three answers of "not ready", then the one that said ready.
        assert_eq!(polls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn two_failures_name_both_reasons() {
        // (first server, second server, what the first reason says, what the second says)
        let cases = [
            (
                Fake::DropsNewSession,
                Fake::NotWebDriver,
                "webdriver server did not respond",
                "was not ready within 5 s (last: ",
            ),
            (
                Fake::Exits,
                Fake::HangsNewSession,
                "exited (status 1) before it was ready",
                "opened no session within 2 s",
            ),
            (
                Fake::ReadyAfter(usize::MAX),
                Fake::Exits,
                "its /status said {\"value\":{\"ready\":false}}",
                "exited (status 1) before it was ready",
            ),
        ];
        for (first, second, first_says, second_says) in cases {
            let polls = Arc::new(AtomicUsize::new(0));
            let (result, launched) = start_on(&[first, second], &polls, QUICK).await;
            let error = result.expect_err("both starts fail");
            assert_eq!(launched, 2, "{error}");
            let (second_part, first_part) = error
                .split_once("; a first try had failed too: ")
                .unwrap_or_else(|| panic!("one reason only: {error}"));
            assert!(second_part.starts_with("fake session: "), "{error}");
            assert!(second_part.contains(second_says), "{error}");
            assert!(first_part.contains(first_says), "{error}");
        }
    }

    #[test]
    fn the_first_start_of_a_browser_is_given_longer_than_later_ones() {
        // No test here starts a real session, so the flags are this test's alone.
        for browser in [Browser::Chromium, Browser::Firefox] {
            assert_eq!(limits_for(browser), FIRST_START, "{browser:?}");
        }
        started_flag(Browser::Firefox).store(true, Ordering::Relaxed);
        assert_eq!(limits_for(Browser::Firefox), LATER_START);
        assert_eq!(limits_for(Browser::Chromium), FIRST_START);
        started_flag(Browser::Firefox).store(false, Ordering::Relaxed);
        assert!(FIRST_START.ready > LATER_START.ready);
        assert!(FIRST_START.session > LATER_START.session);
    }
}
