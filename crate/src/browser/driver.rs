//! The browser driver: performs the model's decisions with `fetch`, `AbortController`s and
//! timers, and reports back what happened and when. It never decides anything itself.

use core::future::{poll_fn, Future};
use core::pin::pin;
use core::task::Poll;
use core::time::Duration;
use std::cell::Cell;

use js_sys::{Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortController, AbortSignal};

use super::clock::{wall_now, Clock};
use super::leave::Ownership;
use crate::action::{Action, Decision, Outcome, ReceiptClock, Response, TransportError};
use crate::http_date::HttpDate;
use crate::policy::Policy;
use crate::utc::UtcTime;
use wasm_bindgen_futures::JsFuture;

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
    pub(crate) report: js_sys::Object,
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

/// Runs one user action to its end. The screen's departure wins every tie, and after it
/// nothing more is sent and `on_update` is never called again.
pub(crate) async fn run(request: Request) -> Result<Finished, JsValue> {
    let _running = Running::enter();
    let ownership = Ownership::claim(request.screen.clone(), request.signal.as_ref());
    let leave = &ownership.leave;
    if leave.is_set() {
        // The screen let go before anything started: send nothing, start no budget.
        let error = super::api::abort_error(
            "the signal was aborted before the action started; nothing was sent",
        );
        return Err(error.into());
    }
    let clock = Clock::start();
    let (mut action, mut decision) = Action::start(request.policy)
        .map_err(|e| JsValue::from(wasm_bindgen::JsError::new(e.message())))?;
    let mut reported = 0;
    let mut controller: Option<AbortController> = None;
    let mut body = None;
    let mut in_flight = None;
    let mut waits = 0usize;
    let mut waited_for = None;
    loop {
        if !leave.is_set() {
            reported = update(&request, &action, reported);
        }
        decision = match decision {
            Decision::Stop(_) => break,
            Decision::Send { abort_at, .. } => {
                let abort = AbortController::new()?;
                in_flight = Some(Box::pin(attempt(
                    request.fetch.clone(),
                    request.url.clone(),
                    abort.signal(),
                )));
                controller = Some(abort);
                Decision::Await { abort_at }
            }
            Decision::Await { abort_at } => {
                let Some(fetching) = in_flight.as_mut() else {
                    // Unreachable by construction: Await always follows a Send.
                    break;
                };
                let cap = clock.sleep_until(abort_at);
                match first(leave.wait(), first(fetching, cap)).await {
                    Either::Left(()) => action.on_leave(clock.elapsed()),
                    Either::Right(Either::Left(result)) => {
                        in_flight = None;
                        controller = None;
                        let now = clock.elapsed();
                        match result {
                            Ok(received) => {
                                let decision = action.on_response(
                                    now,
                                    Response {
                                        status: received.status,
                                        retry_after: received.retry_after.as_deref(),
                                        clock: receipt_clock(received.date.as_deref()),
                                    },
                                );
                                body = Some(received.body);
                                decision
                            }
                            Err(word) => {
                                action.on_transport_error(now, TransportError::Failed(word))
                            }
                        }
                    }
                    Either::Right(Either::Right(())) => action.on_timer(clock.elapsed()),
                }
            }
            Decision::Wait { until } => {
                if waited_for != Some(until) {
                    waited_for = Some(until);
                    waits = waits.saturating_add(1);
                }
                let late = waits
                    .checked_sub(1)
                    .and_then(|k| request.timer_late_by.get(k))
                    .copied()
                    .unwrap_or_default();
                match first(leave.wait(), clock.sleep_until(until.saturating_add(late))).await {
                    Either::Left(()) => action.on_leave(clock.elapsed()),
                    Either::Right(()) => action.on_timer(clock.elapsed()),
                }
            }
        };
    }
    // Whatever is still in flight is abandoned for good.
    drop(in_flight);
    if let Some(abort) = controller {
        abort.abort();
    }
    let outcome = action.stopped().map(|(_, cause)| cause.outcome());
    Ok(Finished {
        outcome,
        report: super::js::report(&action, &request.url),
        body: if outcome == Some(Outcome::Success) {
            body
        } else {
            None
        },
    })
}

/// Hands the view the visible state and the events it has not seen yet.
fn update(request: &Request, action: &Action, reported: usize) -> usize {
    let events = action.events();
    if let Some(on_update) = &request.on_update {
        let value = super::api::update_value(action, events.get(reported..).unwrap_or_default());
        // A throwing view must not break the action.
        let _ = on_update.call1(&JsValue::UNDEFINED, &value);
    }
    events.len()
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
async fn attempt(fetch: Function, url: String, signal: AbortSignal) -> Result<Received, String> {
    let init = js_sys::Object::new();
    super::js::set(&init, "method", &JsValue::from_str("GET"));
    super::js::set(&init, "signal", &signal);
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
