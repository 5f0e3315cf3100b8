//! The server's extensions for the fault, load and race tests: the fault file and each fault
//! over real HTTP and TCP, the second origin and the Content-Security-Policy, `/scenarios`,
//! `/beacon` and `/away`.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use support::{get, raw_exchange, repo_root, tiny_root, Server, TempDir};

/// Faults on the tiny scenarios (`support::TINY_SCENARIOS`).
const TINY_FAULTS: &str = r#"{
  "about": "tiny faults",
  "faulted": [
    { "name": "no-cors", "base": "tiny-two", "about": "omit CORS, then omit expose",
      "faults": [ { "attempt": 1, "fault": "omit_cors" }, { "attempt": 2, "fault": "omit_expose" } ] },
    { "name": "endless", "base": "tiny-two", "about": "a body that never ends",
      "faults": [ { "attempt": 1, "fault": "endless_body" } ] },
    { "name": "reset", "base": "tiny-two", "about": "a reset",
      "faults": [ { "attempt": 1, "fault": "reset" } ] },
    { "name": "reset-mid-body", "base": "tiny-two", "about": "a reset mid-body",
      "faults": [ { "attempt": 1, "fault": "reset_mid_body" } ] },
    { "name": "redirect", "base": "tiny-two", "about": "a redirect",
      "faults": [ { "attempt": 1, "fault": "redirect" } ] }
  ]
}"#;

/// The tiny root with the tiny faults, a leave page, and the server started on it with a
/// second origin.
fn tiny_server() -> (TempDir, Server) {
    let root = tiny_root();
    root.write("faults.json", TINY_FAULTS);
    root.write(
        "server/pages/away.html",
        "<!doctype html><title>Another page</title>",
    );
    let faults = root.0.join("faults.json");
    let server = Server::start_with(
        &root.0,
        &[
            "--second-port",
            "0",
            "--faults",
            faults.to_str().expect("a UTF-8 path"),
        ],
    );
    (root, server)
}

fn address(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// Sends a GET on a fresh connection and reads what comes back until the connection ends,
/// `enough` holds for what came, or `limit` passes; returns the bytes and how the reading ended
/// (`Ok` for an end, `Err(TimedOut)` when still open), and the connection.
fn raw_read_until(
    url: &str,
    path: &str,
    enough: impl Fn(&str) -> bool,
    limit: Duration,
) -> (String, Result<(), ErrorKind>, TcpStream) {
    let mut stream = TcpStream::connect(address(url)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("a read timeout");
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: fixture\r\n\r\n").as_bytes())
        .expect("send");
    let mut got = Vec::new();
    let deadline = Instant::now() + limit;
    let mut buf = [0u8; 4096];
    let end = loop {
        match stream.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => break Err(e.kind()),
        }
        if enough(&String::from_utf8_lossy(&got)) || Instant::now() > deadline {
            break Err(ErrorKind::TimedOut);
        }
    };
    (String::from_utf8_lossy(&got).into_owned(), end, stream)
}

/// [`raw_read_until`] to the end of the connection (or `limit`), the connection closed.
fn raw_read(url: &str, path: &str, limit: Duration) -> (String, Result<(), ErrorKind>) {
    let (got, end, _) = raw_read_until(url, path, |_| false, limit);
    (got, end)
}

fn number(entry: &Value, field: &str) -> f64 {
    entry[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {entry}"))
}

fn palettes_path(scenario: &str, run: &str) -> String {
    format!("/palettes?collection=coast&scenario={scenario}&run={run}")
}

#[tokio::test]
async fn the_fault_file_serves_faulted_copies_and_scenarios_lists_every_file() {
    let server = Server::start(&repo_root());
    let reply = get(&server.at("/scenarios")).await.expect("GET /scenarios");
    assert_eq!(reply.status, 200);
    let listing: Value = serde_json::from_str(&reply.body).expect("JSON");
    let files: Vec<&str> = listing["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["file"].as_str())
        .collect();
    // Every fixture file in name order, then the fault file.
    let mut fixtures: Vec<String> = std::fs::read_dir(repo_root().join("fixtures"))
        .expect("the fixtures folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".json"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 3, "{fixtures:?}");
    let mut want_files: Vec<&str> = fixtures.iter().map(String::as_str).collect();
    want_files.push("server/transport-faults.json");
    assert_eq!(files, want_files);
    // Every fixture scenario, as written, in file order; then the faulted ones.
    let mut want = Vec::new();
    for file in &fixtures {
        let text = std::fs::read_to_string(repo_root().join("fixtures").join(file))
            .expect("a fixture file");
        let doc: Value = serde_json::from_str(&text).expect("JSON");
        want.extend(doc["scenarios"].as_array().expect("scenarios").clone());
    }
    let scenarios = listing["scenarios"].as_array().expect("scenarios");
    assert_eq!(&scenarios[..want.len()], &want[..]);
    let faulted = &scenarios[want.len()..];
    assert!(faulted.len() >= 6, "{faulted:?}");
    for object in faulted {
        let name = object["name"].as_str().expect("a name");
        assert!(object.get("expect").is_none(), "{name} keeps an expect");
        let info = &listing["faults"][name];
        assert!(
            info["faults"].as_array().is_some_and(|f| !f.is_empty()),
            "{name}"
        );
        // The faulted copy has its base's responses.
        let base = scenarios
            .iter()
            .find(|s| s["name"] == info["base"])
            .expect("the base is listed");
        assert_eq!(object["responses"], base["responses"], "{name}");
    }
    assert_eq!(
        listing["faults"]["fault-cross-origin-no-allow-origin"]["needs_cross_origin"],
        true
    );
    assert_eq!(
        listing["faults"]["fault-endless-body"]["needs_cross_origin"],
        false
    );
    // The base is still served as scripted under its own name.
    let base = get(&server.palettes("cross-origin-429-twice", "base-unchanged"))
        .await
        .expect("a response");
    assert_eq!(base.status, 429);
    assert_eq!(base.header("access-control-allow-origin"), Some("*"));
}

#[tokio::test]
async fn two_retry_after_fields_go_out_as_two_lines() {
    let server = Server::start(&repo_root());
    let raw = raw_exchange(
        &server.url,
        &format!(
            "GET {} HTTP/1.1\r\nHost: fixture\r\nConnection: close\r\n\r\n",
            palettes_path("two-retry-after-lines", "two-lines")
        ),
    );
    let lines: Vec<&str> = raw
        .lines()
        .filter(|l| l.to_ascii_lowercase().starts_with("retry-after:"))
        .collect();
    assert_eq!(lines, ["retry-after: 3", "retry-after: 4"], "{raw}");
    let log = server.log("two-lines").await;
    assert_eq!(log[0]["retry_after"], "3, 4");
}

#[tokio::test]
async fn omit_cors_and_omit_expose_take_cors_headers_away() {
    let (_root, server) = tiny_server();
    let first = get(&server.palettes("no-cors", "cors-faults"))
        .await
        .expect("a response");
    assert_eq!(first.status, 429);
    assert_eq!(first.header("retry-after"), Some("0"));
    assert_eq!(first.header("access-control-allow-origin"), None);
    assert_eq!(first.header("access-control-expose-headers"), None);
    let second = get(&server.palettes("no-cors", "cors-faults"))
        .await
        .expect("a response");
    assert_eq!(second.status, 503);
    assert_eq!(second.header("access-control-allow-origin"), Some("*"));
    assert_eq!(second.header("access-control-expose-headers"), None);
    let log = server.log("cors-faults").await;
    assert_eq!(log[0]["fault"], "omit_cors");
    assert_eq!(log[1]["fault"], "omit_expose");
    // The base, unfaulted, keeps both headers.
    let base = get(&server.palettes("tiny-two", "cors-base"))
        .await
        .expect("a response");
    assert_eq!(base.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        base.header("access-control-expose-headers"),
        Some("Retry-After, Date, RateLimit, RateLimit-Policy")
    );
    assert_eq!(server.log("cors-base").await[0]["fault"], Value::Null);
}

#[tokio::test]
async fn an_endless_body_never_ends_and_the_client_leaving_is_logged() {
    let (_root, server) = tiny_server();
    // 0.05 s of duration, then a space every 200 ms: read until three have come (the body
    // goes on after its first piece, again and again), however long a busy machine takes.
    let three_more = |got: &str| got.matches("\r\n \r\n").count() >= 3;
    let (got, end, connection) = raw_read_until(
        &server.url,
        &palettes_path("endless", "endless"),
        three_more,
        Duration::from_secs(20),
    );
    assert!(
        three_more(&got),
        "fewer than three more pieces in 20 s: {got:?}"
    );
    assert_eq!(end, Err(ErrorKind::TimedOut), "the body ended: {got:?}");
    assert!(got.starts_with("HTTP/1.1 429"), "{got:?}");
    assert!(got.contains("transfer-encoding: chunked"), "{got:?}");
    assert!(got.contains("[\"sea glass\", "), "{got:?}");
    assert!(!got.ends_with("0\r\n\r\n"), "{got:?}");
    // Nobody has left yet.
    assert!(server.log("endless").await[0]["client_gone_ms"].is_null());
    // The connection is closed: the next write fails, and the body is dropped.
    drop(connection);
    let log = server
        .log_once("endless", |log| !log[0]["client_gone_ms"].is_null())
        .await;
    assert_eq!(log[0]["fault"], "endless_body");
    assert_eq!(log[0]["status"], 429);
}

#[tokio::test]
async fn a_reset_is_a_tcp_reset_and_a_quick_resend_is_reset_too() {
    let (_root, server) = tiny_server();
    let path = palettes_path("reset", "reset");
    let (got, end) = raw_read(&server.url, &path, Duration::from_secs(3));
    assert_eq!(got, "", "no byte of a response before the reset");
    assert_eq!(end, Err(ErrorKind::ConnectionReset));
    // A browser's resend of the same GET, at once: reset as well, no scripted response taken.
    let (got, end) = raw_read(&server.url, &path, Duration::from_secs(3));
    assert_eq!((got.as_str(), end), ("", Err(ErrorKind::ConnectionReset)));
    // After the resend window (1 s), the run goes on with its next scripted response.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let next = get(&server.palettes("reset", "reset"))
        .await
        .expect("a response");
    assert_eq!(next.status, 503);
    let log = server.log("reset").await;
    let summary: Vec<(Value, Value, Value)> = log
        .iter()
        .map(|e| {
            (
                e["attempt"].clone(),
                e["status"].clone(),
                e["fault"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (json!(1), json!("reset"), json!("reset")),
            (json!(1), json!("reset"), json!("reset_resend")),
            (json!(2), json!(503), Value::Null),
        ]
    );
}

#[tokio::test]
async fn a_reset_mid_body_sends_the_head_then_resets() {
    let (_root, server) = tiny_server();
    let (got, end) = raw_read(
        &server.url,
        &palettes_path("reset-mid-body", "mid"),
        Duration::from_secs(3),
    );
    assert!(got.starts_with("HTTP/1.1 429"), "{got:?}");
    assert!(got.contains("sea glass"), "{got:?}");
    assert_eq!(end, Err(ErrorKind::ConnectionReset), "{got:?}");
    let log = server.log("mid").await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["fault"], "reset_mid_body");
}

#[tokio::test]
async fn a_redirect_leads_to_the_runs_next_response() {
    let (_root, server) = tiny_server();
    let first = get(&server.palettes("redirect", "hop"))
        .await
        .expect("a response");
    assert_eq!(first.status, 302);
    let location = first.header("location").expect("a Location");
    assert_eq!(
        location,
        "/palettes?collection=coast&scenario=redirect&run=hop&redirected=1"
    );
    let followed = get(&server.at(location)).await.expect("a response");
    assert_eq!(followed.status, 503);
    let log = server.log("hop").await;
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["status"], 302);
    assert_eq!(log[0]["fault"], "redirect");
    assert_eq!(log[1]["attempt"], 2);
    assert_eq!(log[1]["uri"], location);
}

/// A scenario of three responses, for two redirects in a row.
const THREE: &str = r#"{ "scenarios": [
    { "name": "tiny-three",
      "responses": [
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 429, "headers": { "Retry-After": "0" } },
        { "duration_s": 0.05, "status": 200, "body": ["kelp"] }
      ] }
] }"#;

/// Two redirects in a row: the second 302 leads to a URI with one `redirected` parameter (its
/// own), and following it gets the run's third response, where a second `redirected` made the
/// query one the server refused.
#[tokio::test]
async fn two_redirects_in_a_row_lead_to_the_runs_next_responses() {
    let root = tiny_root();
    root.write("fixtures/three.json", THREE);
    root.write(
        "faults.json",
        r#"{ "faulted": [ { "name": "redirect-twice", "base": "tiny-three", "about": "",
              "faults": [ { "attempt": 1, "fault": "redirect" }, { "attempt": 2, "fault": "redirect" } ] } ] }"#,
    );
    let faults = root.0.join("faults.json");
    let server = Server::start_with(&root.0, &["--faults", faults.to_str().expect("UTF-8")]);
    let first = get(&server.palettes("redirect-twice", "hops"))
        .await
        .expect("a response");
    assert_eq!(first.status, 302);
    let location = first.header("location").expect("a Location");
    let second = get(&server.at(location)).await.expect("a response");
    assert_eq!(second.status, 302, "{}", second.body);
    let location = second.header("location").expect("a Location");
    assert_eq!(
        location,
        "/palettes?collection=coast&scenario=redirect-twice&run=hops&redirected=2"
    );
    let third = get(&server.at(location)).await.expect("a response");
    assert_eq!((third.status, third.body.as_str()), (200, r#"["kelp"]"#));
    let log = server.log("hops").await;
    let summary: Vec<(Value, Value)> = log
        .iter()
        .map(|e| (e["attempt"].clone(), e["status"].clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (json!(1), json!(302)),
            (json!(2), json!(302)),
            (json!(3), json!(200))
        ]
    );
}

#[tokio::test]
async fn the_second_origin_shares_the_runs_and_the_policy_names_both_origins() {
    let (_root, server) = tiny_server();
    let second = server.second.clone().expect("a second origin");
    assert_ne!(second, server.url);
    let first = get(&server.palettes("tiny-two", "two-origins"))
        .await
        .expect("a response");
    assert_eq!(first.status, 429);
    let next = support::send(
        hyper::Method::GET,
        &format!(
            "{}{}",
            second.trim_end_matches('/'),
            palettes_path("tiny-two", "two-origins")
        ),
        &[("origin", server.url.trim_end_matches('/'))],
    )
    .await
    .expect("a response");
    assert_eq!(next.status, 503, "one run across both origins");
    let log = server.log("two-origins").await;
    assert_eq!(log[0]["origin"], Value::Null);
    assert_eq!(log[1]["origin"], server.url.trim_end_matches('/'));
    let page = get(&server.at("/")).await.expect("the page");
    let csp = page.header("content-security-policy").expect("a CSP");
    for directive in [
        "default-src 'none'",
        "script-src 'self' 'wasm-unsafe-eval'",
        "style-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp} lacks {directive}");
    }
    let connect = format!(
        "connect-src 'self' {} {}",
        server.url.trim_end_matches('/'),
        second.trim_end_matches('/')
    );
    assert!(csp.contains(&connect), "{csp} lacks {connect}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
}

/// A server started on `--host localhost` names itself by that host, in its startup lines and in
/// the policy's `connect-src`, so that a page loaded from `http://localhost:P` may fetch from the
/// second origin; both named `http://127.0.0.1:P`, which such a page's policy did not cover.
#[tokio::test]
async fn the_origins_name_the_host_as_given() {
    let root = tiny_root();
    let server = Server::start_on("localhost", &root.0, &["--second-port", "0"]);
    let second = server.second.clone().expect("a second origin");
    for url in [&server.url, &second] {
        assert!(url.starts_with("http://localhost:"), "{url}");
    }
    let page = get(&server.at("/")).await.expect("the page");
    let csp = page.header("content-security-policy").expect("a CSP");
    let connect = format!(
        "connect-src 'self' {} {};",
        server.url.trim_end_matches('/'),
        second.trim_end_matches('/')
    );
    assert!(csp.contains(&connect), "{csp} lacks {connect}");
}

/// How long `/away` waits for a run's request to arrive before it sends the page anyway.
const AWAY_WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn away_is_held_until_the_runs_response_is_sent_plus_the_offset() {
    let (_root, server) = tiny_server();
    let away = server.at("/away?run=held&attempt=1&plus_ms=200");
    let started = Instant::now();
    let page = tokio::spawn(async move {
        let reply = get(&away).await.expect("the page");
        (reply, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let sent = Instant::now();
    let first = get(&server.palettes("tiny-two", "held"))
        .await
        .expect("a response");
    assert_eq!(first.status, 429);
    let (reply, took) = page.await.expect("the page task");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, "<!doctype html><title>Another page</title>");
    assert!(reply
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    // The server went by the run's send, not by its wait for the run to turn up: it says so,
    // and the page came long before that wait would have ended.
    let log = server.log("held").await;
    let due = number(&log[0], "arrival_ms") + 50.0 + 200.0;
    let note = format!("run=held attempt=1 plus_ms=200 held until {due:.1} ms");
    assert!(
        server.stderr().contains(&note),
        "no {note:?} in\n{}",
        server.stderr()
    );
    assert!(took < AWAY_WAIT, "held {took:?}");
    // And not a moment early: the response was sent 0.05 s after the request arrived, which
    // was after `sent`; the page 0.2 s after that.
    let earliest = sent.duration_since(started) + Duration::from_millis(250);
    assert!(
        took >= earliest,
        "held {took:?}, want at least {earliest:?}"
    );
    // /away is not a /palettes request: the run's log has only the one.
    assert_eq!(log.len(), 1);
}

#[tokio::test]
async fn away_without_a_run_is_the_plain_page_at_once() {
    let (_root, server) = tiny_server();
    let started = Instant::now();
    let reply = get(&server.at("/away")).await.expect("the page");
    let took = started.elapsed();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, "<!doctype html><title>Another page</title>");
    assert!(reply
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    // Nothing to wait for: the server says so, and did not wait for a run to turn up.
    assert!(server.stderr().contains("no run to wait for"));
    assert!(took < AWAY_WAIT, "took {took:?}");
}

/// A hold that cannot be read is refused at once with a 400 naming the parameter, where it was
/// read as the default (an `attempt` of 0 waited out the whole 10 s; a `plus_ms` past what the
/// clock can add held the page for as long as the client waited).
#[tokio::test]
async fn away_refuses_a_hold_it_cannot_read() {
    let (_root, server) = tiny_server();
    let cases = [
        ("attempt=0", "the `attempt` parameter is \"0\"; it must be a whole number from 1"),
        ("attempt=one", "the `attempt` parameter is \"one\"; it must be a whole number from 1"),
        ("plus_ms=1e300", "the `plus_ms` parameter is \"1e300\"; it must be a number of milliseconds from -600000 to 600000"),
        ("plus_ms=NaN", "the `plus_ms` parameter is \"NaN\"; it must be a number of milliseconds from -600000 to 600000"),
        ("plus_ms=-600001", "the `plus_ms` parameter is \"-600001\"; it must be a number of milliseconds from -600000 to 600000"),
        ("plus_ms=5&plus_ms=6", "the parameter \"plus_ms\" is given more than once"),
        ("plus_ms=%ff", "\"%ff\" does not decode to UTF-8"),
    ];
    for (query, message) in cases {
        let started = Instant::now();
        let reply = get(&server.at(&format!("/away?run=refused&{query}")))
            .await
            .expect("a response");
        assert_eq!(
            (reply.status, reply.body.as_str()),
            (400, message),
            "{query}"
        );
        assert!(started.elapsed() < AWAY_WAIT, "{query}: waited for the run");
    }
}

/// A parameter given twice on `/palettes` is refused: which run or scenario was meant cannot be
/// known, and the last one no longer wins silently.
#[tokio::test]
async fn palettes_refuses_a_parameter_given_twice() {
    let (_root, server) = tiny_server();
    let path = "/palettes?collection=coast&scenario=tiny-two&run=first&run=second";
    let reply = get(&server.at(path)).await.expect("a response");
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.body,
        "malformed query string: the parameter \"run\" is given more than once"
    );
    // Neither run was started by it.
    let first = get(&server.palettes("tiny-two", "second"))
        .await
        .expect("a response");
    assert_eq!(first.status, 429);
}

#[tokio::test]
async fn beacons_are_logged_and_answered_with_no_content() {
    let (_root, server) = tiny_server();
    let reply = get(&server.at("/beacon?via=test&run=beacon-run"))
        .await
        .expect("a response");
    assert_eq!(reply.status, 204);
    let log = server.log("beacon-run").await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["uri"], "/beacon?via=test&run=beacon-run");
    assert_eq!(log[0]["status"], 204);
    // A client's `Origin` is kept cut, as its URI is: 200 kB a request grew the log by as much.
    let long = format!("http://{}.test", "o".repeat(200_000));
    let reply = support::send(
        hyper::Method::GET,
        &server.at("/beacon?run=long-origin"),
        &[("origin", &long)],
    )
    .await
    .expect("a response");
    assert_eq!(reply.status, 204);
    let log = server.log("long-origin").await;
    let kept = log[0]["origin"].as_str().expect("the origin");
    assert_eq!(kept, format!("{}…", &long[..512]));
}

/// Runs the server on `root` with the fault file `faults`, expecting it to refuse to start.
fn refusal(root: &TempDir, faults: &str) -> (bool, String) {
    root.write("faults.json", faults);
    let file = root.0.join("faults.json");
    let file = file.to_str().expect("a UTF-8 temp path");
    let (ok, _, stderr) = support::refusal(&root.0, &["--faults", file]);
    (ok, stderr)
}

#[test]
fn a_bad_fault_file_stops_the_server_from_starting() {
    let root = tiny_root();
    let cases = [
        (
            r#"{ "faulted": [ { "name": "x", "base": "nope", "about": "", "faults": [ { "attempt": 1, "fault": "reset" } ] } ] }"#,
            "field `base`: no fixture scenario is called \"nope\"",
        ),
        (
            r#"{ "faulted": [ { "name": "x", "base": "tiny-two", "about": "", "faults": [ { "attempt": 3, "fault": "reset" } ] } ] }"#,
            "field `faults[0].attempt`: 3 is not a scripted response of \"tiny-two\" (1 to 2)",
        ),
        (
            r#"{ "faulted": [ { "name": "x", "base": "tiny-two", "about": "", "faults": [ { "attempt": 2, "fault": "redirect" } ] } ] }"#,
            "a redirect needs a next scripted response",
        ),
        (
            r#"{ "faulted": [ { "name": "tiny-two", "base": "tiny-two", "about": "", "faults": [ { "attempt": 1, "fault": "reset" } ] } ] }"#,
            "the name is already used by a scenario",
        ),
        (
            r#"{ "faulted": [ { "name": "x", "base": "tiny-transport", "about": "", "faults": [ { "attempt": 1, "fault": "endless_body" } ] } ] }"#,
            "endless_body needs an HTTP response",
        ),
        (
            r#"{ "faulted": [ { "name": "x", "base": "tiny-transport", "about": "", "faults": [ { "attempt": 1, "fault": "reset_mid_body" } ] } ] }"#,
            "reset_mid_body needs an HTTP response",
        ),
        (
            r#"{ "faulted": [ { "name": "x", "base": "tiny-two", "about": "", "faults": [ { "attempt": 1, "fault": "hang" } ] } ] }"#,
            "unknown variant `hang`",
        ),
        (
            r#"{ "faulted": [ { "name": "x", "base": "tiny-two", "about": "", "falts": [] } ] }"#,
            "unknown field `falts`",
        ),
    ];
    for (faults, message) in cases {
        let (ok, stderr) = refusal(&root, faults);
        assert!(!ok, "{faults}");
        assert!(stderr.contains(message), "{faults}\n{stderr}");
        assert!(stderr.contains("refusing to start"), "{stderr}");
    }
}
