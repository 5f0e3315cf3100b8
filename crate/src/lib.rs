//! A finite retry budget for one rate-limited HTTP read, in the browser.
//!
//! `fetchWithBudget(url, options)` loads `GET url` under a finite [`Policy`]: the pure model
//! (`retry-budget-model`) decides **wait, try again or stop**, and this crate only performs its
//! decisions with `fetch`, an `AbortController` per attempt, timers and the screen's leave
//! signals, and reports back what happened and when. `simulate(scenario)` runs the model alone
//! on a scripted scenario.
//!
//! The modules, in the order they depend on each other: `js` (JavaScript values read in place
//! and reports handed over), `clock` (elapsed time and timers), `inbox` (what reaches a running
//! action from outside), `leave` (when the screen lets go), `origin` (the blocks an origin's
//! actions share), `attempt` (one request under its cap), `driver` (one action, start to stop)
//! and `api` (the exported functions and their TypeScript types).

// lol_alloc instead of std's dlmalloc: 3,185 B less for every page view (gzip -9, measured on
// the app build). A wasm32 module without the `atomics` feature runs on one thread, which is
// what `AssumeSingleThreaded` asks of its caller.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

mod api;
mod attempt;
mod clock;
mod driver;
mod inbox;
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
