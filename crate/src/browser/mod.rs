//! The browser side (wasm32 only): the driver that performs the model's decisions with real
//! requests and timers, and the JS API on top of it.

mod api;

pub use api::{fetch_with_budget, owned_screens, running_actions, simulate};
mod clock;
mod driver;
mod leave;
