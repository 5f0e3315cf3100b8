//! Runs a scenario through the model, exactly as a driver would: the same [`Action`] calls, fed
//! with the scenario's scripted times instead of a clock.

use core::time::Duration;

use crate::action::{Action, Decision, ReceiptClock, Response, TransportError};
use crate::report::Report;
use crate::scenario::{Reply, Scenario, ScenarioError};
use crate::visible::push_u64;

/// Replays `scenario` and checks its `expect` figures. Fails only when the run needs more
/// responses than the scenario lists.
pub fn simulate(scenario: &Scenario) -> Result<Report, ScenarioError> {
    let action = run(scenario)?;
    let mut report = action.report();
    report.name = scenario.name.clone();
    if let Some(expect) = &scenario.expect {
        #[cfg(not(target_arch = "wasm32"))]
        let missed = mismatches(&report, expect);
        // In the browser the figures are compared on the object the JS API returns.
        #[cfg(target_arch = "wasm32")]
        let missed = crate::browser::mismatches(
            &crate::browser::report_value(&action, &report.name),
            expect,
        );
        report.expect_ok = Some(missed.is_empty());
        report.expect_mismatches = missed;
    }
    Ok(report)
}

/// Replays `scenario` to its end and returns the stopped action.
pub(crate) fn run(scenario: &Scenario) -> Result<Action, ScenarioError> {
    let (mut action, mut decision) = Action::start(scenario.policy).map_err(|e| ScenarioError {
        scenario: scenario.name.clone(),
        field: ["policy.", e.field()].concat(),
        message: e.message().into(),
    })?;
    let leaves = scenario.user_leaves_at;
    // Leaving at the same instant as a receipt or a timer wins (rule 12).
    let left_by = |t: Duration| leaves.filter(|l| *l <= t);
    let mut waits = 0usize;
    loop {
        decision = match decision {
            Decision::Stop(_) => break,
            Decision::Send { attempt, abort_at } => {
                let index = usize::try_from(attempt)
                    .unwrap_or(usize::MAX)
                    .saturating_sub(1);
                let Some(scripted) = scenario.responses.get(index) else {
                    let mut message = String::from("attempt ");
                    push_u64(&mut message, u64::from(attempt));
                    message.push_str(" needs a response, but only ");
                    push_u64(&mut message, scenario.responses.len() as u64);
                    message.push_str(" are listed");
                    return Err(ScenarioError {
                        scenario: scenario.name.clone(),
                        field: "responses".into(),
                        message,
                    });
                };
                let started = action.elapsed();
                let receipt = started.saturating_add(scripted.duration);
                if let Some(at) = left_by(receipt.min(abort_at)) {
                    action.on_leave(at)
                } else if receipt > abort_at {
                    // Only a scenario built in code can script this: the cap ends the attempt.
                    action.on_timer(abort_at)
                } else {
                    match &scripted.reply {
                        Reply::TransportError(word) => {
                            action.on_transport_error(receipt, TransportError::Failed(word.clone()))
                        }
                        Reply::Http { status, .. } => {
                            let retry_after = scripted.header("Retry-After");
                            let clock = scenario
                                .wall_clock_at_start
                                .map_or(ReceiptClock::Absent, |start| {
                                    ReceiptClock::Server(start.saturating_add(receipt))
                                });
                            action.on_response(
                                receipt,
                                Response {
                                    status: *status,
                                    retry_after: retry_after.as_deref(),
                                    clock,
                                },
                            )
                        }
                    }
                }
            }
            Decision::Wait { until } => {
                let late = scenario
                    .timer_late_by
                    .get(waits)
                    .copied()
                    .unwrap_or_default();
                waits = waits.saturating_add(1);
                let fires = until.saturating_add(late);
                match left_by(fires) {
                    Some(at) => action.on_leave(at),
                    None => action.on_timer(fires),
                }
            }
            // A send is always settled above, so a running attempt is never awaited here.
            Decision::Await { abort_at } => action.on_timer(abort_at),
        };
    }
    Ok(action)
}

/// Each expected figure that the report does not reproduce, as a sentence.
#[cfg(not(target_arch = "wasm32"))]
fn mismatches(report: &Report, expect: &crate::scenario::Expect) -> Vec<String> {
    use serde_json::Value;

    let actual = match serde_json::to_value(report) {
        Ok(Value::Object(map)) => map,
        _ => return vec!["the report could not be compared".into()],
    };
    let mut out = Vec::new();
    for (field, want) in expect {
        let got = if field == "last_status" {
            actual
                .get("last_response")
                .and_then(|r| r.get("status"))
                .cloned()
                .unwrap_or(Value::Null)
        } else {
            actual.get(field).cloned().unwrap_or(Value::Null)
        };
        if !same(want, &got) {
            out.push(format!("{field}: expected {want}, got {got}"));
        }
    }
    out
}

/// JSON equality where numbers compare by value (`14` equals `14.0`).
#[cfg(not(target_arch = "wasm32"))]
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
