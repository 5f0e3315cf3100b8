//! Starting the built server and talking to it over real HTTP.
// Each test file uses its own subset.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// The repository root: the real `fixtures/`, `www/` and `crate/pkg/`.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A folder under the system's temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "fixture-server-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temp dir");
        TempDir(path)
    }

    /// Writes `contents` at `relative`, creating folders.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) {
        let path = self.0.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folders");
        }
        std::fs::write(path, contents).expect("write a file");
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Scenarios with short durations, so the suite stays fast.
pub const TINY_SCENARIOS: &str = r#"{
  "scenarios": [
    {
      "name": "tiny-date",
      "wall_clock_at_start": "Mon, 01 Jan 2024 12:00:00 GMT",
      "responses": [
        { "duration_s": 0.1, "status": 429,
          "headers": { "Retry-After": "Mon, 01 Jan 2024 12:00:03 GMT", "X-Scripted": "kept" } },
        { "duration_s": 0.1, "status": 200, "body": { "palettes": ["sea glass", "kelp"] } }
      ]
    },
    {
      "name": "tiny-transport",
      "responses": [ { "duration_s": 0.2, "transport_error": "network" } ]
    },
    {
      "name": "tiny-untrusted",
      "wall_clock_at_start": null,
      "responses": [
        { "duration_s": 0.05, "status": 429,
          "headers": { "Retry-After": "Mon, 01 Jan 2024 12:00:06 GMT" } }
      ]
    },
    {
      "name": "tiny-slow",
      "responses": [ { "duration_s": 4, "status": 200, "body": [] } ]
    },
    {
      "name": "tiny-unreached",
      "wall_clock_at_start": "Mon, 01 Jan 2024 12:00:00 GMT",
      "responses": [
        { "duration_s": 0.05, "status": 503 },
        { "duration_s": 0.05, "status": 429,
          "headers": { "Retry-After": "Mon, 01 Jan 2024 12:00:10 GMT" } }
      ]
    },
    {
      "name": "tiny-two",
      "responses": [
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 503 }
      ]
    }
  ]
}"#;

/// A repository-like root with the tiny scenarios and a few static files.
pub fn tiny_root() -> TempDir {
    let root = TempDir::new();
    root.write("fixtures/tiny.json", TINY_SCENARIOS);
    root.write(
        "www/index.html",
        "<!doctype html><title>fixture page</title>",
    );
    root.write("www/app.js", "export const answer = 42;\n");
    root.write("www/style.css", "body { margin: 0 }\n");
    root.write("www/sub/inner.txt", "inner\n");
    root.write(
        "crate/pkg/retry_budget.js",
        "export default function init() {}\n",
    );
    root.write("crate/pkg/retry_budget_bg.wasm", WASM_BYTES);
    root.write(
        "crate/pkg-full/retry_budget.js",
        "export function simulate() {}\n",
    );
    root.write("secret.txt", SECRET);
    root
}

/// The smallest valid wasm module: magic and version.
pub const WASM_BYTES: &[u8] = b"\0asm\x01\0\0\0";
/// A file outside every served folder.
pub const SECRET: &str = "outside-the-served-folders";

/// A running `fixture-server`, killed on drop.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
    /// The second origin's `http://127.0.0.1:PORT2/`, when started with one.
    pub second: Option<String>,
    stderr: PathBuf,
    _scratch: TempDir,
}

impl Server {
    /// Starts the built binary on a free port, serving `root`.
    pub fn start(root: &Path) -> Server {
        Server::start_with(root, &[])
    }

    /// Starts it with extra arguments; with `--second-port`, reads the second origin too.
    pub fn start_with(root: &Path, extra: &[&str]) -> Server {
        let server = Server::start_on("127.0.0.1", root, extra);
        assert!(
            server.url.starts_with("http://127.0.0.1:"),
            "{}",
            server.url
        );
        server
    }

    /// Starts it on `host` (`--host`) with extra arguments.
    pub fn start_on(host: &str, root: &Path, extra: &[&str]) -> Server {
        let scratch = TempDir::new();
        let stderr = scratch.0.join("stderr.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_fixture-server"))
            .args(["--host", host, "--port", "0", "--root"])
            .arg(root)
            .args(extra)
            .env_remove("PORT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("a stderr file"))
            .spawn()
            .expect("start fixture-server");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        let read = stdout.read_line(&mut line);
        let Some(url) = line
            .trim_end()
            .strip_prefix("fixture-server listening on ")
            .filter(|_| read.is_ok())
            .map(String::from)
        else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "no listening line (got {line:?}); stderr:\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
        };
        assert!(url.starts_with("http://") && url.ends_with('/'), "{url}");
        let second = extra.contains(&"--second-port").then(|| {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("a second line");
            line.trim_end()
                .strip_prefix("fixture-server second origin on ")
                .unwrap_or_else(|| panic!("no second origin line: {line:?}"))
                .to_string()
        });
        Server {
            child,
            url,
            second,
            stderr,
            _scratch: scratch,
        }
    }

    /// `path` (starting with `/`) on this server.
    pub fn at(&self, path: &str) -> String {
        format!("{}{}", self.url.trim_end_matches('/'), path)
    }

    /// `/palettes` for `scenario` and `run`.
    pub fn palettes(&self, scenario: &str, run: &str) -> String {
        self.at(&format!(
            "/palettes?collection=coast&scenario={scenario}&run={run}"
        ))
    }

    /// The log entries of `run`.
    pub async fn log(&self, run: &str) -> Vec<serde_json::Value> {
        let reply = get(&self.at(&format!("/log?run={run}")))
            .await
            .expect("GET /log");
        assert_eq!(reply.status, 200);
        match serde_json::from_str(&reply.body).expect("the log is JSON") {
            serde_json::Value::Array(entries) => entries,
            other => panic!("the log is not an array: {other}"),
        }
    }

    /// The log entries of `run` once `done` holds for them (asked every 50 ms). Panics after
    /// 10 s, far longer than anything the tests wait for takes, so that only "never" fails.
    pub async fn log_once(
        &self,
        run: &str,
        done: impl Fn(&[serde_json::Value]) -> bool,
    ) -> Vec<serde_json::Value> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let log = self.log(run).await;
            if done(&log) {
                return log;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not seen in 10 s: {log:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("fixture-server stderr:\n{}", self.stderr());
        }
    }
}

/// Runs the server on `root` with `extra` arguments, expecting it to refuse to start: a server
/// that starts instead is stopped after 30 s and the test fails, rather than waiting for it
/// forever. Returns whether it exited successfully, its stdout and its stderr.
pub fn refusal(root: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fixture-server"))
        .args(["--port", "0", "--root"])
        .arg(root)
        .args(extra)
        .env_remove("PORT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fixture-server");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("poll fixture-server").is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().expect("stop fixture-server");
            let output = child.wait_with_output().expect("fixture-server output");
            let stdout = String::from_utf8_lossy(&output.stdout);
            panic!("fixture-server started instead of refusing: {stdout}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("fixture-server output");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A whole response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
    pub bytes: Vec<u8>,
    /// When the request was about to be sent, on this machine's wall clock.
    pub sent: SystemTime,
    /// When the response's head arrived, on this machine's wall clock.
    pub received: SystemTime,
}

impl Reply {
    /// Header `name` as text (the first one).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Any failure of a request: the client's error, or no answer in time.
pub type Failure = String;

/// `GET url`.
pub async fn get(url: &str) -> Result<Reply, Failure> {
    send(Method::GET, url, &[]).await
}

/// One request with a fresh client, given 10 s at most.
pub async fn send(method: Method, url: &str, headers: &[(&str, &str)]) -> Result<Reply, Failure> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let mut request = Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Empty::new()).map_err(|e| e.to_string())?;
    let sent = SystemTime::now();
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|e| format!("{e:?}"))?;
        let received = SystemTime::now();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{e:?}"))?
            .to_bytes()
            .to_vec();
        Ok(Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
            bytes,
            sent,
            received,
        })
    };
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .map_err(|_| String::from("no answer within 10 s"))?
}

/// Seconds since the Unix epoch named by an HTTP-date header.
pub fn date_secs(value: &str) -> i64 {
    let time = httpdate::parse_http_date(value)
        .unwrap_or_else(|e| panic!("{value:?} is not an HTTP-date: {e}"));
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    i64::try_from(secs).expect("small")
}

/// Checks that `reply` has a Date header naming a second between the request's sending and the
/// response's arrival (the server wrote it in between; an HTTP-date drops the fraction of a
/// second, so each end counts from its whole second); returns its seconds.
pub fn assert_real_date(reply: &Reply) -> i64 {
    let date = reply.header("date").expect("a Date header");
    let secs = date_secs(date);
    let whole_secs = |t: SystemTime| date_secs(&httpdate::fmt_http_date(t));
    let (sent, received) = (whole_secs(reply.sent), whole_secs(reply.received));
    assert!(
        (sent..=received).contains(&secs),
        "Date {date} is not between the request ({sent}) and the response ({received})"
    );
    secs
}

/// Sends raw bytes and reads until the server closes (or 5 s pass).
pub fn raw_exchange(url: &str, request: &str) -> String {
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a read timeout");
    std::io::Write::write_all(&mut stream, request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}
