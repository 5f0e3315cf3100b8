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
