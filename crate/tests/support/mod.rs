//! What more than one browser suite uses: the parts of `web_support.js` (the clock, a pause,
//! another tab's end of the channel, the scripted fetch) and the helpers around them.

use js_sys::{Function, Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/tests/web_support.js")]
extern "C" {
    #[wasm_bindgen(js_name = nowMs)]
    pub fn now_ms() -> f64;
    #[wasm_bindgen(js_name = sleep)]
    pub fn sleep_promise(ms: f64) -> Promise;

    /// Another tab: a `BroadcastChannel` of the module's name that records what it hears.
    pub type OtherTab;
    #[wasm_bindgen(constructor)]
    pub fn new() -> OtherTab;
    #[wasm_bindgen(method)]
    pub fn announce(this: &OtherTab, origin: &str, in_ms: f64);
    #[wasm_bindgen(method)]
    pub fn ask(this: &OtherTab);
    #[wasm_bindgen(method)]
    pub fn tell(this: &OtherTab, scope: &str, until_ms: f64);
    #[wasm_bindgen(method, js_name = heardJson)]
    pub fn heard_json(this: &OtherTab) -> String;
    #[wasm_bindgen(method)]
    pub fn close(this: &OtherTab);

    /// A `fetch` that answers from a script of responses and records each call.
    pub type ScriptedFetch;
    #[wasm_bindgen(constructor)]
    pub fn new(script: &str) -> ScriptedFetch;
    #[wasm_bindgen(method, getter)]
    pub fn fetch(this: &ScriptedFetch) -> Function;
    #[wasm_bindgen(method, js_name = callsJson)]
    pub fn calls_json(this: &ScriptedFetch) -> String;
    #[wasm_bindgen(method)]
    pub fn count(this: &ScriptedFetch) -> u32;
    #[wasm_bindgen(method, js_name = whenSettled)]
    pub fn when_settled(this: &ScriptedFetch, index: u32) -> Promise;
}

/// A pause of `ms` milliseconds.
pub async fn sleep(ms: f64) {
    JsFuture::from(sleep_promise(ms))
        .await
        .expect("sleep resolves");
}

/// A JavaScript value as the JSON value it serialises to.
pub fn to_json(value: &JsValue) -> Value {
    let text: String = js_sys::JSON::stringify(value)
        .expect("serialisable value")
        .into();
    serde_json::from_str(&text).expect("valid JSON")
}

/// Sets `object[key]`.
pub fn set(object: &Object, key: &str, value: &JsValue) {
    Reflect::set(object, &JsValue::from_str(key), value).expect("settable");
}
