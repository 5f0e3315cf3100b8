//! Routes: the scripted `/palettes` service, the request log, and the static files.

use std::collections::HashMap;
use std::future::Future as _;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime};

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{OriginalUri, Query, Request, State};
use axum::handler::HandlerWithoutStateExt;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use percent_encoding::percent_decode_str;
use tokio::sync::watch;
use tower_http::services::{ServeDir, ServeFile};

use crate::catalog::{Catalog, Loaded, PreparedReply, COLLECTION};
use crate::faults::{Fault, RESEND_WINDOW};
use crate::log::{unix_ms, Entry, RequestLog, Sent};
use crate::serve::Connection;
use crate::shift::{shift_retry_after, unix_secs};

/// Shared by every request.
#[derive(Debug)]
pub struct AppState {
    catalog: Catalog,
    runs: Mutex<HashMap<String, RunState>>,
    /// The `/palettes` request log.
    pub log: RequestLog,
    /// The Content-Security-Policy sent with every response: the page's policy, with the
    /// server's own origins (both ports) as the only places it may connect to.
    csp: HeaderValue,
    /// When each run's k-th scripted response is due to be sent, for `/away`.
    sends: Mutex<HashMap<(String, u32), Instant>>,
    /// Bumped whenever `sends` gains an entry.
    sends_changed: watch::Sender<u64>,
    /// Each run's last `reset` fault: when, and which attempt, to recognise the browser's
    /// resend of the reset request.
    resets: Mutex<HashMap<String, (Instant, u32)>>,
}

/// Where one run is.
#[derive(Debug)]
struct RunState {
    /// The scenario the run's first request named; a run never changes scenario.
    scenario: String,
    /// How many scripted responses the run has been given (the next one's index).
    next: usize,
    /// When its first request arrived: the live "elapsed zero" of the run.
    first_arrival: Instant,
}

impl AppState {
    /// Serves `catalog`; `started` is the server's start, from which the log counts;
    /// `origins` are the server's own origins (`http://127.0.0.1:PORT`), which the page may
    /// fetch from.
    pub fn new(catalog: Catalog, started: Instant, origins: &[String]) -> Self {
        AppState {
            catalog,
            runs: Mutex::new(HashMap::new()),
            log: RequestLog::new(started),
            csp: page_csp(origins),
            sends: Mutex::new(HashMap::new()),
            sends_changed: watch::channel(0).0,
            resets: Mutex::new(HashMap::new()),
        }
    }

    fn note_reset(&self, run: &str, attempt: u32, at: Instant) {
        self.resets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(run.to_string(), (at, attempt));
    }

    /// The attempt whose reset `arrival` follows closely enough to be the browser's resend.
    fn resend_of(&self, run: &str, arrival: Instant) -> Option<u32> {
        let resets = self.resets.lock().unwrap_or_else(PoisonError::into_inner);
        let (at, attempt) = resets.get(run)?;
        (arrival.saturating_duration_since(*at) <= RESEND_WINDOW).then_some(*attempt)
    }

    fn record_send(&self, run: &str, attempt: u32, at: Instant) {
        self.sends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((run.to_string(), attempt), at);
        self.sends_changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn send_time(&self, run: &str, attempt: u32) -> Option<Instant> {
        self.sends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(run.to_string(), attempt))
            .copied()
    }
}

/// The page's Content-Security-Policy. No inline script, no eval (only wasm compilation), no
/// plugins, frames, forms or base changes; scripts, styles and images from the server itself;
/// connections only to the server's own origins.
fn page_csp(origins: &[String]) -> HeaderValue {
    let mut connect = String::from("'self'");
    for origin in origins {
        connect.push(' ');
        connect.push_str(origin);
    }
    let policy = format!(
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self'; connect-src {connect}; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    );
    HeaderValue::from_str(&policy)
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'"))
}

/// The body of a scripted `transport_error`: a first chunk, then a failure, so the connection
/// ends in the middle of the response.
///
/// Not a connection closed before any byte: a browser silently resends a GET whose reused
/// keep-alive connection closed that way (seen in Chromium), and the log would show a request
/// the driver never sent. A body cut short fails the fetch with a network error that nothing
/// resends.
struct BrokenBody {
    first_chunk: Option<axum::body::Bytes>,
    /// The failure waits a moment, so the first chunk is on the wire before the connection
    /// ends (hyper would otherwise drop the buffered chunk with the connection).
    fail_after: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl BrokenBody {
    fn new() -> Self {
        BrokenBody {
            first_chunk: Some(axum::body::Bytes::from_static(b"[\"sea glass\", \"drift")),
            fail_after: Box::pin(tokio::time::sleep(std::time::Duration::from_millis(50))),
        }
    }
}

impl axum::body::HttpBody for BrokenBody {
    type Data = axum::body::Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if let Some(chunk) = self.first_chunk.take() {
            return std::task::Poll::Ready(Some(Ok(http_body::Frame::data(chunk))));
        }
        std::task::ready!(self.fail_after.as_mut().poll(cx));
        std::task::Poll::Ready(Some(Err(std::io::Error::other(
            "scripted transport_error: the response is cut short",
        ))))
    }
}

/// The body of the `endless_body` fault: a first piece of JSON, then a space every
/// [`ENDLESS_TICK`], forever. It ends only when the client goes away (its abort closes the
/// connection, and the next write fails), which it records in the log.
struct EndlessBody {
    first_chunk: Option<axum::body::Bytes>,
    tick: std::pin::Pin<Box<tokio::time::Sleep>>,
    app: Arc<AppState>,
    seq: u64,
}

/// How often a body that never finishes sends one more byte.
const ENDLESS_TICK: std::time::Duration = std::time::Duration::from_millis(200);

impl EndlessBody {
    fn new(app: Arc<AppState>, seq: u64) -> Self {
        EndlessBody {
            first_chunk: Some(axum::body::Bytes::from_static(b"[\"sea glass\", ")),
            tick: Box::pin(tokio::time::sleep(ENDLESS_TICK)),
            app,
            seq,
        }
    }
}

impl axum::body::HttpBody for EndlessBody {
    type Data = axum::body::Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if let Some(chunk) = self.first_chunk.take() {
            return std::task::Poll::Ready(Some(Ok(http_body::Frame::data(chunk))));
        }
        std::task::ready!(self.tick.as_mut().poll(cx));
        let next = tokio::time::Instant::now() + ENDLESS_TICK;
        self.tick.as_mut().reset(next);
        std::task::Poll::Ready(Some(Ok(http_body::Frame::data(
            axum::body::Bytes::from_static(b" "),
        ))))
    }
}

impl Drop for EndlessBody {
    fn drop(&mut self) {
        let gone = self.app.log.ms(Instant::now());
        self.app
            .log
            .update(self.seq, |e| e.client_gone_ms = Some(gone));
        eprintln!(
            "fixture-server: {gone:>10.1} ms  request #{} abandoned its endless body",
            self.seq
        );
    }
}

/// The body of the `reset_mid_body` fault: a first chunk, then, once it is on the wire, a
/// reset of the connection (the body never completes, and nothing more is written).
struct ResettingBody {
    first_chunk: Option<axum::body::Bytes>,
    reset_after: std::pin::Pin<Box<tokio::time::Sleep>>,
    connection: Option<Connection>,
}

impl axum::body::HttpBody for ResettingBody {
    type Data = axum::body::Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if let Some(chunk) = self.first_chunk.take() {
            return std::task::Poll::Ready(Some(Ok(http_body::Frame::data(chunk))));
        }
        std::task::ready!(self.reset_after.as_mut().poll(cx));
        match &self.connection {
            // The connection task drops this body with the connection; until then (it may be
            // polled again first), nothing more: an error here would close it with a FIN.
            Some(connection) => {
                connection.reset();
                std::task::Poll::Pending
            }
            None => std::task::Poll::Ready(Some(Err(std::io::Error::other(
                "scripted reset_mid_body without a connection handle",
            )))),
        }
    }
}

/// Marks a `/palettes` response that goes out with less CORS than usual.
#[derive(Clone, Copy, Debug)]
enum CorsFault {
    /// No `Access-Control-Allow-Origin`, no `Access-Control-Expose-Headers`.
    OmitAll,
    /// No `Access-Control-Expose-Headers`.
    OmitExpose,
}

/// Extra words for the stderr access-log line of a request.
#[derive(Clone, Debug)]
pub struct LogNote(pub String);

/// Every route, serving the repository at `root`, and each of `mounts` (a URL path prefix and
/// a folder relative to the root) as a folder of its own.
pub fn router(
    state: Arc<AppState>,
    root: &Path,
    mounts: &[(String, std::path::PathBuf)],
) -> Router {
    let www = root.join("www");
    let palettes = Router::new()
        .route("/palettes", get(palettes).options(preflight))
        .layer(middleware::map_response(add_cors));
    let not_found = not_found.into_service();
    let dir = |path: &Path| {
        ServeDir::new(path)
            .append_index_html_on_directories(false)
            .redirect_to_trailing_slash(false)
            .not_found_service(not_found.clone())
    };
    let mut router = Router::new();
    for (prefix, folder) in mounts {
        router = router.nest_service(prefix, dir(&root.join(folder)));
    }
    router
        .merge(palettes)
        .route("/log", get(log_get).delete(log_delete))
        .route("/scenarios", get(scenarios))
        .route("/beacon", any(beacon))
        .route(
            "/away",
            get(away).layer(axum::Extension(AwayPage(
                root.join("server").join("pages").join("away.html"),
            ))),
        )
        .route_service("/", ServeFile::new(www.join("index.html")))
        .nest_service("/pkg", dir(&root.join("crate").join("pkg")))
        .nest_service("/fixtures", dir(&root.join("fixtures")))
        .fallback_service(dir(&www))
        .with_state(Arc::clone(&state))
        .layer(middleware::from_fn(reject_traversal))
        .layer(middleware::map_response_with_state(
            state,
            add_common_headers,
        ))
}

/// `GET /palettes?collection=coast&scenario=NAME&run=RUN`: the run's next scripted response,
/// after its scripted duration.
async fn palettes(
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    request_headers: HeaderMap,
    connection: Option<axum::Extension<Connection>>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let arrival = Instant::now();
    let arrival_wall = SystemTime::now();
    let params = query.as_ref().map(|q| &q.0);
    let param = |key: &str| {
        params
            .ok()
            .and_then(|p| p.get(key))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    let mut entry = Entry {
        seq: 0,
        method: method.to_string(),
        uri: uri.to_string(),
        run: param("run"),
        scenario: param("scenario"),
        collection: param("collection"),
        attempt: None,
        arrival_ms: app.log.ms(arrival),
        arrival_unix_ms: unix_ms(arrival_wall),
        status: None,
        error: None,
        sent_ms: None,
        sent_unix_ms: None,
        date: None,
        retry_after: None,
        client_gone_ms: None,
        fault: None,
        origin: origin_of(&request_headers),
    };
    // The browser's own resend of a request whose connection was just reset: reset it too,
    // without taking a scripted response (the driver sent one request, not two).
    let resend = entry
        .run
        .as_deref()
        .and_then(|run| app.resend_of(run, arrival));
    if let (Some(attempt), Some(axum::Extension(connection))) = (resend, connection.as_ref()) {
        let now = Instant::now();
        let wall = SystemTime::now();
        entry.attempt = Some(attempt);
        entry.fault = Some("reset_resend");
        entry.status = Some(Sent::Word("reset"));
        entry.sent_ms = Some(app.log.ms(now));
        entry.sent_unix_ms = Some(unix_ms(wall));
        let run = entry.run.clone().unwrap_or_default();
        let seq = app.log.push(entry);
        app.note_reset(&run, attempt, now);
        eprintln!(
            "fixture-server: {:>10.1} ms  request #{seq}: run={run} a resend of reset attempt \
             {attempt}, reset as well",
            app.log.ms(now)
        );
        connection.reset();
        // The connection task drops this request with the connection.
        return std::future::pending::<Response>().await;
    }
    let admitted = match &query {
        Err(rejection) => Err((
            StatusCode::BAD_REQUEST,
            format!("malformed query string: {}", rejection.body_text()),
        )),
        Ok(_) => admit(&app, &entry, arrival),
    };
    let (index, loaded, first_arrival) = match admitted {
        Ok(admitted) => admitted,
        Err((status, message)) => {
            let note = LogNote(format!(
                "run={} scenario={} rejected: {message}",
                entry.run.as_deref().unwrap_or("-"),
                entry.scenario.as_deref().unwrap_or("-"),
            ));
            let sent = SystemTime::now();
            entry.status = Some(Sent::Status(status.as_u16()));
            entry.error = Some(message.clone());
            entry.sent_ms = Some(app.log.ms(Instant::now()));
            entry.sent_unix_ms = Some(unix_ms(sent));
            entry.date = Some(httpdate::fmt_http_date(sent));
            app.log.push(entry);
            let mut response = plain(status, message);
            set_date(response.headers_mut(), sent);
            response.extensions_mut().insert(note);
            return response;
        }
    };
    let attempt = u32::try_from(index).unwrap_or(u32::MAX).saturating_add(1);
    let note = LogNote(format!(
        "run={} scenario={} attempt={attempt}",
        entry.run.as_deref().unwrap_or("-"),
        entry.scenario.as_deref().unwrap_or("-"),
    ));
    entry.attempt = Some(attempt);
    let Some(prepared) = loaded.responses.get(index) else {
        // admit() checked the index; answer rather than panic if that ever changes.
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no scripted response".into(),
        );
    };
    entry.fault = prepared.fault.map(Fault::as_str);
    let run = entry.run.clone().unwrap_or_default();
    let seq = app.log.push(entry);
    app.record_send(&run, attempt, arrival + prepared.duration);
    let mut in_flight = InFlight {
        app: &app,
        seq,
        done: false,
    };
    tokio::time::sleep(prepared.duration).await;

    match prepared.fault {
        Some(Fault::Reset) => {
            if let Some(axum::Extension(connection)) = connection {
                let now = Instant::now();
                let wall = SystemTime::now();
                app.log.update(seq, |e| {
                    e.status = Some(Sent::Word("reset"));
                    e.sent_ms = Some(app.log.ms(now));
                    e.sent_unix_ms = Some(unix_ms(wall));
                });
                in_flight.done = true;
                app.note_reset(&run, attempt, now);
                eprintln!(
                    "fixture-server: {:>10.1} ms  request #{seq}: {} reset (TCP RST, no response)",
                    app.log.ms(now),
                    note.0
                );
                connection.reset();
                // The connection task drops this request with the connection.
                return std::future::pending::<Response>().await;
            }
            // Not reachable through `serve`, which gives every request its connection.
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the reset fault needs the connection".into(),
            );
        }
        Some(Fault::Redirect) => {
            let location = format!("{uri}&redirected={attempt}");
            let now = SystemTime::now();
            let mut response = StatusCode::FOUND.into_response();
            if let Ok(value) = HeaderValue::from_str(&location) {
                response.headers_mut().insert(header::LOCATION, value);
            }
            let date = set_date(response.headers_mut(), now);
            let sent_at = Instant::now();
            app.log.update(seq, |e| {
                e.status = Some(Sent::Status(StatusCode::FOUND.as_u16()));
                e.sent_ms = Some(app.log.ms(sent_at));
                e.sent_unix_ms = Some(unix_ms(now));
                e.date = Some(date);
            });
            in_flight.done = true;
            response
                .extensions_mut()
                .insert(LogNote(format!("{} redirect -> {location}", note.0)));
            return response;
        }
        _ => {}
    }

    let mut response = match &prepared.reply {
        PreparedReply::TransportError(word) => {
            let mut response = Response::new(Body::new(BrokenBody::new()));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
                .extensions_mut()
                .insert(LogNote(format!("{} transport_error={word}", note.0)));
            let now = Instant::now();
            let wall = SystemTime::now();
            app.log.update(seq, |e| {
                e.status = Some(Sent::Word("transport_error"));
                e.sent_ms = Some(app.log.ms(now));
                e.sent_unix_ms = Some(unix_ms(wall));
            });
            in_flight.done = true;
            return response;
        }
        PreparedReply::Http {
            status,
            headers,
            body,
        } => {
            let mut response = if prepared.fault == Some(Fault::EndlessBody) {
                Response::new(Body::new(EndlessBody::new(Arc::clone(&app), seq)))
            } else if prepared.fault == Some(Fault::ResetMidBody) {
                Response::new(Body::new(ResettingBody {
                    first_chunk: Some(axum::body::Bytes::from_static(b"[\"sea glass\", \"drift")),
                    reset_after: Box::pin(tokio::time::sleep(std::time::Duration::from_millis(50))),
                    connection: connection.as_ref().map(|c| c.0.clone()),
                }))
            } else {
                Response::new(body.clone().map_or_else(Body::empty, Body::from))
            };
            *response.status_mut() = *status;
            let now = SystemTime::now();
            let date_secs = unix_secs(now);
            let mut sent_retry_after: Vec<String> = Vec::new();
            let out = response.headers_mut();
            for (name, raw) in headers {
                if name == header::DATE {
                    // The real Date is the clock evidence for a Retry-After date: never scripted.
                    continue;
                }
                let value = if name == header::RETRY_AFTER {
                    let receipt = prepared
                        .scripted_receipt
                        .unwrap_or_else(|| first_arrival.elapsed());
                    let value =
                        shift_retry_after(raw, loaded.wall_clock_at_start, receipt, date_secs)
                            .unwrap_or_else(|| raw.clone());
                    sent_retry_after.push(value.clone());
                    value
                } else {
                    raw.clone()
                };
                if let Ok(value) = HeaderValue::from_str(&value) {
                    out.append(name.clone(), value);
                }
            }
            if body.is_some() && !out.contains_key(header::CONTENT_TYPE) {
                out.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
            }
            // A scenario without a wall clock stands for "no usable clock evidence": the
            // faithful live form of that is a response with no Date at all.
            let date = if loaded.wall_clock_at_start.is_some() {
                Some(set_date(out, now))
            } else {
                response.extensions_mut().insert(NoDate);
                None
            };
            match prepared.fault {
                Some(Fault::OmitCors) => {
                    response.extensions_mut().insert(CorsFault::OmitAll);
                }
                Some(Fault::OmitExpose) => {
                    response.extensions_mut().insert(CorsFault::OmitExpose);
                }
                _ => {}
            }
            let sent_at = Instant::now();
            let status = status.as_u16();
            app.log.update(seq, |e| {
                e.status = Some(Sent::Status(status));
                e.sent_ms = Some(app.log.ms(sent_at));
                e.sent_unix_ms = Some(unix_ms(now));
                e.date = date;
                e.retry_after = (!sent_retry_after.is_empty()).then(|| sent_retry_after.join(", "));
            });
            response
        }
    };
    in_flight.done = true;
    let note = match prepared.fault {
        Some(fault) => LogNote(format!("{} fault={}", note.0, fault.as_str())),
        None => note,
    };
    response.extensions_mut().insert(note);
    response
}

/// The request's `Origin` header, if any.
fn origin_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

type Admitted<'a> = (usize, &'a Loaded, Instant);

/// Checks the parameters and takes the run's next response index.
fn admit<'a>(
    app: &'a AppState,
    entry: &Entry,
    arrival: Instant,
) -> Result<Admitted<'a>, (StatusCode, String)> {
    let known = || app.catalog.names().join(", ");
    match entry.collection.as_deref() {
        None => {
            return Err((
                StatusCode::NOT_FOUND,
                format!("missing `collection` parameter; the only collection is \"{COLLECTION}\""),
            ))
        }
        Some(COLLECTION) => {}
        Some(other) => {
            return Err((
                StatusCode::NOT_FOUND,
                format!("unknown collection \"{other}\"; the only collection is \"{COLLECTION}\""),
            ))
        }
    }
    let Some(name) = entry.scenario.as_deref() else {
        return Err((
            StatusCode::NOT_FOUND,
            format!("missing `scenario` parameter; known scenarios: {}", known()),
        ));
    };
    let Some(loaded) = app.catalog.get(name) else {
        return Err((
            StatusCode::NOT_FOUND,
            format!("unknown scenario \"{name}\"; known scenarios: {}", known()),
        ));
    };
    let Some(run) = entry.run.as_deref() else {
        return Err((
            StatusCode::BAD_REQUEST,
            "missing `run` parameter: give every action its own run id, and each of its \
             requests gets the scenario's next scripted response"
                .into(),
        ));
    };
    let mut runs = app.runs.lock().unwrap_or_else(PoisonError::into_inner);
    let state = runs.entry(run.to_string()).or_insert_with(|| RunState {
        scenario: name.to_string(),
        next: 0,
        first_arrival: arrival,
    });
    if state.scenario != name {
        return Err((
            StatusCode::CONFLICT,
            format!(
                "run {run} belongs to scenario {}, not {name}; use a new run id for each action",
                state.scenario
            ),
        ));
    }
    let index = state.next;
    let scripted = loaded.responses.len();
    if index >= scripted {
        return Err((
            StatusCode::CONFLICT,
            format!(
                "run {run} of scenario {name} asked for response {} but only {scripted} are \
                 scripted",
                index.saturating_add(1)
            ),
        ));
    }
    state.next = index.saturating_add(1);
    Ok((index, loaded, state.first_arrival))
}

/// Records, when a request's future is dropped before its response was sent, that the client
/// went away (an aborted fetch or a closed page).
struct InFlight<'a> {
    app: &'a AppState,
    seq: u64,
    done: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let gone = self.app.log.ms(Instant::now());
        self.app
            .log
            .update(self.seq, |e| e.client_gone_ms = Some(gone));
        eprintln!(
            "fixture-server: {gone:>10.1} ms  request #{} ended by the client before its response",
            self.seq
        );
    }
}

/// `OPTIONS /palettes`: a CORS preflight. Logged, but it takes no scripted response.
async fn preflight(
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let now = Instant::now();
    let wall = SystemTime::now();
    let query: HashMap<String, String> = Query::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
    let param = |key: &str| query.get(key).filter(|v| !v.is_empty()).cloned();
    app.log.push(Entry {
        seq: 0,
        method: method.to_string(),
        uri: uri.to_string(),
        run: param("run"),
        scenario: param("scenario"),
        collection: param("collection"),
        attempt: None,
        arrival_ms: app.log.ms(now),
        arrival_unix_ms: unix_ms(wall),
        status: Some(Sent::Status(StatusCode::NO_CONTENT.as_u16())),
        error: None,
        sent_ms: Some(app.log.ms(now)),
        sent_unix_ms: Some(unix_ms(wall)),
        date: Some(httpdate::fmt_http_date(wall)),
        retry_after: None,
        client_gone_ms: None,
        fault: None,
        origin: origin_of(&headers),
    });
    let mut response = StatusCode::NO_CONTENT.into_response();
    let out = response.headers_mut();
    out.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, OPTIONS"),
    );
    let requested = headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or_else(|| HeaderValue::from_static("*"));
    out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, requested);
    out.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    set_date(out, wall);
    response
}

/// `GET /log[?run=RUN]`: the log entries as a JSON array.
async fn log_get(
    State(app): State<Arc<AppState>>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let query = match query {
        Ok(Query(query)) => query,
        Err(rejection) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("malformed query string: {}", rejection.body_text()),
            )
        }
    };
    let entries = app.log.entries(query.get("run").map(String::as_str));
    json(&entries)
}

/// `DELETE /log`: forgets every entry (run counters are kept, so a run id stays used).
async fn log_delete(State(app): State<Arc<AppState>>) -> Response {
    let cleared = app.log.clear();
    json(&serde_json::json!({ "cleared": cleared }))
}

/// `GET /scenarios`: every scenario the server answers for, for the page's picker and its model
/// prediction: the fixture files in order, each scenario object as written (then the faulted
/// ones), and what each faulted scenario injects.
async fn scenarios(State(app): State<Arc<AppState>>) -> Response {
    json(&app.catalog.listing())
}

/// `/beacon[?...]`, any method: logged (with its `run` parameter, if any) and answered 204. A
/// hostile payload that got rendered as markup would fetch it (an `<img>` or a stylesheet).
async fn beacon(
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let now = Instant::now();
    let wall = SystemTime::now();
    let query: HashMap<String, String> = Query::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
    app.log.push(Entry {
        seq: 0,
        method: method.to_string(),
        uri: uri.to_string(),
        run: query.get("run").filter(|v| !v.is_empty()).cloned(),
        scenario: None,
        collection: None,
        attempt: None,
        arrival_ms: app.log.ms(now),
        arrival_unix_ms: unix_ms(wall),
        status: Some(Sent::Status(StatusCode::NO_CONTENT.as_u16())),
        error: None,
        sent_ms: Some(app.log.ms(now)),
        sent_unix_ms: Some(unix_ms(wall)),
        date: Some(httpdate::fmt_http_date(wall)),
        retry_after: None,
        client_gone_ms: None,
        fault: None,
        origin: origin_of(&headers),
    });
    StatusCode::NO_CONTENT.into_response()
}

/// How long `/away` waits for the run's request to arrive.
const AWAY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// `GET /away?run=RUN&attempt=K&plus_ms=X`: a page to navigate to (`server/pages/away.html`), held
/// until X milliseconds (negative: before) the moment the server sends run RUN's K-th scripted
/// response. A page that navigates here while its action runs leaves at the very moment that
/// response arrives (X near 0), or when the wait after it ends (X near the wait). After
/// [`AWAY_WAIT`] without that request, the page is sent anyway.
async fn away(
    State(app): State<Arc<AppState>>,
    uri: Uri,
    axum::extract::Extension(away_page): axum::extract::Extension<AwayPage>,
) -> Response {
    let query: HashMap<String, String> = Query::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
    // Without a run, it is a plain page: the Palette List's "another page" link.
    let run = query.get("run").cloned().unwrap_or_default();
    let attempt: u32 = query
        .get("attempt")
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let plus_ms: f64 = query
        .get("plus_ms")
        .and_then(|p| p.parse().ok())
        .filter(|p: &f64| p.is_finite())
        .unwrap_or(0.0);
    let mut changed = app.sends_changed.subscribe();
    let deadline = tokio::time::Instant::now() + AWAY_WAIT;
    let due = loop {
        if run.is_empty() {
            break None;
        }
        if let Some(due) = app.send_time(&run, attempt) {
            break Some(due);
        }
        match tokio::time::timeout_at(deadline, changed.changed()).await {
            Ok(Ok(())) => {}
            _ => break None,
        }
    };
    let held = match due {
        Some(due) => {
            let offset = std::time::Duration::from_secs_f64(plus_ms.abs() / 1000.0);
            let at = if plus_ms >= 0.0 {
                due + offset
            } else {
                due.checked_sub(offset).unwrap_or(due)
            };
            tokio::time::sleep_until(at.into()).await;
            "held"
        }
        None if run.is_empty() => "no run to wait for",
        None => "timed out waiting for the run",
    };
    let page = tokio::fs::read(&away_page.0).await;
    let mut response = match page {
        Ok(bytes) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            bytes,
        )
            .into_response(),
        Err(e) => plain(
            StatusCode::NOT_FOUND,
            format!("not found: {} ({e})", away_page.0.display()),
        ),
    };
    response.extensions_mut().insert(LogNote(format!(
        "run={run} attempt={attempt} plus_ms={plus_ms} {held}"
    )));
    response
}

/// The page `/away` answers with.
#[derive(Clone, Debug)]
struct AwayPage(std::path::PathBuf);

/// 404 for a file that is not there, naming it.
async fn not_found(OriginalUri(uri): OriginalUri) -> Response {
    plain(StatusCode::NOT_FOUND, format!("not found: {}", uri.path()))
}

/// Refuses any path with a `..` segment, however it is encoded.
async fn reject_traversal(request: Request, next: Next) -> Response {
    if has_parent_segment(request.uri().path()) {
        return plain(
            StatusCode::BAD_REQUEST,
            format!(
                "refused: `..` is not allowed in a path ({})",
                request.uri().path()
            ),
        );
    }
    next.run(request).await
}

/// Whether a path names a parent folder anywhere, after percent-decoding, with `/` or `\` as a
/// separator.
fn has_parent_segment(path: &str) -> bool {
    path.split('/').any(|segment| {
        let decoded = percent_decode_str(segment).decode_utf8_lossy();
        decoded.split(['/', '\\']).any(|part| part == "..")
    })
}

/// CORS for `/palettes`: any origin may read it, including `Retry-After` and `Date`, unless a
/// fault takes some of that away.
async fn add_cors(mut response: Response) -> Response {
    let fault = response.extensions().get::<CorsFault>().copied();
    let out = response.headers_mut();
    if matches!(fault, Some(CorsFault::OmitAll)) {
        return response;
    }
    out.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    if matches!(fault, Some(CorsFault::OmitExpose)) {
        return response;
    }
    out.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Retry-After, Date"),
    );
    response
}

/// Marks a response that must go out without a `Date` header.
#[derive(Clone, Copy)]
struct NoDate;

/// Nothing is cached: every page load and every request reaches the server. Every response
/// carries a real `Date` (hyper's automatic one is off), except a scripted response of a
/// scenario that has no clock evidence, and the page's Content-Security-Policy.
async fn add_common_headers(State(app): State<Arc<AppState>>, mut response: Response) -> Response {
    let no_date = response.extensions().get::<NoDate>().is_some();
    let out = response.headers_mut();
    out.entry(header::CONTENT_SECURITY_POLICY)
        .or_insert_with(|| app.csp.clone());
    if !no_date && !out.contains_key(header::DATE) {
        set_date(out, SystemTime::now());
    }
    if !out.contains_key(header::CACHE_CONTROL) {
        out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    out.entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}

/// Sets `Date` to `now`; returns the value.
fn set_date(headers: &mut HeaderMap, now: SystemTime) -> String {
    let date = httpdate::fmt_http_date(now);
    if let Ok(value) = HeaderValue::from_str(&date) {
        headers.insert(header::DATE, value);
    }
    date
}

fn plain(status: StatusCode, message: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        message,
    )
        .into_response()
}

fn json<T: serde::Serialize>(value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            bytes,
        )
            .into_response(),
        Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::has_parent_segment;

    #[test]
    fn parent_segments_are_found_however_encoded() {
        for path in [
            "/..",
            "/../Cargo.toml",
            "/pkg/../../etc/passwd",
            "/fixtures/%2e%2e/Cargo.toml",
            "/fixtures/%2E%2E/Cargo.toml",
            "/fixtures/..%2fCargo.toml",
            "/fixtures/..%5cCargo.toml",
            "/a/.%2e/b",
        ] {
            assert!(has_parent_segment(path), "{path}");
        }
        for path in [
            "/",
            "/index.html",
            "/pkg/a..b.js",
            "/...",
            "/.hidden",
            "/a/./b",
        ] {
            assert!(!has_parent_segment(path), "{path}");
        }
    }
}
