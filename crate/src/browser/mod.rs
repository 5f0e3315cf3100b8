//! The browser side (wasm32 only): the driver that performs the model's decisions with real
//! requests and timers, and the JS API on top of it.

use wasm_bindgen::prelude::*;

mod api;
mod clock;
mod driver;
mod js;
mod leave;

pub use api::{fetch_with_budget, owned_screens, running_actions, simulate};
pub(crate) use js::{mismatches, push_f64};

/// An action's report as the JS API returns it.
pub(crate) fn report_value(action: &crate::Action, name: &str) -> JsValue {
    js::report(action, name).into()
}

#[wasm_bindgen]
extern "C" {
    /// `globalThis`: a window, a worker's global scope, or Node's.
    #[wasm_bindgen(thread_local_v2, js_name = globalThis)]
    static GLOBAL_THIS: JsValue;
}

/// The global object.
fn global() -> JsValue {
    GLOBAL_THIS.with(JsValue::clone)
}
