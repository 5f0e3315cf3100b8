//! The browser driver: a small event-driven shell over the model. Each thing that happens (a
//! `fetch` promise settling, a timer firing, the screen letting go) is reported to the model
//! with the elapsed time, and the driver performs the decision it gets back: send an attempt,
//! arm a timer, or stop. It never decides anything itself.
//!
//! One closure per action receives every promise settlement, tagged with what settled and for
//! which attempt, so a late settlement of an aborted attempt is recognised and ignored. The
//! action's state lives until its last promise has settled, then frees itself.

use std::cell::RefCell;
use std::rc::{Rc, Weak};
use std::time::Duration;

use js_sys::{Function, Promise};
use retry_budget_model::http_date::HttpDate;
use retry_budget_model::json::Json;
use retry_budget_model::report;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::{
    Action, Decision, Outcome, Policy, ReceiptClock, Response, TransportError,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal};

use crate::clock::{wall_now, Clock};
use crate::js::{abort_error, draw, parse_json, promise, set, then, value_of};
use crate::leave::{Flag, Ownership};
use crate::origin::{self, Listener, Share};
use crate::Callback;
use gloo_timers::callback::Timeout;

/// What one call of `fetchWithBudget` asked for.
pub(crate) struct Request {
    pub(crate) url: String,
    pub(crate) policy: Policy,
    pub(crate) fetch: Function,
    pub(crate) on_update: Option<Function>,
    pub(crate) signal: Option<AbortSignal>,
    pub(crate) screen: Option<String>,
    /// Who hears of this action's origin blocks, and whose it hears.
    pub(crate) share: Share,
    /// The origin of `url`, which the blocks are for.
    pub(crate) origin: String,
    /// Fault injection for demos and tests: the k-th wait's timer is armed this much later, as
    /// in a throttled background tab. The model sees the real wake-up time either way.
    pub(crate) timer_late_by: Vec<Duration>,
}

/// Actions running right now, for checking that ended ones leave nothing behind.
static RUNNING: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// How many actions are running right now.
pub(crate) fn running() -> u32 {
    RUNNING.load(std::sync::atomic::Ordering::Relaxed)
}

/// What a settlement is: an attempt's response headers, its body, its failure, a timer that
/// fired, or that timer handed to the model in a microtask (so that a departure in the same
/// task wins the tie).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Settled {
    Response = 1,
    Body = 2,
    Failure = 3,
    Timer = 4,
    Fired = 5,
}

/// 2^32: a tag is `what * 2^32 + number`, exact in a JavaScript number.
const TAG_SHIFT: f64 = 4_294_967_296.0;

impl Settled {
    /// What settled and for which attempt or timer, as one number to bind to the receiver.
    fn tag(self, number: u32) -> f64 {
        f64::from(self as u8) * TAG_SHIFT + f64::from(number)
    }

    /// The two halves of a tag (`as` saturates: a stray value reads as a failure of nothing).
    fn untag(tag: f64) -> (Settled, u32) {
        let what = match (tag / TAG_SHIFT) as u8 {
            1 => Settled::Response,
            2 => Settled::Body,
            4 => Settled::Timer,
            5 => Settled::Fired,
            _ => Settled::Failure,
        };
        (what, (tag % TAG_SHIFT) as u32)
    }
}

/// The receiver of every settlement and timer: `(tag, value)`.
type Settle = Callback;

/// Starts one user action: the returned promise resolves with its report, or rejects with an
/// `AbortError` carrying it when the screen lets go. The action begins in a microtask, as a
/// spawned task would: a signal aborted right after the call still means "nothing was sent".
pub(crate) fn start(request: Request) -> Promise {
    let mut request = Some(request);
    let executor = Callback::new(move |resolve: JsValue, reject: JsValue| {
        let (resolve, reject) = (resolve.unchecked_into(), reject.unchecked_into());
        let mut args = request.take().map(|request| (request, resolve, reject));
        // The start holds itself until it runs, and then lets itself go: freed as soon as it
        // returns (wasm-bindgen defers the free past the call), not whenever a collector gets
        // to it.
        let slot: Rc<RefCell<Option<Callback>>> = Rc::default();
        let held = Rc::clone(&slot);
        let begin = Callback::new(move |_: JsValue, _: JsValue| {
            let this = held.borrow_mut().take();
            if let Some((request, resolve, reject)) = args.take() {
                Shared::begin(request, resolve, reject);
            }
            drop(this);
        });
        let function: &Function = begin.as_ref().unchecked_ref();
        then(&Promise::resolve(&JsValue::UNDEFINED), function, function);
        *slot.borrow_mut() = Some(begin);
    });
    promise(&executor)
}

/// One action, shared by the callbacks that report to it.
struct Shared {
    run: RefCell<Run>,
    /// Set when the screen lets go; outside the `RefCell`, so that a view that leaves from
    /// inside `onUpdate` is heard at once.
    leave: Rc<Flag>,
    /// The latest origin block another action announced that the model has not been told of
    /// yet (shared-clock milliseconds; 0 for none); outside the `RefCell` for the same reason.
    heard: std::cell::Cell<f64>,
}

/// The state of one action: the model, and what the driver holds for it.
struct Run {
    request: Request,
    /// The screen, its listeners and its leave signals; given up at the stop.
    ownership: Option<Ownership>,
    clock: Clock,
    action: Action,
    resolve: Function,
    reject: Function,
    /// The attempt in flight, if any.
    attempt: Option<Attempt>,
    /// The timer armed now (a wait's end or the attempt's cap), and its number: a timer that
    /// fired is handled only if it is still the one armed.
    timer: Option<Timeout>,
    timers: u32,
    /// What other actions on the origin tell this one; forgotten at the stop.
    listener: Option<Listener>,
    /// The settlement receiver, kept until the last promise it was given has settled.
    settle: Option<Settle>,
    /// Promises given `settle` that have not settled yet.
    pending: u32,
    /// The last response's body (a JS string).
    body: Option<JsValue>,
    /// How many trace events the view has been handed, and the visible state it was shown.
    reported: usize,
    shown: Vec<String>,
    /// Waits begun so far, and the attempt the current one follows (an early timer resumes
    /// it, a block moves it: either way it is the same wait).
    waits: usize,
    waited_after: Option<u32>,
    finished: bool,
}

/// An attempt in flight: its number, its status and headers once they arrive, and the
/// controller that aborts it. Dropping it aborts the request (as dropping a gloo `Timeout`
/// clears it), so an action that stops leaves no request behind.
#[must_use = "dropping an attempt aborts its request"]
struct Attempt {
    number: u32,
    head: Option<Head>,
    abort: Option<AbortController>,
}

/// A response's status and the headers the model reads.
struct Head {
    status: u16,
    retry_after: Option<String>,
    date: Option<String>,
}

impl Drop for Attempt {
    fn drop(&mut self) {
        if let Some(abort) = self.abort.take() {
            abort.abort();
        }
    }
}

impl Shared {
    /// Claims the screen and sends the first attempt; or rejects when the screen has already
    /// let go or the policy cannot run.
    fn begin(request: Request, resolve: Function, reject: Function) {
        let ownership = Ownership::claim(request.screen.clone(), request.signal.as_ref());
        if ownership.leave.is_set() {
            // The screen let go before anything started: send nothing, start no budget.
            let error =
                abort_error("the signal was aborted before the action started; nothing was sent");
            let _ = reject.call1(&JsValue::UNDEFINED, &error);
            return;
        }
        let clock = Clock::start();
        let blocked: Vec<Duration> = origin::blocked_until(&request.origin, request.share)
            .map(|until| clock.elapsed_at(until))
            .into_iter()
            .collect();
        let (action, first) = match Action::start_on_origin(request.policy, &blocked, draw()) {
            Ok(started) => started,
            Err(e) => {
                let error = JsValue::from(JsError::new(e.message()));
                let _ = reject.call1(&JsValue::UNDEFINED, &error);
                return;
            }
        };
        RUNNING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let leave = Rc::clone(&ownership.leave);
        let shared = Rc::new(Shared {
            run: RefCell::new(Run {
                request,
                ownership: Some(ownership),
                clock,
                action,
                resolve,
                reject,
                attempt: None,
                timer: None,
                timers: 0,
                listener: None,
                settle: None,
                pending: 0,
                body: None,
                reported: 0,
                shown: Vec::new(),
                waits: 0,
                waited_after: None,
                finished: false,
            }),
            leave,
            heard: std::cell::Cell::new(0.0),
        });
        let weak = Rc::downgrade(&shared);
        shared.leave.on_set(Box::new(move || Shared::left(&weak)));
        let weak = Rc::downgrade(&shared);
        let listener: Listener = Rc::new(move |until_ms| Shared::heard(&weak, until_ms));
        let receiver = Rc::clone(&shared);
        let settle: Settle = Closure::new(move |tag: JsValue, value: JsValue| {
            let (what, number) = Settled::untag(tag.as_f64().unwrap_or(0.0));
            receiver.settled(what, number, value);
        });
        let mut run = shared.run.borrow_mut();
        origin::listen(&run.request.origin, run.request.share, &listener);
        run.listener = Some(listener);
        run.settle = Some(settle);
        run.perform(&shared, first);
    }

    /// Another action on the origin learned that the service blocks it until `until_ms`: the
    /// model moves this action's wait (or stops it) at once. From inside a step of this action
    /// the step itself picks it up.
    fn heard(weak: &Weak<Shared>, until_ms: f64) {
        let Some(shared) = weak.upgrade() else { return };
        shared.heard.set(shared.heard.get().max(until_ms));
        let Ok(mut run) = shared.run.try_borrow_mut() else {
            return;
        };
        if !run.finished {
            let decision = run.action.decision();
            run.perform(&shared, decision);
        }
    }

    /// The screen let go: the model stops the action, now. From inside a step of this action
    /// (a view leaving from `onUpdate`) the step itself sees the flag.
    fn left(weak: &Weak<Shared>) {
        let Some(shared) = weak.upgrade() else { return };
        let Ok(mut run) = shared.run.try_borrow_mut() else {
            return;
        };
        if !run.finished {
            let now = run.clock.elapsed();
            let decision = run.action.on_leave(now);
            run.perform(&shared, decision);
        }
    }

    /// A promise given to `settle` settled with `value`, or the armed timer fired.
    fn settled(self: &Rc<Self>, what: Settled, number: u32, value: JsValue) {
        let released = {
            let Ok(mut run) = self.run.try_borrow_mut() else {
                return;
            };
            let number = Some(number);
            if what == Settled::Fired {
                // The model hears of it in a microtask, at the real time then, so that a
                // departure in the same task (rule 12: leaving wins a tie) comes first. A timer
                // is not a promise: nothing is pending for it, and the stop clears it.
                let timer = run.timers;
                if !run.finished && number == Some(timer) {
                    let now = Promise::resolve(&JsValue::UNDEFINED);
                    run.listen(now, Settled::Timer, Settled::Timer, timer);
                }
                return;
            }
            run.pending = run.pending.saturating_sub(1);
            let current = if what == Settled::Timer {
                Some(run.timers)
            } else {
                run.attempt.as_ref().map(|a| a.number)
            };
            if !run.finished && number == current {
                if let Some(decision) = run.on_settled(what, value) {
                    run.perform(self, decision);
                }
            }
            // The last settlement after the stop frees the action (this closure included, once
            // it returns).
            if run.finished && run.pending == 0 {
                run.settle.take()
            } else {
                None
            }
        };
        drop(released);
    }
}

impl Run {
    /// Gives `promise`'s fulfilment and rejection to the settlement receiver, tagged.
    fn listen(&mut self, promise: Promise, fulfilled: Settled, rejected: Settled, attempt: u32) {
        if let (Some(fulfilled), Some(rejected)) = (
            self.tagged(fulfilled, attempt),
            self.tagged(rejected, attempt),
        ) {
            then(&promise, &fulfilled, &rejected);
            self.pending = self.pending.saturating_add(1);
        }
    }

    /// The settlement receiver with its first argument bound: what, and for which attempt or
    /// timer, as one tag. `None` once the action has let the receiver go.
    fn tagged(&self, what: Settled, number: u32) -> Option<Function> {
        let settle: &Function = self.settle.as_ref()?.as_ref().unchecked_ref();
        let bound = settle.bind1(&JsValue::NULL, &JsValue::from(what.tag(number)));
        Some(bound.unchecked_into())
    }

    /// What a settlement means to the model: a decision, or nothing yet (the headers arrived;
    /// the body is still coming).
    fn on_settled(&mut self, what: Settled, value: JsValue) -> Option<Decision> {
        let now = self.clock.elapsed();
        match what {
            Settled::Response => match self.read_head(value) {
                Ok(()) => None,
                Err(word) => Some(
                    self.action
                        .on_transport_error(now, TransportError::Failed(word)),
                ),
            },
            Settled::Body => {
                let head = self.attempt.take().and_then(|mut attempt| {
                    attempt.abort = None;
                    attempt.head.take()
                });
                let head = head.unwrap_or(Head {
                    status: 0,
                    retry_after: None,
                    date: None,
                });
                self.body = Some(value);
                let response = Response {
                    status: head.status,
                    retry_after: head.retry_after.as_deref(),
                    clock: receipt_clock(head.date.as_deref()),
                };
                let decision = self.action.on_response_drawn(now, response, draw());
                self.announce();
                Some(decision)
            }
            Settled::Timer | Settled::Fired => Some(self.action.on_timer(now)),
            Settled::Failure => {
                if let Some(mut attempt) = self.attempt.take() {
                    attempt.abort = None;
                }
                Some(
                    self.action
                        .on_transport_error(now, TransportError::Failed(failure_word(&value))),
                )
            }
        }
    }

    /// Tells the other actions on the origin of the block this action's last response
    /// announced (rule 13), if any.
    fn announce(&self) {
        if let (Some(until), Some(listener)) = (self.action.announced_block(), &self.listener) {
            let until_ms = self.clock.shared_ms(until);
            origin::announce(&self.request.origin, until_ms, self.request.share, listener);
        }
    }

    /// Performs `decision`, and whatever follows from it at once, until the driver has to wait
    /// for something: a promise, a timer, or nothing at all (the stop). A departure, and then a
    /// block another action heard of, come before the decision. The view hears of an attempt after
    /// it is sent and of the stop after the request is abandoned, so that the time a view takes
    /// to draw is neither taken from an attempt's cap nor added to it; a view that leaves (or a
    /// block heard) from inside `onUpdate` is handled at once.
    fn perform(&mut self, shared: &Rc<Shared>, mut decision: Decision) {
        loop {
            let stopped = matches!(decision, Decision::Stop(_));
            if shared.leave.is_set() && !stopped {
                decision = self.action.on_leave(self.clock.elapsed());
                continue;
            }
            let heard = shared.heard.replace(0.0);
            if heard > 0.0 && !stopped {
                let until = self.clock.elapsed_at(heard);
                decision = self.action.on_block(self.clock.elapsed(), until);
                continue;
            }
            if let Decision::Send { .. } = decision {
                decision = self.send();
                continue;
            }
            if stopped {
                return self.finish(&shared.leave);
            }
            self.show_progress(&shared.leave);
            if shared.leave.is_set() || shared.heard.get() > 0.0 {
                continue;
            }
            match decision {
                Decision::Await { abort_at } => self.arm(abort_at),
                Decision::Wait { until } => self.wait(until),
                Decision::Send { .. } | Decision::Stop(_) => {}
            }
            return;
        }
    }

    /// Sends the attempt the model asked for, and waits for it until its cap.
    fn send(&mut self) -> Decision {
        let number = self.action.attempts();
        let abort_at = match self.action.decision() {
            Decision::Send { abort_at, .. } | Decision::Await { abort_at } => abort_at,
            other => return other,
        };
        let Ok(abort) = AbortController::new() else {
            return self.action.on_transport_error(
                self.clock.elapsed(),
                TransportError::Failed("network".into()),
            );
        };
        let init = js_sys::Object::new();
        set(&init, "method", &JsValue::from_str("GET"));
        set(&init, "signal", &abort.signal());
        let returned = self.request.fetch.call2(
            &JsValue::UNDEFINED,
            &JsValue::from_str(&self.request.url),
            &init,
        );
        self.attempt = Some(Attempt {
            number,
            head: None,
            abort: Some(abort),
        });
        match returned {
            Ok(promise) => {
                self.listen(
                    Promise::resolve(&promise),
                    Settled::Response,
                    Settled::Failure,
                    number,
                );
                Decision::Await { abort_at }
            }
            Err(error) => {
                if let Some(mut attempt) = self.attempt.take() {
                    attempt.abort = None;
                }
                self.action.on_transport_error(
                    self.clock.elapsed(),
                    TransportError::Failed(failure_word(&error)),
                )
            }
        }
    }

    /// Reads a response's status and headers, and starts reading its body: the cap covers
    /// the whole exchange.
    fn read_head(&mut self, value: JsValue) -> Result<(), String> {
        let response: web_sys::Response = value
            .dyn_into()
            .map_err(|_| String::from("not_a_response"))?;
        let headers = response.headers();
        let head = Head {
            status: response.status(),
            retry_after: headers.get("Retry-After").ok().flatten(),
            date: headers.get("Date").ok().flatten(),
        };
        let text = response.text().map_err(|e| failure_word(&e))?;
        let number = self.attempt.as_ref().map_or(0, |a| a.number);
        if let Some(attempt) = self.attempt.as_mut() {
            attempt.head = Some(head);
        }
        self.listen(text, Settled::Body, Settled::Failure, number);
        Ok(())
    }

    /// Arms the one timer at elapsed `at`.
    fn arm(&mut self, at: Duration) {
        self.timers = self.timers.wrapping_add(1);
        self.timer = self.tagged(Settled::Fired, self.timers).map(|handler| {
            self.clock.call_at(at, move || {
                let _ = handler.call0(&JsValue::UNDEFINED);
            })
        });
    }

    /// Sends nothing until elapsed `until` (made late by `timerLateBy_s`).
    fn wait(&mut self, until: Duration) {
        let after = self.action.pending_wait().map(|plan| plan.after_attempt);
        if self.waited_after != after {
            self.waited_after = after;
            self.waits = self.waits.saturating_add(1);
        }
        let late = self
            .waits
            .checked_sub(1)
            .and_then(|k| self.request.timer_late_by.get(k))
            .copied()
            .unwrap_or_default();
        self.arm(until.saturating_add(late));
    }

    /// Hands the view the visible state and the events it has not seen yet, while the screen
    /// still owns the action, when either has changed.
    fn show_progress(&mut self, leave: &Flag) {
        if leave.is_set() {
            return;
        }
        let events = self.action.events();
        let visible = self.action.visible();
        if events.len() == self.reported && visible == self.shown {
            return;
        }
        if let Some(on_update) = &self.request.on_update {
            let update = Json::Object(vec![
                ("visible".into(), report::texts(&visible)),
                (
                    "events".into(),
                    report::events(events.get(self.reported..).unwrap_or_default()),
                ),
                ("outcome".into(), outcome(&self.action)),
            ]);
            // A throwing view must not break the action.
            let _ = on_update.call1(&JsValue::UNDEFINED, &value_of(&update));
        }
        self.reported = self.action.events().len();
        self.shown = visible;
    }

    /// Abandons whatever is still in flight, for good, and only then shows the view the stop
    /// (a view that takes its time does not keep a request open); gives up the screen, and
    /// settles the caller's promise with the report.
    fn finish(&mut self, leave: &Flag) {
        self.finished = true;
        drop(self.attempt.take());
        drop(self.timer.take());
        self.show_progress(leave);
        drop(self.ownership.take());
        drop(self.listener.take());
        RUNNING.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        let outcome = self.action.stopped().map(|(_, cause)| cause.outcome());
        let report = value_of(&self.action.report(&self.request.url).to_json());
        if outcome == Some(Outcome::UserLeft) {
            let error =
                abort_error("the action stopped because its screen no longer owns it (user_left)");
            set(&error, "report", &report);
            let _ = self.reject.call1(&JsValue::UNDEFINED, &error);
            return;
        }
        let body = match self
            .body
            .take()
            .filter(|_| outcome == Some(Outcome::Success))
        {
            Some(text) => parse_json(&text).unwrap_or(text),
            None => JsValue::NULL,
        };
        set(&report, "body", &body);
        let _ = self.resolve.call1(&JsValue::UNDEFINED, &report);
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

/// A word for a failed fetch: `network` for the `TypeError` that fetch rejects with, and for
/// an `AbortError` (the driver ignores what it aborted itself, so one that reaches the model
/// came from below: Firefox rejects a body cut off by a connection reset that way); the
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
