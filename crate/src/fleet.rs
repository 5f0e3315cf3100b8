//! `simulateFleet(options)` (full build only): the fleet simulation of the `fleet` command, run
//! in the page. The options are the command's flags by their JavaScript names; the result is
//! the library's report, handed over by serde-wasm-bindgen as plain objects, so the page and
//! the command's `--json` show the same figures.

use ::fleet::{Opt, OptionError, Options};
use js_sys::{Object, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::js::keys_of;

#[wasm_bindgen(typescript_custom_section)]
const FLEET_TYPES: &'static str = r#"
/** The fleet command's flags; absent ones take the default burst scenario's values. */
export interface FleetOptions {
  /** Pages arriving, 1 to 1,000,000. Default 10000. */
  pages?: number;
  /** Widgets per page (one action each), 1 to 100; pages × widgets at most 1,000,000. Default 3. */
  widgets?: number;
  /** Seconds over which the pages arrive, uniformly, 0 to 3600; 0 for all at once. Default 0. */
  arriveOver?: number;
  /** The service's limiter. Default "bucket". */
  limiter?: "bucket" | "window";
  /** Bucket: tokens per second, 0.001 to 1e9. Default 500. */
  rate?: number;
  /** Bucket: its size (it starts full), 1 to 1e9. Default 1000. */
  burst?: number;
  /** Window: requests per window, a whole number from 1 to 1e9. Default 1000. */
  limit?: number;
  /** Window: its length in whole seconds, 1 to 3600. Default 1. */
  window?: number;
  /** How a 429 says when to come back. Default "seconds". */
  retryAfter?: "seconds" | "date" | "none";
  /** The shortest network round trip in milliseconds, a whole number from 1 to 10000; most are close to it. Default 100. */
  latency?: number;
  /** The weight of the round trips' slow tail, 0 to 100: one round trip in 1 + x takes longer than latency × (1 + tail × x); 0 for none. Default 0.1. */
  tail?: number;
  /** The most requests the service answers per second, 429s included, a whole number from 1 to 1e9; more wait their turn. Default 100000. */
  serve?: number;
  /** The seed, a whole number from 0 to 2^53 - 1: the same seed gives the same figures. Default 1. */
  seed?: number;
}

/** One policy's figures, as `fleet --json` writes them. */
export interface FleetPolicy {
  policy: "ours" | "ours+jitter" | "ours no-share" | "ky defaults" | "naive x3";
  requests: number;
  /** The most requests that reached the service in one whole second. */
  peak_per_s: number;
  /** Requests answered 429, as a fraction (six places). */
  share_429: number;
  actions: number;
  with_data: number;
  /** null when no action had data. */
  time_to_data_s: { p50: number; p95: number; max: number } | null;
  longest_wait_for_outcome_s: number;
  requests_per_action: { mean: number; max: number };
  /** Requests the service answered after their user had been told a final outcome. */
  requests_after_outcome: number;
  early_sends: number;
  /** Requests per second reaching the service, one value per bin of `bin_s` from the start. */
  requests_per_s: number[];
}

export interface FleetResult {
  /** The width of each series' bins, in seconds. */
  bin_s: number;
  policies: FleetPolicy[];
}
"#;

/// Runs every policy of the fleet simulation on the scenario `options` describe and returns
/// the figures and series of `fleet --json`. Throws an `Error` naming the first bad option.
#[wasm_bindgen(js_name = simulateFleet, unchecked_return_type = "FleetResult")]
pub fn simulate_fleet(
    #[wasm_bindgen(unchecked_optional_param_type = "FleetOptions")] options: JsValue,
) -> Result<JsValue, JsError> {
    let scenario = read_options(&options)?
        .scenario()
        .map_err(|e| option_error(&e))?;
    let report = ::fleet::simulate(&scenario).report();
    let plain = serde_wasm_bindgen::Serializer::json_compatible();
    report
        .serialize(&plain)
        .map_err(|e| JsError::new(&format!("simulateFleet: {e}")))
}

/// The options object read onto the defaults; `undefined` and `null` are the defaults.
fn read_options(value: &JsValue) -> Result<Options, JsError> {
    let mut options = Options::default();
    if value.is_undefined() || value.is_null() {
        return Ok(options);
    }
    if !value.is_object() {
        return Err(JsError::new("simulateFleet: options must be an object"));
    }
    let object: &Object = value.unchecked_ref();
    refuse_unknown(object)?;
    for opt in Opt::ALL {
        let given = Reflect::get(object, &JsValue::from_str(opt.key()))
            .map_err(|_| fail(opt, "could not be read"))?;
        if !given.is_undefined() && !given.is_null() {
            set(&mut options, opt, &given)?;
        }
    }
    Ok(options)
}

/// Refuses a key that names no option (a typo would otherwise run the default silently).
fn refuse_unknown(object: &Object) -> Result<(), JsError> {
    let keys = keys_of(object).map_err(|_| {
        JsError::new("simulateFleet: the options cannot be listed: listing their keys threw")
    })?;
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_default();
        if !Opt::ALL.iter().any(|o| o.key() == key) {
            let known: Vec<&str> = Opt::ALL.iter().map(|o| o.key()).collect();
            return Err(JsError::new(&format!(
                "simulateFleet: unknown option \"{key}\"; the options are {}",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// Sets one option from its JavaScript value: a string for a word, a number otherwise.
fn set(options: &mut Options, opt: Opt, value: &JsValue) -> Result<(), JsError> {
    let done = if opt.is_word() {
        let word = value
            .as_string()
            .ok_or_else(|| fail(opt, "must be a string"))?;
        options.set_word(opt, &word)
    } else {
        let number = value
            .as_f64()
            .ok_or_else(|| fail(opt, "must be a number"))?;
        options.set_number(opt, number)
    };
    done.map_err(|e| option_error(&e))
}

/// `simulateFleet: options.KEY MESSAGE`.
fn fail(opt: Opt, message: &str) -> JsError {
    JsError::new(&format!("simulateFleet: options.{} {message}", opt.key()))
}

fn option_error(e: &OptionError) -> JsError {
    fail(e.option, &e.message)
}
