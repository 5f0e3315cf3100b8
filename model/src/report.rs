//! The record of one action: one typed value, built once from the action, and its one JSON
//! view ([`Report::to_json`]) in the shape of the replay output (`scenario-format.md`, section
//! 3). The replay command prints that view, the browser module hands it to JavaScript, the
//! `expect` figures are compared on it, and the readable table is drawn from the typed value.

use crate::prelude::*;
use core::time::Duration;

use crate::action::{Action, Event, LastResponse, Outcome};
use crate::json::{Json, Key};
use crate::policy::Policy;
use crate::retry_after::RetryAfter;

/// A duration in seconds, as the report holds its figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Secs(pub Duration);

/// Everything one action did and how it ended.
#[derive(Clone, Debug)]
pub struct Report {
    /// The scenario's name; the URL for a live action.
    pub name: String,
    /// The policy it ran under.
    pub policy: Policy,
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
    pub last_response: Option<LastResponse>,
    /// Every start, receipt, failure, wait, timer, departure and the stop.
    pub events: Vec<Event>,
    /// What the user is told.
    pub visible: Vec<String>,
    /// Whether the scenario's `expect` figures were all met (present only when it had some).
    pub expect_ok: Option<bool>,
    /// The figures that did not match, one sentence each.
    pub expect_mismatches: Vec<String>,
}

impl Action {
    /// The action's record so far, under `name`.
    pub fn report(&self, name: &str) -> Report {
        self.clone().into_report(name)
    }

    /// The action's record, under `name`, taking the action's trace rather than copying it.
    pub fn into_report(self, name: &str) -> Report {
        let visible = self.visible();
        let (outcome, elapsed) = (self.stopped().map(|(_, c)| c.outcome()), self.elapsed());
        let (request, wait) = (self.request_time(), self.wait_time());
        let policy = *self.policy();
        let (starts, last_response, events) = self.into_parts();
        Report {
            name: name.into(),
            policy,
            outcome,
            elapsed_s: Secs(elapsed),
            attempts: u32::try_from(starts.len()).unwrap_or(u32::MAX),
            request_s: Secs(request),
            wait_s: Secs(wait),
            attempt_starts_s: starts.into_iter().map(Secs).collect(),
            last_response,
            events,
            visible,
            expect_ok: None,
            expect_mismatches: Vec::new(),
        }
    }
}

impl Report {
    /// The report in the replay output's shape: the one place that shape is written.
    /// `expect_ok` is present only when the scenario had `expect`, and `expect_mismatches`
    /// only when a figure was missed.
    pub fn to_json(&self) -> Json {
        let mut members = vec![
            member("name", Json::text(&self.name)),
            member("policy", policy(&self.policy)),
            member(
                "outcome",
                Json::or_null(self.outcome, |o| Json::text(o.as_str())),
            ),
            member("elapsed_s", Json::secs(self.elapsed_s.0)),
            member("attempts", Json::count(self.attempts)),
            member("request_s", Json::secs(self.request_s.0)),
            member("wait_s", Json::secs(self.wait_s.0)),
            member(
                "attempt_starts_s",
                Json::Array(
                    self.attempt_starts_s
                        .iter()
                        .map(|s| Json::secs(s.0))
                        .collect(),
                ),
            ),
            member(
                "last_response",
                Json::or_null(self.last_response.as_ref(), last_response),
            ),
            member("events", events(&self.events)),
            member("visible", texts(&self.visible)),
        ];
        if let Some(ok) = self.expect_ok {
            members.push(member("expect_ok", Json::Bool(ok)));
        }
        if !self.expect_mismatches.is_empty() {
            members.push(member("expect_mismatches", texts(&self.expect_mismatches)));
        }
        Json::Object(members)
    }
}

/// The view of a list of trace events (a report's, or the new ones an update carries).
pub fn events(list: &[Event]) -> Json {
    Json::Array(list.iter().map(event).collect())
}

/// The view of a list of lines.
pub fn texts(lines: &[String]) -> Json {
    Json::Array(lines.iter().map(Json::text).collect())
}

fn member(key: &'static str, value: Json) -> (Key, Json) {
    (Key::Borrowed(key), value)
}

/// A policy in the scenario format's field names (`trust_local_clock` is an input only;
/// `jitter_s` is written only when it is not zero, so that a policy without jitter reads as
/// it always has).
fn policy(p: &Policy) -> Json {
    let mut members = vec![
        member("budget_s", Json::secs(p.budget)),
        member("max_attempts", Json::count(p.max_attempts)),
        member("attempt_cap_s", Json::secs(p.attempt_cap)),
        member("min_wait_s", Json::secs(p.min_wait)),
        member("fallback_base_s", Json::secs(p.fallback_base)),
        member(
            "retry_statuses",
            Json::Array(p.retry_statuses.iter().map(Json::count).collect()),
        ),
    ];
    if !p.jitter.is_zero() {
        members.push(member("jitter_s", Json::secs(p.jitter)));
    }
    Json::Object(members)
}

fn last_response(last: &LastResponse) -> Json {
    Json::Object(vec![
        member("attempt", Json::count(last.attempt)),
        member("status", Json::count(last.status)),
        member("at_s", Json::secs(last.at)),
        member("retry_after", retry_after(&last.retry_after, last.delay)),
    ])
}

/// A `Retry-After`: the raw text, its kind, and the server's delay when it gave a usable one.
fn retry_after(header: &RetryAfter, delay: Option<Duration>) -> Json {
    Json::Object(vec![
        member("raw", Json::or_null(header.raw(), Json::text)),
        member("kind", Json::text(header.kind())),
        member("delay_s", Json::or_null(delay, Json::secs)),
    ])
}

/// One trace event: `event` and `at_s` first, then its own fields.
fn event(e: &Event) -> Json {
    let (name, at, fields) = match e {
        Event::Start {
            at,
            attempt,
            remaining,
        } => (
            "start",
            at,
            vec![
                member("attempt", Json::count(*attempt)),
                member("remaining_s", Json::secs(*remaining)),
            ],
        ),
        Event::Receipt {
            at,
            attempt,
            status,
            retry_after: header,
            delay,
        } => (
            "receipt",
            at,
            vec![
                member("attempt", Json::count(*attempt)),
                member("status", Json::count(*status)),
                member("retry_after", retry_after(header, *delay)),
            ],
        ),
        Event::Failure { at, attempt, error } => (
            "failure",
            at,
            vec![
                member("attempt", Json::count(*attempt)),
                member("error", Json::text(error.as_str())),
            ],
        ),
        Event::Wait {
            at,
            plan,
            remaining,
        } => (
            "wait",
            at,
            vec![
                member("after_attempt", Json::count(plan.after_attempt)),
                member("source", Json::text(plan.source.as_str())),
                member("delay_s", Json::secs(plan.delay)),
                member("wait_s", Json::secs(plan.wait)),
                member("jitter_s", Json::secs(plan.jitter)),
                member("until_s", Json::secs(plan.until)),
                member("remaining_s", Json::secs(*remaining)),
            ],
        ),
        Event::Timer { at, due } => ("timer", at, vec![member("due_s", Json::secs(*due))]),
        Event::Blocked { at, until } => {
            ("blocked", at, vec![member("until_s", Json::secs(*until))])
        }
        Event::Left { at } => ("left", at, Vec::new()),
        Event::Stop {
            at,
            outcome,
            remaining,
        } => (
            "stop",
            at,
            vec![
                member("outcome", Json::text(outcome.as_str())),
                member("remaining_s", Json::secs(*remaining)),
            ],
        ),
    };
    let mut members = vec![
        member("event", Json::text(name)),
        member("at_s", Json::secs(*at)),
    ];
    members.extend(fields);
    Json::Object(members)
}
