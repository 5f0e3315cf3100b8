//! JavaScript values without serde: scenario and policy objects are read in place (the loader's
//! [`Node`] for `JsValue`), and reports are built as plain objects field by field, in the shape
//! `report::Report` serializes to natively. serde_json, serde's derives, serde-wasm-bindgen and
//! the float formatting their messages need cost the page more than the model itself.

use core::time::Duration;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::action::{Action, Event, LastResponse, RetryAfterReading};
use crate::scenario::{Kind, Node};

#[wasm_bindgen]
extern "C" {
    /// `String(value)`: a number as JavaScript prints it, a URL object's `href`.
    #[wasm_bindgen(js_name = String)]
    pub(crate) fn string_of(value: &JsValue) -> String;

    /// `Reflect.set(target, key, value)` on an object this module has just created, which
    /// cannot throw.
    #[wasm_bindgen(js_namespace = Reflect, js_name = set)]
    fn reflect_set(target: &Object, key: &str, value: &JsValue);

    /// `JSON.stringify(value)`.
    #[wasm_bindgen(js_namespace = JSON, js_name = stringify)]
    fn stringify(value: &JsValue) -> Option<String>;
}

/// A float as JavaScript prints it.
pub(crate) fn push_f64(out: &mut String, x: f64) {
    out.push_str(&string_of(&JsValue::from_f64(x)));
}

impl Node for JsValue {
    fn kind(&self) -> Kind {
        if self.is_null() || self.is_undefined() {
            Kind::Null
        } else if self.as_bool().is_some() {
            Kind::Bool
        } else if self.as_f64().is_some() {
            Kind::Number
        } else if self.is_string() {
            Kind::String
        } else if Array::is_array(self) {
            Kind::Array
        } else if self.is_object() {
            Kind::Object
        } else if self.is_function() {
            Kind::Other("a function")
        } else if self.is_bigint() {
            Kind::Other("a bigint")
        } else {
            Kind::Other("a symbol")
        }
    }

    fn member(&self, key: &str) -> Option<Self> {
        if !self.is_object() {
            return None;
        }
        // A throwing getter reads as absent; `undefined` is absent too.
        Reflect::get(self, &JsValue::from_str(key))
            .ok()
            .filter(|v| !v.is_undefined())
    }

    fn keys(&self) -> Vec<String> {
        if !self.is_object() {
            return Vec::new();
        }
        // Sorted, as serde_json orders an object's keys natively.
        Object::keys(self.unchecked_ref::<Object>())
            .sort()
            .iter()
            .filter_map(|k| k.as_string())
            .collect()
    }

    fn items(&self) -> Vec<Self> {
        if !Array::is_array(self) {
            return Vec::new();
        }
        let list = self.unchecked_ref::<Array>();
        (0..list.length()).map(|i| list.get(i)).collect()
    }

    fn string(&self) -> Option<String> {
        self.as_string()
    }

    fn boolean(&self) -> Option<bool> {
        self.as_bool()
    }

    fn float(&self) -> Option<f64> {
        self.as_f64()
    }

    fn whole(&self) -> Option<u64> {
        // A JavaScript number is a float; the loader reads its whole value from that.
        None
    }

    fn push_number(&self, out: &mut String) {
        if let Some(x) = self.as_f64() {
            push_f64(out, x);
        }
    }

    fn to_json(&self) -> JsValue {
        self.clone()
    }

    fn to_expect(&self) -> JsValue {
        self.clone()
    }
}

/// Sets a property of an object this module (or the API) has just created.
pub(crate) fn set(object: &Object, key: &str, value: &JsValue) {
    reflect_set(object, key, value);
}

fn secs(value: Duration) -> JsValue {
    JsValue::from_f64(value.as_secs_f64())
}

fn number(value: u32) -> JsValue {
    JsValue::from_f64(f64::from(value))
}

fn text(value: &str) -> JsValue {
    JsValue::from_str(value)
}

fn texts(lines: &[String]) -> JsValue {
    lines
        .iter()
        .map(|line| text(line))
        .collect::<Array>()
        .into()
}

fn outcome(action: &Action) -> JsValue {
    action
        .stopped()
        .map_or(JsValue::NULL, |(_, cause)| text(cause.outcome().as_str()))
}

fn retry_after(reading: &RetryAfterReading) -> JsValue {
    let o = Object::new();
    set(&o, "raw", &reading.header.raw().map_or(JsValue::NULL, text));
    set(&o, "kind", &text(reading.kind.as_str()));
    set(&o, "delay_s", &reading.delay.map_or(JsValue::NULL, secs));
    o.into()
}

fn last_response(last: &LastResponse) -> JsValue {
    let o = Object::new();
    set(&o, "attempt", &number(last.attempt));
    set(&o, "status", &number(u32::from(last.status)));
    set(&o, "at_s", &secs(last.at));
    set(&o, "retry_after", &retry_after(&last.retry_after));
    o.into()
}

/// One trace event, in the replay output's shape (`report::EventReport`): `event` first, then
/// its fields.
fn event(e: &Event) -> JsValue {
    let o = Object::new();
    let (name, at) = match e {
        Event::Start { at, .. } => ("start", at),
        Event::Receipt { at, .. } => ("receipt", at),
        Event::Failure { at, .. } => ("failure", at),
        Event::Wait { at, .. } => ("wait", at),
        Event::Timer { at, .. } => ("timer", at),
        Event::Left { at } => ("left", at),
        Event::Stop { at, .. } => ("stop", at),
    };
    set(&o, "event", &text(name));
    set(&o, "at_s", &secs(*at));
    match e {
        Event::Start {
            attempt, remaining, ..
        } => {
            set(&o, "attempt", &number(*attempt));
            set(&o, "remaining_s", &secs(*remaining));
        }
        Event::Receipt {
            attempt,
            status,
            retry_after: reading,
            ..
        } => {
            set(&o, "attempt", &number(*attempt));
            set(&o, "status", &number(u32::from(*status)));
            set(&o, "retry_after", &retry_after(reading));
        }
        Event::Failure { attempt, error, .. } => {
            set(&o, "attempt", &number(*attempt));
            set(&o, "error", &text(error.as_str()));
        }
        Event::Wait {
            plan, remaining, ..
        } => {
            set(&o, "after_attempt", &number(plan.after_attempt));
            set(&o, "source", &text(plan.source.as_str()));
            set(&o, "delay_s", &secs(plan.delay));
            set(&o, "wait_s", &secs(plan.wait));
            set(&o, "until_s", &secs(plan.until));
            set(&o, "remaining_s", &secs(*remaining));
        }
        Event::Timer { due, .. } => set(&o, "due_s", &secs(*due)),
        Event::Left { .. } => {}
        Event::Stop {
            outcome, remaining, ..
        } => {
            set(&o, "outcome", &text(outcome.as_str()));
            set(&o, "remaining_s", &secs(*remaining));
        }
    }
    o.into()
}

fn events(list: &[Event]) -> JsValue {
    list.iter().map(event).collect::<Array>().into()
}

/// An action's record as the plain object the JS API returns: the replay output's shape
/// (`report::Report`), built straight from the action.
pub(crate) fn report(action: &Action, name: &str) -> Object {
    let o = Object::new();
    set(&o, "name", &text(name));
    let p = action.policy();
    let policy = Object::new();
    set(&policy, "budget_s", &secs(p.budget));
    set(&policy, "max_attempts", &number(p.max_attempts));
    set(&policy, "attempt_cap_s", &secs(p.attempt_cap));
    set(&policy, "min_wait_s", &secs(p.min_wait));
    set(&policy, "fallback_base_s", &secs(p.fallback_base));
    let statuses: Array = p
        .retry_statuses
        .iter()
        .map(|s| number(u32::from(s)))
        .collect();
    set(&policy, "retry_statuses", &statuses);
    set(&o, "policy", &policy);
    set(&o, "outcome", &outcome(action));
    set(&o, "elapsed_s", &secs(action.elapsed()));
    set(&o, "attempts", &number(action.attempts()));
    set(&o, "request_s", &secs(action.request_time()));
    set(&o, "wait_s", &secs(action.wait_time()));
    let starts: Array = action.attempt_starts().iter().map(|s| secs(*s)).collect();
    set(&o, "attempt_starts_s", &starts);
    set(
        &o,
        "last_response",
        &action.last_response().map_or(JsValue::NULL, last_response),
    );
    set(&o, "events", &events(action.events()));
    set(&o, "visible", &texts(&action.visible()));
    o
}

/// Adds a scenario's `expect_ok` and, when some figures were missed, `expect_mismatches`.
pub(crate) fn set_expect(report: &Object, missed: &[String]) {
    set(report, "expect_ok", &JsValue::from_bool(missed.is_empty()));
    if !missed.is_empty() {
        set(report, "expect_mismatches", &texts(missed));
    }
}

/// What `onUpdate` receives: the visible state, the new trace events, and the outcome so far.
pub(crate) fn update(action: &Action, new_events: &[Event]) -> JsValue {
    let o = Object::new();
    set(&o, "visible", &texts(&action.visible()));
    set(&o, "events", &events(new_events));
    set(&o, "outcome", &outcome(action));
    o.into()
}

/// Each expected figure that the report does not reproduce, as a sentence
/// (`field: expected WANT, got GOT`, both as JSON).
pub(crate) fn mismatches(actual: &JsValue, expect: &JsValue) -> Vec<String> {
    let mut out = Vec::new();
    for field in expect.keys() {
        let want = expect.member(&field).unwrap_or(JsValue::NULL);
        let got = if field == "last_status" {
            actual
                .member("last_response")
                .and_then(|last| last.member("status"))
        } else {
            actual.member(&field)
        }
        .unwrap_or(JsValue::NULL);
        if !same(&want, &got) {
            let mut line = field;
            line.push_str(": expected ");
            line.push_str(&stringify(&want).unwrap_or_default());
            line.push_str(", got ");
            line.push_str(&stringify(&got).unwrap_or_default());
            out.push(line);
        }
    }
    out
}

/// JSON equality where numbers compare by value, within the same tolerance as natively.
fn same(a: &JsValue, b: &JsValue) -> bool {
    match (a.kind(), b.kind()) {
        (Kind::Null, Kind::Null) => true,
        (Kind::Number, Kind::Number) => {
            let (x, y) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0)
        }
        (Kind::Array, Kind::Array) => {
            let (x, y) = (a.items(), b.items());
            x.len() == y.len() && x.iter().zip(&y).all(|(x, y)| same(x, y))
        }
        (Kind::Object, Kind::Object) => {
            let keys = a.keys();
            keys.len() == b.keys().len()
                && keys.iter().all(|k| {
                    let v = a.member(k).unwrap_or(JsValue::NULL);
                    b.member(k).is_some_and(|w| same(&v, &w))
                })
        }
        _ => a == b,
    }
}
