//! What every request shares: the scenarios, the runs, the log and the page's policy, and the
//! markers a response carries for the header layers.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::HeaderValue;
use tokio::sync::watch;

use crate::catalog::Catalog;
use crate::faults::RESEND_WINDOW;
use crate::log::RequestLog;

/// Shared by every request.
#[derive(Debug)]
pub struct AppState {
    /// The scenarios served.
    pub(crate) catalog: Catalog,
    /// Every run so far, by run id.
    pub(crate) runs: Mutex<HashMap<String, RunState>>,
    /// The `/palettes` request log.
    pub log: RequestLog,
    /// The Content-Security-Policy sent with every response: the page's policy, with the
    /// server's own origins (both ports) as the only places it may connect to.
    pub(crate) csp: HeaderValue,
    /// When each run's k-th scripted response is due to be sent, for `/away`.
    sends: Mutex<HashMap<(String, u32), Instant>>,
    /// Bumped whenever `sends` gains an entry.
    pub(crate) sends_changed: watch::Sender<u64>,
    /// Each run's last `reset` fault: when, and which attempt, to recognise the browser's
    /// resend of the reset request.
    resets: Mutex<HashMap<String, (Instant, u32)>>,
}

/// The most runs the server keeps at once, so that no client can grow its memory without bound
/// by naming new run ids. When it is reached, runs that began more than [`RUN_KEPT`] ago are
/// forgotten; while none has, a new run is refused.
pub(crate) const RUN_CAPACITY: usize = 100_000;

/// How long a run is kept at least: far longer than any action's budget.
pub(crate) const RUN_KEPT: Duration = Duration::from_secs(600);

/// Where one run is.
#[derive(Debug)]
pub(crate) struct RunState {
    /// The scenario the run's first request named; a run never changes scenario.
    pub(crate) scenario: String,
    /// How many scripted responses the run has been given (the next one's index).
    pub(crate) next: usize,
    /// When its first request arrived: the live "elapsed zero" of the run.
    pub(crate) first_arrival: Instant,
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

    /// Forgets the runs in `runs` (the locked [`AppState::runs`]) that began more than
    /// [`RUN_KEPT`] before `now`, with their sends and resets; a request naming one later
    /// begins it anew.
    pub(crate) fn forget_old_runs(&self, runs: &mut HashMap<String, RunState>, now: Instant) {
        runs.retain(|_, run| now.saturating_duration_since(run.first_arrival) <= RUN_KEPT);
        (self.sends.lock().unwrap_or_else(PoisonError::into_inner))
            .retain(|(run, _), _| runs.contains_key(run));
        (self.resets.lock().unwrap_or_else(PoisonError::into_inner))
            .retain(|run, _| runs.contains_key(run));
    }

    /// Remembers that attempt `attempt` of `run` was reset at `at`.
    pub(crate) fn note_reset(&self, run: &str, attempt: u32, at: Instant) {
        self.resets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(run.to_string(), (at, attempt));
    }

    /// The attempt whose reset `arrival` follows closely enough to be the browser's resend.
    pub(crate) fn resend_of(&self, run: &str, arrival: Instant) -> Option<u32> {
        let resets = self.resets.lock().unwrap_or_else(PoisonError::into_inner);
        let (at, attempt) = resets.get(run)?;
        (arrival.saturating_duration_since(*at) <= RESEND_WINDOW).then_some(*attempt)
    }

    /// Announces, for `/away`, that attempt `attempt` of `run` is due to be sent at `at`.
    pub(crate) fn record_send(&self, run: &str, attempt: u32, at: Instant) {
        self.sends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((run.to_string(), attempt), at);
        self.sends_changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// When attempt `attempt` of `run` is due to be sent, once announced.
    pub(crate) fn send_time(&self, run: &str, attempt: u32) -> Option<Instant> {
        self.sends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(run.to_string(), attempt))
            .copied()
    }

    /// Logs that the client of request `seq` went away (`what` says how): in its log entry and
    /// on stderr.
    pub(crate) fn client_gone(&self, seq: u64, what: &str) {
        let gone = self.log.ms(Instant::now());
        self.log.update(seq, |e| e.client_gone_ms = Some(gone));
        eprintln!("fixture-server: {gone:>10.1} ms  request #{seq} {what}");
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

/// Extra words for the stderr access-log line of a request.
#[derive(Clone, Debug)]
pub struct LogNote(pub String);

/// What a response goes out without: the one marker that a fault (or a scenario without a
/// clock) leaves on a `/palettes` response for the header layers, which add the rest.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Withheld {
    /// No `Access-Control-Allow-Origin` (and so no `Access-Control-Expose-Headers` either).
    pub(crate) allow_origin: bool,
    /// No `Access-Control-Expose-Headers`.
    pub(crate) expose_headers: bool,
    /// No `Date`.
    pub(crate) date: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs that began more than RUN_KEPT ago are forgotten with their sends and resets; the
    /// others are kept whole.
    #[test]
    fn old_runs_are_forgotten_with_their_sends_and_resets() {
        let start = Instant::now();
        let app = AppState::new(Catalog::default(), start, &[]);
        let later = start + RUN_KEPT + Duration::from_secs(5);
        let run = |first_arrival| RunState {
            scenario: "s".into(),
            next: 1,
            first_arrival,
        };
        let mut runs = HashMap::new();
        runs.insert("old".to_string(), run(start));
        runs.insert("new".to_string(), run(start + Duration::from_secs(10)));
        for name in ["old", "new"] {
            app.record_send(name, 1, start);
            app.note_reset(name, 1, start);
        }
        app.forget_old_runs(&mut runs, later);
        assert_eq!(runs.keys().collect::<Vec<_>>(), ["new"]);
        assert_eq!(app.send_time("old", 1), None);
        assert_eq!(app.send_time("new", 1), Some(start));
        assert_eq!(app.resend_of("old", start), None);
        assert_eq!(app.resend_of("new", start), Some(1));
    }

    /// A request that follows a reset by up to RESEND_WINDOW is the browser's resend of it; a
    /// later one is a new attempt.
    #[test]
    fn a_resend_is_a_request_within_the_window_after_a_reset() {
        let start = Instant::now();
        let app = AppState::new(Catalog::default(), start, &[]);
        app.note_reset("r", 2, start);
        for after in [Duration::ZERO, RESEND_WINDOW / 2, RESEND_WINDOW] {
            assert_eq!(app.resend_of("r", start + after), Some(2), "{after:?}");
        }
        let past = start + RESEND_WINDOW + Duration::from_millis(1);
        assert_eq!(app.resend_of("r", past), None);
        assert_eq!(app.resend_of("other", start), None);
    }
}
