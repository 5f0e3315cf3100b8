//! JavaScript values: what the module reads of the objects it is given, and what it hands back.
//! The objects a caller gives may be hostile (a revoked `Proxy`, a getter that throws): every
//! call on them goes through a binding that catches what they throw, since an exception that
//! crossed the module's frames would leave it broken for every later call.
//! Everything that goes out (reports, updates, the default policy, the rate limits) is a serde
//! value handed over by serde-wasm-bindgen in its JSON-compatible mode: plain objects, arrays
//! and `null`, never `Map` or `undefined`.

use retry_budget_model::action::Outcome;
use retry_budget_model::{Action, Event, Report};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `globalThis`: a window, a worker's global scope, or Node's.
    #[wasm_bindgen(thread_local_v2, js_name = globalThis)]
    static GLOBAL_THIS: JsValue;

    /// `String(value)`: a number as JavaScript prints it, a URL object's `href`.
    #[wasm_bindgen(js_name = String)]
    pub(crate) fn string_of(value: &JsValue) -> String;

    /// `Object.keys(value)`, which a `Proxy` may make throw.
    #[wasm_bindgen(js_namespace = Object, js_name = keys, catch)]
    pub(crate) fn keys_of(value: &JsValue) -> Result<js_sys::Array, JsValue>;

    /// `Reflect.set(target, key, value)` on an object this module has just created, which
    /// cannot throw.
    #[wasm_bindgen(js_namespace = Reflect, js_name = set)]
    fn reflect_set(target: &JsValue, key: &str, value: &JsValue);

    /// `globalThis.crypto.getRandomValues(array)`.
    #[wasm_bindgen(js_namespace = ["globalThis", "crypto"], js_name = getRandomValues, catch)]
    fn get_random_values(array: &js_sys::Uint32Array) -> Result<JsValue, JsValue>;

    /// `Math.random()`.
    #[wasm_bindgen(js_namespace = Math, js_name = random)]
    fn math_random() -> f64;

    /// A `URL`, with just its origin.
    #[wasm_bindgen(js_name = URL)]
    type Url;

    #[wasm_bindgen(constructor, js_class = "URL", catch)]
    fn new(url: &str, base: &JsValue) -> Result<Url, JsValue>;

    #[wasm_bindgen(method, getter)]
    fn origin(this: &Url) -> String;

    /// `JSON.parse(text)` of text from elsewhere.
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    pub(crate) fn parse_json(text: &JsValue) -> Result<JsValue, JsValue>;

    /// `Array.isArray(value)`, which a revoked `Proxy` makes throw.
    #[wasm_bindgen(js_namespace = Array, js_name = isArray, catch)]
    pub(crate) fn is_array(value: &JsValue) -> Result<bool, JsValue>;

    /// `Promise.resolve(value)`, which a promise whose `constructor` getter throws makes throw.
    #[wasm_bindgen(js_namespace = Promise, js_name = resolve, catch)]
    pub(crate) fn promise_resolve(value: &JsValue) -> Result<js_sys::Promise, JsValue>;

    /// `reportError(error)`, where there is one (browsers and workers, not Node).
    #[wasm_bindgen(js_name = reportError, catch)]
    fn report_error(error: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(error: &JsValue);
}

/// Reports an error a caller's callback threw, as the platform reports one a listener throws
/// (`reportError`: the console and the global `error` event), or on the console where there is
/// no `reportError` (Node): it is neither lost nor allowed to stop the action.
pub(crate) fn report(error: &JsValue) {
    if report_error(error).is_err() {
        console_error(error);
    }
}

/// The global object.
pub(crate) fn global() -> JsValue {
    GLOBAL_THIS.with(JsValue::clone)
}

/// `value[key]` of an object; `None` for anything that is not an object, for a getter that
/// throws, and for `undefined`.
pub(crate) fn member(value: &JsValue, key: &str) -> Option<JsValue> {
    read_member(value, key).ok().flatten()
}

/// `value[key]` of an object a caller gave, as [`member`] reads it, except that a getter (or a
/// `Proxy`) that throws is an error: what the caller meant cannot be known, so it is not read
/// as absent.
pub(crate) fn read_member(value: &JsValue, key: &str) -> Result<Option<JsValue>, JsValue> {
    if !value.is_object() {
        return Ok(None);
    }
    js_sys::Reflect::get(value, &JsValue::from_str(key))
        .map(|v| Some(v).filter(|v| !v.is_undefined()))
}

/// Whether `value[key]` is a function.
pub(crate) fn has_method(value: &JsValue, key: &str) -> bool {
    member(value, key).is_some_and(|f| f.is_function())
}

/// Sets a property of an object this module (or the API) has just created.
pub(crate) fn set(object: &JsValue, key: &str, value: &JsValue) {
    reflect_set(object, key, value);
}

/// A random draw in [0, 1) for jitter: from `crypto.getRandomValues`, or `Math.random` where
/// there is no `crypto`.
pub(crate) fn draw() -> f64 {
    let cell = js_sys::Uint32Array::new_with_length(1);
    match get_random_values(&cell) {
        Ok(_) => f64::from(cell.get_index(0)) / 4_294_967_296.0,
        Err(_) => math_random(),
    }
}

/// The origin of `url`, read against this page's address (a worker's, or none in Node); `None`
/// when it cannot be read so.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let base = member(&global(), "location")
        .and_then(|l| member(&l, "href"))
        .unwrap_or(JsValue::UNDEFINED);
    Url::new(url, &base).ok().map(|u| u.origin())
}

/// Whether `url` is relative: not a URL on its own, and one against a base.
pub(crate) fn is_relative(url: &str) -> bool {
    let base = JsValue::from_str("http://base.invalid/");
    Url::new(url, &JsValue::UNDEFINED).is_err() && Url::new(url, &base).is_ok()
}

/// `value` as the plain JavaScript value it serializes to. The module's own values always
/// serialize; should one ever fail, the view gets `null` rather than a panic.
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    let plain = serde_wasm_bindgen::Serializer::json_compatible();
    value.serialize(&plain).unwrap_or(JsValue::NULL)
}

/// What the view is told after a step (`onUpdate`'s argument).
#[derive(Serialize)]
struct Update<'a> {
    /// What the user is told now.
    visible: &'a [String],
    /// The trace events since the previous update.
    events: &'a [Event],
    /// The outcome, `null` while running.
    outcome: Option<Outcome>,
}

/// The update after a step: the visible state, the events from `from` on and the outcome; in
/// the full build, the step table's rows so far too.
pub(crate) fn update_value(action: &Action, from: usize, visible: &[String]) -> JsValue {
    let update = to_js(&Update {
        visible,
        events: action.events().get(from..).unwrap_or_default(),
        outcome: action.stopped().map(|(_, cause)| cause.outcome()),
    });
    with_steps(&update, action.events(), action.policy().attempt_cap);
    update
}

/// A report as JavaScript gets it; in the full build, with the step table's rows.
pub(crate) fn report_value(report: &Report) -> JsValue {
    let value = to_js(report);
    with_steps(&value, &report.events, report.policy.attempt_cap);
    value
}

/// Adds the step table's rows of `events` to `value` (the full build: the page draws them; the
/// app build leaves their words out of what every page downloads).
#[cfg(feature = "full")]
fn with_steps(value: &JsValue, events: &[Event], cap: std::time::Duration) {
    let rows = retry_budget_model::steps::steps(events, cap);
    set(value, "steps", &to_js(&rows));
}

#[cfg(not(feature = "full"))]
fn with_steps(_: &JsValue, _: &[Event], _: std::time::Duration) {}

/// A JS `Error` named `AbortError`, as `fetch` rejects with when its signal aborts, carrying
/// the action's `report`.
pub(crate) fn abort_error(message: &str, report: &JsValue) -> JsValue {
    let error = JsValue::from(JsError::new(message));
    set(&error, "name", &JsValue::from_str("AbortError"));
    set(&error, "report", report);
    error
}
