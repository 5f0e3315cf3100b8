//! The built `fixture-server`, started on a free port and driven over real HTTP.

mod support;

use std::collections::BTreeSet;
use std::io::Write;
use std::time::{Duration, Instant};

use hyper::Method;
use serde_json::{json, Value};

use support::{
    assert_real_date, date_secs, get, raw_exchange, repo_root, send, tiny_root, Server, TempDir,
    SECRET, WASM_BYTES,
};

/// Every field of a log entry, exactly.
const LOG_FIELDS: &[&str] = &[
    "seq",
    "method",
    "uri",
    "run",
    "scenario",
    "collection",
    "attempt",
    "arrival_ms",
    "arrival_unix_ms",
    "status",
    "error",
    "sent_ms",
    "sent_unix_ms",
    "date",
    "retry_after",
    "client_gone_ms",
    "fault",
    "origin",
];

fn number(entry: &Value, field: &str) -> f64 {
    entry[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {entry}"))
}

fn assert_cors(reply: &support::Reply) {
    assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        reply.header("access-control-expose-headers"),
        Some("Retry-After, Date, RateLimit, RateLimit-Policy")
    );
}

#[tokio::test]
async fn schedule_a_answers_in_order_after_its_durations_and_the_log_shows_it() {
    let server = Server::start(&repo_root());
    let run = "schedule-a-in-order";
    let url = server.palettes("schedule-a", run);
    let mut took = Vec::new();
    let mut replies = Vec::new();
    for _ in 0..3 {
        let sent = Instant::now();
        let reply = get(&url).await.expect("a response");
        took.push(sent.elapsed());
        replies.push(reply);
    }
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [429, 429, 200]);
    assert_eq!(replies[0].header("retry-after"), Some("3"));
    assert_eq!(replies[1].header("retry-after"), Some("4"));
    assert_eq!(replies[2].header("retry-after"), None);
    for reply in &replies {
        assert_real_date(reply);
        assert_cors(reply);
        assert_eq!(reply.header("cache-control"), Some("no-store"));
    }
    assert_eq!(replies[2].header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&replies[2].body).expect("a JSON body");
    assert_eq!(body, json!(["sea glass", "driftwood", "kelp"]));
    // The scripted durations, 2, 2 and 3 s, are honoured: no answer comes sooner (the server's
    // own figures are checked against the log below).
    for (took, scripted) in took.iter().zip([2.0, 2.0, 3.0]) {
        let took = took.as_secs_f64();
        assert!(took >= scripted, "{took} for {scripted}");
    }

    // A fourth request asks for more than is scripted.
    let extra = get(&url).await.expect("a response");
    assert_eq!(extra.status, 409);
    assert_eq!(
        extra.body,
        format!("run {run} of scenario schedule-a asked for response 4 but only 3 are scripted")
    );
    assert_cors(&extra);

    let log = server.log(run).await;
    assert_eq!(log.len(), 4, "{log:?}");
    for entry in &log {
        let fields: BTreeSet<&str> = entry
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(fields, LOG_FIELDS.iter().copied().collect());
        assert_eq!(entry["run"], run);
        assert_eq!(entry["scenario"], "schedule-a");
        assert_eq!(entry["collection"], "coast");
        assert_eq!(entry["method"], "GET");
        assert_eq!(entry["client_gone_ms"], Value::Null);
    }
    let attempts: Vec<&Value> = log.iter().map(|e| &e["attempt"]).collect();
    assert_eq!(attempts, [&json!(1), &json!(2), &json!(3), &Value::Null]);
    let sent: Vec<&Value> = log.iter().map(|e| &e["status"]).collect();
    assert_eq!(sent, [&json!(429), &json!(429), &json!(200), &json!(409)]);
    assert_eq!(log[0]["retry_after"], "3");
    assert_eq!(log[3]["error"], json!(extra.body));
    for (entry, scripted_ms) in log.iter().zip([2000.0, 2000.0, 3000.0]) {
        // Waited its own duration, and not its duration twice over (a margin of a whole
        // duration, for a busy machine's late timer).
        let waited = number(entry, "sent_ms") - number(entry, "arrival_ms");
        assert!(
            waited >= scripted_ms && waited < 2.0 * scripted_ms,
            "{entry}"
        );
        // The wall-clock fields are the same two moments: they differ from the monotonic ones
        // by far less than the wait they would be off by if either were taken at another
        // moment (the two clocks are read one after the other, so a busy machine may
        // separate them a little).
        let wall = number(entry, "sent_unix_ms") - number(entry, "arrival_unix_ms");
        assert!((wall - waited).abs() < scripted_ms / 4.0, "{entry}");
    }
    for pair in log.windows(2) {
        // Each request arrived after the previous one was answered.
        assert!(number(&pair[1], "arrival_ms") >= number(&pair[0], "sent_ms"));
    }
    let now_unix_ms =
        support::date_secs(&httpdate::fmt_http_date(std::time::SystemTime::now())) as f64 * 1000.0;
    assert!((now_unix_ms - number(&log[0], "arrival_unix_ms")).abs() < 20_000.0);
}

#[tokio::test]
async fn schedule_b_dates_are_moved_onto_the_real_clock_keeping_their_offset() {
    let server = Server::start(&repo_root());
    let url = server.palettes("schedule-b", "schedule-b-offsets");
    for _ in 0..2 {
        let reply = get(&url).await.expect("a response");
        assert_eq!(reply.status, 429);
        let date = assert_real_date(&reply);
        let retry_after = reply.header("retry-after").expect("a Retry-After");
        assert!(retry_after.ends_with(" GMT") && retry_after.contains(", "));
        // Scripted: each date is 4 s after its receipt on the scenario's clock.
        assert_eq!(date_secs(retry_after) - date, 4, "{retry_after}");
    }
}

#[tokio::test]
async fn a_fractional_offset_is_rounded_up_and_scripted_headers_and_bodies_are_sent() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let url = server.palettes("tiny-date", "fraction");
    let first = get(&url).await.expect("a response");
    assert_eq!(first.status, 429);
    // Received at 0.1 s with a date 3 s after the start: 2.9 s, sent as 3.
    let date = assert_real_date(&first);
    let retry_after = first.header("retry-after").expect("a Retry-After");
    assert_eq!(date_secs(retry_after) - date, 3);
    assert_eq!(first.header("x-scripted"), Some("kept"));
    assert_eq!(first.header("content-type"), None);
    assert_eq!(first.body, "");

    let second = get(&url).await.expect("a response");
    assert_eq!(second.status, 200);
    assert_eq!(second.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&second.body).expect("JSON");
    assert_eq!(body, json!({ "palettes": ["sea glass", "kelp"] }));

    let log = server.log("fraction").await;
    assert_eq!(log[0]["retry_after"], retry_after);
    assert_eq!(log[0]["date"], first.header("date").expect("a Date"));
}

#[tokio::test]
async fn a_date_on_an_attempt_the_model_never_makes_is_measured_from_the_live_receipt() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let url = server.palettes("tiny-unreached", "unreached");
    // The model stops at the 503; a client that retries anyway, after a pause, gets response 2,
    // whose date is 10 s after the scenario's start. Its receipt is live: at least the two
    // durations and the pause (1.6 s) into the run, and at most what this client measured from
    // before its first request to after its second. So the offset sent is 10 s less that
    // receipt, rounded up: 9 on a quiet machine, never 10 (a receipt not measured live).
    let pause = Duration::from_millis(1500);
    let started = Instant::now();
    assert_eq!(get(&url).await.expect("1").status, 503);
    tokio::time::sleep(pause).await;
    let second = get(&url).await.expect("2");
    let at_most = started.elapsed().as_secs_f64();
    let at_least = 0.05 + pause.as_secs_f64() + 0.05;
    assert_eq!(second.status, 429);
    let date = assert_real_date(&second);
    let retry_after = second.header("retry-after").expect("a Retry-After");
    let offset = date_secs(retry_after) - date;
    let fewest = (10.0 - at_most).ceil() as i64;
    let most = (10.0 - at_least).ceil() as i64;
    assert_eq!(most, 9);
    assert!(
        (fewest..=most).contains(&offset),
        "{retry_after}: {offset} s after its Date, want {fewest} to {most}"
    );
}

#[tokio::test]
async fn a_date_without_a_scenario_clock_is_sent_as_scripted_without_clock_evidence() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let reply = get(&server.palettes("tiny-untrusted", "untrusted"))
        .await
        .expect("a response");
    assert_eq!(reply.status, 429);
    assert_eq!(
        reply.header("retry-after"),
        Some("Mon, 01 Jan 2024 12:00:06 GMT")
    );
    // No clock evidence: no Date header at all, so a client cannot read the date as past.
    assert_eq!(reply.header("date"), None);
    // Everything else the server sends still carries a real Date.
    let page = get(&server.at("/")).await.expect("a response");
    assert_real_date(&page);
}

/// Scenarios that script the headers the server otherwise writes itself.
const OWN_HEADERS: &str = r#"{ "scenarios": [
    { "name": "own-headers", "wall_clock_at_start": "Mon, 01 Jan 2024 12:00:00 GMT",
      "responses": [ { "duration_s": 0, "status": 200, "body": [],
        "headers": { "Date": "Mon, 01 Jan 2024 12:00:00 GMT", "Cache-Control": "max-age=5" } } ] },
    { "name": "own-date-no-clock",
      "responses": [ { "duration_s": 0, "status": 200, "body": [],
        "headers": { "Date": "Mon, 01 Jan 2024 12:00:00 GMT" } } ] }
] }"#;

#[tokio::test]
async fn a_scripted_date_is_never_sent_and_a_scripted_cache_control_is() {
    let root = tiny_root();
    root.write("fixtures/own.json", OWN_HEADERS);
    let server = Server::start(&root.0);
    // The real Date is the clock evidence for a Retry-After date: a scripted one never replaces
    // it, and a scenario without a clock sends none at all.
    let clocked = get(&server.palettes("own-headers", "own"))
        .await
        .expect("a response");
    assert_eq!(clocked.status, 200);
    assert_real_date(&clocked);
    // Cache-Control is the server's `no-store` only where the scenario says nothing.
    assert_eq!(clocked.header("cache-control"), Some("max-age=5"));
    let clockless = get(&server.palettes("own-date-no-clock", "own-no-clock"))
        .await
        .expect("a response");
    assert_eq!(clockless.status, 200);
    assert_eq!(clockless.header("date"), None);
    assert_eq!(clockless.header("cache-control"), Some("no-store"));
}

#[tokio::test]
async fn cors_headers_are_on_every_palettes_response_and_the_preflight() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let ok = get(&server.palettes("tiny-two", "cors"))
        .await
        .expect("a response");
    assert_eq!(ok.status, 429);
    assert_cors(&ok);
    let rejected = get(&server.at("/palettes?collection=coast"))
        .await
        .expect("a response");
    assert_eq!(rejected.status, 404);
    assert_cors(&rejected);

    let preflight = send(
        Method::OPTIONS,
        &server.palettes("tiny-two", "cors-preflight"),
        &[
            ("origin", "http://elsewhere.test"),
            ("access-control-request-method", "GET"),
            ("access-control-request-headers", "x-trace"),
        ],
    )
    .await
    .expect("a response");
    assert_eq!(preflight.status, 204);
    assert_cors(&preflight);
    assert_eq!(
        preflight.header("access-control-allow-methods"),
        Some("GET, OPTIONS")
    );
    assert_eq!(
        preflight.header("access-control-allow-headers"),
        Some("x-trace")
    );
    // A browser may keep the preflight's answer for ten minutes.
    assert_eq!(preflight.header("access-control-max-age"), Some("600"));
    // A preflight takes no scripted response: the run's first GET still gets response 1.
    let first = get(&server.palettes("tiny-two", "cors-preflight"))
        .await
        .expect("a response");
    assert_eq!(first.status, 429);
    let log = server.log("cors-preflight").await;
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["method"], "OPTIONS");
    assert_eq!(log[0]["attempt"], Value::Null);
    assert_eq!(log[1]["attempt"], 1);

    // A HEAD is refused and takes no scripted response either (a link checker once used up a
    // run's responses, and logged faults no client received).
    let head = send(Method::HEAD, &server.palettes("tiny-two", "head"), &[])
        .await
        .expect("a response");
    assert_eq!(head.status, 405);
    assert_eq!(head.header("allow"), Some("GET,OPTIONS"));
    // Every other method's 405 names only the methods that work: HEAD is not one.
    for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
        let refused = send(method.clone(), &server.palettes("tiny-two", "head"), &[])
            .await
            .expect("a response");
        assert_eq!(refused.status, 405, "{method}");
        assert_eq!(refused.header("allow"), Some("GET,OPTIONS"), "{method}");
    }
    let first = get(&server.palettes("tiny-two", "head"))
        .await
        .expect("a response");
    assert_eq!(
        first.status, 429,
        "the run's first GET still gets response 1"
    );
}

#[tokio::test]
async fn every_collection_is_served_from_the_scripted_scenario() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    for collection in ["coast", "forest", "desert"] {
        let run = format!("collection-{collection}");
        let path = format!("/palettes?collection={collection}&scenario=tiny-two&run={run}");
        let reply = get(&server.at(&path)).await.expect("a response");
        assert_eq!(reply.status, 429, "{collection}");
        let log = server.log(&run).await;
        assert_eq!(log.len(), 1, "{log:?}");
        assert_eq!(log[0]["collection"], collection);
        assert_eq!(log[0]["attempt"], 1);
    }
}

#[tokio::test]
async fn bad_requests_get_a_clear_4xx_and_are_logged() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let cases: &[(&str, u16, &str)] = &[
        (
            "/palettes?scenario=tiny-two&run=bad",
            404,
            "missing `collection` parameter; the collections are \"coast\", \"forest\", \"desert\"",
        ),
        (
            "/palettes?collection=jungle&scenario=tiny-two&run=bad",
            404,
            "unknown collection \"jungle\"; the collections are \"coast\", \"forest\", \"desert\"",
        ),
        (
            "/palettes?collection=coast&run=bad",
            404,
            "missing `scenario` parameter; known scenarios: tiny-date, tiny-slow, tiny-transport, \
             tiny-two, tiny-unreached, tiny-untrusted",
        ),
        (
            "/palettes?collection=coast&scenario=no-such&run=bad",
            404,
            "unknown scenario \"no-such\"; known scenarios: tiny-date, tiny-slow, tiny-transport, \
             tiny-two, tiny-unreached, tiny-untrusted",
        ),
        (
            "/palettes?collection=coast&scenario=tiny-two",
            400,
            "missing `run` parameter",
        ),
        (
            "/palettes?collection=coast&scenario=tiny-two&run=",
            400,
            "missing `run` parameter",
        ),
    ];
    for (path, status, message) in cases {
        let reply = get(&server.at(path)).await.expect("a response");
        assert_eq!(reply.status, *status, "{path}");
        assert!(reply.body.starts_with(message), "{path}: {}", reply.body);
        assert_eq!(
            reply.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
        assert_real_date(&reply);
    }

    // Running out of scripted responses, and switching scenario within a run.
    let url = server.palettes("tiny-two", "short");
    assert_eq!(get(&url).await.expect("1").status, 429);
    assert_eq!(get(&url).await.expect("2").status, 503);
    let third = get(&url).await.expect("3");
    assert_eq!(third.status, 409);
    assert_eq!(
        third.body,
        "run short of scenario tiny-two asked for response 3 but only 2 are scripted"
    );
    let switched = get(&server.palettes("tiny-date", "short"))
        .await
        .expect("4");
    assert_eq!(switched.status, 409);
    assert!(
        switched
            .body
            .starts_with("run short belongs to scenario tiny-two, not tiny-date"),
        "{}",
        switched.body
    );

    let rejected = server.log("bad").await;
    assert_eq!(rejected.len(), 4);
    for (entry, (_, status, message)) in rejected.iter().zip(cases) {
        assert_eq!(entry["attempt"], Value::Null);
        assert_eq!(entry["status"], *status);
        assert!(entry["error"]
            .as_str()
            .is_some_and(|e| e.starts_with(message)));
    }
    let short = server.log("short").await;
    let statuses: Vec<&Value> = short.iter().map(|e| &e["status"]).collect();
    assert_eq!(
        statuses,
        [&json!(429), &json!(503), &json!(409), &json!(409)]
    );
    assert!(server
        .stderr()
        .contains("rejected: unknown scenario \"no-such\""));

    // Escapes that are not UTF-8 are refused, not read as U+FFFD (which made `%ff`, `%fe` and
    // `%c3` one run), and so is a parameter longer than the server reads; each is logged with
    // its URI cut short.
    for run in ["%ff", "%fe", "%c3"] {
        let path = format!("/palettes?collection=coast&scenario=tiny-two&run={run}");
        let reply = get(&server.at(&path)).await.expect("a response");
        assert_eq!(reply.status, 400, "{run}");
        assert_eq!(
            reply.body,
            format!("malformed query string: \"{run}\" does not decode to UTF-8")
        );
    }
    let long = "r".repeat(60_000);
    let path = format!("/palettes?collection=coast&scenario=tiny-two&run={long}");
    let reply = get(&server.at(&path)).await.expect("a response");
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.body,
        "the `run` parameter is 60000 bytes long; at most 256 are read"
    );
    let log = get(&server.at("/log")).await.expect("GET /log");
    let log: Vec<Value> = serde_json::from_str(&log.body).expect("the log is JSON");
    let kept = log.last().expect("the last entry");
    assert!(kept["uri"]
        .as_str()
        .is_some_and(|u| u.len() < 520 && u.ends_with('…')));
    assert!(kept["run"].as_str().is_some_and(|r| r.len() < 520));
    // A run id that holds a newline cannot forge a line of the access log on stderr.
    let forged = "/palettes?collection=coast&scenario=no-such&run=x%0Afixture-server:%20forged";
    assert_eq!(
        get(&server.at(forged)).await.expect("a response").status,
        404
    );
    assert!(server.stderr().contains("run=x\\nfixture-server: forged"));
    assert!(!server
        .stderr()
        .lines()
        .any(|l| l.starts_with("fixture-server: forged")));
}

#[tokio::test]
async fn runs_are_independent_even_when_concurrent() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let a = server.palettes("tiny-two", "run-a");
    let b = server.palettes("tiny-two", "run-b");
    assert_eq!(get(&a).await.expect("a1").status, 429);
    let (a2, b1) = tokio::join!(get(&a), get(&b));
    assert_eq!(a2.expect("a2").status, 503);
    assert_eq!(b1.expect("b1").status, 429);
    assert_eq!(get(&b).await.expect("b2").status, 503);
    let log_a = server.log("run-a").await;
    let log_b = server.log("run-b").await;
    assert_eq!(log_a.len(), 2);
    assert_eq!(log_b.len(), 2);
    assert!(log_a.iter().all(|e| e["run"] == "run-a"));
    assert_eq!(log_b[1]["attempt"], 2);
}

#[tokio::test]
async fn a_transport_error_cuts_the_response_short_after_its_duration() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let started = Instant::now();
    let failed = get(&server.palettes("tiny-transport", "drop")).await;
    let took = started.elapsed();
    assert!(failed.is_err(), "expected a failure, got {failed:?}");
    assert!(took >= Duration::from_millis(200), "{took:?}");
    // The status line and a first chunk go out, then the connection ends mid-body: the
    // chunked body never gets its terminating zero-length chunk.
    let raw = raw_exchange(
        &server.url,
        "GET /palettes?collection=coast&scenario=tiny-transport&run=drop-raw HTTP/1.1\r\n\
         Host: fixture\r\n\r\n",
    );
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw:?}");
    assert!(raw.contains("sea glass"), "{raw:?}");
    assert!(
        !raw.ends_with("0\r\n\r\n"),
        "the body must not complete: {raw:?}"
    );
    let log = server.log("drop").await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["status"], "transport_error");
    assert_eq!(log[0]["attempt"], 1);
    assert!(number(&log[0], "sent_ms") - number(&log[0], "arrival_ms") >= 200.0);
}

/// The head of a cut-short response follows the rule of every scripted response: a real `Date`
/// when the scenario has a clock, which the log records, and none without one (the log's `date`
/// was null while a `Date` went out, in both cases).
#[tokio::test]
async fn a_transport_errors_date_follows_the_scenario_clock_and_is_logged() {
    let root = tiny_root();
    root.write(
        "fixtures/clocked.json",
        r#"{ "scenarios": [ { "name": "clocked-transport",
              "wall_clock_at_start": "Mon, 01 Jan 2024 12:00:00 GMT",
              "responses": [ { "duration_s": 0, "transport_error": "network" } ] } ] }"#,
    );
    let server = Server::start(&root.0);
    let date_of = |raw: &str| {
        raw.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("date")
                .then(|| value.trim().to_string())
        })
    };
    let raw = raw_exchange(
        &server.url,
        "GET /palettes?collection=coast&scenario=clocked-transport&run=cut-clocked HTTP/1.1\r\n\
         Host: fixture\r\n\r\n",
    );
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw:?}");
    let sent = date_of(&raw).unwrap_or_else(|| panic!("no Date: {raw:?}"));
    let log = server.log("cut-clocked").await;
    assert_eq!(log[0]["status"], "transport_error");
    assert_eq!(log[0]["date"], sent.as_str());
    // tiny-transport has no `wall_clock_at_start`: no Date, and none logged.
    let raw = raw_exchange(
        &server.url,
        "GET /palettes?collection=coast&scenario=tiny-transport&run=cut-clockless HTTP/1.1\r\n\
         Host: fixture\r\n\r\n",
    );
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw:?}");
    assert_eq!(date_of(&raw), None, "{raw:?}");
    let log = server.log("cut-clockless").await;
    assert_eq!(log[0]["status"], "transport_error");
    assert_eq!(log[0]["date"], Value::Null);
}

#[tokio::test]
async fn a_client_that_leaves_mid_request_is_logged_without_a_status() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream
        .write_all(
            b"GET /palettes?collection=coast&scenario=tiny-slow&run=gone HTTP/1.1\r\n\
              Host: fixture\r\n\r\n",
        )
        .expect("send");
    // Leave once the server has the request and is waiting its 4 s (nothing sent, nobody
    // gone yet): the order of events, not a guess at how long the server takes to read it.
    let waiting = |e: &Value| e["status"].is_null() && e["client_gone_ms"].is_null();
    let arrived = server
        .log_once("gone", |log| log.first().is_some_and(waiting))
        .await;
    drop(stream);
    let log = server
        .log_once("gone", |log| {
            log.first().is_some_and(|e| !e["client_gone_ms"].is_null())
        })
        .await;
    let entry = &log[0];
    assert_eq!(entry["attempt"], 1);
    assert_eq!(entry["status"], Value::Null);
    assert_eq!(entry["sent_ms"], Value::Null);
    assert_eq!(entry["arrival_ms"], arrived[0]["arrival_ms"]);
    // Noticed while the server waited, not when it came to send: before the scripted 4 s.
    let gone_after = number(entry, "client_gone_ms") - number(entry, "arrival_ms");
    assert!((0.0..4000.0).contains(&gone_after), "{entry}");
}

#[tokio::test]
async fn the_log_can_be_cleared_without_resetting_runs() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let url = server.palettes("tiny-two", "cleared");
    assert_eq!(get(&url).await.expect("1").status, 429);
    // `?run=` does not narrow a clear: it is refused, and nothing is cleared.
    let narrowed = send(Method::DELETE, &server.at("/log?run=cleared"), &[])
        .await
        .expect("DELETE /log?run=");
    assert_eq!(narrowed.status, 400, "{}", narrowed.body);
    assert!(
        narrowed.body.contains("takes no parameters"),
        "{}",
        narrowed.body
    );
    assert_eq!(server.log("cleared").await.len(), 1);
    let cleared = send(Method::DELETE, &server.at("/log"), &[])
        .await
        .expect("DELETE /log");
    assert_eq!(cleared.status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&cleared.body).expect("JSON"),
        json!({ "cleared": 1 })
    );
    let all = get(&server.at("/log")).await.expect("GET /log");
    assert_eq!(all.body, "[]");
    assert_eq!(all.header("content-type"), Some("application/json"));
    assert_eq!(get(&url).await.expect("2").status, 503);
    let log = server.log("cleared").await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["attempt"], 2);
    assert_eq!(log[0]["seq"], 2);
}

#[tokio::test]
async fn static_files_are_served_with_their_types_and_no_listing() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    let files: &[(&str, &str, &[u8])] = &[
        (
            "/",
            "text/html",
            b"<!doctype html><title>fixture page</title>",
        ),
        (
            "/index.html",
            "text/html",
            b"<!doctype html><title>fixture page</title>",
        ),
        ("/app.js", "text/javascript", b"export const answer = 42;\n"),
        ("/style.css", "text/css", b"body { margin: 0 }\n"),
        ("/sub/inner.txt", "text/plain", b"inner\n"),
        (
            "/pkg/retry_budget.js",
            "text/javascript",
            b"export default function init() {}\n",
        ),
        ("/pkg/retry_budget_bg.wasm", "application/wasm", WASM_BYTES),
        (
            "/pkg-full/retry_budget.js",
            "text/javascript",
            b"export function simulate() {}\n",
        ),
        (
            "/fixtures/tiny.json",
            "application/json",
            support::TINY_SCENARIOS.as_bytes(),
        ),
    ];
    for (path, content_type, bytes) in files {
        let reply = get(&server.at(path)).await.expect("a response");
        assert_eq!(reply.status, 200, "{path}");
        let got = reply.header("content-type").unwrap_or_default();
        assert!(got.starts_with(content_type), "{path}: {got}");
        assert_eq!(reply.bytes, *bytes, "{path}");
        assert_eq!(reply.header("cache-control"), Some("no-store"), "{path}");
        assert_real_date(&reply);
    }
    for path in [
        "/sub/",
        "/sub",
        "/pkg/",
        "/fixtures/",
        "/missing.js",
        "/secret.txt",
    ] {
        let reply = get(&server.at(path)).await.expect("a response");
        assert_eq!(reply.status, 404, "{path}");
        assert!(!reply.body.contains("inner.txt"), "{path} lists a folder");
        assert!(!reply.body.contains(SECRET), "{path}");
    }
    let missing = get(&server.at("/missing.js")).await.expect("a response");
    assert_eq!(missing.body, "not found: /missing.js");
}

#[tokio::test]
async fn a_mount_serves_its_folder_under_its_prefix() {
    let root = tiny_root();
    root.write(
        "tests/pages/start.html",
        "<!doctype html><title>mounted</title>",
    );
    let server = Server::start_with(&root.0, &["--mount", "/e2e=tests/pages"]);
    let reply = get(&server.at("/e2e/start.html"))
        .await
        .expect("a response");
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    assert_eq!(reply.body, "<!doctype html><title>mounted</title>");
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    assert_real_date(&reply);
    // The prefix names the mounted folder only, and a missing file there is the usual 404.
    for path in ["/e2e/missing.html", "/e2e/app.js"] {
        let missing = get(&server.at(path)).await.expect("a response");
        assert_eq!(missing.status, 404, "{path}");
        assert_eq!(missing.body, format!("not found: {path}"));
    }
    // The rest of the routes are as without the mount.
    let page = get(&server.at("/app.js")).await.expect("a response");
    assert_eq!(page.status, 200);
}

#[tokio::test]
async fn parent_folders_are_refused_however_written() {
    let root = tiny_root();
    let server = Server::start(&root.0);
    for path in [
        "/../secret.txt",
        "/fixtures/../secret.txt",
        "/pkg/../../secret.txt",
        "/fixtures/%2e%2e/secret.txt",
        "/fixtures/%2E%2E/secret.txt",
        "/fixtures/..%2fsecret.txt",
        "/sub/..%5c..%5csecret.txt",
    ] {
        let raw = raw_exchange(
            &server.url,
            &format!("GET {path} HTTP/1.1\r\nHost: fixture\r\nConnection: close\r\n\r\n"),
        );
        assert!(raw.starts_with("HTTP/1.1 400 "), "{path}: {raw}");
        assert!(raw.contains("`..` is not allowed"), "{path}: {raw}");
        assert!(!raw.contains(SECRET), "{path}");
    }
}

/// Runs the server on `root`, expecting it to refuse to start.
fn refusal(root: &TempDir) -> (bool, String, String) {
    support::refusal(&root.0, &[])
}

#[test]
fn a_rejected_scenario_stops_the_server_from_starting() {
    let root = TempDir::new();
    root.write(
        "fixtures/bad.json",
        r#"{ "scenarios": [
              { "name": "too-slow", "responses": [ { "duration_s": 9, "status": 200 } ] }
           ] }"#,
    );
    let (ok, stdout, stderr) = refusal(&root);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("bad.json: scenario \"too-slow\", field `responses[0].duration_s`"),
        "{stderr}"
    );
    assert!(stderr.contains("refusing to start"), "{stderr}");
}

#[test]
fn an_interim_status_stops_the_server_from_starting() {
    let root = TempDir::new();
    root.write(
        "fixtures/interim.json",
        r#"{ "scenarios": [
              { "name": "early-hints", "responses": [ { "duration_s": 1, "status": 103 } ] }
           ] }"#,
    );
    let (ok, stdout, stderr) = refusal(&root);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert!(
        stderr.contains(
            "scenario \"early-hints\", field `responses[0].status`: 103 cannot be served as a \
             final HTTP response (1xx statuses are interim)"
        ),
        "{stderr}"
    );
}

#[test]
fn a_key_given_twice_stops_the_server_from_starting() {
    let root = TempDir::new();
    root.write(
        "fixtures/twice.json",
        r#"{ "scenarios": [
              { "name": "twice", "responses": [ { "duration_s": 1, "status": 503, "status": 200 } ] }
           ] }"#,
    );
    let (ok, stdout, stderr) = refusal(&root);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("twice.json: scenario \"twice\", field `responses[0].status`: the key \"status\" is given more than once"),
        "{stderr}"
    );
}

#[test]
fn a_name_used_in_two_files_stops_the_server_from_starting() {
    let root = TempDir::new();
    let scenario = r#"{ "scenarios": [
        { "name": "twice", "responses": [ { "duration_s": 1, "status": 200 } ] }
    ] }"#;
    root.write("fixtures/a.json", scenario);
    root.write("fixtures/b.json", scenario);
    let (ok, stdout, stderr) = refusal(&root);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("b.json: scenario \"twice\": the name is already used in a.json"),
        "{stderr}"
    );
}

/// A scripted header that frames the message (its length, its coding) or the connection would
/// contradict the body the server sends: the client read an empty reply where the log said
/// 200. Such a scenario is refused at the start, naming the field.
#[test]
fn a_scripted_framing_header_stops_the_server_from_starting() {
    for (header, value) in [
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "999"),
        ("connection", "close"),
        ("Upgrade", "websocket"),
    ] {
        let root = TempDir::new();
        let scenario = json!({ "scenarios": [{ "name": "framed", "responses": [
            { "duration_s": 1, "status": 200, "headers": { header: value }, "body": ["x"] }
        ] }] });
        root.write("fixtures/framed.json", scenario.to_string());
        let (ok, stdout, stderr) = refusal(&root);
        assert!(!ok, "{header}");
        assert_eq!(stdout, "");
        let field = format!("field `responses[0].headers.{header}`: frames the message");
        assert!(stderr.contains(&field), "{header}: {stderr}");
    }
}

/// A 204 or a 304 carries no content (RFC 9110, sections 15.3.5 and 15.4.5): a scripted body
/// there is refused at the start, naming the field, where the server sent a 204 whose
/// `Content-Length: 5` promised bytes that never came.
#[test]
fn a_body_on_a_status_without_content_stops_the_server_from_starting() {
    for status in [204, 205, 304] {
        let root = TempDir::new();
        let scenario = json!({ "scenarios": [{ "name": "bodied", "responses": [
            { "duration_s": 1, "status": 200 },
            { "duration_s": 1, "status": status, "body": ["x"] }
        ] }] });
        root.write("fixtures/bodied.json", scenario.to_string());
        let (ok, stdout, stderr) = refusal(&root);
        assert!(!ok, "{status}");
        assert_eq!(stdout, "");
        let field = format!(
            "bodied.json: scenario \"bodied\", field `responses[1].body`: a {status} response \
             carries no content"
        );
        assert!(stderr.contains(&field), "{status}: {stderr}");
    }
}

/// A scripted 204 or 304 goes out as a head alone: no body, and neither `Content-Length` nor
/// `Content-Type`, which would describe content it does not have.
#[tokio::test]
async fn a_status_without_content_goes_out_without_content_headers() {
    let root = tiny_root();
    root.write(
        "fixtures/empty.json",
        r#"{ "scenarios": [ { "name": "no-content", "responses": [
              { "duration_s": 0, "status": 204 }, { "duration_s": 0, "status": 304 } ] } ] }"#,
    );
    let server = Server::start(&root.0);
    for status in ["204", "304"] {
        let raw = raw_exchange(
            &server.url,
            "GET /palettes?collection=coast&scenario=no-content&run=empty HTTP/1.1\r\n\
             Host: fixture\r\nConnection: close\r\n\r\n",
        );
        assert!(raw.starts_with(&format!("HTTP/1.1 {status} ")), "{raw:?}");
        let lower = raw.to_ascii_lowercase();
        for name in ["content-length:", "transfer-encoding:", "content-type:"] {
            assert!(!lower.contains(name), "{status} has {name}: {raw:?}");
        }
        assert!(raw.ends_with("\r\n\r\n"), "{status} has a body: {raw:?}");
    }
}

/// A header value is visible ASCII, spaces and tabs, as the refusal says: one outside ASCII
/// (`café`) is refused at the start, where it went out as raw UTF-8 bytes.
#[test]
fn a_header_value_outside_ascii_stops_the_server_from_starting() {
    let root = TempDir::new();
    let scenario = json!({ "scenarios": [{ "name": "accented", "responses": [
        { "duration_s": 1, "status": 200, "headers": { "X-Name": "café" } }
    ] }] });
    root.write("fixtures/accented.json", scenario.to_string());
    let (ok, stdout, stderr) = refusal(&root);
    assert!(!ok);
    assert_eq!(stdout, "");
    let field = "accented.json: scenario \"accented\", field `responses[0].headers.X-Name`: \
                 not a valid HTTP header value (visible ASCII, spaces and tabs only)";
    assert!(stderr.contains(field), "{stderr}");
}

/// Whatever is named `*.json` in the fixtures folder is read: a link to nowhere is an unreadable
/// file, not skipped unseen.
#[cfg(unix)]
#[test]
fn a_fixture_link_to_nowhere_stops_the_server_from_starting() {
    let root = tiny_root();
    std::os::unix::fs::symlink(
        root.0.join("nowhere.json"),
        root.0.join("fixtures/dangling.json"),
    )
    .expect("a link");
    let (ok, _, stderr) = refusal(&root);
    assert!(!ok);
    assert!(stderr.contains("dangling.json: cannot read"), "{stderr}");
}

/// A `--mount` folder that does not exist, or is a file, is refused at the start, naming the
/// flag: every request under it would have been a 404, or the file served for every path.
#[test]
fn a_mount_that_is_not_a_folder_stops_the_server_from_starting() {
    let root = tiny_root();
    for mount in ["/x=nowhere", "/x=secret.txt"] {
        let (ok, _, stderr) = support::refusal(&root.0, &["--mount", mount]);
        assert!(!ok, "{mount}");
        assert!(
            stderr.contains(&format!("--mount {mount}: ")),
            "{mount}: {stderr}"
        );
        assert!(stderr.contains("is not a folder"), "{mount}: {stderr}");
    }
}

/// A `--mount` folder is inside the root once links are followed: a link inside the root that
/// leads out of it is refused at the start, where it served what it led to.
#[cfg(unix)]
#[test]
fn a_mount_that_links_out_of_the_root_stops_the_server_from_starting() {
    let root = tiny_root();
    let outside = TempDir::new();
    outside.write("elsewhere.txt", SECRET);
    std::os::unix::fs::symlink(&outside.0, root.0.join("link")).expect("a link");
    std::os::unix::fs::symlink(root.0.join("www"), root.0.join("inner")).expect("a link");
    let (ok, _, stderr) = support::refusal(&root.0, &["--mount", "/x=link"]);
    assert!(!ok);
    assert!(stderr.contains("--mount /x=link: "), "{stderr}");
    assert!(stderr.contains("outside the root"), "{stderr}");
    // A link that stays inside the root is a folder like any other.
    let server = Server::start_with(&root.0, &["--mount", "/y=inner"]);
    drop(server);
}

#[test]
fn a_missing_fixtures_folder_stops_the_server_from_starting() {
    let root = TempDir::new();
    let (ok, _, stderr) = refusal(&root);
    assert!(!ok);
    assert!(
        stderr.contains("cannot read the fixtures folder"),
        "{stderr}"
    );
}
