//! The parts of `web_support.js` that more than one browser suite uses: the clock, a pause,
//! another tab's end of the channel, and the scripted fetch.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

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
