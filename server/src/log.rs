//! The request log that tests read through `GET /log`: one entry per `/palettes` request,
//! written at arrival and completed when the response is sent (or the connection dropped, or
//! the client goes away first).

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::http::Uri;
use percent_encoding::percent_decode_str;
use serde::Serialize;

/// The most entries the log keeps: beyond it the oldest are forgotten, so that no client can
/// grow the server's memory without bound by sending requests.
pub const LOG_CAPACITY: usize = 20_000;

/// The most bytes of a request's URI, its `Origin` and each parameter an entry keeps.
const URI_KEPT: usize = 512;

/// The longest `run`, `scenario` or `collection` a `/palettes` request may give, in bytes.
pub const PARAM_MAX: usize = 256;

/// The query of `uri`, decoded as `application/x-www-form-urlencoded` (`+` is a space), and
/// strictly: a value whose escapes do not decode to UTF-8 is an error, where a lenient decoder
/// would turn it into U+FFFD and so make different run ids one. A parameter given twice is an
/// error too: which of its values the client meant cannot be known.
pub fn query_of(uri: &Uri) -> Result<HashMap<String, String>, String> {
    let decode = |text: &str| -> Result<String, String> {
        let spaced = text.replace('+', " ");
        percent_decode_str(&spaced)
            .decode_utf8()
            .map(Cow::into_owned)
            .map_err(|_| format!("{text:?} does not decode to UTF-8"))
    };
    let mut query = HashMap::new();
    let pairs = uri.query().unwrap_or_default().split('&');
    for pair in pairs.filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key)?;
        if query.contains_key(&key) {
            return Err(format!("the parameter {key:?} is given more than once"));
        }
        query.insert(key, decode(value)?);
    }
    Ok(query)
}

/// `text`, cut to at most `max` bytes on a character boundary, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let end = (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..end])
}

/// A request's URI as its log entry keeps it.
pub fn kept_uri(uri: &Uri) -> String {
    clip(&uri.to_string(), URI_KEPT)
}

/// A request's `Origin` as its log entry keeps it.
pub fn kept_origin(origin: &str) -> String {
    clip(origin, URI_KEPT)
}

/// What the server did with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Sent {
    /// An HTTP status: a scripted one, or a 4xx rejection.
    Status(u16),
    /// `"transport_error"` (the response was cut short) or `"reset"` (the connection was reset
    /// before any byte of the response).
    Word(&'static str),
}

/// One `/palettes` request. Times are milliseconds: `*_ms` since the server started (monotonic),
/// `*_unix_ms` since the Unix epoch (wall clock).
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    /// Sequence number, from 1, in arrival order; never reused (not even after `DELETE /log`).
    pub seq: u64,
    /// `GET` (or `OPTIONS` for a CORS preflight, `HEAD`, ...).
    pub method: String,
    /// The path and query as requested.
    pub uri: String,
    /// The `run`, `scenario` and `collection` parameters.
    #[serde(flatten)]
    pub params: Params,
    /// Which scripted response this request got, 1-based (attempt n gets `responses[n-1]`);
    /// null when the request was rejected (or is a preflight).
    pub attempt: Option<u32>,
    /// When the request arrived.
    pub arrival_ms: f64,
    /// When the request arrived, on the wall clock.
    pub arrival_unix_ms: f64,
    /// What was sent, and when; all null while the response is pending.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// When the server noticed that the client had gone before its response was sent (an
    /// aborted fetch), or before a body that never finishes was abandoned; null otherwise.
    pub client_gone_ms: Option<f64>,
    /// The transport fault injected into this response (`server/transport-faults.json`), e.g.
    /// `"reset"`; null for a response sent as scripted.
    pub fault: Option<&'static str>,
    /// The request's `Origin` header: set by a browser on a cross-origin fetch, absent on a
    /// same-origin GET.
    pub origin: Option<String>,
}

/// The parameters a request named; each is null when absent or empty.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Params {
    /// The `run` parameter.
    pub run: Option<String>,
    /// The `scenario` parameter.
    pub scenario: Option<String>,
    /// The `collection` parameter.
    pub collection: Option<String>,
}

impl Params {
    /// The non-empty `run`, `scenario` and `collection` of a decoded query.
    pub fn of(query: &HashMap<String, String>) -> Params {
        let param = |key: &str| query.get(key).filter(|v| !v.is_empty()).cloned();
        Params {
            run: param("run"),
            scenario: param("scenario"),
            collection: param("collection"),
        }
    }

    /// The first parameter longer than [`PARAM_MAX`] bytes, with its length.
    pub fn too_long(&self) -> Option<(&'static str, usize)> {
        [
            ("run", &self.run),
            ("scenario", &self.scenario),
            ("collection", &self.collection),
        ]
        .into_iter()
        .find_map(|(name, value)| {
            Some((name, value.as_ref()?.len())).filter(|(_, n)| *n > PARAM_MAX)
        })
    }

    /// The parameters as a log entry keeps them: each cut to [`URI_KEPT`] bytes.
    pub fn kept(self) -> Params {
        let keep = |value: Option<String>| value.map(|v| clip(&v, URI_KEPT));
        Params {
            run: keep(self.run),
            scenario: keep(self.scenario),
            collection: keep(self.collection),
        }
    }
}

/// How a request was answered, written once, by [`RequestLog::mark_sent`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct Outcome {
    /// The status sent, `"transport_error"`, `"reset"`, or null while the response is pending
    /// (or when the client went away first).
    pub status: Option<Sent>,
    /// The rejection message of a 4xx.
    pub error: Option<String>,
    /// When the response was handed to the connection (or the connection dropped).
    pub sent_ms: Option<f64>,
    /// The same, on the wall clock.
    pub sent_unix_ms: Option<f64>,
    /// The `Date` header sent.
    pub date: Option<String>,
    /// The `Retry-After` header sent (after moving a date onto the real clock).
    pub retry_after: Option<String>,
}

impl Outcome {
    /// `status` sent, with no message, `Date` or `Retry-After` recorded.
    pub fn status(status: Sent) -> Outcome {
        Outcome {
            status: Some(status),
            ..Outcome::default()
        }
    }
}

/// The log, and the server's start time that its `*_ms` fields count from.
#[derive(Debug)]
pub struct RequestLog {
    /// The server's start.
    started: Instant,
    /// The entries, and the last number given.
    inner: Mutex<Inner>,
}

/// The log's contents.
#[derive(Debug, Default)]
struct Inner {
    /// The number of the last entry pushed (0 before the first).
    next_seq: u64,
    /// The entries kept, in arrival order: the last [`LOG_CAPACITY`].
    entries: VecDeque<Entry>,
}

impl RequestLog {
    /// An empty log; `started` is the server's start.
    pub fn new(started: Instant) -> Self {
        RequestLog {
            started,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Milliseconds from the server's start to `at`.
    pub fn ms(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.started).as_secs_f64() * 1000.0
    }

    /// Adds an entry, numbering it; returns its number.
    pub fn push(&self, mut entry: Entry) -> u64 {
        let mut inner = self.lock();
        inner.next_seq = inner.next_seq.saturating_add(1);
        entry.seq = inner.next_seq;
        let seq = entry.seq;
        if inner.entries.len() >= LOG_CAPACITY {
            inner.entries.pop_front();
        }
        inner.entries.push_back(entry);
        seq
    }

    /// Changes entry `seq`, if it is still in the log.
    pub fn update(&self, seq: u64, change: impl FnOnce(&mut Entry)) {
        let mut inner = self.lock();
        if let Some(entry) = inner.entries.iter_mut().rev().find(|e| e.seq == seq) {
            change(entry);
        }
    }

    /// Records that entry `seq` was answered as `outcome` says, at `when`: the one place an
    /// entry's status, send times, `Date` and `Retry-After` are written.
    pub fn mark_sent(&self, seq: u64, outcome: Outcome, when: Moment) {
        let outcome = Outcome {
            sent_ms: Some(self.ms(when.at)),
            sent_unix_ms: Some(unix_ms(when.wall)),
            ..outcome
        };
        self.update(seq, |e| e.outcome = outcome);
    }

    /// The entries of `run` (all entries for `None`), in arrival order.
    pub fn entries(&self, run: Option<&str>) -> Vec<Entry> {
        self.lock()
            .entries
            .iter()
            .filter(|e| run.is_none() || e.params.run.as_deref() == run)
            .cloned()
            .collect()
    }

    /// Forgets every entry; returns how many there were.
    pub fn clear(&self) -> usize {
        let mut inner = self.lock();
        let count = inner.entries.len();
        inner.entries.clear();
        count
    }

    /// The contents, locked.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere cannot leave an entry half-written; keep serving.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One moment on both clocks: the monotonic one for the `*_ms` fields, the wall clock for the
/// `*_unix_ms` fields and the `Date` header.
#[derive(Clone, Copy, Debug)]
pub struct Moment {
    /// On the monotonic clock.
    pub at: Instant,
    /// On the wall clock.
    pub wall: SystemTime,
}

impl Moment {
    /// Now, on both clocks.
    pub fn now() -> Moment {
        Moment {
            at: Instant::now(),
            wall: SystemTime::now(),
        }
    }
}

/// Milliseconds since the Unix epoch of `time`.
pub fn unix_ms(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(run: &str) -> Entry {
        Entry {
            seq: 0,
            method: "GET".into(),
            uri: format!("/palettes?run={run}"),
            params: Params {
                run: Some(run.into()),
                ..Params::default()
            },
            attempt: None,
            arrival_ms: 0.0,
            arrival_unix_ms: 0.0,
            outcome: Outcome::default(),
            client_gone_ms: None,
            fault: None,
            origin: None,
        }
    }

    /// A text of exactly `max` bytes is kept whole; one byte more is cut, on a character
    /// boundary, and marked.
    #[test]
    fn clip_keeps_a_text_of_its_limit_whole() {
        let exact = "u".repeat(URI_KEPT);
        assert_eq!(clip(&exact, URI_KEPT), exact);
        let over = format!("{exact}v");
        assert_eq!(clip(&over, URI_KEPT), format!("{exact}…"));
        // "é" is two bytes: a cut inside it goes back to its start.
        assert_eq!(clip("abé", 3), "ab…");
    }

    /// Each parameter may be PARAM_MAX bytes long, not one more; the first too long is named.
    #[test]
    fn a_parameter_of_the_limit_is_read_and_a_longer_one_is_named() {
        let params = |run: usize, scenario: usize, collection: usize| Params {
            run: Some("r".repeat(run)),
            scenario: Some("s".repeat(scenario)),
            collection: Some("c".repeat(collection)),
        };
        let max = PARAM_MAX;
        assert_eq!(params(max, max, max).too_long(), None);
        assert_eq!(params(max + 1, 1, 1).too_long(), Some(("run", max + 1)));
        assert_eq!(
            params(1, max + 1, 1).too_long(),
            Some(("scenario", max + 1))
        );
        assert_eq!(
            params(1, 1, max + 1).too_long(),
            Some(("collection", max + 1))
        );
        assert_eq!(Params::default().too_long(), None);
    }

    /// The log keeps the last LOG_CAPACITY entries: the oldest go, the numbering goes on.
    #[test]
    fn the_log_keeps_only_its_latest_entries() {
        let log = RequestLog::new(Instant::now());
        for i in 0..LOG_CAPACITY + 5 {
            log.push(entry(&format!("r{i}")));
        }
        let kept = log.entries(None);
        assert_eq!(kept.len(), LOG_CAPACITY);
        assert_eq!(kept[0].seq, 6);
        assert_eq!(kept[0].params.run.as_deref(), Some("r5"));
        assert!(log.entries(Some("r4")).is_empty());
        assert_eq!(log.entries(Some("r5")).len(), 1);
    }

    /// A query is decoded strictly: escapes that are not UTF-8 are an error, and so is a parameter
    /// given twice; `+` is a space.
    #[test]
    fn a_query_that_is_not_utf8_or_repeats_a_parameter_is_an_error() {
        let uri = |q: &str| format!("/palettes?{q}").parse::<Uri>().expect("a URI");
        let query = query_of(&uri("run=a+b%21&scenario=%C3%A9&&flag")).expect("decoded");
        assert_eq!(query["run"], "a b!");
        assert_eq!(query["scenario"], "é");
        assert_eq!(query["flag"], "");
        assert!(query_of(&uri("run=%ff")).is_err());
        assert_eq!(
            query_of(&uri("run=a&scenario=s&run=b")),
            Err("the parameter \"run\" is given more than once".to_owned())
        );
        // Twice once decoded is twice: `r%75n` is `run`.
        assert!(query_of(&uri("run=a&r%75n=a")).is_err());
        assert_eq!(clip("ééé", 3), "é…");
    }
}
