//! `simulateFleet` in headless Chrome and Firefox: its figures equal the runs worked out by
//! hand from the rules (`fleet/tests/hand_worked/cases.rs`, which the native library is held
//! to as well), read from the plain objects it returns; bad options throw an `Error` that
//! names the option.
#![cfg(all(target_arch = "wasm32", feature = "full"))]

#[path = "../../fleet/tests/hand_worked/cases.rs"]
mod cases;

use cases::{Expect, Given, CASES, SHARED};
use js_sys::{Array, Object, Reflect, JSON};
use retry_budget::simulate_fleet;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A JSON value as the JavaScript value it describes.
fn js(value: &Value) -> JsValue {
    JSON::parse(&value.to_string()).expect("JSON")
}

/// The message of the `Error` that `simulateFleet(options)` throws.
fn thrown(options: Value) -> String {
    let error = simulate_fleet(js(&options)).expect_err("rejected");
    let error: JsValue = error.into();
    Reflect::get(&error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default()
}

/// The options object of a case, built as a page would.
fn options(given: &[Given]) -> JsValue {
    let object = Object::new();
    for g in SHARED.iter().chain(given) {
        let (key, value) = match *g {
            Given::Number(key, n) => (key, JsValue::from(n)),
            Given::Word(key, w) => (key, JsValue::from(w)),
        };
        Reflect::set(&object, &key.into(), &value).expect("a plain object");
    }
    object.into()
}

/// A figure of a plain object by its path: `time_to_data_s.p50`.
fn figure(object: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(object.clone(), |o, key| {
        Reflect::get(&o, &key.into()).expect("a property")
    })
}

/// What the report of a policy must hold: each figure's path and value, `None` for `null`
/// (the times to data, where no action had data).
fn expected(e: &Expect) -> Vec<(&'static str, Option<f64>)> {
    let s = |ms: u64| ms as f64 / 1000.0;
    // Rounded half up to six places, as the report writes it.
    let share = ((e.refused * 2_000_000 + e.requests) / (e.requests * 2).max(1)) as f64 / 1e6;
    let figures = [
        ("requests", e.requests as f64),
        ("share_429", share),
        ("peak_per_s", e.peak_per_s as f64),
        ("with_data", e.with_data as f64),
        ("longest_wait_for_outcome_s", s(e.longest_wait_ms)),
        ("requests_per_action.max", f64::from(e.most_per_action)),
        ("requests_after_outcome", e.after_outcome as f64),
        ("early_sends", 0.0),
    ];
    let times = if e.with_data == 0 {
        vec![("time_to_data_s", None)]
    } else {
        vec![
            ("time_to_data_s.p50", Some(s(e.to_data_ms[0]))),
            ("time_to_data_s.p95", Some(s(e.to_data_ms[1]))),
            ("time_to_data_s.max", Some(s(e.to_data_ms[2]))),
        ]
    };
    (figures.into_iter().map(|(path, v)| (path, Some(v))))
        .chain(times)
        .collect()
}

#[wasm_bindgen_test]
fn the_figures_are_the_hand_worked_ones() {
    for case in &CASES {
        let result = simulate_fleet(options(case.options)).expect("a run");
        let policies: Array = figure(&result, "policies").dyn_into().expect("an array");
        for (name, expect) in case.expect {
            let policy = policies
                .iter()
                .find(|p| figure(p, "policy").as_string().as_deref() == Some(name))
                .unwrap_or_else(|| panic!("{}: no policy {name}", case.name));
            for (path, value) in expected(expect) {
                let got = figure(&policy, path);
                assert_eq!(got.as_f64(), value, "{}: {name}: {path}", case.name);
                if value.is_none() {
                    assert!(got.is_null(), "{}: {name}: {path}: {got:?}", case.name);
                }
            }
        }
    }
}

#[wasm_bindgen_test]
fn the_report_is_plain_objects_and_numbers() {
    let result = simulate_fleet(options(CASES[0].options)).expect("a run");
    // A plain object (not a Map), as JSON.parse would give.
    let plain = Object::get_prototype_of(&Object::new());
    assert_eq!(
        JsValue::from(Object::get_prototype_of(&result)),
        JsValue::from(plain)
    );
    let series = figure(&figure(&result, "policies"), "0");
    let rates: Array = figure(&series, "requests_per_s")
        .dyn_into()
        .expect("an array");
    assert!(rates.iter().all(|r| r.as_f64().is_some()));
    assert_eq!(figure(&result, "bin_s").as_f64(), Some(0.1));
}

#[wasm_bindgen_test]
fn bad_options_are_named() {
    let cases = [
        (
            serde_json::json!({ "pages": 0 }),
            "options.pages must be a whole number from 1",
        ),
        (
            serde_json::json!({ "pages": 2.5 }),
            "options.pages must be a whole number",
        ),
        (
            serde_json::json!({ "rate": "fast" }),
            "options.rate must be a number",
        ),
        (
            serde_json::json!({ "limiter": "leaky" }),
            "options.limiter must be bucket or window",
        ),
        (
            serde_json::json!({ "retryAfter": 3 }),
            "options.retryAfter must be a string",
        ),
        (
            serde_json::json!({ "tail": -1 }),
            "options.tail must be a number from 0 to 100",
        ),
        (
            serde_json::json!({ "serve": 0 }),
            "options.serve must be a whole number from 1",
        ),
        (
            serde_json::json!({ "clients": 10 }),
            "unknown option \"clients\"",
        ),
    ];
    for (options, expected) in cases {
        let message = thrown(options.clone());
        assert!(message.starts_with("simulateFleet: "), "{message}");
        assert!(message.contains(expected), "{options}: {message}");
    }
    let not_object = simulate_fleet(JsValue::from(7)).expect_err("rejected");
    let message = Reflect::get(&not_object.into(), &"message".into()).expect("message");
    assert_eq!(
        message.as_string().as_deref(),
        Some("simulateFleet: options must be an object")
    );
    // A proxy whose keys throw when listed, and a revoked one: refused, never thrown through
    // the module, which still runs afterwards.
    let boom = Closure::<dyn Fn() -> Result<JsValue, JsValue>>::new(|| Err("boom".into()));
    let handler = Object::new();
    Reflect::set(&handler, &"ownKeys".into(), boom.as_ref()).expect("a plain object");
    let throwing = js_sys::Proxy::new(&Object::new(), &handler);
    let revocable = js_sys::Proxy::revocable(&Object::new(), &Object::new());
    let revoke: js_sys::Function = Reflect::get(&revocable, &"revoke".into())
        .expect("revoke")
        .into();
    revoke.call0(&JsValue::NULL).expect("revoked");
    let revoked = Reflect::get(&revocable, &"proxy".into()).expect("proxy");
    for _ in 0..300 {
        for proxy in [JsValue::from(throwing.clone()), revoked.clone()] {
            let refused = simulate_fleet(proxy).expect_err("rejected");
            let message = Reflect::get(&refused.into(), &"message".into()).expect("message");
            assert_eq!(
                message.as_string().as_deref(),
                Some("simulateFleet: the options cannot be listed: listing their keys threw")
            );
        }
    }
    assert!(simulate_fleet(options(&[])).is_ok());
}
