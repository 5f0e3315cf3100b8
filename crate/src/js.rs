//! JavaScript values without serde: option and scenario objects are read in place (the model
//! loader's `Node`, for [`Js`]), and reports cross as the JSON text of the model's one view,
//! parsed by `JSON.parse`. serde_json, serde's derives, serde-wasm-bindgen and the float
//! formatting their messages need cost the page more than the model itself.

use js_sys::{Array, Object, Reflect};
use retry_budget_model::json::Json;
use retry_budget_model::scenario::{Kind, Node};
use retry_budget_model::{report, Action};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    /// `globalThis`: a window, a worker's global scope, or Node's.
    #[wasm_bindgen(thread_local_v2, js_name = globalThis)]
    static GLOBAL_THIS: JsValue;

    /// `String(value)`: a number as JavaScript prints it, a URL object's `href`.
    #[wasm_bindgen(js_name = String)]
    pub(crate) fn string_of(value: &JsValue) -> String;

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
}

/// `object[i]`, through the `Reflect.get` the loader imports anyway.
fn index(object: &JsValue, i: u32) -> JsValue {
    Reflect::get(object, &JsValue::from(i)).unwrap_or(JsValue::UNDEFINED)
}

/// The global object.
pub(crate) fn global() -> JsValue {
    GLOBAL_THIS.with(JsValue::clone)
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
        Ok(_) => index(&cell, 0).as_f64().unwrap_or(0.0) / 4_294_967_296.0,
        Err(_) => math_random(),
    }
}

/// The origin of `url`, read against this page's address (a worker's, or none in Node); the
/// URL itself when it cannot be read, so that blocks still key on something stable.
pub(crate) fn origin_of(url: &str) -> String {
    let base = Js(global())
        .member("location")
        .and_then(|l| l.member("href"))
        .map_or(JsValue::UNDEFINED, |h| h.0);
    Url::new(url, &base).map_or_else(|_| url.to_owned(), |u| u.origin())
}

/// A model value as the plain JavaScript value it describes. (`JSON.parse` of text this module
/// wrote cannot throw; the one import that catches serves both uses.)
pub(crate) fn value_of(json: &Json) -> JsValue {
    parse_json(&JsValue::from_str(&json.to_text())).unwrap_or(JsValue::NULL)
}

/// What the view is told after a step: the visible state, the trace events from `from` on, and
/// the outcome (`null` while running).
pub(crate) fn update_value(action: &Action, from: usize, visible: &[String]) -> JsValue {
    let outcome = action.stopped().map(|(_, cause)| cause.outcome());
    let update = Json::Object(vec![
        ("visible".into(), report::texts(visible)),
        (
            "events".into(),
            report::events(action.events().get(from..).unwrap_or_default()),
        ),
        (
            "outcome".into(),
            Json::or_null(outcome, |o| Json::text(o.as_str())),
        ),
    ]);
    value_of(&update)
}

/// A JS `Error` named `AbortError`, as `fetch` rejects with when its signal aborts.
pub(crate) fn abort_error(message: &str) -> JsValue {
    let error = JsValue::from(JsError::new(message));
    set(&error, "name", &JsValue::from_str("AbortError"));
    error
}

/// A JavaScript value, read by the model's loader.
#[derive(Clone, Debug)]
pub(crate) struct Js(pub(crate) JsValue);

impl Node for Js {
    fn kind(&self) -> Kind {
        let v = &self.0;
        if v.is_null() || v.is_undefined() {
            Kind::Null
        } else if v.as_bool().is_some() {
            Kind::Bool
        } else if v.as_f64().is_some() {
            Kind::Number
        } else if v.is_string() {
            Kind::String
        } else if Array::is_array(v) {
            Kind::Array
        } else if v.is_object() {
            Kind::Object
        } else if v.is_function() {
            Kind::Other("a function")
        } else if v.is_bigint() {
            Kind::Other("a bigint")
        } else {
            Kind::Other("a symbol")
        }
    }

    fn member(&self, key: &str) -> Option<Self> {
        if !self.0.is_object() {
            return None;
        }
        // A throwing getter reads as absent; `undefined` is absent too.
        Reflect::get(&self.0, &JsValue::from_str(key))
            .ok()
            .filter(|v| !v.is_undefined())
            .map(Js)
    }

    fn keys(&self) -> Vec<String> {
        if !self.0.is_object() {
            return Vec::new();
        }
        // Sorted, as serde_json orders an object's keys natively.
        Object::keys(self.0.unchecked_ref::<Object>())
            .sort()
            .iter()
            .filter_map(|k| k.as_string())
            .collect()
    }

    fn items(&self) -> Vec<Self> {
        if !Array::is_array(&self.0) {
            return Vec::new();
        }
        let list = self.0.unchecked_ref::<Array>();
        (0..list.length()).map(|i| Js(index(list, i))).collect()
    }

    fn string(&self) -> Option<String> {
        self.0.as_string()
    }

    fn boolean(&self) -> Option<bool> {
        self.0.as_bool()
    }

    fn float(&self) -> Option<f64> {
        self.0.as_f64()
    }

    fn whole(&self) -> Option<u64> {
        // A JavaScript number is a float; the loader reads its whole value from that.
        None
    }

    fn push_number(&self, out: &mut String) {
        if self.0.as_f64().is_some() {
            out.push_str(&string_of(&self.0));
        }
    }
}
