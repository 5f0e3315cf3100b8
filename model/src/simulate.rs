//! Runs a scenario through the model, exactly as a driver would: the same [`Action`] calls, fed
//! with the scenario's scripted times instead of a clock.
//!
//! Origin blocks are delivered at their `at_s`, in time order (the file's order among equal
//! times), with the ties of `docs/rules.md` (rules 12, 17 and 18): the blocks at 0 are known at the
//! start; a block at a receipt arrives before the response; a block at the same instant as a
//! timer is taken first; and leaving at the same instant as a block wins.

use core::time::Duration;

use serde::Serialize;

use crate::action::{Action, Decision, ReceiptClock, Response, TransportError};
use crate::expect::mismatches;
use crate::report::Report;
use crate::scenario::{OriginBlock, Reply, Scenario, ScenarioError, ScriptedResponse};
use crate::steps::Step;

/// One scenario's entry in the replay output: its name, its report, and whether the run met
/// the scenario's `expect` figures (`docs/rules.md`, "Replay output").
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    /// The scenario's name.
    pub name: String,
    /// What the run did.
    #[serde(flatten)]
    pub report: Report,
    /// The run as the step table's rows.
    pub steps: Vec<Step>,
    /// Whether every expected figure was met; present only when the scenario had `expect`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect_ok: Option<bool>,
    /// The figures that were missed, one sentence each; present only when one was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expect_mismatches: Vec<String>,
}

/// Replays `scenario` and checks its `expect` figures. Fails only when the run needs more
/// responses than the scenario lists.
pub fn simulate(scenario: &Scenario) -> Result<Replay, ScenarioError> {
    let report = run(scenario)?.into_report();
    let missed = scenario
        .expect
        .as_ref()
        .map(|expect| mismatches(&report, expect));
    Ok(Replay {
        name: scenario.name.clone(),
        steps: report.steps(),
        report,
        expect_ok: missed.as_ref().map(Vec::is_empty),
        expect_mismatches: missed.unwrap_or_default(),
    })
}

/// Replays `scenario` to its end and returns the stopped action.
pub fn run(scenario: &Scenario) -> Result<Action, ScenarioError> {
    // Blocks at the same instant arrive in the file's order. (An unstable sort on the index as
    // well costs the page far less code than a stable one.)
    let mut order: Vec<(Duration, usize)> = (scenario.origin_blocks.iter().map(|b| b.at))
        .zip(0..)
        .collect();
    order.sort_unstable();
    let blocks: Vec<_> = order
        .into_iter()
        .map(|(_, i)| scenario.origin_blocks[i])
        .collect();
    // The blocks at 0 are known at the press.
    let known_at_start: Vec<Duration> = blocks
        .iter()
        .take_while(|b| b.at.is_zero())
        .map(|b| b.until)
        .collect();
    let (action, mut decision) =
        Action::start_on_origin(scenario.policy, &known_at_start, draw(scenario, 0)).map_err(
            |e| ScenarioError {
                scenario: scenario.name.clone(),
                field: ["policy.", e.field()].concat(),
                message: e.message().into(),
                whole_file: false,
            },
        )?;
    // A user who leaves at the press while the origin is blocked (the first decision is not a
    // send) leaves before anything is sent: leaving wins over the block's wait or stop at the
    // same instant (rules 14 and 17). Without a block, attempt 1 starts at 0 and is abandoned
    // then (rule 2).
    let sends_first = matches!(decision, Decision::Send { .. });
    if scenario.user_leaves_at == Some(Duration::ZERO) && !sends_first {
        return Ok(Action::abandoned(scenario.policy));
    }
    let mut script = Script {
        scenario,
        action,
        waits: 0,
        next_block: known_at_start.len(),
        blocks,
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

/// The jitter draw for wait `k`: missing entries are 0.
fn draw(scenario: &Scenario, k: usize) -> f64 {
    scenario.jitter_draws.get(k).copied().unwrap_or(0.0)
}

/// A scenario being played: the action, how many waits it has begun, and the origin blocks in
/// time order with the next one still to arrive.
struct Script<'a> {
    scenario: &'a Scenario,
    action: Action,
    waits: usize,
    blocks: Vec<OriginBlock>,
    next_block: usize,
}

impl Script<'_> {
    /// The next block to arrive, if it arrives by `t` and before the user leaves (leaving at
    /// the same instant as a block wins).
    fn block_by(&self, t: Duration) -> Option<OriginBlock> {
        let block = *self.blocks.get(self.next_block)?;
        (block.at <= t && self.left_by(block.at).is_none()).then_some(block)
    }

    /// Hands the action the next block: it has arrived.
    fn deliver(&mut self, block: OriginBlock) -> Decision {
        self.next_block = self.next_block.saturating_add(1);
        self.action.on_block(block.at, block.until)
    }

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
        // Blocks that arrive during the request, or at its receipt, count at the receipt.
        while let Some(block) = self.block_by(receipt.min(abort_at)) {
            self.deliver(block);
        }
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
                let ratelimit = scripted.header("RateLimit");
                let clock = self
                    .scenario
                    .wall_clock_at_start
                    .map_or(ReceiptClock::Absent, |start| {
                        ReceiptClock::Server(start.saturating_add(receipt))
                    });
                let response = Response {
                    status: *status,
                    retry_after: retry_after.as_deref(),
                    ratelimit: ratelimit.as_deref(),
                    clock,
                };
                // Should a wait begin here, it is the next one: its draw.
                let draw = draw(self.scenario, self.waits);
                self.action.on_response_drawn(receipt, response, draw)
            }
        }
    }

    /// Waits until `until`, made late by the scenario's `timer_late_by_s`, unless the user
    /// leaves first. Blocks that arrive by the time the timer fires are taken first; one that
    /// moves the start moves the timer with it (`w = planned + late`), one that cannot fit
    /// stops the action.
    fn wait(&mut self, mut until: Duration) -> Decision {
        let late = self
            .scenario
            .timer_late_by
            .get(self.waits)
            .copied()
            .unwrap_or_default();
        self.waits = self.waits.saturating_add(1);
        loop {
            let fires = until.saturating_add(late);
            if let Some(block) = self.block_by(fires) {
                match self.deliver(block) {
                    Decision::Wait { until: planned } => until = planned,
                    other => return other,
                }
                continue;
            }
            return match self.left_by(fires) {
                Some(at) => self.action.on_leave(at),
                None => self.action.on_timer(fires),
            };
        }
    }

    fn out_of_responses(&self, attempt: u32) -> ScenarioError {
        let listed = self.scenario.responses.len();
        ScenarioError {
            scenario: self.scenario.name.clone(),
            field: "responses".into(),
            message: format!("attempt {attempt} needs a response, but only {listed} are listed"),
            whole_file: false,
        }
    }
}
