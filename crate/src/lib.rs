//! A finite retry budget for one rate-limited HTTP read, in the browser.
//!
//! `fetchWithBudget(url, options)` loads `GET url` under a finite [`Policy`]: the pure model
//! (`retry-budget-model`) decides **wait, try again or stop**, and this crate only performs its
//! decisions with `fetch`, an `AbortController` per attempt, timers and the screen's leave
//! signals, and reports back what happened and when. `simulate(scenario)` runs the model alone
//! on a scripted scenario.
//!
//! The modules, in the order they depend on each other: `js` (JavaScript values read and
//! handed over), `clock` (elapsed time and timers), `inbox` (what reaches a running action from
//! outside), `leave` (when the screen lets go), `blocks` (the waits a limit's actions share,
//! across tabs and reloads too), `options` (the arguments, checked), `attempt` (one request
//! under its cap), `driver` (one action, start to stop) and `api` (the exported functions; their
//! TypeScript declarations are `types.d.ts`).

// lol_alloc instead of std's dlmalloc in the app build: 3,185 B less for every page view (gzip
// -9). A wasm32 module without the `atomics` feature runs on one thread, which is what
// `AssumeSingleThreaded` asks of its caller. Its free list is walked on every allocation, which
// an action's few dozen allocations never notice; the full build keeps dlmalloc, since a fleet
// of a hundred thousand simulated widgets made that walk quadratic (60,000 widgets at once took
// 44 s in the page against 1 s natively).
#[cfg(all(target_arch = "wasm32", not(feature = "full")))]
#[global_allocator]
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

mod api;
mod attempt;
mod blocks;
mod clock;
mod driver;
mod inbox;
mod js;
mod leave;
mod options;

#[cfg(feature = "full")]
mod fleet;
#[cfg(feature = "full")]
pub use crate::fleet::simulate_fleet;

#[cfg(feature = "full")]
pub use api::simulate;
pub use api::{
    default_policy, fetch_with_budget, is_abort_error, owned_screens, rate_limits, running_actions,
};
pub use retry_budget_model::Policy;
