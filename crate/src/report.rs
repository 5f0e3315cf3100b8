//! The record of one action, in the shape of the replay output (`scenario-format.md`, section 3).
//! The replay command prints it as JSON (natively, through serde). The browser API builds the
//! same shape as a plain JavaScript object straight from the action (`browser/js.rs`), so the
//! page ships no serializer.

use core::time::Duration;

use crate::action::{Action, Event, LastResponse, Outcome, RetryAfterReading, WaitSource};
use crate::policy::Policy;

/// Seconds as a JSON number: a whole number when it is one, so `14` reads as `14`, not `14.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Secs(pub Duration);

#[cfg(not(target_arch = "wasm32"))]
impl serde::Serialize for Secs {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const EXACT_IN_F64: u64 = 1 << 53;
        let d = self.0;
        if d.subsec_nanos() == 0 && d.as_secs() < EXACT_IN_F64 {
            serializer.serialize_u64(d.as_secs())
        } else {
            serializer.serialize_f64(d.as_secs_f64())
        }
    }
}

/// Everything one action did and how it ended.
#[derive(Clone, Debug)]
#[cfg_attr(not(target_arch = "wasm32"), derive(serde::Serialize))]
pub struct Report {
    /// The scenario's name; empty for a live action.
    pub name: String,
    /// The policy it ran under.
    pub policy: PolicyReport,
    /// How it ended; `None` while it is still running.
    pub outcome: Option<Outcome>,
    /// Elapsed time from the first attempt's start to the stop.
    pub elapsed_s: Secs,
    /// Attempts started.
    pub attempts: u32,
    /// Time with a request in flight.
    pub request_s: Secs,
    /// Time spent waiting.
    pub wait_s: Secs,
    /// When each attempt started.
    pub attempt_starts_s: Vec<Secs>,
    /// The last HTTP response received, kept apart from the outcome.
    pub last_response: Option<LastResponseReport>,
    /// Every start, receipt, failure, wait, timer, departure and the stop.
    pub events: Vec<EventReport>,
    /// What the user is told.
    pub visible: Vec<String>,
    /// Whether the scenario's `expect` figures were all met (present only when it had some).
    #[cfg_attr(
        not(target_arch = "wasm32"),
        serde(skip_serializing_if = "Option::is_none")
    )]
    pub expect_ok: Option<bool>,
    /// The figures that did not match, one sentence each.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        serde(skip_serializing_if = "Vec::is_empty")
    )]
    pub expect_mismatches: Vec<String>,
}

/// A policy in a report, in the scenario format's field names.
#[derive(Clone, Debug)]
#[cfg_attr(not(target_arch = "wasm32"), derive(serde::Serialize))]
pub struct PolicyReport {
    /// The total budget.
    pub budget_s: Secs,
    /// Attempts in all.
    pub max_attempts: u32,
    /// The per-attempt cap.
    pub attempt_cap_s: Secs,
    /// The floor on waits.
    pub min_wait_s: Secs,
    /// The first fallback wait.
    pub fallback_base_s: Secs,
    /// The statuses retried.
    pub retry_statuses: Vec<u16>,
}

impl From<&Policy> for PolicyReport {
    fn from(p: &Policy) -> Self {
        PolicyReport {
            budget_s: Secs(p.budget),
            max_attempts: p.max_attempts,
            attempt_cap_s: Secs(p.attempt_cap),
            min_wait_s: Secs(p.min_wait),
            fallback_base_s: Secs(p.fallback_base),
            retry_statuses: p.retry_statuses.iter().collect(),
        }
    }
}

/// The last HTTP response in a report.
#[derive(Clone, Debug)]
#[cfg_attr(not(target_arch = "wasm32"), derive(serde::Serialize))]
pub struct LastResponseReport {
    /// Its attempt.
    pub attempt: u32,
    /// Its status.
    pub status: u16,
    /// When it arrived.
    pub at_s: Secs,
    /// How its `Retry-After` was read.
    pub retry_after: RetryAfterReport,
}

/// A `Retry-After` in a report: the raw text, its kind, and the server's delay when usable.
#[derive(Clone, Debug)]
#[cfg_attr(not(target_arch = "wasm32"), derive(serde::Serialize))]
pub struct RetryAfterReport {
    /// The header as received; `None` when it was absent.
    pub raw: Option<String>,
    /// `seconds`, `date`, `missing` or `invalid`.
    pub kind: &'static str,
    /// The delay the server asked for, when it gave a usable one.
    pub delay_s: Option<Secs>,
}

/// One trace event in a report.
#[derive(Clone, Debug)]
#[cfg_attr(not(target_arch = "wasm32"), derive(serde::Serialize))]
#[cfg_attr(
    not(target_arch = "wasm32"),
    serde(tag = "event", rename_all = "snake_case")
)]
pub enum EventReport {
    /// An attempt started.
    Start {
        at_s: Secs,
        attempt: u32,
        remaining_s: Secs,
    },
    /// A response arrived.
    Receipt {
        at_s: Secs,
        attempt: u32,
        status: u16,
        retry_after: RetryAfterReport,
    },
    /// A request failed without a response.
    Failure {
        at_s: Secs,
        attempt: u32,
        error: String,
    },
    /// A wait began.
    Wait {
        at_s: Secs,
        after_attempt: u32,
        source: WaitSource,
        delay_s: Secs,
        wait_s: Secs,
        until_s: Secs,
        remaining_s: Secs,
    },
    /// A timer fired.
    Timer { at_s: Secs, due_s: Secs },
    /// The user left.
    Left { at_s: Secs },
    /// The action stopped.
    Stop {
        at_s: Secs,
        outcome: Outcome,
        remaining_s: Secs,
    },
}

impl From<&Event> for EventReport {
    fn from(event: &Event) -> Self {
        match event {
            Event::Start {
                at,
                attempt,
                remaining,
            } => EventReport::Start {
                at_s: Secs(*at),
                attempt: *attempt,
                remaining_s: Secs(*remaining),
            },
            Event::Receipt {
                at,
                attempt,
                status,
                retry_after,
            } => EventReport::Receipt {
                at_s: Secs(*at),
                attempt: *attempt,
                status: *status,
                retry_after: retry_after.into(),
            },
            Event::Failure { at, attempt, error } => EventReport::Failure {
                at_s: Secs(*at),
                attempt: *attempt,
                error: error.as_str().into(),
            },
            Event::Wait {
                at,
                plan,
                remaining,
            } => EventReport::Wait {
                at_s: Secs(*at),
                after_attempt: plan.after_attempt,
                source: plan.source,
                delay_s: Secs(plan.delay),
                wait_s: Secs(plan.wait),
                until_s: Secs(plan.until),
                remaining_s: Secs(*remaining),
            },
            Event::Timer { at, due } => EventReport::Timer {
                at_s: Secs(*at),
                due_s: Secs(*due),
            },
            Event::Left { at } => EventReport::Left { at_s: Secs(*at) },
            Event::Stop {
                at,
                outcome,
                remaining,
            } => EventReport::Stop {
                at_s: Secs(*at),
                outcome: *outcome,
                remaining_s: Secs(*remaining),
            },
        }
    }
}

impl From<&LastResponse> for LastResponseReport {
    fn from(last: &LastResponse) -> Self {
        LastResponseReport {
            attempt: last.attempt,
            status: last.status,
            at_s: Secs(last.at),
            retry_after: (&last.retry_after).into(),
        }
    }
}

impl From<&RetryAfterReading> for RetryAfterReport {
    fn from(reading: &RetryAfterReading) -> Self {
        RetryAfterReport {
            raw: reading.header.raw().map(String::from),
            kind: reading.kind.as_str(),
            delay_s: reading.delay.map(Secs),
        }
    }
}

impl Action {
    /// The action's record so far, unnamed.
    pub fn report(&self) -> Report {
        Report {
            name: String::new(),
            policy: PolicyReport::from(self.policy()),
            outcome: self.stopped().map(|(_, cause)| cause.outcome()),
            elapsed_s: Secs(self.elapsed()),
            attempts: self.attempts(),
            request_s: Secs(self.request_time()),
            wait_s: Secs(self.wait_time()),
            attempt_starts_s: self.attempt_starts().iter().copied().map(Secs).collect(),
            last_response: self.last_response().map(LastResponseReport::from),
            events: self.events().iter().map(EventReport::from).collect(),
            visible: self.visible(),
            expect_ok: None,
            expect_mismatches: Vec::new(),
        }
    }
}
