//! The JS API: `fetchWithBudget(url, options)` and what goes with it. Values cross as plain
//! JSON-compatible objects; every error is a JS error with a message that names what was wrong.
//! The TypeScript declarations are written out in `types.d.ts`, beside this file.

use js_sys::Promise;
use retry_budget_model::Policy;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::blocks;
use crate::driver;
use crate::js::{member, to_js};
use crate::options;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");

/// Loads `GET url` under a finite retry budget. Resolves with the report when the action ends
/// (on success it carries the parsed `body`); rejects with an `AbortError` carrying `report`
/// when the screen lets go, so a late result never reaches a view that no longer owns it. Bad
/// arguments reject too (a `TypeError` or a `RangeError` naming the option), before anything is
/// sent.
#[wasm_bindgen(js_name = fetchWithBudget, skip_typescript)]
pub fn fetch_with_budget(url: JsValue, options: JsValue) -> Promise {
    match options::read(&url, &options) {
        Ok(request) => driver::start(request),
        Err(e) => Promise::reject(&e.into_js()),
    }
}

/// Whether `value` is the abort error a `fetchWithBudget` promise rejects with when its screen
/// lets go: an `Error` named `AbortError` that carries the action's `report`.
#[wasm_bindgen(js_name = isAbortError, skip_typescript)]
pub fn is_abort_error(value: &JsValue) -> bool {
    value.is_instance_of::<js_sys::Error>()
        && member(value, "name").and_then(|n| n.as_string()).as_deref() == Some("AbortError")
        && member(value, "report").is_some_and(|r| r.is_object())
}

/// The default policy, as reports write a policy: what an action runs under when it is given
/// none, so that a page need not restate the numbers.
#[wasm_bindgen(js_name = defaultPolicy, skip_typescript)]
pub fn default_policy() -> JsValue {
    to_js(&Policy::new())
}

/// One limit in force, as `rateLimits()` lists it.
#[derive(Serialize)]
struct RateLimit {
    /// The scope: a URL's origin, or the name an action gave.
    scope: String,
    /// Seconds from now until the service accepts requests under it again.
    until_s: f64,
}

/// The limits in force now, for a page that wants to show "the service asked us to wait until
/// ..." before the user presses anything: `[{ scope, until_s }]`, `until_s` in seconds from
/// now. Those of other tabs, and of earlier pages of this origin, are included once an action
/// here shares with tabs, or once this is called.
#[wasm_bindgen(js_name = rateLimits, skip_typescript)]
pub fn rate_limits() -> JsValue {
    let list: Vec<RateLimit> = blocks::in_force()
        .into_iter()
        .map(|(scope, until_s)| RateLimit { scope, until_s })
        .collect();
    to_js(&list)
}

/// Actions running in this page right now. Zero once every action has ended: an ended action
/// keeps no listener, timer or closure.
#[wasm_bindgen(js_name = runningActions, skip_typescript)]
pub fn running_actions() -> u32 {
    driver::running()
}

/// Screens currently owned by a running action.
#[wasm_bindgen(js_name = ownedScreens, skip_typescript)]
pub fn owned_screens() -> u32 {
    u32::try_from(crate::leave::owned_screens()).unwrap_or(u32::MAX)
}

#[cfg(feature = "full")]
mod full {
    use retry_budget_model::scenario::parse_scenario;
    use retry_budget_model::simulate::simulate as run_scenario;
    use wasm_bindgen::prelude::*;

    use crate::js::{member, string_of, to_js};

    #[wasm_bindgen(typescript_custom_section)]
    const TYPES: &'static str = r#"
/** Runs the pure model on a scenario object (docs/rules.md, "Scenario files") and returns its
 *  replay output. Throws an Error naming the scenario and the field when it is rejected. */
export function simulate(scenario: object): ReplayReport;
"#;

    /// Runs the pure model on one scenario object and returns the replay output for it. Throws
    /// an `Error` naming the scenario and the field when the scenario is rejected. The object
    /// is read as the JSON it stands for (`JSON.stringify`, which catches what a hostile
    /// `Proxy` or getter throws), so it is read exactly as a scenario file would be.
    #[wasm_bindgen(skip_typescript)]
    pub fn simulate(scenario: JsValue) -> Result<JsValue, JsError> {
        let label = member(&scenario, "name")
            .and_then(|n| n.as_string())
            .unwrap_or_else(|| "scenario".into());
        let failed = |e: String| JsError::new(&format!("scenario \"{label}\": {e}"));
        // A number JSON cannot carry would be written as `null`, which reads as absent: it is
        // written as its name (`"Infinity"`, `"NaN"`) instead, which the loader refuses in its
        // field. `undefined` (or a function) stands for no JSON at all: read as `null`, which
        // the loader refuses as it refuses a `null` scenario.
        let unwritable =
            Closure::<dyn FnMut(JsValue, JsValue) -> JsValue>::new(|_key, value: JsValue| {
                match value.as_f64() {
                    Some(x) if !x.is_finite() => JsValue::from_str(&string_of(&value)),
                    _ => value,
                }
            });
        let text = js_sys::JSON::stringify_with_replacer(&scenario, unwritable.as_ref())
            .map_err(|_| failed("cannot be read as JSON: reading it threw".into()))?
            .as_string()
            .unwrap_or_else(|| "null".into());
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| failed(format!("malformed JSON: {e}")))?;
        let scenario = parse_scenario(&label, &value).map_err(|e| JsError::new(&e.describe()))?;
        let replay = run_scenario(&scenario).map_err(|e| JsError::new(&e.describe()))?;
        Ok(to_js(&replay))
    }
}

#[cfg(feature = "full")]
pub use full::simulate;
