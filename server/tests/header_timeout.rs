//! `--header-timeout`: a connection that does not finish a request head in time is closed, so
//! that clients which never finish cannot hold the server's sockets forever. The timer runs
//! whenever the server waits for a head, an idle kept-alive connection included.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use support::{tiny_root, Server};

/// The short timeout the tests give the server.
const TIMEOUT: Duration = Duration::from_millis(500);

/// How long the tests wait for a close before they call it "never".
const PATIENCE: Duration = Duration::from_secs(10);

fn connect(server: &Server) -> TcpStream {
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(PATIENCE))
        .expect("a read timeout");
    stream
}

/// Reads until the server closes the connection, and says how long that took and what came;
/// `Err` when it was still open after [`PATIENCE`].
fn until_closed(stream: &mut TcpStream) -> Result<(Duration, Vec<u8>), String> {
    let start = Instant::now();
    let mut got = Vec::new();
    match stream.read_to_end(&mut got) {
        Ok(_) => Ok((start.elapsed(), got)),
        Err(e) if e.kind() == ErrorKind::ConnectionReset => Ok((start.elapsed(), got)),
        Err(e) => Err(format!(
            "still open after {:?} ({e}); got {:?}",
            start.elapsed(),
            String::from_utf8_lossy(&got)
        )),
    }
}

/// Reads one response to `GET /app.js` (whose body ends the answer).
fn read_answer(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buffer = [0u8; 1024];
    while !String::from_utf8_lossy(&got).ends_with("answer = 42;\n") {
        let n = stream.read(&mut buffer).expect("an answer");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn a_request_head_left_unfinished_is_closed_after_the_timeout() {
    let root = tiny_root();
    let server = Server::start_with(&root.0, &["--header-timeout", "0.5"]);
    let mut stream = connect(&server);
    let start = Instant::now();
    stream
        .write_all(b"GET /app.js HTTP/1.1\r\nHost: fixture\r\nX-Slow: ")
        .expect("send part of a head");
    let (_, got) = until_closed(&mut stream).unwrap_or_else(|e| panic!("{e}"));
    let took = start.elapsed();
    // hyper may start the timer as it accepts, a moment before `connect` returned here.
    assert!(
        took >= TIMEOUT - Duration::from_millis(50),
        "closed after {took:?}, before the timeout"
    );
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));

    // A connection that sends nothing at all is closed the same way.
    let mut silent = connect(&server);
    let (took, _) = until_closed(&mut silent).unwrap_or_else(|e| panic!("{e}"));
    assert!(took >= TIMEOUT - Duration::from_millis(50), "{took:?}");
}

#[test]
fn a_kept_alive_connection_serves_requests_within_the_timeout_and_is_closed_when_idle() {
    let root = tiny_root();
    let server = Server::start_with(&root.0, &["--header-timeout", "0.5"]);
    let mut stream = connect(&server);
    let request = b"GET /app.js HTTP/1.1\r\nHost: fixture\r\n\r\n";
    let mut last_sent = Instant::now();
    for _ in 0..2 {
        last_sent = Instant::now();
        stream.write_all(request).expect("send a request");
        let answer = read_answer(&mut stream);
        assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
        std::thread::sleep(TIMEOUT / 4);
    }
    // Idle since the last answer: closed a timeout after the server began waiting again, which
    // was after the last request reached it.
    let (_, got) = until_closed(&mut stream).unwrap_or_else(|e| panic!("{e}"));
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
    let closed = last_sent.elapsed();
    assert!(
        closed >= TIMEOUT,
        "closed {closed:?} after the last request"
    );
}

#[test]
fn a_request_being_answered_outlasts_the_timeout() {
    let root = tiny_root();
    let server = Server::start_with(&root.0, &["--header-timeout", "0.5"]);
    let mut stream = connect(&server);
    let start = Instant::now();
    stream
        .write_all(
            b"GET /palettes?collection=coast&scenario=tiny-slow&run=r1 HTTP/1.1\r\n\
              Host: fixture\r\nConnection: close\r\n\r\n",
        )
        .expect("send a request");
    let (_, got) = until_closed(&mut stream).unwrap_or_else(|e| panic!("{e}"));
    let answer = String::from_utf8_lossy(&got);
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert!(start.elapsed() >= Duration::from_secs(4), "{answer}");
}
