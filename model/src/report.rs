//! The record of one action: one typed value, built once from the action, that serializes
//! (serde) to the shape the replay command prints and the JavaScript API returns
//! (`docs/rules.md`, "The report"). The `expect` figures are compared on that same
//! serialization, and the step table is drawn from the typed value.

use core::time::Duration;

use serde::{Serialize, Serializer};

use crate::action::{Action, Event, LastResponse, Outcome, StopCause};
use crate::policy::Policy;
use crate::steps::{steps, Step};

/// A duration in seconds, as the report holds its figures; serialized as a number of seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Secs(pub Duration);

impl Serialize for Secs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        secs(&self.0, serializer)
    }
}

/// 2^53: the largest whole number of seconds every JSON reader (JavaScript's included) holds
/// exactly.
const EXACT: u64 = 1 << 53;

/// Serializes a duration as seconds: a whole number when it is one (`14`, not `14.0`) and
/// JavaScript can hold it exactly, else the nearest `f64` (`2.5`; a saturated delay as
/// `1.8446744073709552e+19` as serde_json writes it).
pub fn secs<S: Serializer>(d: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    if d.subsec_nanos() == 0 && d.as_secs() <= EXACT {
        serializer.serialize_u64(d.as_secs())
    } else {
        serializer.serialize_f64(d.as_secs_f64())
    }
}

/// [`secs`] for an optional duration: `null` when absent.
pub fn secs_or_null<S: Serializer>(d: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => secs(d, serializer),
        None => serializer.serialize_none(),
    }
}

/// Everything one action did and how it ended.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The policy it ran under.
    pub policy: Policy,
    /// How it ended; `None` (`null`) while it is still running.
    pub outcome: Option<Outcome>,
    /// Why it ended, with what a view needs to explain it; `None` while it is still running.
    pub cause: Option<StopCause>,
    /// Elapsed time from the action's start to the stop.
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
    pub last_response: Option<LastResponse>,
    /// Every start, receipt, failure, wait, timer, block, departure and the stop.
    pub events: Vec<Event>,
    /// What the user is told.
    pub visible: Vec<String>,
}

impl Report {
    /// The events as the step table's rows (Step, Elapsed interval, Observed, Decision). Not a
    /// field: the replay output and the full browser build carry them, while the app build
    /// leaves their words out of what every page downloads (docs/benchmarks.md, "Size").
    pub fn steps(&self) -> Vec<Step> {
        steps(&self.events, self.policy.attempt_cap)
    }
}

impl Action {
    /// The action's record so far.
    pub fn report(&self) -> Report {
        self.clone().into_report()
    }

    /// The action's record, taking the action's trace rather than copying it.
    pub fn into_report(self) -> Report {
        let visible = self.visible();
        let cause = self.stopped().map(|(_, cause)| cause.clone());
        let (outcome, elapsed) = (cause.as_ref().map(StopCause::outcome), self.elapsed());
        let (request, wait, attempts) = (self.request_time(), self.wait_time(), self.attempts());
        let policy = *self.policy();
        let (starts, last_response, events) = self.into_parts();
        Report {
            policy,
            outcome,
            cause,
            elapsed_s: Secs(elapsed),
            attempts,
            request_s: Secs(request),
            wait_s: Secs(wait),
            attempt_starts_s: starts.into_iter().map(Secs).collect(),
            last_response,
            events,
            visible,
        }
    }
}
