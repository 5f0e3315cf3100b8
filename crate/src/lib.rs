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

// The app build leaves std out: its panic and formatting machinery would be paid on every page
// view. A panic (a bug: nothing here panics on input) traps. The full build keeps std, which
// its browser tests (wasm-bindgen-test) link anyway.
#![cfg_attr(all(target_arch = "wasm32", not(feature = "full")), no_std)]

extern crate alloc;

mod prelude {
    pub(crate) use alloc::borrow::ToOwned;
    pub(crate) use alloc::boxed::Box;
    pub(crate) use alloc::string::String;
    pub(crate) use alloc::vec::Vec;
}

/// The one closure signature of this module: every callback JavaScript calls (a settlement,
/// a timer, an event listener, a channel message, an action's start) takes two values and
/// ignores what it does not use. Each distinct signature costs the page its own shims in the
/// wasm and in the glue (measured: four kinds down to this one, -683 B gzip).
type Callback =
    wasm_bindgen::closure::Closure<dyn FnMut(wasm_bindgen::JsValue, wasm_bindgen::JsValue)>;

/// A static of a single-threaded wasm instance: module-wide state without `thread_local!`,
/// which is std's.
struct Single<T>(core::cell::RefCell<T>);

// SAFETY: wasm32 without the `atomics` feature runs on one thread; nothing here is shared
// with another.
unsafe impl<T> Sync for Single<T> {}

#[cfg(all(target_arch = "wasm32", not(feature = "full")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

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
