//! A scenario's `expect`: the figures its run must reproduce, compared on the report's JSON
//! view, so that natively and in the browser the same figure means the same thing.

use crate::json::Json;
use crate::prelude::*;
use crate::report::Report;

impl Report {
    /// Compares the report with `expect` (an object of output field names to values, and
    /// `last_status` for `last_response.status`) and records the result in `expect_ok` and
    /// `expect_mismatches`.
    pub fn check(&mut self, expect: &Json) {
        let missed = mismatches(&self.to_json(), expect);
        self.expect_ok = Some(missed.is_empty());
        self.expect_mismatches = missed;
    }
}

/// Each expected figure that `actual` (a report's view) does not reproduce, as a sentence:
/// `field: expected WANT, got GOT`, both as compact JSON. Numbers compare by value.
pub fn mismatches(actual: &Json, expect: &Json) -> Vec<String> {
    let Json::Object(fields) = expect else {
        return vec!["expect is not an object".into()];
    };
    let mut out = Vec::new();
    for (field, want) in fields {
        let got = if field == "last_status" {
            actual.get("last_response").and_then(|r| r.get("status"))
        } else {
            actual.get(field)
        }
        .unwrap_or(&Json::Null);
        if !want.same(got) {
            let mut line = field.to_string();
            line.push_str(": expected ");
            want.write(&mut line);
            line.push_str(", got ");
            got.write(&mut line);
            out.push(line);
        }
    }
    out
}
