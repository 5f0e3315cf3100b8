//! A finite retry budget for one rate-limited HTTP read, in the browser.
//!
//! `fetchWithBudget(url, options)` loads `GET url` under a finite [`Policy`]: the pure model
//! (`retry-budget-model`) decides **wait, try again or stop**, and this crate only performs its
//! decisions with `fetch`, an `AbortController` per attempt, timers and the screen's leave
//! signals, and reports back what happened and when. `simulate(scenario)` runs the model alone
//! on a scripted scenario.
//!
//! The modules, in the order they depend on each other: `js` (JavaScript values read in place
//! and reports handed over as JSON), `clock` (elapsed time and timers), `leave` (when the screen
//! lets go), `driver` (one action, start to stop) and `api` (the exported functions and their
//! TypeScript types).

/// The one closure signature of this module: every callback JavaScript calls (a settlement,
/// a timer, an event listener, a channel message, an action's start) takes two values and
/// ignores what it does not use. Each distinct signature costs the page its own shims in the
/// wasm and in the glue (measured: four kinds down to this one, -683 B gzip).
type Callback =
    wasm_bindgen::closure::Closure<dyn FnMut(wasm_bindgen::JsValue, wasm_bindgen::JsValue)>;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

mod api;
mod clock;
mod driver;
mod js;
mod leave;
mod origin;

#[cfg(feature = "full")]
mod fleet;
#[cfg(feature = "full")]
pub use crate::fleet::simulate_fleet;

#[cfg(feature = "full")]
pub use api::simulate;
pub use api::{fetch_with_budget, owned_screens, rate_limits, running_actions};
pub use retry_budget_model::Policy;
