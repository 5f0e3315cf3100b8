//! The pure model of a finite retry budget for one rate-limited HTTP read.
//!
//! A screen loads a list with a `GET`; the service may answer `429 Too Many Requests`, perhaps
//! with a `Retry-After`. This crate decides **wait, try again or stop** under a finite
//! [`Policy`]: a total budget from the action's start, a maximum number of attempts, a
//! per-attempt cap reserved before every start, and waits that never shorten the server's delay.
//! Actions that share a limit share what the service told any of them (blocks), and each wait
//! may be spread by jitter that never makes a start earlier nor causes a stop. The rules are
//! written out in `docs/rules.md`; comments here cite them by number.
//!
//! Everything here is pure by construction: the crate depends on no browser crate, reads no
//! clock and does no I/O. A driver feeds an [`Action`] what happened and when, and performs the
//! [`Decision`] it returns. [`simulate`](simulate::simulate) is such a driver for scripted
//! [`Scenario`](scenario::Scenario)s; the browser module (`retry-budget`) is another. Each run
//! ends in one [`Report`](report::Report), which serializes (serde) to what the replay command
//! prints and what the JavaScript API returns.
//!
//! The model only ever retries reads: a write needs an operation identity and a recovery
//! contract that a waiting budget cannot provide.

pub mod action;
pub mod expect;
pub mod http_date;
mod keys;
pub mod policy;
pub mod ratelimit;
pub mod report;
pub mod retry_after;
pub mod scenario;
pub mod simulate;
pub mod steps;
pub mod structured;
mod timing;
pub mod utc;
mod visible;

pub use action::{
    Action, Decision, Event, Outcome, ReceiptClock, Response, TransportError, WaitSource,
};
pub use policy::{Policy, PolicyError, PolicyInput, StatusSet};
pub use report::Report;
pub use retry_after::RetryAfter;
