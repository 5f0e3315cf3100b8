//! The browser driver: performs the model's decisions with `fetch`, `AbortController`s and
//! timers, and reports back what happened and when. It never decides anything itself.

use core::future::{poll_fn, Future};
use core::pin::{pin, Pin};
use core::task::Poll;
use core::time::Duration;
use std::cell::Cell;

use js_sys::{Function, Promise};
use retry_budget_model::http_date::HttpDate;
use retry_budget_model::json::Json;
use retry_budget_model::report;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::{
    Action, Decision, Outcome, Policy, ReceiptClock, Response, TransportError,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal};

use crate::clock::{wall_now, Clock};
use crate::js::{abort_error, set, value_of};
use crate::leave::Ownership;

/// What one call of `fetchWithBudget` asked for.
pub(crate) struct Request {
    pub(crate) url: String,
    pub(crate) policy: Policy,
    pub(crate) fetch: Function,
    pub(crate) on_update: Option<Function>,
    pub(crate) signal: Option<AbortSignal>,
    pub(crate) screen: Option<String>,
    /// Fault injection for demos and tests: the k-th wait's timer is armed this much later, as
    /// in a throttled background tab. The model sees the real wake-up time either way.
    pub(crate) timer_late_by: Vec<Duration>,
}

/// How a run ended.
pub(crate) struct Finished {
    /// How it ended.
    pub(crate) outcome: Option<Outcome>,
    /// The report, as the JS API returns it.
    pub(crate) report: JsValue,
    /// The body of the last response, as text (a JS string); kept for a success.
    pub(crate) body: Option<JsValue>,
}

thread_local! {
    static RUNNING: Cell<u32> = const { Cell::new(0) };
}

/// Actions running right now, for checking that ended ones leave nothing behind.
pub(crate) fn running() -> u32 {
    RUNNING.try_with(Cell::get).unwrap_or(0)
}

/// Counts one running action while it lives.
struct Running;

impl Running {
    fn enter() -> Running {
        let _ = RUNNING.try_with(|n| n.set(n.get().saturating_add(1)));
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = RUNNING.try_with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// What a finished attempt brought back.
struct Received {
    status: u16,
    retry_after: Option<String>,
    date: Option<String>,
    body: JsValue,
}

type Exchange = Pin<Box<dyn Future<Output = Result<Received, String>>>>;

/// An attempt in flight: its exchange, and the controller that aborts it. Dropping it aborts
/// the request (as dropping a gloo `Timeout` clears it), so an action that stops, or is
/// dropped, leaves no request behind.
#[must_use = "dropping an attempt aborts its request"]
struct Attempt {
    exchange: Exchange,
    abort: Option<AbortController>,
}

impl Attempt {
    /// Starts `GET url` through `fetch`, with an abort signal of its own.
    fn send(fetch: &Function, url: &str) -> Result<Attempt, JsValue> {
        let abort = AbortController::new()?;
        let exchange = Box::pin(exchange(fetch.clone(), url.to_owned(), abort.signal()));
        Ok(Attempt {
            exchange,
            abort: Some(abort),
        })
    }

    /// The exchange ended by itself: there is nothing left to abort.
    fn settled(mut self) {
        self.abort = None;
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        if let Some(abort) = self.abort.take() {
            abort.abort();
        }
    }
}

/// Runs one user action to its end. The screen's departure wins every tie, and after it
/// nothing more is sent and `on_update` is never called again.
pub(crate) async fn run(request: Request) -> Result<Finished, JsValue> {
    let _running = Running::enter();
    let ownership = Ownership::claim(request.screen.clone(), request.signal.as_ref());
    if ownership.leave.is_set() {
        // The screen let go before anything started: send nothing, start no budget.
        return Err(abort_error(
            "the signal was aborted before the action started; nothing was sent",
        ));
    }
    let (action, mut decision) = Action::start(request.policy)
        .map_err(|e| JsValue::from(wasm_bindgen::JsError::new(e.message())))?;
    let mut run = Run {
        request: &request,
        ownership: &ownership,
        clock: Clock::start(),
        action,
        attempt: None,
        body: None,
        reported: 0,
        waits: 0,
        waited_for: None,
    };
    loop {
        run.show_progress();
        decision = match decision {
            Decision::Stop(_) => break,
            Decision::Send { abort_at, .. } => run.send(abort_at)?,
            Decision::Await { abort_at } => run.await_attempt(abort_at).await,
            Decision::Wait { until } => run.wait(until).await,
        };
    }
    Ok(run.finish())
}

/// One action in progress: the model, and what the driver holds for it.
struct Run<'a> {
    request: &'a Request,
    ownership: &'a Ownership,
    clock: Clock,
    action: Action,
    /// The attempt in flight, if any.
    attempt: Option<Attempt>,
    /// The last response's body (a JS string).
    body: Option<JsValue>,
    /// How many trace events the view has been handed.
    reported: usize,
    /// Waits begun so far, and the end of the current one (an early timer resumes it).
    waits: usize,
    waited_for: Option<Duration>,
}

impl Run<'_> {
    /// Hands the view the visible state and the events it has not seen yet, while the screen
    /// still owns the action.
    fn show_progress(&mut self) {
        if self.ownership.leave.is_set() {
            return;
        }
        let events = self.action.events();
        if let Some(on_update) = &self.request.on_update {
            let update = Json::Object(vec![
                ("visible".into(), report::texts(&self.action.visible())),
                (
                    "events".into(),
                    report::events(events.get(self.reported..).unwrap_or_default()),
                ),
                ("outcome".into(), outcome(&self.action)),
            ]);
            // A throwing view must not break the action.
            let _ = on_update.call1(&JsValue::UNDEFINED, &value_of(&update));
        }
        self.reported = events.len();
    }

    /// Sends the attempt the model asked for.
    fn send(&mut self, abort_at: Duration) -> Result<Decision, JsValue> {
        self.attempt = Some(Attempt::send(&self.request.fetch, &self.request.url)?);
        Ok(Decision::Await { abort_at })
    }

    /// Waits for the attempt in flight to settle, for its cap, or for the screen to let go.
    async fn await_attempt(&mut self, abort_at: Duration) -> Decision {
        let Some(attempt) = self.attempt.as_mut() else {
            // Unreachable by construction: Await always follows a Send.
            return self.action.on_leave(self.clock.elapsed());
        };
        let cap = self.clock.sleep_until(abort_at);
        let leave = self.ownership.leave.wait();
        match first(leave, first(attempt.exchange.as_mut(), cap)).await {
            Either::Left(()) => self.action.on_leave(self.clock.elapsed()),
            Either::Right(Either::Left(result)) => {
                if let Some(attempt) = self.attempt.take() {
                    attempt.settled();
                }
                self.receive(result)
            }
            Either::Right(Either::Right(())) => self.action.on_timer(self.clock.elapsed()),
        }
    }

    /// Tells the model what the attempt brought back, now.
    fn receive(&mut self, result: Result<Received, String>) -> Decision {
        let now = self.clock.elapsed();
        match result {
            Ok(received) => {
                let response = Response {
                    status: received.status,
                    retry_after: received.retry_after.as_deref(),
                    clock: receipt_clock(received.date.as_deref()),
                };
                let decision = self.action.on_response(now, response);
                self.body = Some(received.body);
                decision
            }
            Err(word) => self
                .action
                .on_transport_error(now, TransportError::Failed(word)),
        }
    }

    /// Sends nothing until elapsed `until` (made late by `timerLateBy_s`), or until the
    /// screen lets go; then the model decides again at the real time.
    async fn wait(&mut self, until: Duration) -> Decision {
        if self.waited_for != Some(until) {
            self.waited_for = Some(until);
            self.waits = self.waits.saturating_add(1);
        }
        let late = self
            .waits
            .checked_sub(1)
            .and_then(|k| self.request.timer_late_by.get(k))
            .copied()
            .unwrap_or_default();
        let timer = self.clock.sleep_until(until.saturating_add(late));
        match first(self.ownership.leave.wait(), timer).await {
            Either::Left(()) => self.action.on_leave(self.clock.elapsed()),
            Either::Right(()) => self.action.on_timer(self.clock.elapsed()),
        }
    }

    /// Abandons whatever is still in flight, for good, and builds the report.
    fn finish(mut self) -> Finished {
        drop(self.attempt.take());
        let outcome = self.action.stopped().map(|(_, cause)| cause.outcome());
        let report = value_of(&self.action.into_report(&self.request.url).to_json());
        Finished {
            outcome,
            report,
            body: self.body.filter(|_| outcome == Some(Outcome::Success)),
        }
    }
}

/// The outcome so far, as the view gets it: its name, or `null` while running.
fn outcome(action: &Action) -> Json {
    Json::or_null(action.stopped(), |(_, cause)| {
        Json::text(cause.outcome().as_str())
    })
}

/// The clock evidence for an HTTP-date: the response's own `Date`, or else the local clock
/// (which the model uses only when the policy trusts it).
fn receipt_clock(date: Option<&str>) -> ReceiptClock {
    let local = wall_now();
    let server = date
        .and_then(HttpDate::parse)
        .and_then(|d| d.resolve(local.unwrap_or(UtcTime::UNIX_EPOCH)))
        .filter(|at| !at.is_saturated());
    match (server, local) {
        (Some(at), _) => ReceiptClock::Server(at),
        (None, Some(at)) => ReceiptClock::Local(at),
        (None, None) => ReceiptClock::Absent,
    }
}

/// One GET, through the caller's `fetch`, with its own abort signal; done when the body is
/// read, so the cap covers the whole exchange.
async fn exchange(fetch: Function, url: String, signal: AbortSignal) -> Result<Received, String> {
    let init = js_sys::Object::new();
    set(&init, "method", &JsValue::from_str("GET"));
    set(&init, "signal", &signal);
    let returned = fetch
        .call2(&JsValue::UNDEFINED, &JsValue::from(url), &init)
        .map_err(|e| failure_word(&e))?;
    let response = JsFuture::from(Promise::resolve(&returned))
        .await
        .map_err(|e| failure_word(&e))?;
    let response: web_sys::Response = response
        .dyn_into()
        .map_err(|_| String::from("not_a_response"))?;
    let headers = response.headers();
    let retry_after = headers.get("Retry-After").ok().flatten();
    let date = headers.get("Date").ok().flatten();
    let text = response.text().map_err(|e| failure_word(&e))?;
    let body = JsFuture::from(text).await.map_err(|e| failure_word(&e))?;
    Ok(Received {
        status: response.status(),
        retry_after,
        date,
        body,
    })
}

/// A word for a failed fetch: `network` for the `TypeError` that fetch rejects with, and for
/// an `AbortError` (the driver never polls a request it aborted itself, so one that reaches
/// here came from below: Firefox rejects a body cut off by a connection reset that way); the
/// error's name otherwise (an injected fetch may have its own).
fn failure_word(error: &JsValue) -> String {
    let name = js_sys::Reflect::get(error, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string());
    match name.as_deref() {
        Some("TypeError" | "AbortError") | None => "network".into(),
        Some(other) => other.into(),
    }
}

enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Whichever of two futures finishes first; `a` wins a tie. The loser is dropped, which for a
/// timer clears it.
async fn first<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        if let Poll::Ready(out) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(out));
        }
        Poll::Pending
    })
    .await
}
