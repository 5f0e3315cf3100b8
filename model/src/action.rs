//! One user action under a finite retry budget, as a state machine that never reads a clock.
//!
//! The driver (a browser, a simulation, a test) reports what happened with the elapsed time it
//! happened at, and gets back a [`Decision`]: send an attempt, keep waiting for one, wait until a
//! time, or stop. Elapsed time is counted from the moment the action starts (the user's press),
//! so [`Action::start`] is elapsed zero by definition; without a block on the origin the first
//! attempt starts then. Every decision is recorded in the trace.
//!
//! The order of the checks after a response is the whole retry policy, in one place:
//! success, not retryable, attempts used up, how to read `Retry-After`, then the gate (does the
//! wait *and* a full per-attempt cap fit in what is left of the budget?).
//!
//! Actions on the same origin share what the service tells them (`docs/rules.md`, rules
//! 13-18): a valid server delay blocks the origin ([`Action::announced_block`] says until when, for
//! the driver to tell the others), and a block another action learned arrives as
//! [`Action::on_block`]. No attempt starts before a block the action knows of. Each wait may be
//! spread by jitter ([`Policy::jitter`]), from a draw the driver supplies, never earlier than
//! the rules allow and never so late that the reserved cap stops fitting.

use core::time::Duration;

use serde::{Serialize, Serializer};

use crate::policy::{Policy, PolicyError};
use crate::ratelimit::RateLimit;
use crate::report::{secs, secs_or_null};
use crate::retry_after::RetryAfter;
use crate::timing::{ServerDelay, Timing};
use crate::utc::UtcTime;

/// What the driver must do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Send attempt `attempt` now, and report its response or failure. If it is still running
    /// at elapsed `abort_at` (its cap), call [`Action::on_timer`] then: the model will stop it.
    Send { attempt: u32, abort_at: Duration },
    /// An attempt is in flight; a timer fired before its cap. Keep waiting, at most until
    /// `abort_at`.
    Await { abort_at: Duration },
    /// Send nothing until elapsed `until`, then call [`Action::on_timer`]. The gate is checked
    /// again at that call, against the time the timer really fired. A block on the origin that
    /// arrives meanwhile goes to [`Action::on_block`], whose decision may move `until` or stop.
    Wait { until: Duration },
    /// The action is over. Abort anything in flight, clear every timer, send nothing more.
    Stop(Outcome),
}

/// How an action ended. The last HTTP response is kept apart from this: "stopped: budget" and
/// "last response: 429" are different facts. Serialized as [`Outcome::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A 2xx response arrived.
    Success,
    /// The next wait plus a full per-attempt cap would not fit in the budget.
    BudgetExhausted,
    /// The last allowed attempt was answered with a retryable status.
    AttemptsExhausted,
    /// The screen stopped owning the action.
    UserLeft,
    /// `Retry-After` was a date, and no trusted clock could turn it into a wait.
    ClockUntrusted,
    /// A status that the policy does not retry.
    NotRetryable,
    /// The request failed below HTTP, or ran past its cap.
    TransportError,
}

impl Outcome {
    /// The outcome's name in the replay output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::BudgetExhausted => "budget_exhausted",
            Outcome::AttemptsExhausted => "attempts_exhausted",
            Outcome::UserLeft => "user_left",
            Outcome::ClockUntrusted => "clock_untrusted",
            Outcome::NotRetryable => "not_retryable",
            Outcome::TransportError => "transport_error",
        }
    }
}

/// Why a request produced no HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportError {
    /// It was still running when its per-attempt cap elapsed, and was aborted.
    TimedOut,
    /// Anything else, named by the driver (`"network"`, for example).
    Failed(String),
}

impl Serialize for TransportError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl TransportError {
    /// A word for the failure: `timed_out`, or the driver's own.
    pub fn as_str(&self) -> &str {
        match self {
            TransportError::TimedOut => "timed_out",
            TransportError::Failed(word) => word,
        }
    }
}

/// The evidence available for turning an HTTP-date into a wait: the UTC time at which the
/// response was received, and whose clock says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiptClock {
    /// The response's own `Date` header, or a scenario's supplied wall clock: the same clock
    /// that wrote the date in `Retry-After`, so a wrong local clock cannot skew the wait.
    Server(UtcTime),
    /// The local wall clock. Used only when the policy trusts it.
    Local(UtcTime),
    /// No usable clock at all.
    Absent,
}

/// One HTTP response, as the driver received it.
#[derive(Clone, Copy, Debug)]
pub struct Response<'a> {
    /// The HTTP status.
    pub status: u16,
    /// The `Retry-After` value as received; `None` when absent (or hidden cross-origin).
    pub retry_after: Option<&'a str>,
    /// The `RateLimit` field as received (field lines joined with `", "`); read only when the
    /// policy says so.
    pub ratelimit: Option<&'a str>,
    /// The receipt time, for interpreting a date.
    pub clock: ReceiptClock,
}

impl<'a> Response<'a> {
    /// A response with `status` and its `Retry-After` (`None` when absent), received at
    /// `clock`, without a `RateLimit` field.
    pub fn new(status: u16, retry_after: Option<&'a str>, clock: ReceiptClock) -> Self {
        Response {
            status,
            retry_after,
            ratelimit: None,
            clock,
        }
    }
}

/// Where a wait's length came from. Serialized as [`WaitSource::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitSource {
    /// `Retry-After` in delay-seconds.
    ServerSeconds,
    /// `Retry-After` as an HTTP-date, measured from the receipt time.
    ServerDate,
    /// No `Retry-After`: the local fallback.
    FallbackMissing,
    /// An unreadable `Retry-After`: the local fallback.
    FallbackInvalid,
    /// The origin is blocked (rules 14, 15, 17): the service asked every request to this site to
    /// wait, later than this action's own delay.
    OriginBlock,
    /// No usable `Retry-After`, but the `RateLimit` field says when the quota is restored
    /// (rule 19): a server delay.
    #[serde(rename = "ratelimit")]
    RateLimit,
}

impl WaitSource {
    /// The source's name in the replay output.
    pub const fn as_str(self) -> &'static str {
        match self {
            WaitSource::ServerSeconds => "server_seconds",
            WaitSource::ServerDate => "server_date",
            WaitSource::FallbackMissing => "fallback_missing",
            WaitSource::FallbackInvalid => "fallback_invalid",
            WaitSource::OriginBlock => "origin_block",
            WaitSource::RateLimit => "ratelimit",
        }
    }

    /// Whether the server set this delay (and so it must never be shortened).
    pub const fn is_server(self) -> bool {
        matches!(
            self,
            WaitSource::ServerSeconds | WaitSource::ServerDate | WaitSource::RateLimit
        )
    }
}

/// A wait the model planned: after a retryable response, or before the first attempt while the
/// origin is blocked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PlannedWait {
    /// The attempt whose response asked for it; 0 for the wait before the first attempt.
    pub after_attempt: u32,
    /// Where the delay came from.
    pub source: WaitSource,
    /// The delay before the local floor: the server's, or the fallback; for an origin block,
    /// from `from` to the block's end.
    #[serde(rename = "delay_s", serialize_with = "secs")]
    pub delay: Duration,
    /// From `from` to the earliest start the rules allow: `max(min_wait, delay)` for the
    /// action's own delay, the time to the block's end for an origin block.
    #[serde(rename = "wait_s", serialize_with = "secs")]
    pub wait: Duration,
    /// What jitter added after the earliest start (rule 16); never a reason to stop.
    #[serde(rename = "jitter_s", serialize_with = "secs")]
    pub jitter: Duration,
    /// When the wait began (the response's receipt; 0 before the first attempt). The event
    /// that records a wait carries this as its own time, so it is not serialized twice.
    #[serde(skip)]
    pub from: Duration,
    /// The planned start of the next attempt: `from + wait + jitter`, saturating. The timer is
    /// due then.
    #[serde(rename = "until_s", serialize_with = "secs")]
    pub until: Duration,
}

impl PlannedWait {
    /// The earliest start the rules allow, before jitter: `from + wait`.
    pub fn earliest(&self) -> Duration {
        self.from.saturating_add(self.wait)
    }
}

/// How a response's `Retry-After` read at its receipt: the header (its raw text and kind) and
/// the server's delay, when it gave a usable one (seconds, or a date with clock evidence).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RetryAfterReading {
    /// The header as read.
    #[serde(flatten)]
    pub header: RetryAfter,
    /// The server's delay, when it gave a usable one.
    #[serde(rename = "delay_s", serialize_with = "secs_or_null")]
    pub delay: Option<Duration>,
}

/// The last HTTP response the action received.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LastResponse {
    /// Its attempt.
    pub attempt: u32,
    /// Its status.
    pub status: u16,
    /// When it was received.
    #[serde(rename = "at_s", serialize_with = "secs")]
    pub at: Duration,
    /// Its `Retry-After`, as interpreted at the receipt.
    pub retry_after: RetryAfterReading,
    /// Its `RateLimit` field, as read at the receipt, when the policy reads it and it was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratelimit: Option<RateLimit>,
}

/// What happened, in order. Every decision records the budget left at that moment. Serialized
/// as an object whose `event` names the variant, with times in seconds (`at_s`, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// An attempt started.
    Start {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        attempt: u32,
        #[serde(rename = "remaining_s", serialize_with = "secs")]
        remaining: Duration,
    },
    /// A response was received, with how its `Retry-After` read (and its `RateLimit` field,
    /// when the policy reads it and it was sent).
    Receipt {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        attempt: u32,
        status: u16,
        retry_after: RetryAfterReading,
        #[serde(skip_serializing_if = "Option::is_none")]
        ratelimit: Option<RateLimit>,
    },
    /// An attempt failed without a response.
    Failure {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        attempt: u32,
        error: TransportError,
    },
    /// A wait began.
    Wait {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        #[serde(flatten)]
        plan: PlannedWait,
        #[serde(rename = "remaining_s", serialize_with = "secs")]
        remaining: Duration,
    },
    /// A timer fired; `due` is when it was meant to.
    Timer {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        #[serde(rename = "due_s", serialize_with = "secs")]
        due: Duration,
    },
    /// A block on the origin arrived (one that another action learned): no request to the site
    /// may start before `until`.
    Blocked {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        #[serde(rename = "until_s", serialize_with = "secs")]
        until: Duration,
    },
    /// The screen stopped owning the action.
    Left {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
    },
    /// The action ended, and why.
    Stop {
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        outcome: Outcome,
        #[serde(rename = "remaining_s", serialize_with = "secs")]
        remaining: Duration,
        cause: StopCause,
    },
}

impl Event {
    /// When it happened, in elapsed time.
    pub fn at(&self) -> Duration {
        match self {
            Event::Start { at, .. }
            | Event::Receipt { at, .. }
            | Event::Failure { at, .. }
            | Event::Wait { at, .. }
            | Event::Timer { at, .. }
            | Event::Blocked { at, .. }
            | Event::Left { at }
            | Event::Stop { at, .. } => *at,
        }
    }
}

/// Why the action stopped, with what any view needs to explain it without knowing a rule
/// (`docs/rules.md`, "Why an action stopped"): the stop event and the report carry it.
/// Serialized as an object whose `kind` names the variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopCause {
    /// A 2xx arrived.
    Success,
    /// A status the policy does not retry.
    NotRetryable {
        /// The status.
        status: u16,
    },
    /// The last allowed attempt was answered with a retryable status too.
    AttemptsExhausted {
        /// The policy's limit, which this action reached.
        max_attempts: u32,
    },
    /// After a response, the wait the rules give (never shortened) and a full cap after it did
    /// not fit in the budget (rules 10, 15, 16): `plan.until` is the next start it would have
    /// given. Nothing was waited.
    RefusedWait {
        /// The wait that was refused.
        #[serde(flatten)]
        plan: PlannedWait,
        /// Its start's cap against the deadline.
        #[serde(flatten)]
        gate: Gate,
    },
    /// The timer fired too late to reserve a full cap before the deadline (rule 11):
    /// `plan.until` is when it was due, `woke` when it fired.
    LateWake {
        /// The wait whose timer fired late.
        #[serde(flatten)]
        plan: PlannedWait,
        /// When the timer fired.
        #[serde(rename = "woke_s", serialize_with = "secs")]
        woke: Duration,
        /// A start at `woke`, against the deadline.
        #[serde(flatten)]
        gate: Gate,
    },
    /// At `at`, the limit this action shares was blocked until `until`, and an attempt starting
    /// then could not run its full cap inside the budget (rules 14, 15, 17).
    OriginBlocked {
        /// When the action learned of it (or planned with it).
        #[serde(rename = "at_s", serialize_with = "secs")]
        at: Duration,
        /// The block's end.
        #[serde(rename = "until_s", serialize_with = "secs")]
        until: Duration,
        /// A start at `until`, against the deadline.
        #[serde(flatten)]
        gate: Gate,
    },
    /// `Retry-After` was a date, and no trusted clock could turn it into a wait (rule 7).
    ClockUntrusted {
        /// What the driver had instead of a trusted clock.
        evidence: ClockEvidence,
    },
    /// The request failed below HTTP, or ran past its cap.
    #[serde(rename = "transport_error")]
    Transport {
        /// What failed.
        error: TransportError,
    },
    /// The user left, during a request (`in_flight`) or a wait.
    #[serde(rename = "user_left")]
    Left {
        /// Whether a request was in flight (its result will never be shown).
        in_flight: bool,
    },
}

/// A start against the budget: where a full per-attempt cap from it would end, and the
/// deadline it had to end by (`cap_end > deadline` is why it was refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Gate {
    /// The start plus a full per-attempt cap.
    #[serde(rename = "cap_end_s", serialize_with = "secs")]
    pub cap_end: Duration,
    /// The end of the budget.
    #[serde(rename = "deadline_s", serialize_with = "secs")]
    pub deadline: Duration,
}

/// The clock evidence an action had when a date arrived that it could not trust.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockEvidence {
    /// No readable `Date` header; the local clock, which the policy does not trust.
    UntrustedLocal,
    /// No clock at all (a scenario without `wall_clock_at_start`).
    None,
}

impl StopCause {
    /// The outcome this cause reports.
    pub const fn outcome(&self) -> Outcome {
        match self {
            StopCause::Success => Outcome::Success,
            StopCause::NotRetryable { .. } => Outcome::NotRetryable,
            StopCause::AttemptsExhausted { .. } => Outcome::AttemptsExhausted,
            StopCause::RefusedWait { .. }
            | StopCause::LateWake { .. }
            | StopCause::OriginBlocked { .. } => Outcome::BudgetExhausted,
            StopCause::ClockUntrusted { .. } => Outcome::ClockUntrusted,
            StopCause::Transport { .. } => Outcome::TransportError,
            StopCause::Left { .. } => Outcome::UserLeft,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    InFlight {
        attempt: u32,
        started: Duration,
        abort_at: Duration,
    },
    /// A wait, and the jitter draw it was planned with (a moved start reuses it, rule 17).
    Waiting(PlannedWait, f64),
    Stopped,
}

/// What the blocks an action shares cover, for the words the user is told: a whole site (the
/// default: blocks are shared per origin) or one rate limit the app named (a scope narrower
/// than an origin: a route, a resource, a key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockScope {
    /// Every request to the request URL's origin.
    #[default]
    Site,
    /// Every request under a rate limit the app named.
    Named,
}

impl BlockScope {
    /// "to this site", "under this rate limit".
    pub const fn covers(self) -> &'static str {
        match self {
            BlockScope::Site => "to this site",
            BlockScope::Named => "under this rate limit",
        }
    }
}

/// The wait that the action's own response asks for (rules 8-9), before the origin is
/// considered.
#[derive(Clone, Copy)]
struct OwnWait {
    source: WaitSource,
    delay: Duration,
    wait: Duration,
}

/// One user action and its budget. Create one per user action: a new action is a new, explicit
/// budget, and an old one never continues in the background.
#[derive(Clone, Debug)]
pub struct Action {
    policy: Policy,
    phase: Phase,
    now: Duration,
    /// Attempts started.
    attempts: u32,
    /// When each attempt started, kept with the trace.
    attempt_starts: Vec<Duration>,
    request_time: Duration,
    wait_time: Duration,
    last_response: Option<LastResponse>,
    stop: Option<(Duration, StopCause)>,
    events: Vec<Event>,
    /// The origin's block as this action knows it, `B(now)`: the latest end of the blocks it
    /// was told of and of its own server delays (rule 13). Zero when there is none.
    block: Duration,
    /// The block the latest receipt announced (`receipt + valid server delay`), if any.
    announced: Option<Duration>,
    /// Whether `events` is kept: off for simulations of many actions whose trace nobody reads.
    traced: bool,
    /// What its blocks cover, for the visible text.
    scope: BlockScope,
}

impl Action {
    /// Starts a new action under `policy` on an origin that nobody has blocked: its first
    /// attempt starts now, at elapsed zero, and the returned decision says to send it. An
    /// invalid policy starts nothing. The same as [`Action::start_on_origin`] with no blocks.
    pub fn start(policy: Policy) -> Result<(Action, Decision), PolicyError> {
        Action::start_on_origin(policy, &[], 0.0)
    }

    /// Starts a new action under `policy` at elapsed zero (the user's press), given the ends of
    /// the blocks on its origin known at that moment (`blocked_until`, on this action's clock:
    /// "no request before elapsed U"; each is recorded as a `Blocked` event at 0) and the jitter
    /// draw in [0, 1) for the wait before the first attempt, should there be one.
    ///
    /// Rule 14: with no block later than 0, attempt 1 starts now, exactly as [`Action::start`].
    /// Otherwise, if an attempt starting when the block ends could not run its full cap inside
    /// the budget, the action stops now with `budget_exhausted`, having sent nothing; else it
    /// waits for the origin first (wait 0, source `origin_block`, spread by jitter).
    pub fn start_on_origin(
        policy: Policy,
        blocked_until: &[Duration],
        draw: f64,
    ) -> Result<(Action, Decision), PolicyError> {
        policy.validate()?;
        let mut action = Action::idle(policy, true);
        let first = action.enter(blocked_until, draw);
        Ok((action, first))
    }

    /// [`Action::start_on_origin`] for an action whose blocks are shared under `scope`: the
    /// decisions are the same; the visible text says what a block covers.
    pub fn start_in_scope(
        policy: Policy,
        scope: BlockScope,
        blocked_until: &[Duration],
        draw: f64,
    ) -> Result<(Action, Decision), PolicyError> {
        let (mut action, first) = Action::start_on_origin(policy, blocked_until, draw)?;
        action.scope = scope;
        Ok((action, first))
    }

    /// [`Action::start_on_origin`] without a trace: every decision, figure and visible line is
    /// the same, but no event or attempt start is kept ([`Action::events`] and
    /// [`Action::attempt_starts`] stay empty). For simulations of many actions at once, where
    /// nobody reads a trace and keeping one costs most of the run.
    /// The action is made on the heap where it stays: a fleet keeps a million of them, and
    /// moving one there from the stack cost more than deciding its first step.
    pub fn start_untraced(
        policy: Policy,
        blocked_until: &[Duration],
        draw: f64,
    ) -> Result<(Box<Action>, Decision), PolicyError> {
        policy.validate()?;
        let mut action = Box::new(Action::idle(policy, false));
        let first = action.enter(blocked_until, draw);
        Ok((action, first))
    }

    /// [`Action::start_untraced`] in the place of this action, which it replaces (an invalid
    /// policy leaves it as it was): a fleet that runs a million actions, a few thousand at a
    /// time, reuses the memory of those that stopped rather than allocate each anew.
    pub fn restart_untraced(
        &mut self,
        policy: Policy,
        blocked_until: &[Duration],
        draw: f64,
    ) -> Result<Decision, PolicyError> {
        policy.validate()?;
        *self = Action::idle(policy, false);
        Ok(self.enter(blocked_until, draw))
    }

    /// An action whose screen let go before it began (its signal was already aborted): it sent
    /// nothing and waited for nothing, and its report says so: `user_left` at 0, no attempt.
    pub fn abandoned(policy: Policy) -> Action {
        let mut action = Action::idle(policy, true);
        action.record(|_| Event::Left { at: Duration::ZERO });
        action.finish(StopCause::Left { in_flight: false });
        action
    }

    /// The press, at elapsed zero, on an idle action: it learns the blocks known then, and
    /// sends its first attempt or waits for the origin (rule 14).
    fn enter(&mut self, blocked_until: &[Duration], draw: f64) -> Decision {
        for until in blocked_until {
            self.learn_block(Duration::ZERO, *until);
        }
        if self.block.is_zero() {
            self.start_attempt(Duration::ZERO)
        } else {
            self.begin_wait(0, None, draw)
        }
    }

    /// An action at elapsed zero that has done nothing yet (and is not running).
    fn idle(policy: Policy, traced: bool) -> Action {
        Action {
            policy,
            phase: Phase::Stopped,
            now: Duration::ZERO,
            attempts: 0,
            attempt_starts: Vec::new(),
            request_time: Duration::ZERO,
            wait_time: Duration::ZERO,
            last_response: None,
            stop: None,
            events: Vec::new(),
            block: Duration::ZERO,
            announced: None,
            traced,
            scope: BlockScope::Site,
        }
    }

    /// A response to the attempt in flight was received at elapsed `now`. A response that is
    /// not awaited (the action stopped, or the user left) is ignored: it never updates anything.
    /// One received after the attempt's cap counts as the cap elapsing: the attempt timed out.
    /// A wait that begins here is not spread by jitter; see [`Action::on_response_drawn`].
    pub fn on_response(&mut self, now: Duration, response: Response<'_>) -> Decision {
        self.on_response_drawn(now, response, 0.0)
    }

    /// [`Action::on_response`], with the jitter draw in [0, 1) for the wait that begins here,
    /// if one does (rule 16). After it, [`Action::announced_block`] says whether the response
    /// blocked the origin (rule 13).
    pub fn on_response_drawn(
        &mut self,
        now: Duration,
        response: Response<'_>,
        draw: f64,
    ) -> Decision {
        // What this response announces, if anything: not what an earlier one did.
        self.announced = None;
        let Phase::InFlight {
            attempt,
            started,
            abort_at,
        } = self.phase
        else {
            return self.decision();
        };
        if now > abort_at {
            // The cap elapsed first (its timer fired late): the attempt timed out, whatever
            // it brought back.
            return self.on_transport_error(now, TransportError::TimedOut);
        }
        let now = self.advance(now);
        self.request_time = self
            .request_time
            .saturating_add(now.saturating_sub(started));
        let status = response.status;
        let timing = Timing::read(&self.policy, &response);
        let cause = self.stops_at(status, attempt);
        // Rules 13, 19, 20: what the others sharing this limit must wait for, announced even
        // when this action stops here. Only a retryable status's delay binds this action too.
        let retryable = self.policy.retries(status);
        let last = attempt >= self.policy.max_attempts;
        self.announced = timing
            .announces(retryable, last)
            .map(|d| now.saturating_add(d));
        if let (Some(until), true) = (self.announced, retryable) {
            self.block = self.block.max(until);
        }
        let next = timing.next;
        self.record_receipt(now, attempt, status, timing);
        if let Some(cause) = cause {
            return self.finish(cause);
        }
        let (source, delay) = match next {
            ServerDelay::Usable(source, delay) => (source, delay),
            ServerDelay::Untrusted(evidence) => {
                return self.finish(StopCause::ClockUntrusted { evidence })
            }
            ServerDelay::Fallback(source) => (source, self.policy.fallback_wait(attempt)),
        };
        let own = OwnWait {
            source,
            delay,
            wait: delay.max(self.policy.min_wait),
        };
        self.begin_wait(attempt, Some(own), draw)
    }

    /// Rules 4 and 5, in the order that is the retry policy: a success, a status that is not
    /// retried, the last allowed attempt; `None` when the action may wait and retry.
    fn stops_at(&self, status: u16, attempt: u32) -> Option<StopCause> {
        if (200..300).contains(&status) {
            Some(StopCause::Success)
        } else if !self.policy.retries(status) {
            Some(StopCause::NotRetryable { status })
        } else if attempt >= self.policy.max_attempts {
            Some(StopCause::AttemptsExhausted {
                max_attempts: self.policy.max_attempts,
            })
        } else {
            None
        }
    }

    /// Records a receipt: its event (when the action keeps a trace), and the last response.
    fn record_receipt(&mut self, at: Duration, attempt: u32, status: u16, timing: Timing) {
        if self.traced {
            self.events.push(Event::Receipt {
                at,
                attempt,
                status,
                retry_after: timing.retry_after.clone(),
                ratelimit: timing.ratelimit.clone(),
            });
        }
        self.last_response = Some(LastResponse {
            attempt,
            status,
            at,
            retry_after: timing.retry_after,
            ratelimit: timing.ratelimit,
        });
    }

    /// A block on the origin arrived at elapsed `now`: another action learned that the service
    /// asks every request to this site to wait until elapsed `until` (on this action's clock).
    ///
    /// - During a request, or at its receipt (called before [`Action::on_response`]), it counts
    ///   when the response is handled: the next start is not before `until` (rule 18).
    /// - During a wait (called before a timer due at the same instant), rule 17: if `until` is
    ///   later than the planned start, the start moves to `until` plus jitter from the same
    ///   draw, or, when an attempt starting at `until` could not run its full cap, the action
    ///   stops now with `budget_exhausted`. A block that ends by the planned start changes
    ///   nothing.
    /// - After the stop it is ignored. Leaving at the same instant wins: call
    ///   [`Action::on_leave`] first.
    ///
    /// Every block that is not ignored is recorded as a `Blocked` event.
    pub fn on_block(&mut self, now: Duration, until: Duration) -> Decision {
        if self.phase == Phase::Stopped {
            return self.decision();
        }
        let now = self.advance(now);
        self.learn_block(now, until);
        match self.phase {
            Phase::Waiting(plan, draw) if until > plan.until => self.move_start(plan, draw, until),
            _ => self.decision(),
        }
    }

    /// The origin block announced by the latest response, when its `Retry-After` gave a valid
    /// server delay `d` (seconds or a date; not the floor, the fallback or jitter): elapsed
    /// `receipt + d`. A driver broadcasts it to the other actions on the origin right after
    /// [`Action::on_response`]. `None` when the latest response announced nothing, as one
    /// that timed out or that nobody awaited does.
    pub fn announced_block(&self) -> Option<Duration> {
        self.announced
    }

    /// The origin's block as this action knows it now, `B(now)`: the latest end of the blocks
    /// it was told of and of its own server delays; zero when there is none.
    pub fn origin_block(&self) -> Duration {
        self.block
    }

    /// The attempt in flight failed without a response at elapsed `now`.
    pub fn on_transport_error(&mut self, now: Duration, error: TransportError) -> Decision {
        let Phase::InFlight {
            attempt, started, ..
        } = self.phase
        else {
            return self.decision();
        };
        let now = self.advance(now);
        self.request_time = self
            .request_time
            .saturating_add(now.saturating_sub(started));
        self.record(|_| Event::Failure {
            at: now,
            attempt,
            error: error.clone(),
        });
        self.finish(StopCause::Transport { error })
    }

    /// A timer fired at elapsed `now`. During a wait: a timer that fired early keeps waiting for
    /// the rest, and one that fired on time or late rechecks the gate against `now`, never
    /// reusing the earlier check. During a request: at or after its cap the request is stopped
    /// as timed out.
    pub fn on_timer(&mut self, now: Duration) -> Decision {
        match self.phase {
            Phase::Waiting(plan, _) => {
                let now = self.advance(now);
                self.record(|_| Event::Timer {
                    at: now,
                    due: plan.until,
                });
                if now < plan.until {
                    return self.decision();
                }
                self.wait_time = self.wait_time.saturating_add(now.saturating_sub(plan.from));
                if !self.fits(now) {
                    let gate = self.gate(now);
                    return self.finish(StopCause::LateWake {
                        plan,
                        woke: now,
                        gate,
                    });
                }
                self.start_attempt(now)
            }
            Phase::InFlight { abort_at, .. } => {
                if self.now.max(now) < abort_at {
                    return self.decision();
                }
                self.on_transport_error(now, TransportError::TimedOut)
            }
            Phase::Stopped => self.decision(),
        }
    }

    /// The screen stopped owning the action at elapsed `now`: the user navigated away, or a new
    /// action replaced this one. Whatever was in flight or pending is abandoned for good.
    pub fn on_leave(&mut self, now: Duration) -> Decision {
        let in_flight = match self.phase {
            Phase::Stopped => return self.decision(),
            Phase::InFlight { started, .. } => {
                let now = self.advance(now);
                self.request_time = self
                    .request_time
                    .saturating_add(now.saturating_sub(started));
                true
            }
            Phase::Waiting(plan, _) => {
                let now = self.advance(now);
                self.wait_time = self.wait_time.saturating_add(now.saturating_sub(plan.from));
                false
            }
        };
        let now = self.advance(now);
        self.record(|_| Event::Left { at: now });
        self.finish(StopCause::Left { in_flight })
    }

    /// What the driver should be doing now.
    pub fn decision(&self) -> Decision {
        match self.phase {
            Phase::InFlight { abort_at, .. } => Decision::Await { abort_at },
            Phase::Waiting(plan, _) => Decision::Wait { until: plan.until },
            // A stopped action always has its cause; the fallback only keeps this total.
            Phase::Stopped => Decision::Stop(
                self.stop
                    .as_ref()
                    .map_or(Outcome::UserLeft, |(_, cause)| cause.outcome()),
            ),
        }
    }

    /// The elapsed time at which the driver must call [`Action::on_timer`]: the end of the
    /// current wait, or the cap of the attempt in flight. `None` when nothing is pending.
    pub fn next_wakeup(&self) -> Option<Duration> {
        match self.phase {
            Phase::InFlight { abort_at, .. } => Some(abort_at),
            Phase::Waiting(plan, _) => Some(plan.until),
            Phase::Stopped => None,
        }
    }

    /// What this action's blocks cover.
    pub fn scope(&self) -> BlockScope {
        self.scope
    }

    /// The policy this action runs under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Attempts started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// When each attempt started. Kept with the trace: empty for an untraced action, which
    /// counts its attempts ([`Action::attempts`]) without storing their starts.
    pub fn attempt_starts(&self) -> &[Duration] {
        &self.attempt_starts
    }

    /// Time spent with a request in flight, each attempt counted once.
    pub fn request_time(&self) -> Duration {
        self.request_time
    }

    /// Time spent waiting between attempts, each wait counted once.
    pub fn wait_time(&self) -> Duration {
        self.wait_time
    }

    /// The latest elapsed time the action has seen; once stopped, the time it stopped.
    pub fn elapsed(&self) -> Duration {
        match &self.stop {
            Some((at, _)) => *at,
            None => self.now,
        }
    }

    /// The last HTTP response received, whatever the outcome.
    pub fn last_response(&self) -> Option<&LastResponse> {
        self.last_response.as_ref()
    }

    /// The wait in progress, if any.
    pub fn pending_wait(&self) -> Option<&PlannedWait> {
        match &self.phase {
            Phase::Waiting(plan, _) => Some(plan),
            _ => None,
        }
    }

    /// The attempt in flight, if any.
    pub fn in_flight(&self) -> Option<u32> {
        match self.phase {
            Phase::InFlight { attempt, .. } => Some(attempt),
            _ => None,
        }
    }

    /// Why and when the action stopped, once it has.
    pub fn stopped(&self) -> Option<(Duration, &StopCause)> {
        self.stop.as_ref().map(|(at, cause)| (*at, cause))
    }

    /// Everything that happened, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The attempt starts, the last response and the trace, taken out of the action.
    pub(crate) fn into_parts(self) -> (Vec<Duration>, Option<LastResponse>, Vec<Event>) {
        (self.attempt_starts, self.last_response, self.events)
    }

    /// The budget left at elapsed `at`.
    pub fn remaining(&self, at: Duration) -> Duration {
        self.policy.budget.saturating_sub(at)
    }

    /// An attempt starting at `start` against the budget.
    fn gate(&self, start: Duration) -> Gate {
        Gate {
            cap_end: start.saturating_add(self.policy.attempt_cap),
            deadline: self.policy.budget,
        }
    }

    /// Whether an attempt starting at `start` could run its full cap inside the budget.
    fn fits(&self, start: Duration) -> bool {
        // Checked, not saturating: with a budget of Duration::MAX a saturated sum would pass.
        start
            .checked_add(self.policy.attempt_cap)
            .is_some_and(|end| end <= self.policy.budget)
    }

    /// Adds the event that `event` makes to the trace, when the action keeps one. Without a
    /// trace the event is never made: an untraced action (a fleet's) decides at the cost of
    /// its decisions alone.
    fn record(&mut self, event: impl FnOnce(&Action) -> Event) {
        if self.traced {
            let event = event(self);
            self.events.push(event);
        }
    }

    /// Moves the model's clock to `now`. Elapsed time never runs backwards: an earlier `now`
    /// (a driver bug) is read as the latest time already seen, rather than panicking.
    fn advance(&mut self, now: Duration) -> Duration {
        self.now = self.now.max(now);
        self.now
    }

    fn start_attempt(&mut self, now: Duration) -> Decision {
        let now = self.advance(now);
        self.attempts = self.attempts.saturating_add(1);
        let attempt = self.attempts;
        if self.traced {
            self.attempt_starts.push(now);
        }
        let abort_at = now.saturating_add(self.policy.attempt_cap);
        self.record(|a| Event::Start {
            at: now,
            attempt,
            remaining: a.remaining(now),
        });
        self.phase = Phase::InFlight {
            attempt,
            started: now,
            abort_at,
        };
        Decision::Send { attempt, abort_at }
    }

    /// Records a block that ends at `until`, arriving at `at`, and raises `B` to it.
    fn learn_block(&mut self, at: Duration, until: Duration) {
        self.record(|_| Event::Blocked { at, until });
        self.block = self.block.max(until);
    }

    /// Rules 14-16: the wait that begins now, after attempt `after_attempt` (0: before the
    /// first). The earliest start is the later of the action's own wait (`own`, after a
    /// response) and the origin's block; `origin_block` is the source only when the block is
    /// strictly later. The gate is checked on that earliest start; jitter from `draw` is then
    /// added within the room the gate leaves, so it never causes a stop.
    fn begin_wait(&mut self, after_attempt: u32, own: Option<OwnWait>, draw: f64) -> Decision {
        let from = self.now;
        let mut plan = match own {
            Some(own) if from.saturating_add(own.wait) >= self.block => PlannedWait {
                after_attempt,
                source: own.source,
                delay: own.delay,
                wait: own.wait,
                jitter: Duration::ZERO,
                from,
                until: from.saturating_add(own.wait),
            },
            _ => PlannedWait {
                after_attempt,
                source: WaitSource::OriginBlock,
                delay: self.block.saturating_sub(from),
                wait: self.block.saturating_sub(from),
                jitter: Duration::ZERO,
                from,
                until: self.block.max(from),
            },
        };
        let earliest = plan.until;
        // The gate: never shorten a valid delay to squeeze a request in; reserve a full cap.
        if !self.fits(earliest) {
            return self.finish(match plan.source {
                WaitSource::OriginBlock => StopCause::OriginBlocked {
                    at: from,
                    until: self.block,
                    gate: self.gate(self.block),
                },
                _ => StopCause::RefusedWait {
                    plan,
                    gate: self.gate(earliest),
                },
            });
        }
        plan.jitter = self.policy.jitter_for(draw, earliest);
        plan.until = earliest.saturating_add(plan.jitter);
        self.wait_on(plan, draw)
    }

    /// Rule 17: a block ending at `until`, later than the planned start of `plan`, arrived
    /// during the wait. Stop now if an attempt starting at `until` cannot fit; else the start
    /// moves to `until`, spread by jitter from the same draw.
    fn move_start(&mut self, plan: PlannedWait, draw: f64, until: Duration) -> Decision {
        if !self.fits(until) {
            self.wait_time = self
                .wait_time
                .saturating_add(self.now.saturating_sub(plan.from));
            return self.finish(StopCause::OriginBlocked {
                at: self.now,
                until,
                gate: self.gate(until),
            });
        }
        let jitter = self.policy.jitter_for(draw, until);
        let moved = PlannedWait {
            source: WaitSource::OriginBlock,
            delay: until.saturating_sub(plan.from),
            wait: until.saturating_sub(plan.from),
            jitter,
            until: until.saturating_add(jitter),
            ..plan
        };
        self.wait_on(moved, draw)
    }

    /// Records `plan` as the wait in progress (a `Wait` event at the current time) and says to
    /// wait for it.
    fn wait_on(&mut self, plan: PlannedWait, draw: f64) -> Decision {
        let at = self.now;
        self.record(|a| Event::Wait {
            at,
            plan,
            remaining: a.remaining(at),
        });
        self.phase = Phase::Waiting(plan, draw);
        self.decision()
    }

    fn finish(&mut self, cause: StopCause) -> Decision {
        let at = self.now;
        let outcome = cause.outcome();
        self.record(|a| Event::Stop {
            at,
            outcome,
            remaining: a.remaining(at),
            cause: cause.clone(),
        });
        self.phase = Phase::Stopped;
        self.stop = Some((at, cause));
        Decision::Stop(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    fn rate_limited(retry_after: Option<&str>) -> Response<'_> {
        Response {
            status: 429,
            retry_after,
            ratelimit: None,
            clock: ReceiptClock::Absent,
        }
    }

    #[test]
    fn an_early_timer_waits_the_rest_and_never_starts_early() {
        let (mut action, first) = Action::start(Policy::new()).expect("valid policy");
        assert_eq!(
            first,
            Decision::Send {
                attempt: 1,
                abort_at: s(4)
            }
        );
        assert_eq!(
            action.on_response(s(2), rate_limited(Some("3"))),
            Decision::Wait { until: s(5) }
        );
        let early = Duration::from_millis(4_990);
        assert_eq!(action.on_timer(early), Decision::Wait { until: s(5) });
        assert_eq!(action.attempts(), 1);
        assert_eq!(
            action.on_timer(s(5)),
            Decision::Send {
                attempt: 2,
                abort_at: s(9)
            }
        );
        assert_eq!(action.attempt_starts(), [s(0), s(5)]);
    }

    #[test]
    fn the_cap_stops_a_running_attempt_as_timed_out() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        assert_eq!(action.next_wakeup(), Some(s(4)));
        assert_eq!(action.on_timer(s(3)), Decision::Await { abort_at: s(4) });
        assert_eq!(
            action.on_timer(s(4)),
            Decision::Stop(Outcome::TransportError)
        );
        assert_eq!(
            action.stopped(),
            Some((
                s(4),
                &StopCause::Transport {
                    error: TransportError::TimedOut
                }
            ))
        );
        assert_eq!(action.request_time(), s(4));
        assert_eq!(action.next_wakeup(), None);
    }

    #[test]
    fn a_response_after_the_cap_is_a_timeout() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        let late = Response {
            status: 200,
            retry_after: None,
            ratelimit: None,
            clock: ReceiptClock::Absent,
        };
        // The cap timer should have fired at 4 s; it fired late and the body came first.
        let decision = action.on_response(Duration::from_millis(4_001), late);
        assert_eq!(decision, Decision::Stop(Outcome::TransportError));
        assert!(action.last_response().is_none());
        // Exactly at the cap, the response still counts.
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        assert_eq!(
            action.on_response(s(4), late),
            Decision::Stop(Outcome::Success)
        );
    }

    #[test]
    fn a_result_after_the_stop_changes_nothing() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        assert_eq!(action.on_leave(s(1)), Decision::Stop(Outcome::UserLeft));
        let before = action.events().len();
        let late = Response {
            status: 200,
            retry_after: None,
            ratelimit: None,
            clock: ReceiptClock::Absent,
        };
        assert_eq!(
            action.on_response(s(2), late),
            Decision::Stop(Outcome::UserLeft)
        );
        assert_eq!(action.on_timer(s(9)), Decision::Stop(Outcome::UserLeft));
        assert_eq!(action.events().len(), before);
        assert!(action.last_response().is_none());
        assert_eq!(action.elapsed(), s(1));
    }

    #[test]
    fn a_date_needs_trusted_clock_evidence() {
        let date = "Mon, 01 Jan 2024 12:00:06 GMT";
        let receipt = UtcTime::from_unix_secs(1_704_110_402); // 12:00:02
        let cases = [
            (
                false,
                ReceiptClock::Server(receipt),
                Decision::Wait { until: s(6) },
            ),
            (
                false,
                ReceiptClock::Local(receipt),
                Decision::Stop(Outcome::ClockUntrusted),
            ),
            (
                true,
                ReceiptClock::Local(receipt),
                Decision::Wait { until: s(6) },
            ),
            (
                true,
                ReceiptClock::Absent,
                Decision::Stop(Outcome::ClockUntrusted),
            ),
        ];
        for (trust, clock, want) in cases {
            let policy = Policy::new().with_trust_local_clock(trust);
            let (mut action, _) = Action::start(policy).expect("valid policy");
            let response = Response {
                status: 429,
                retry_after: Some(date),
                ratelimit: None,
                clock,
            };
            assert_eq!(
                action.on_response(s(2), response),
                want,
                "trust {trust}, {clock:?}"
            );
        }
    }

    /// An RFC 850 date that no century makes possible (no year ending in 23 has a February 29)
    /// is invalid by rule 6 with or without a clock: without one it falls back like any invalid
    /// value, rather than stopping for want of a clock to read it.
    #[test]
    fn an_impossible_rfc850_date_falls_back_with_or_without_a_clock() {
        let receipt = UtcTime::from_unix_secs(1_704_110_402);
        let clocks = [
            ReceiptClock::Server(receipt),
            ReceiptClock::Local(receipt),
            ReceiptClock::Absent,
        ];
        for clock in clocks {
            let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
            let response = Response {
                status: 429,
                retry_after: Some("Wednesday, 29-Feb-23 00:00:00 GMT"),
                ratelimit: None,
                clock,
            };
            // Received at 2 s, after attempt 1: the 2 s fallback.
            let decision = action.on_response(s(2), response);
            assert_eq!(decision, Decision::Wait { until: s(4) }, "{clock:?}");
            let header = &action
                .last_response()
                .expect("a response")
                .retry_after
                .header;
            assert!(
                matches!(header, RetryAfter::Invalid { .. }),
                "{clock:?}: {header:?}"
            );
        }
    }

    #[test]
    fn a_past_date_waits_the_local_floor() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        let response = Response {
            status: 429,
            retry_after: Some("Mon, 01 Jan 2024 11:00:00 GMT"),
            ratelimit: None,
            clock: ReceiptClock::Server(UtcTime::from_unix_secs(1_704_110_402)),
        };
        assert_eq!(
            action.on_response(s(2), response),
            Decision::Wait { until: s(3) }
        );
        let plan = action.pending_wait().expect("waiting");
        assert_eq!(
            (plan.delay, plan.wait, plan.source),
            (Duration::ZERO, s(1), WaitSource::ServerDate)
        );
    }

    #[test]
    fn a_huge_delay_saturates_and_stops_without_waiting() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        let decision = action.on_response(s(2), rate_limited(Some("99999999999999999999")));
        assert_eq!(decision, Decision::Stop(Outcome::BudgetExhausted));
        let last = action.last_response().expect("recorded");
        assert_eq!(last.retry_after.delay, Some(Duration::from_secs(u64::MAX)));
        assert_eq!(action.wait_time(), Duration::ZERO);
    }

    #[test]
    fn time_never_runs_backwards() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        assert_eq!(
            action.on_response(s(2), rate_limited(Some("1"))),
            Decision::Wait { until: s(3) }
        );
        // A driver that reports an earlier time is read as the latest time seen: still early.
        assert_eq!(action.on_timer(s(1)), Decision::Wait { until: s(3) });
        assert_eq!(action.elapsed(), s(2));
    }

    #[test]
    fn a_blocked_origin_is_waited_for_before_the_first_attempt_or_stops_it() {
        let (action, first) =
            Action::start_on_origin(Policy::new(), &[s(4)], 0.0).expect("valid policy");
        assert_eq!(first, Decision::Wait { until: s(4) });
        assert_eq!(action.attempts(), 0);
        assert_eq!(
            action.pending_wait().map(|p| (p.after_attempt, p.source)),
            Some((0, WaitSource::OriginBlock))
        );
        assert_eq!(
            action.visible(),
            ["Waiting 4 s before attempt 1 of 3: the service asked every request to this site to wait. 16 s of the budget left."]
        );
        let (action, first) =
            Action::start_on_origin(Policy::new(), &[s(30)], 0.0).expect("valid policy");
        assert_eq!(first, Decision::Stop(Outcome::BudgetExhausted));
        assert_eq!((action.attempts(), action.elapsed()), (0, s(0)));
        assert_eq!(
            action.visible(),
            [
                "Stopped: the service asked every request to this site to wait 30 s, and this action's budget cannot fit that.",
                "Last response: none. Attempts: 0 of 3. Elapsed: 0 seconds.",
                "No request was sent."
            ]
        );
        // A block that ended by the press changes nothing.
        let (_, first) = Action::start_on_origin(Policy::new(), &[s(0)], 0.5).expect("valid");
        assert_eq!(
            first,
            Decision::Send {
                attempt: 1,
                abort_at: s(4)
            }
        );
    }

    /// A timer that fires after the earliest start but before the jittered one waits the rest:
    /// jitter never makes a start earlier than it was planned.
    #[test]
    fn an_early_timer_in_a_jittered_wait_waits_for_the_jittered_start() {
        let policy = Policy::new().with_jitter(s(2));
        let (mut action, _) = Action::start(policy).expect("valid policy");
        assert_eq!(
            action.on_response_drawn(s(2), rate_limited(Some("3")), 0.5),
            Decision::Wait { until: s(6) }
        );
        let early = action.on_timer(Duration::from_millis(5_500));
        assert_eq!(
            (early, action.attempts()),
            (Decision::Wait { until: s(6) }, 1)
        );
        assert_eq!(
            action.on_timer(s(6)),
            Decision::Send {
                attempt: 2,
                abort_at: s(10)
            }
        );
    }

    /// An untraced action reports the figures and the words of a traced one; only its trace
    /// (the events and the attempts' starts) is left out.
    #[test]
    fn an_untraced_action_reports_the_figures_of_a_traced_one() {
        let ok = || Response {
            status: 200,
            retry_after: None,
            ratelimit: None,
            clock: ReceiptClock::Absent,
        };
        let (mut traced, _) = Action::start(Policy::new()).expect("valid policy");
        let (mut untraced, _) = Action::start_untraced(Policy::new(), &[], 0.0).expect("valid");
        for action in [&mut traced, &mut *untraced] {
            action.on_response(s(2), rate_limited(Some("3")));
            action.on_timer(s(5));
            action.on_response(s(7), ok());
        }
        let (t, u) = (traced.report(), untraced.report());
        let figures =
            |r: &crate::report::Report| (r.outcome, r.attempts, r.elapsed_s, r.request_s, r.wait_s);
        assert_eq!(figures(&u), figures(&t));
        assert_eq!(u.attempts, 2);
        assert_eq!(u.visible, t.visible);
        assert!(u.events.is_empty() && u.attempt_starts_s.is_empty());
    }

    #[test]
    fn a_block_during_a_wait_moves_the_start_or_stops_and_after_the_stop_is_ignored() {
        let policy = Policy::new().with_jitter(s(2));
        let (mut action, _) = Action::start(policy).expect("valid policy");
        assert_eq!(
            action.on_response_drawn(s(2), rate_limited(Some("3")), 0.5),
            Decision::Wait { until: s(6) }
        );
        // Ends before the planned start: nothing changes.
        assert_eq!(action.on_block(s(3), s(6)), Decision::Wait { until: s(6) });
        // Later: the start moves to 8 plus the same draw's jitter.
        assert_eq!(action.on_block(s(4), s(8)), Decision::Wait { until: s(9) });
        // Cannot fit a full cap after it: stop now, having waited 4 - 2 s.
        assert_eq!(
            action.on_block(s(4), s(17)),
            Decision::Stop(Outcome::BudgetExhausted)
        );
        assert_eq!((action.wait_time(), action.elapsed()), (s(2), s(4)));
        let before = action.events().len();
        assert_eq!(
            action.on_block(s(5), s(30)),
            Decision::Stop(Outcome::BudgetExhausted)
        );
        assert_eq!(action.events().len(), before);
    }

    #[test]
    fn only_a_valid_server_delay_is_announced_to_the_origin() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        action.on_response(s(2), rate_limited(Some("3")));
        assert_eq!(action.announced_block(), Some(s(5)));
        assert_eq!(action.origin_block(), s(5));
        action.on_timer(s(5));
        // The fallback is local: it blocks nobody.
        action.on_response(s(6), rate_limited(Some("soon")));
        assert_eq!(action.announced_block(), None);
        assert_eq!(action.origin_block(), s(5));
    }

    #[test]
    fn an_untraced_action_decides_the_same_and_keeps_no_events() {
        let policy = Policy::new().with_jitter(s(1));
        let (mut traced, first) = Action::start_on_origin(policy, &[s(2)], 0.25).expect("valid");
        let (mut lean, lean_first) = Action::start_untraced(policy, &[s(2)], 0.25).expect("valid");
        assert_eq!(first, lean_first);
        let steps: [&dyn Fn(&mut Action) -> Decision; 5] = [
            &|a| a.on_timer(Duration::from_millis(2_250)),
            &|a| a.on_response_drawn(Duration::from_millis(3_000), rate_limited(Some("3")), 0.5),
            &|a| a.on_block(s(4), s(7)),
            &|a| a.on_timer(Duration::from_millis(7_500)),
            &|a| a.on_response(s(9), rate_limited(None)),
        ];
        for step in steps {
            assert_eq!(step(&mut traced), step(&mut lean));
            assert_eq!(traced.visible(), lean.visible());
        }
        assert_eq!(traced.stopped(), lean.stopped());
        assert_eq!(
            (traced.elapsed(), traced.request_time(), traced.wait_time()),
            (lean.elapsed(), lean.request_time(), lean.wait_time())
        );
        assert_eq!(traced.attempts(), lean.attempts());
        // Waits for the block to 2 s plus a quarter of the jitter; after the 429, for its block moved
        // to 7 s plus half of it.
        let starts = [Duration::from_millis(2_250), Duration::from_millis(7_500)];
        assert_eq!(traced.attempt_starts(), starts);
        assert!(traced.events().len() > 5);
        assert!(lean.events().is_empty() && lean.attempt_starts().is_empty());
    }

    #[test]
    fn a_restarted_action_is_a_new_one() {
        let policy = Policy::new();
        let (mut old, _) = Action::start_untraced(policy, &[], 0.0).expect("valid");
        old.on_response(s(1), rate_limited(Some("30")));
        assert!(old.stopped().is_some());
        let (new, first) = Action::start_untraced(policy, &[s(2)], 0.5).expect("valid");
        assert_eq!(old.restart_untraced(policy, &[s(2)], 0.5), Ok(first));
        assert_eq!(format!("{old:?}"), format!("{new:?}"));
        let invalid = Policy::new().with_max_attempts(0);
        assert!(old.restart_untraced(invalid, &[], 0.0).is_err());
    }

    /// A response that timed out (read after its cap) or that nobody awaits announces
    /// nothing, and in particular not the block of the response before it, which a driver
    /// would otherwise broadcast again to the others of its scope.
    #[test]
    fn a_response_the_action_discards_announces_nothing() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        let limited = Response::new(429, Some("3"), ReceiptClock::Absent);
        assert_eq!(
            action.on_response(s(1), limited),
            Decision::Wait { until: s(4) }
        );
        assert_eq!(action.announced_block(), Some(s(4)));
        assert_eq!(
            action.on_timer(s(4)),
            Decision::Send {
                attempt: 2,
                abort_at: s(8)
            }
        );
        // Attempt 2's answer is read at 8.3 s, after its cap: it timed out.
        let late = Response::new(429, Some("3"), ReceiptClock::Absent);
        let at = Duration::from_millis(8_300);
        assert_eq!(
            action.on_response(at, late),
            Decision::Stop(Outcome::TransportError)
        );
        assert_eq!(action.announced_block(), None, "after a late response");
        // After the stop, a response is ignored, and announces nothing either.
        let after = Response::new(429, Some("9"), ReceiptClock::Absent);
        action.on_response(s(9), after);
        assert_eq!(action.announced_block(), None, "after the stop");
    }

    #[test]
    fn what_a_response_announces_to_the_others_sharing_its_limit() {
        let policy = Policy::new().with_ratelimit_fields(true);
        let spent = |t: u64| format!("\"default\";r=0;t={t}");
        let (five, zero, nine) = (spent(5), spent(0), spent(9));
        // A valid date, which no clock measures here (every response has none).
        let date = Some("Mon, 01 Jan 2024 12:00:06 GMT");
        /// (status, Retry-After, RateLimit, max attempts, what is announced from the receipt)
        type Case<'a> = (u16, Option<&'a str>, Option<&'a str>, u32, Option<u64>);
        let cases: [Case; 16] = [
            // Rule 13: a retryable status's valid delay, on the last attempt too.
            (429, Some("3"), None, 3, Some(3)),
            (429, Some("3"), None, 1, Some(3)),
            // Any other status announces nothing by Retry-After.
            (200, Some("5"), None, 3, None),
            (503, Some("5"), None, 3, None),
            // Rule 19: the field stands in for a missing Retry-After, t = 0 included.
            (429, None, Some(&five), 3, Some(5)),
            (429, None, Some(&zero), 3, Some(0)),
            // Before the last attempt a valid Retry-After takes precedence; the field is only
            // reported. On the last attempt rules 13 and 20 both hold: the later of the two.
            (429, Some("2"), Some(&nine), 3, Some(2)),
            (429, Some("2"), Some(&nine), 1, Some(9)),
            (429, Some("7"), Some(&five), 1, Some(7)),
            // Rule 20: a spent quota on any other response blocks the others for T > 0.
            (200, None, Some(&five), 3, Some(5)),
            (429, None, Some(&five), 1, Some(5)),
            (200, Some("1"), Some(&zero), 3, None),
            // On the last attempt rule 19 does not apply: t = 0 is no spent quota to announce.
            (429, None, Some(&zero), 1, None),
            // A date without a clock gives no delay to announce (rule 7 stops the action), so
            // a spent quota is announced by rule 20, whether attempts are left or not.
            (429, date, None, 3, None),
            (429, date, Some(&nine), 3, Some(9)),
            (429, date, Some(&nine), 1, Some(9)),
        ];
        for (status, retry_after, ratelimit, max, want) in cases {
            let (mut action, _) =
                Action::start(policy.with_max_attempts(max)).expect("valid policy");
            let response = Response {
                ratelimit,
                ..Response::new(status, retry_after, ReceiptClock::Absent)
            };
            action.on_response(s(2), response);
            assert_eq!(
                action.announced_block(),
                want.map(|d| s(2 + d)),
                "{status} {retry_after:?} {ratelimit:?} of {max}"
            );
        }
    }

    #[test]
    fn the_field_is_read_only_when_the_policy_says_so() {
        let response = Response {
            ratelimit: Some("\"default\";r=0;t=5"),
            ..Response::new(200, None, ReceiptClock::Absent)
        };
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        action.on_response(s(2), response);
        assert_eq!(action.announced_block(), None);
        assert_eq!(
            action.last_response().and_then(|l| l.ratelimit.clone()),
            None
        );
    }

    #[test]
    fn a_named_scope_says_what_its_block_covers() {
        let (action, _) = Action::start_in_scope(Policy::new(), BlockScope::Named, &[s(4)], 0.0)
            .expect("valid policy");
        assert_eq!(
            action.visible(),
            ["Waiting 4 s before attempt 1 of 3: the service asked every request under this rate limit to wait. 16 s of the budget left."]
        );
    }

    #[test]
    fn an_action_abandoned_before_it_began_sent_nothing() {
        let action = Action::abandoned(Policy::new());
        assert_eq!(action.attempts(), 0);
        assert_eq!(action.elapsed(), Duration::ZERO);
        assert_eq!(
            action.stopped(),
            Some((Duration::ZERO, &StopCause::Left { in_flight: false }))
        );
        assert_eq!(
            action.visible(),
            [
                "Stopped: you left this screen.",
                "Last response: none. Attempts: 0 of 3. Elapsed: 0 seconds.",
                "No request was sent."
            ]
        );
        let report = action.into_report();
        assert_eq!(report.outcome, Some(Outcome::UserLeft));
        assert_eq!(report.events.len(), 2);
    }

    #[test]
    fn the_visible_state_tracks_the_action() {
        let (mut action, _) = Action::start(Policy::new()).expect("valid policy");
        assert_eq!(
            action.visible(),
            ["Loading: attempt 1 of 3. 20 s of the budget left."]
        );
        action.on_response(s(2), rate_limited(Some("3")));
        assert_eq!(
            action.visible(),
            [
                "Waiting 3 s before attempt 2 of 3. 15 s of the budget left.",
                "The service requested a 3-second delay."
            ]
        );
        action.on_response(s(3), rate_limited(None));
        action.on_leave(s(4));
        assert_eq!(
            action.visible(),
            [
                "Stopped: you left this screen.",
                "Last response: 429. Attempts: 1 of 3. Elapsed: 4 seconds.",
                "The wait was cancelled. No retry was sent."
            ]
        );
    }
}
