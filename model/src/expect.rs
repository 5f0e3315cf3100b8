//! A scenario's `expect`: the figures its run must reproduce, compared on the report's
//! serialization, so that natively and in the browser the same figure means the same thing.

use serde_json::{Map, Value};

use crate::report::Report;

/// Each expected figure that `report` does not reproduce, as a sentence:
/// `field: expected WANT, got GOT`, both as compact JSON. `expect` maps output field names to
/// values (and `last_status` to `last_response.status`); numbers compare by value, so `14`
/// and `14.0` are the same figure.
pub fn mismatches(report: &Report, expect: &Map<String, Value>) -> Vec<String> {
    let actual = serde_json::to_value(report).unwrap_or(Value::Null);
    let mut out = Vec::new();
    for (field, want) in expect {
        let got = if field == "last_status" {
            actual.pointer("/last_response/status")
        } else {
            actual.get(field)
        }
        .unwrap_or(&Value::Null);
        if !same(want, got) {
            out.push(format!("{field}: expected {want}, got {got}"));
        }
    }
    out
}

/// Whether two JSON values are the same figure: numbers by value, the rest structurally.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64() && x.as_f64().is_some(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::scenario::parse_scenario;
    use crate::simulate::simulate;

    /// Every field of the report may be expected, `policy` and `cause` included: a stop's
    /// cause is held to its figures like the outcome.
    #[test]
    fn the_policy_and_the_cause_are_figures_too() {
        let scenario = |cause: serde_json::Value| {
            json!({
                "name": "s",
                "policy": { "max_attempts": 1 },
                "responses": [{ "duration_s": 1, "status": 429, "headers": { "Retry-After": "5" } }],
                "expect": {
                    "policy": { "budget_s": 20, "max_attempts": 1, "attempt_cap_s": 4,
                                "min_wait_s": 1, "fallback_base_s": 2, "retry_statuses": [429] },
                    "cause": cause
                }
            })
        };
        let run = |cause| {
            let scenario = parse_scenario("s", &scenario(cause)).expect("accepted");
            simulate(&scenario).expect("runs")
        };
        let met = run(json!({ "kind": "attempts_exhausted", "max_attempts": 1 }));
        assert_eq!(met.expect_ok, Some(true), "{:?}", met.expect_mismatches);
        let missed = run(json!({ "kind": "not_retryable", "status": 429 }));
        assert_eq!(missed.expect_ok, Some(false));
        assert!(missed.expect_mismatches[0].starts_with("cause: expected"));
        // An object is the same figure only whole: a cause that leaves out a field is missed.
        let partial = run(json!({ "kind": "attempts_exhausted" }));
        assert_eq!(partial.expect_ok, Some(false));
    }

    /// A list is the same figure only whole and in order: one entry short, one too many, an
    /// empty list or the entries swapped is missed, whichever field holds it (`events` too).
    #[test]
    fn a_list_is_a_figure_only_whole() {
        // A 429 asking 2 s, then a 200: attempts at 0 and 3, with seven events.
        let run = |field: &str, want: serde_json::Value| {
            let scenario = json!({
                "name": "s",
                "responses": [
                    { "duration_s": 1, "status": 429, "headers": { "Retry-After": "2" } },
                    { "duration_s": 1, "status": 200, "body": [] }
                ],
                "expect": { field: want }
            });
            let scenario = parse_scenario("s", &scenario).expect("accepted");
            simulate(&scenario).expect("runs")
        };
        let met = run("attempt_starts_s", json!([0, 3]));
        assert_eq!(met.expect_ok, Some(true), "{:?}", met.expect_mismatches);
        for wrong in [json!([0]), json!([0, 3, 5]), json!([]), json!([3, 0])] {
            let missed = run("attempt_starts_s", wrong.clone());
            assert_eq!(
                missed.expect_ok,
                Some(false),
                "{wrong} was taken for [0, 3]"
            );
        }
        let events = serde_json::to_value(&met.report.events).expect("events serialize");
        let all = events.as_array().expect("a list").clone();
        assert_eq!(all.len(), 7, "{events}");
        assert_eq!(run("events", events).expect_ok, Some(true));
        let short = serde_json::Value::Array(all[..6].to_vec());
        assert_eq!(
            run("events", short).expect_ok,
            Some(false),
            "an event left out"
        );
        assert_eq!(run("events", json!([])).expect_ok, Some(false), "no events");
        let visible = serde_json::to_value(&met.report.visible).expect("lines serialize");
        assert_eq!(run("visible", visible).expect_ok, Some(true));
        assert_eq!(run("visible", json!([])).expect_ok, Some(false), "no lines");
    }
}
