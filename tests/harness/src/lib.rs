//! What the end-to-end tests (`tests/e2e`) and the benchmark (`bench`) share: the fixture
//! server, the WebDriver servers and headless browser sessions of Chromium and Firefox, a small
//! HTTP client, and the fixture scenarios as a live run plays them.
//!
//! Everything that can fail for a reason outside the caller's control returns the reason as a
//! `String`; the tests turn it into a panic, the benchmark into a part "not measured".

mod browser;
mod http;
mod process;
mod scenarios;
mod server;
mod session;

pub use browser::{capabilities, Browser, Measure};
pub use http::get_json;
pub use process::{free_port, Process};
pub use scenarios::{fixture, fixture_files, fixture_scenarios, live_form, plays_live, root};
pub use server::{start_server, Server, ServerOptions};
pub use session::Session;
