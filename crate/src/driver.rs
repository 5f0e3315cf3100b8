//! The browser driver: one action, start to stop, as one async task. It tells the model what
//! happened and when, and performs the decision it gets back: send an attempt, wait for it
//! until its cap, wait until a time, or stop. It never decides anything itself.
//!
//! [`Driver::drive`] is the one place where the model's decision is performed, and
//! [`Driver::next`] the one place where what happened is picked, leaving first. What comes from
//! outside (leaving, a block another action learned, the timer) reaches the task through its
//! [`Inbox`]. Every browser resource an action holds is a guard that cleans up when dropped: the
//! attempt (its request is aborted), the timer (cleared), the screen and its listeners (given up,
//! removed).

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Poll;
use std::time::Duration;

use gloo_timers::callback::Timeout;
use js_sys::Promise;
use retry_budget_model::{Action, Decision, Outcome, TransportError};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::attempt::{Attempt, Received};
use crate::blocks;
use crate::clock::Clock;
use crate::inbox::Inbox;
use crate::js::{
    abort_error, draw, parse_json, read_member, report, report_value, set, update_value,
};
use crate::leave::Ownership;
use crate::options::Request;

/// Starts one user action: the returned promise resolves with its report, or rejects with an
/// `AbortError` carrying it when the screen lets go. The screen is taken at the call, so that
/// of two calls for one screen in one task (a component mounted twice) the older has let go
/// before anything is sent; the action begins in a microtask, as a spawned task does, so a
/// signal aborted right after the call still means "nothing was sent".
pub(crate) fn start(request: Request) -> Promise {
    let inbox = Rc::new(Inbox::default());
    let ownership = Ownership::claim(request.screen.clone(), request.signal.as_ref(), &inbox);
    future_to_promise(run(request, inbox, ownership))
}

/// Whether the caller's signal reads as aborted. Its `abort` event is what ends an action at
/// once; but a signal whose realm is gone (a removed iframe's) is marked aborted without one,
/// so the action also looks before its first request and at each step, and sends nothing more
/// once it reads so.
fn reads_aborted(signal: Option<&web_sys::AbortSignal>) -> bool {
    let aborted = |s| read_member(s, "aborted").ok().flatten()?.as_bool();
    signal.is_some_and(|s| aborted(s) == Some(true))
}

/// Actions running right now, for checking that ended ones leave nothing behind.
static RUNNING: AtomicU32 = AtomicU32::new(0);

/// How many actions are running right now.
pub(crate) fn running() -> u32 {
    RUNNING.load(Ordering::Relaxed)
}

/// One running action, counted in [`running`] while it lives.
struct Running;

impl Running {
    fn new() -> Running {
        RUNNING.fetch_add(1, Ordering::Relaxed);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What happened, as the model is told.
enum Input {
    /// The screen let go.
    Left,
    /// Another action learned that the origin is blocked until this (shared-clock ms).
    Blocked(f64),
    /// The attempt in flight ended: its response read to the end, or why there is none.
    Received(Result<Received, String>),
    /// The armed timer fired.
    Timer,
}

/// Runs the action to its stop, and settles with the report. The guards (the screen, its
/// listeners, the count) are dropped before the promise settles.
async fn run(
    request: Request,
    inbox: Rc<Inbox>,
    _ownership: Ownership,
) -> Result<JsValue, JsValue> {
    if reads_aborted(request.signal.as_ref()) {
        inbox.leave();
    }
    if inbox.has_left() {
        let nothing = "the screen let go before the action started (its signal was aborted, or a \
                       newer action took the screen); nothing was sent";
        let report = report_value(&Action::abandoned(request.policy).into_report());
        return Err(abort_error(nothing, &report));
    }
    let clock = Clock::start();
    let blocked: Vec<Duration> = blocks::blocked_until(&request.scope, request.share)
        .map(|until| clock.elapsed_at(until))
        .into_iter()
        .collect();
    let (action, first) = Action::start_in_scope(request.policy, request.covers, &blocked, draw())
        .map_err(|e| JsValue::from(JsError::new(e.message())))?;
    let _running = Running::new();
    blocks::listen(&request.scope, request.share, &inbox);
    let mut driver = Driver {
        request,
        clock,
        action,
        inbox,
        attempt: None,
        timer: None,
        body: None,
        reported: 0,
        shown: Vec::new(),
        waits: 0,
        waited_after: None,
    };
    driver.drive(first).await;
    driver.settle()
}

/// One action and what the driver holds for it.
struct Driver {
    request: Request,
    clock: Clock,
    action: Action,
    inbox: Rc<Inbox>,
    attempt: Option<Attempt>,
    timer: Option<Timeout>,
    /// The last response's body (a JS string).
    body: Option<JsValue>,
    /// How many trace events the view has been handed, and the visible state it was shown.
    reported: usize,
    shown: Vec<String>,
    /// Waits begun so far, and the attempt the current one follows (an early timer resumes
    /// it, a block moves it: either way it is the same wait).
    waits: usize,
    waited_after: Option<u32>,
}

impl Driver {
    /// Performs the model's decisions until it stops. The view hears of an attempt after it is
    /// sent, and of the stop after the request is abandoned, so the time a view takes to draw
    /// is neither taken from a cap nor added to it.
    async fn drive(&mut self, mut decision: Decision) {
        loop {
            decision = match decision {
                Decision::Send { .. } => self.send(),
                Decision::Await { abort_at } => self.until(abort_at).await,
                Decision::Wait { until } => {
                    let at = self.late(until);
                    self.until(at).await
                }
                Decision::Stop(_) => {
                    self.attempt = None;
                    self.timer = None;
                    return self.show();
                }
            };
        }
    }

    /// Sends the attempt the model asked for.
    fn send(&mut self) -> Decision {
        match Attempt::send(&self.request.fetch, &self.request.url) {
            Ok(attempt) => {
                self.attempt = Some(attempt);
                self.action.decision()
            }
            Err(word) => self.fail(word),
        }
    }

    /// Shows the view, arms the one timer for elapsed `at`, and tells the model what happens
    /// first.
    async fn until(&mut self, at: Duration) -> Decision {
        self.show();
        self.inbox.rearm();
        let inbox = Rc::clone(&self.inbox);
        self.timer = Some(self.clock.call_at(at, move || inbox.ring()));
        let input = self.next().await;
        self.tell(input)
    }

    /// Waits for what happens next. When several things are ready at once, leaving wins (rule
    /// 12), then a block another action learned, then the attempt, then the timer.
    async fn next(&mut self) -> Input {
        poll_fn(|cx| {
            self.inbox.wake_with(cx.waker());
            if reads_aborted(self.request.signal.as_ref()) {
                self.inbox.leave();
            }
            if self.inbox.has_left() {
                return Poll::Ready(Input::Left);
            }
            if let Some(until_ms) = self.inbox.take_heard() {
                return Poll::Ready(Input::Blocked(until_ms));
            }
            if let Some(attempt) = self.attempt.as_mut() {
                if let Poll::Ready(received) = Pin::new(attempt).poll(cx) {
                    self.attempt = None;
                    return Poll::Ready(Input::Received(received));
                }
            }
            if self.inbox.take_ring() {
                return Poll::Ready(Input::Timer);
            }
            Poll::Pending
        })
        .await
    }

    /// Tells the model what happened, now, and returns its decision.
    fn tell(&mut self, input: Input) -> Decision {
        let now = self.clock.elapsed();
        match input {
            Input::Left => self.action.on_leave(now),
            Input::Blocked(until_ms) => {
                let until = self.clock.elapsed_at(until_ms);
                self.action.on_block(now, until)
            }
            Input::Received(Ok(received)) => {
                let decision = self
                    .action
                    .on_response_drawn(now, received.response(), draw());
                self.body = Some(received.body);
                self.announce();
                decision
            }
            Input::Received(Err(word)) => self.fail(word),
            Input::Timer => self.action.on_timer(now),
        }
    }

    /// The attempt failed below HTTP.
    fn fail(&mut self, word: String) -> Decision {
        let now = self.clock.elapsed();
        self.action
            .on_transport_error(now, TransportError::Failed(word))
    }

    /// Tells the other actions of the scope of the block this action's last response
    /// announced (rules 13, 19 and 20), if any.
    fn announce(&self) {
        if let Some(until) = self.action.announced_block() {
            let until_ms = self.clock.shared_ms(until);
            let request = &self.request;
            blocks::announce(&request.scope, until_ms, request.share, &self.inbox);
        }
    }

    /// `until`, made late by `timerLateBy_s` for the k-th wait.
    fn late(&mut self, until: Duration) -> Duration {
        let after = self.action.pending_wait().map(|plan| plan.after_attempt);
        if self.waited_after != after {
            self.waited_after = after;
            self.waits = self.waits.saturating_add(1);
        }
        let late_by = &self.request.timer_late_by;
        let late = self.waits.checked_sub(1).and_then(|k| late_by.get(k));
        until.saturating_add(late.copied().unwrap_or_default())
    }

    /// Hands the view the visible state and the events it has not seen yet, while the screen
    /// still owns the action, when either has changed. A throwing view does not break the action;
    /// what it threw is reported.
    fn show(&mut self) {
        if self.inbox.has_left() {
            return;
        }
        let visible = self.action.visible();
        let events = self.action.events().len();
        if events == self.reported && visible == self.shown {
            return;
        }
        if let Some(on_update) = &self.request.on_update {
            let update = update_value(&self.action, self.reported, &visible);
            if let Err(thrown) = on_update.call1(&JsValue::UNDEFINED, &update) {
                report(&thrown);
            }
        }
        self.reported = events;
        self.shown = visible;
    }

    /// The report, with the body on success; an `AbortError` carrying it when the screen let go.
    fn settle(self) -> Result<JsValue, JsValue> {
        let outcome = self.action.stopped().map(|(_, cause)| cause.outcome());
        let report = report_value(&self.action.report());
        if outcome == Some(Outcome::UserLeft) {
            let left = "the action stopped because its screen no longer owns it (user_left)";
            return Err(abort_error(left, &report));
        }
        let body = match self.body.filter(|_| outcome == Some(Outcome::Success)) {
            Some(text) => parse_json(&text).unwrap_or(text),
            None => JsValue::NULL,
        };
        set(&report, "body", &body);
        Ok(report)
    }
}
