//! A finite retry budget for one rate-limited HTTP read.
//!
//! A screen loads a list with a `GET`; the service may answer `429 Too Many Requests`, perhaps
//! with a `Retry-After`. This crate decides **wait, try again or stop** under a finite
//! [`Policy`]: a total budget from the first attempt's start, a maximum number of attempts, a
//! per-attempt cap reserved before every start, and waits that never shorten the server's delay.
//!
//! The model ([`Action`]) is pure: it reads no clock and does no I/O. A driver feeds it what
//! happened and when, and performs the [`Decision`] it returns. [`simulate`](simulate::simulate)
//! is such a driver for scripted [`Scenario`](scenario::Scenario)s; the browser driver is another.
//! The model only ever retries reads: a write needs an operation identity and a recovery
//! contract that a waiting budget cannot provide.

pub mod action;
pub mod http_date;
pub mod policy;
pub mod report;
pub mod retry_after;
pub mod scenario;
pub mod simulate;
pub mod utc;
mod visible;

pub use action::{Action, Decision, Outcome, ReceiptClock, Response, TransportError};
pub use policy::{Policy, PolicyError, StatusSet};
pub use retry_after::RetryAfter;

#[cfg(target_arch = "wasm32")]
mod browser;
#[cfg(target_arch = "wasm32")]
pub use browser::{fetch_with_budget, owned_screens, running_actions, simulate};
