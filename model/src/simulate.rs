//! Runs a scenario through the model, exactly as a driver would: the same [`Action`] calls, fed
//! with the scenario's scripted times instead of a clock.

use core::time::Duration;

use crate::action::{Action, Decision, ReceiptClock, Response, TransportError};
use crate::json::push_u64;
use crate::report::Report;
use crate::scenario::{Reply, Scenario, ScenarioError, ScriptedResponse};

/// Replays `scenario` and checks its `expect` figures. Fails only when the run needs more
/// responses than the scenario lists.
pub fn simulate(scenario: &Scenario) -> Result<Report, ScenarioError> {
    let mut report = run(scenario)?.into_report(&scenario.name);
    if let Some(expect) = &scenario.expect {
        report.check(expect);
    }
    Ok(report)
}

/// Replays `scenario` to its end and returns the stopped action.
pub fn run(scenario: &Scenario) -> Result<Action, ScenarioError> {
    let (action, mut decision) = Action::start(scenario.policy).map_err(|e| ScenarioError {
        scenario: scenario.name.clone(),
        field: ["policy.", e.field()].concat(),
        message: e.message().into(),
    })?;
    let mut script = Script {
        scenario,
        action,
        waits: 0,
    };
    loop {
        decision = match decision {
            Decision::Stop(_) => return Ok(script.action),
            Decision::Send { attempt, abort_at } => script.attempt(attempt, abort_at)?,
            Decision::Wait { until } => script.wait(until),
            // A send is always settled at once, so a running attempt is never awaited here.
            Decision::Await { abort_at } => script.action.on_timer(abort_at),
        };
    }
}

/// A scenario being played: the action, and how many waits it has begun.
struct Script<'a> {
    scenario: &'a Scenario,
    action: Action,
    waits: usize,
}

impl Script<'_> {
    /// The user's departure, if it comes by elapsed `t`. Leaving at the same instant as a
    /// receipt or a timer wins (rule 12).
    fn left_by(&self, t: Duration) -> Option<Duration> {
        self.scenario.user_leaves_at.filter(|l| *l <= t)
    }

    /// Plays attempt `attempt`: its scripted response, unless the user leaves first or the cap
    /// ends it.
    fn attempt(&mut self, attempt: u32, abort_at: Duration) -> Result<Decision, ScenarioError> {
        let index = usize::try_from(attempt)
            .unwrap_or(usize::MAX)
            .saturating_sub(1);
        let Some(scripted) = self.scenario.responses.get(index) else {
            return Err(self.out_of_responses(attempt));
        };
        let receipt = self.action.elapsed().saturating_add(scripted.duration);
        Ok(if let Some(at) = self.left_by(receipt.min(abort_at)) {
            self.action.on_leave(at)
        } else if receipt > abort_at {
            // Only a scenario built in code can script this: the cap ends the attempt.
            self.action.on_timer(abort_at)
        } else {
            self.receive(scripted, receipt)
        })
    }

    /// Hands the action the scripted reply, received at elapsed `receipt`.
    fn receive(&mut self, scripted: &ScriptedResponse, receipt: Duration) -> Decision {
        match &scripted.reply {
            Reply::TransportError(word) => self
                .action
                .on_transport_error(receipt, TransportError::Failed(word.clone())),
            Reply::Http { status, .. } => {
                let retry_after = scripted.header("Retry-After");
                let clock = self
                    .scenario
                    .wall_clock_at_start
                    .map_or(ReceiptClock::Absent, |start| {
                        ReceiptClock::Server(start.saturating_add(receipt))
                    });
                let response = Response {
                    status: *status,
                    retry_after: retry_after.as_deref(),
                    clock,
                };
                self.action.on_response(receipt, response)
            }
        }
    }

    /// Waits until `until`, made late by the scenario's `timer_late_by_s`, unless the user
    /// leaves first.
    fn wait(&mut self, until: Duration) -> Decision {
        let late = self
            .scenario
            .timer_late_by
            .get(self.waits)
            .copied()
            .unwrap_or_default();
        self.waits = self.waits.saturating_add(1);
        let fires = until.saturating_add(late);
        match self.left_by(fires) {
            Some(at) => self.action.on_leave(at),
            None => self.action.on_timer(fires),
        }
    }

    fn out_of_responses(&self, attempt: u32) -> ScenarioError {
        let mut message = String::from("attempt ");
        push_u64(&mut message, u64::from(attempt));
        message.push_str(" needs a response, but only ");
        push_u64(&mut message, self.scenario.responses.len() as u64);
        message.push_str(" are listed");
        ScenarioError {
            scenario: self.scenario.name.clone(),
            field: "responses".into(),
            message,
        }
    }
}
