//! `simulateFleet` in headless Chrome and Firefox: bad options throw an `Error` that names the
//! option.
#![cfg(all(target_arch = "wasm32", feature = "full"))]

use js_sys::JSON;
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
    js_sys::Reflect::get(&error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default()
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
    let message = js_sys::Reflect::get(&not_object.into(), &"message".into()).expect("message");
    assert_eq!(
        message.as_string().as_deref(),
        Some("simulateFleet: options must be an object")
    );
}
