//! `/palettes`: the scripted service. A request is admitted (its parameters checked, its run's
//! next scripted response taken), waits the scripted duration, and is answered as its
//! [`Answer`] says. Its log entry is written at arrival and marked sent in one place,
//! [`InFlight::sent`].

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::{Instant, SystemTime};

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;

use crate::body::FaultBody;
use crate::catalog::{collection_list, Loaded, Prepared, PreparedReply, COLLECTIONS};
use crate::faults::Fault;
use crate::log::{kept_uri, query_of, unix_ms, Entry, Moment, Outcome, Params, Sent, PARAM_MAX};
use crate::reply::{origin_of, plain, set_date};
use crate::serve::Connection;
use crate::shift::{shift_retry_after, unix_secs};
use crate::state::{AppState, LogNote, RunState, Withheld, RUN_CAPACITY, RUN_KEPT};

/// `GET /palettes?collection=C&scenario=NAME&run=RUN` (C one of [`COLLECTIONS`]): the run's next scripted response,
/// after its scripted duration.
pub async fn palettes(
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    connection: Option<axum::Extension<Connection>>,
) -> Response {
    let arrival = Moment::now();
    let query = query_of(&uri);
    let params = query.as_ref().map(Params::of).unwrap_or_default();
    let connection = connection.map(|axum::Extension(c)| c);
    let admission = admit(
        &app,
        &params,
        query.as_ref().err().map(String::as_str),
        connection.is_some(),
        arrival.at,
    );
    let entry = Entry {
        attempt: admission.attempt(),
        fault: admission.fault(),
        ..arrival_entry(&app, &method, &uri, &headers, params, arrival)
    };
    let in_flight = InFlight::arrive(&app, entry);
    wait(&app, &admission, arrival.at).await;
    respond(in_flight, &admission, &uri, connection).await
}

/// `OPTIONS /palettes`: a CORS preflight. Logged, but it takes no scripted response.
pub async fn preflight(
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let now = Moment::now();
    log_no_content(&app, (&method, &uri, &headers), |params| params, now);
    let requested = headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or_else(|| HeaderValue::from_static("*"));
    let mut response = StatusCode::NO_CONTENT.into_response();
    let out = response.headers_mut();
    out.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, OPTIONS"),
    );
    out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, requested);
    out.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    set_date(out, now.wall);
    response
}

/// Logs a request answered at once, at `now`, with `204 No Content`; `pick` chooses which of
/// its query parameters the entry names.
pub fn log_no_content(
    app: &Arc<AppState>,
    (method, uri, headers): (&Method, &Uri, &HeaderMap),
    pick: fn(Params) -> Params,
    now: Moment,
) {
    let query = query_of(uri).unwrap_or_default();
    let entry = arrival_entry(app, method, uri, headers, pick(Params::of(&query)), now);
    let outcome = Outcome {
        date: Some(httpdate::fmt_http_date(now.wall)),
        ..Outcome::status(Sent::Status(StatusCode::NO_CONTENT.as_u16()))
    };
    InFlight::arrive(app, entry).sent(outcome, now);
}

/// The log entry of a request that arrived at `arrival` naming `params`: nothing decided or
/// sent yet.
fn arrival_entry(
    app: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    params: Params,
    arrival: Moment,
) -> Entry {
    Entry {
        seq: 0,
        method: method.to_string(),
        uri: kept_uri(uri),
        params: params.kept(),
        attempt: None,
        arrival_ms: app.log.ms(arrival.at),
        arrival_unix_ms: unix_ms(arrival.wall),
        outcome: Outcome::default(),
        client_gone_ms: None,
        fault: None,
        origin: origin_of(headers),
    }
}

/// What admission decided for a request.
enum Admission<'a> {
    /// A 4xx with its message; no scripted response is taken.
    Refused {
        /// The 4xx status.
        status: StatusCode,
        /// What is wrong, for the client and the log.
        message: String,
        /// `run=R scenario=S`, for the stderr line.
        who: String,
    },
    /// The browser's own resend of the request of `run` whose connection was just reset
    /// (`attempt`): reset as well, at once, without taking a scripted response (the driver sent
    /// one request, not two).
    Resend {
        /// The run whose request was reset.
        run: String,
        /// The attempt that was reset.
        attempt: u32,
    },
    /// The run's next scripted response.
    Scripted(Ticket<'a>),
}

/// A request that takes scripted response `attempt` of its run.
struct Ticket<'a> {
    /// The run.
    run: String,
    /// Which of the run's scripted responses, 1-based.
    attempt: u32,
    /// `run=R scenario=S attempt=K`, for the stderr line.
    who: String,
    /// The run's scenario.
    loaded: &'a Loaded,
    /// The scripted response taken.
    prepared: &'a Prepared,
    /// When the run's first request arrived: the live "elapsed zero" of the run.
    first_arrival: Instant,
}

impl Admission<'_> {
    /// Which scripted response the request gets (or repeats), 1-based.
    fn attempt(&self) -> Option<u32> {
        match self {
            Admission::Refused { .. } => None,
            Admission::Resend { attempt, .. } => Some(*attempt),
            Admission::Scripted(ticket) => Some(ticket.attempt),
        }
    }

    /// The fault injected, as the log names it.
    fn fault(&self) -> Option<&'static str> {
        match self {
            Admission::Refused { .. } => None,
            Admission::Resend { .. } => Some("reset_resend"),
            Admission::Scripted(ticket) => ticket.prepared.fault.map(Fault::as_str),
        }
    }
}

/// A 4xx status and its message.
type Refusal = (StatusCode, String);

/// Decides what a request that arrived at `arrival` gets: a resend of a reset (only when its
/// connection can be reset), a refusal, or its run's next scripted response.
fn admit<'a>(
    app: &'a AppState,
    params: &Params,
    malformed: Option<&str>,
    can_reset: bool,
    arrival: Instant,
) -> Admission<'a> {
    let resend = params
        .run
        .as_deref()
        .filter(|_| can_reset)
        .and_then(|run| Some((run, app.resend_of(run, arrival)?)));
    if let Some((run, attempt)) = resend {
        let run = run.to_string();
        return Admission::Resend { run, attempt };
    }
    let taken = match (malformed, params.too_long()) {
        (Some(problem), _) => Err((
            StatusCode::BAD_REQUEST,
            format!("malformed query string: {problem}"),
        )),
        (None, Some((name, length))) => Err((
            StatusCode::BAD_REQUEST,
            format!("the `{name}` parameter is {length} bytes long; at most {PARAM_MAX} are read"),
        )),
        (None, None) => take_next(app, params, arrival),
    };
    match taken {
        Ok(ticket) => Admission::Scripted(ticket),
        Err((status, message)) => Admission::Refused {
            status,
            message,
            who: format!(
                "run={} scenario={}",
                params.run.as_deref().unwrap_or("-"),
                params.scenario.as_deref().unwrap_or("-"),
            ),
        },
    }
}

/// Checks the parameters and takes the run's next scripted response.
fn take_next<'a>(
    app: &'a AppState,
    params: &Params,
    arrival: Instant,
) -> Result<Ticket<'a>, Refusal> {
    let (name, loaded) = find_scenario(app, params)?;
    let Some(run) = params.run.as_deref() else {
        return Err((
            StatusCode::BAD_REQUEST,
            "missing `run` parameter: give every action its own run id, and each of its \
             requests gets the scenario's next scripted response"
                .into(),
        ));
    };
    let mut runs = app.runs.lock().unwrap_or_else(PoisonError::into_inner);
    if !runs.contains_key(run) {
        room_for_a_run(app, &mut runs, arrival)?;
    }
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
    let Some(prepared) = loaded.responses.get(index) else {
        return Err((
            StatusCode::CONFLICT,
            format!(
                "run {run} of scenario {name} asked for response {} but only {} are scripted",
                index.saturating_add(1),
                loaded.responses.len()
            ),
        ));
    };
    state.next = index.saturating_add(1);
    let attempt = u32::try_from(index).unwrap_or(u32::MAX).saturating_add(1);
    Ok(Ticket {
        run: run.to_string(),
        attempt,
        who: format!("run={run} scenario={name} attempt={attempt}"),
        loaded,
        prepared,
        first_arrival: state.first_arrival,
    })
}

/// Makes room in `runs` (the locked [`AppState::runs`]) for a new run at `now`: when it holds
/// [`RUN_CAPACITY`] runs, the old ones are forgotten; a refusal while none is old enough.
fn room_for_a_run(
    app: &AppState,
    runs: &mut HashMap<String, RunState>,
    now: Instant,
) -> Result<(), Refusal> {
    if runs.len() >= RUN_CAPACITY {
        app.forget_old_runs(runs, now);
    }
    if runs.len() < RUN_CAPACITY {
        return Ok(());
    }
    Err((
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "{RUN_CAPACITY} runs began in the last {} s; the server keeps no more",
            RUN_KEPT.as_secs()
        ),
    ))
}

/// The collection and the scenario the request names, checked.
fn find_scenario<'a, 'p>(
    app: &'a AppState,
    params: &'p Params,
) -> Result<(&'p str, &'a Loaded), Refusal> {
    let known = || app.catalog.names().join(", ");
    check_collection(params.collection.as_deref())?;
    let Some(name) = params.scenario.as_deref() else {
        return Err((
            StatusCode::NOT_FOUND,
            format!("missing `scenario` parameter; known scenarios: {}", known()),
        ));
    };
    match app.catalog.get(name) {
        Some(loaded) => Ok((name, loaded)),
        None => Err((
            StatusCode::NOT_FOUND,
            format!("unknown scenario \"{name}\"; known scenarios: {}", known()),
        )),
    }
}

/// The named collection, checked against [`COLLECTIONS`].
fn check_collection(collection: Option<&str>) -> Result<(), Refusal> {
    match collection {
        Some(known) if COLLECTIONS.contains(&known) => Ok(()),
        None => Err((
            StatusCode::NOT_FOUND,
            format!(
                "missing `collection` parameter; the collections are {}",
                collection_list()
            ),
        )),
        Some(other) => Err((
            StatusCode::NOT_FOUND,
            format!(
                "unknown collection \"{other}\"; the collections are {}",
                collection_list()
            ),
        )),
    }
}

/// Waits out the scripted duration of an admitted request, counted from its arrival, so that
/// the time spent admitting and logging it is not added (announcing, for `/away`, when its
/// response is due); nothing else waits.
async fn wait(app: &AppState, admission: &Admission<'_>, arrival: Instant) {
    if let Admission::Scripted(ticket) = admission {
        let due = arrival + ticket.prepared.duration;
        app.record_send(&ticket.run, ticket.attempt, due);
        tokio::time::sleep_until(due.into()).await;
    }
}

/// How a request is answered: the one place where a refusal, a fault, a scripted
/// `transport_error` and a scenario without a clock decide what goes out.
enum Answer<'a> {
    /// A `text/plain` 4xx.
    Refused {
        /// The 4xx status.
        status: StatusCode,
        /// What is wrong.
        message: &'a str,
        /// `run=R scenario=S`, for the stderr line.
        who: &'a str,
    },
    /// A TCP reset before any byte of a response (the `reset` fault, or its resend), to be
    /// recognised when it comes again for `attempt` of `run`; `note` is for the stderr line.
    Reset {
        /// The run whose request is reset.
        run: &'a str,
        /// The attempt reset (or repeated by the resend).
        attempt: u32,
        /// What the stderr line says of it.
        note: String,
    },
    /// `302 Found` to the same URI with `&redirected=K` (the `redirect` fault).
    Redirect(&'a Ticket<'a>),
    /// A first chunk, then the connection fails (a scripted `transport_error`, named `word`).
    Cut {
        /// The request.
        ticket: &'a Ticket<'a>,
        /// The scripted word for the error.
        word: &'a str,
    },
    /// The scripted status and headers and a body.
    Scripted(Scripted<'a>),
}

/// A scripted HTTP response as it goes out.
struct Scripted<'a> {
    /// The request.
    ticket: &'a Ticket<'a>,
    /// The scripted status.
    status: StatusCode,
    /// The scripted headers.
    headers: &'a [(HeaderName, String)],
    /// The body.
    payload: Payload<'a>,
    /// What the response goes out without.
    withheld: Withheld,
}

/// The body of a scripted HTTP response.
enum Payload<'a> {
    /// As scripted (or none).
    Whole(Option<&'a [u8]>),
    /// A first chunk, then a byte every so often, forever (the `endless_body` fault).
    Endless,
    /// A first chunk, then a reset of the connection (the `reset_mid_body` fault).
    ResetMidway,
}

impl<'a> Answer<'a> {
    /// How `admission` is answered.
    fn of(admission: &'a Admission<'a>) -> Answer<'a> {
        let ticket = match admission {
            Admission::Refused {
                status,
                message,
                who,
            } => {
                return Answer::Refused {
                    status: *status,
                    message,
                    who,
                }
            }
            Admission::Resend { run, attempt } => {
                return Answer::Reset {
                    run,
                    attempt: *attempt,
                    note: format!("run={run} a resend of reset attempt {attempt}, reset as well"),
                }
            }
            Admission::Scripted(ticket) => ticket,
        };
        let fault = ticket.prepared.fault;
        let (status, headers, body) = match (fault, &ticket.prepared.reply) {
            (Some(Fault::Reset), _) => {
                return Answer::Reset {
                    run: &ticket.run,
                    attempt: ticket.attempt,
                    note: format!("{} reset (TCP RST, no response)", ticket.who),
                }
            }
            (Some(Fault::Redirect), _) => return Answer::Redirect(ticket),
            (_, PreparedReply::TransportError(word)) => return Answer::Cut { ticket, word },
            (
                _,
                PreparedReply::Http {
                    status,
                    headers,
                    body,
                },
            ) => (*status, headers, body),
        };
        let payload = match fault {
            Some(Fault::EndlessBody) => Payload::Endless,
            Some(Fault::ResetMidBody) => Payload::ResetMidway,
            _ => Payload::Whole(body.as_deref()),
        };
        Answer::Scripted(Scripted {
            ticket,
            status,
            headers,
            payload,
            withheld: withhold(fault, ticket.loaded),
        })
    }
}

/// What a scripted HTTP response of `loaded` with `fault` goes out without.
fn withhold(fault: Option<Fault>, loaded: &Loaded) -> Withheld {
    Withheld {
        allow_origin: fault == Some(Fault::OmitCors),
        expose_headers: matches!(fault, Some(Fault::OmitCors | Fault::OmitExpose)),
        // A scenario without a wall clock stands for "no usable clock evidence": the faithful
        // live form of that is a response with no Date at all.
        date: loaded.wall_clock_at_start.is_none(),
    }
}

/// Sends the answer of an admitted request, marks its log entry sent, and hands the response
/// (with its stderr note) to the connection.
async fn respond(
    in_flight: InFlight,
    admission: &Admission<'_>,
    uri: &Uri,
    connection: Option<Connection>,
) -> Response {
    let now = Moment::now();
    let (mut response, outcome, note) = match Answer::of(admission) {
        Answer::Reset { run, attempt, note } => {
            return reset(in_flight, run, attempt, &note, connection, now).await
        }
        Answer::Refused {
            status,
            message,
            who,
        } => refuse(status, message, who, now),
        Answer::Redirect(ticket) => redirect(uri, ticket, now),
        Answer::Cut { ticket, word } => cut_short(ticket, word, now),
        Answer::Scripted(scripted) => scripted.reply(&in_flight, connection, now),
    };
    in_flight.sent(outcome, now);
    response.extensions_mut().insert(LogNote(note));
    response
}

/// A response, what the log records of it, and its note for the stderr line.
type Reply = (Response, Outcome, String);

/// A rejection: `status` with its message as text.
fn refuse(status: StatusCode, message: &str, who: &str, now: Moment) -> Reply {
    let mut response = plain(status, message.to_string());
    let outcome = Outcome {
        error: Some(message.to_string()),
        date: Some(set_date(response.headers_mut(), now.wall)),
        ..Outcome::status(Sent::Status(status.as_u16()))
    };
    (response, outcome, format!("{who} rejected: {message}"))
}

/// The `redirect` fault: `302 Found` to the same URI with `&redirected=K`.
fn redirect(uri: &Uri, ticket: &Ticket<'_>, now: Moment) -> Reply {
    let location = redirect_location(uri, ticket.attempt);
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    let outcome = Outcome {
        date: Some(set_date(response.headers_mut(), now.wall)),
        ..Outcome::status(Sent::Status(StatusCode::FOUND.as_u16()))
    };
    (
        response,
        outcome,
        format!("{} redirect -> {location}", ticket.who),
    )
}

/// Where the `redirect` fault on `attempt` sends a request for `uri`: the same path and query,
/// with `redirected=K` at the end in place of any `redirected` the query already has. A
/// request that a redirect led to may be redirected again (two redirect faults in a row), and
/// a second `redirected` parameter would make its query one the server refuses.
fn redirect_location(uri: &Uri, attempt: u32) -> String {
    let is_redirected = |pair: &&str| {
        let key = pair.split_once('=').map_or(*pair, |(key, _)| key);
        percent_decode_str(&key.replace('+', " ")).decode_utf8_lossy() == "redirected"
    };
    let kept: Vec<&str> = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty() && !is_redirected(pair))
        .collect();
    let redirected = format!("redirected={attempt}");
    let query = kept
        .into_iter()
        .chain(std::iter::once(redirected.as_str()))
        .collect::<Vec<_>>()
        .join("&");
    format!("{}?{query}", uri.path())
}

/// A scripted `transport_error`: the response is cut short after a first chunk. Its head is
/// a scripted response's: a real `Date`, logged, unless the scenario has no clock, when it
/// goes out without one.
fn cut_short(ticket: &Ticket<'_>, word: &str, now: Moment) -> Reply {
    let mut response = Response::new(Body::new(FaultBody::cut_short()));
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let withheld = withhold(ticket.prepared.fault, ticket.loaded);
    let date = (!withheld.date).then(|| set_date(out, now.wall));
    response.extensions_mut().insert(withheld);
    let outcome = Outcome {
        date,
        ..Outcome::status(Sent::Word("transport_error"))
    };
    (
        response,
        outcome,
        format!("{} transport_error={word}", ticket.who),
    )
}

impl Scripted<'_> {
    /// The response: the scripted status, headers and body, with a real `Date` (unless
    /// withheld) and any `Retry-After` date moved onto the real clock.
    fn reply(self, in_flight: &InFlight, connection: Option<Connection>, now: Moment) -> Reply {
        let ticket = self.ticket;
        let body = match self.payload {
            Payload::Whole(body) => body.map_or_else(Body::empty, |b| Body::from(b.to_vec())),
            Payload::Endless => Body::new(FaultBody::endless(
                Arc::clone(&in_flight.app),
                in_flight.seq,
            )),
            Payload::ResetMidway => Body::new(FaultBody::reset_mid_body(connection)),
        };
        let mut response = Response::new(body);
        *response.status_mut() = self.status;
        let out = response.headers_mut();
        let retry_after = write_scripted_headers(out, self.headers, ticket, now.wall);
        let scripted_body = matches!(
            &ticket.prepared.reply,
            PreparedReply::Http { body: Some(_), .. }
        );
        if scripted_body && !out.contains_key(header::CONTENT_TYPE) {
            out.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        let date = (!self.withheld.date).then(|| set_date(out, now.wall));
        response.extensions_mut().insert(self.withheld);
        let outcome = Outcome {
            date,
            retry_after: (!retry_after.is_empty()).then(|| retry_after.join(", ")),
            ..Outcome::status(Sent::Status(self.status.as_u16()))
        };
        let note = match ticket.prepared.fault {
            Some(fault) => format!("{} fault={}", ticket.who, fault.as_str()),
            None => ticket.who.clone(),
        };
        (response, outcome, note)
    }
}

/// Writes the scripted headers into `out`, one field line each, except `Date` (the real one is
/// the clock evidence for a `Retry-After` date) and with each `Retry-After` date moved onto the
/// real clock; returns the `Retry-After` values sent.
fn write_scripted_headers(
    out: &mut HeaderMap,
    headers: &[(HeaderName, String)],
    ticket: &Ticket<'_>,
    wall: SystemTime,
) -> Vec<String> {
    let mut sent_retry_after = Vec::new();
    for (name, raw) in headers {
        if name == header::DATE {
            continue;
        }
        let value = if name == header::RETRY_AFTER {
            let receipt = ticket
                .prepared
                .scripted_receipt
                .unwrap_or_else(|| ticket.first_arrival.elapsed());
            let value = shift_retry_after(
                raw,
                ticket.loaded.wall_clock_at_start,
                receipt,
                unix_secs(wall),
            )
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
    sent_retry_after
}

/// Resets the request's connection before any byte of a response (TCP RST), after marking it
/// sent and noting the reset of `attempt` of `run`, so that the browser's resend of it is
/// recognised.
async fn reset(
    in_flight: InFlight,
    run: &str,
    attempt: u32,
    note: &str,
    connection: Option<Connection>,
    now: Moment,
) -> Response {
    let Some(connection) = connection else {
        // Not reachable through `serve`, which gives every request its connection.
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the reset fault needs the connection".into(),
        );
    };
    let app = Arc::clone(&in_flight.app);
    let seq = in_flight.seq;
    in_flight.sent(Outcome::status(Sent::Word("reset")), now);
    app.note_reset(run, attempt, now.at);
    eprintln!(
        "fixture-server: {:>10.1} ms  request #{seq}: {note}",
        app.log.ms(now.at)
    );
    connection.reset();
    // The connection task drops this request with the connection.
    std::future::pending::<Response>().await
}

/// A request in the log whose response is not sent yet. Dropped before [`InFlight::sent`] (the
/// request's future was dropped: an aborted fetch or a closed page), it logs that the client
/// went away.
pub struct InFlight {
    /// Where the request is logged.
    app: Arc<AppState>,
    /// Its log entry.
    seq: u64,
    /// Whether its response was marked sent.
    sent: bool,
}

impl InFlight {
    /// Adds `entry` to the log.
    pub fn arrive(app: &Arc<AppState>, entry: Entry) -> InFlight {
        InFlight {
            app: Arc::clone(app),
            seq: app.log.push(entry),
            sent: false,
        }
    }

    /// Marks the response sent at `when`, as `outcome` says: the one place a request's
    /// response is marked sent.
    pub fn sent(mut self, outcome: Outcome, when: Moment) {
        self.app.log.mark_sent(self.seq, outcome, when);
        self.sent = true;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.sent {
            self.app
                .client_gone(self.seq, "ended by the client before its response");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::catalog::Catalog;

    /// A full table of runs makes room by forgetting the old ones, and refuses a new run while
    /// none is old enough.
    #[test]
    fn a_full_table_of_runs_forgets_old_ones_or_refuses() {
        let start = Instant::now();
        let app = AppState::new(Catalog::default(), start, &[]);
        let mut runs: HashMap<String, RunState> = (0..RUN_CAPACITY)
            .map(|i| {
                let state = RunState {
                    scenario: "s".into(),
                    next: 1,
                    first_arrival: start + Duration::from_secs(u64::from(i % 2 == 0)),
                };
                (format!("r{i}"), state)
            })
            .collect();
        let (status, message) = room_for_a_run(&app, &mut runs, start + Duration::from_secs(60))
            .expect_err("no run is old enough");
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            message.starts_with("100000 runs began in the last 600 s"),
            "{message}"
        );
        assert_eq!(runs.len(), RUN_CAPACITY);
        // Half of them began at `start`, and are old 600.5 s later; the other half are not.
        let later = start + RUN_KEPT + Duration::from_millis(500);
        assert!(room_for_a_run(&app, &mut runs, later).is_ok());
        assert_eq!(runs.len(), RUN_CAPACITY / 2);
    }

    /// A redirect's Location keeps the request's path and query and ends in its own
    /// `redirected`, however an earlier one was written.
    #[test]
    fn a_redirect_replaces_any_earlier_redirected_parameter() {
        let location = |uri: &str, attempt| {
            let uri: Uri = uri.parse().expect("a URI");
            redirect_location(&uri, attempt)
        };
        assert_eq!(
            location("/palettes?collection=coast&scenario=s&run=r", 1),
            "/palettes?collection=coast&scenario=s&run=r&redirected=1"
        );
        assert_eq!(
            location(
                "/palettes?collection=coast&redirected=1&scenario=s&run=r",
                2
            ),
            "/palettes?collection=coast&scenario=s&run=r&redirected=2"
        );
        assert_eq!(
            location("/palettes?run=r&redirect%65d=1&&scenario=s", 3),
            "/palettes?run=r&scenario=s&redirected=3"
        );
    }
}
