//! The browsers the page is run in, and the WebDriver capabilities of their headless sessions.

use serde_json::{json, Map, Value};

/// A browser the page is run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Browser {
    /// Chromium, driven by chromedriver.
    Chromium,
    /// Firefox, driven by geckodriver.
    Firefox,
}

impl Browser {
    /// The browser's name in output and file names: `chromium` or `firefox`.
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        }
    }

    /// The browser called `name` (`chromium`, also `chrome`, or `firefox`).
    pub fn parse(name: &str) -> Option<Browser> {
        match name {
            "chromium" | "chrome" => Some(Browser::Chromium),
            "firefox" => Some(Browser::Firefox),
            _ => None,
        }
    }
}

/// What a Chromium session is set up to measure beyond the page itself (Firefox sessions are
/// the same for all three).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Nothing more: the browser as the page's users run it, headless.
    Nothing,
    /// Precise `performance.memory` figures, and `gc()` offered to the page.
    Memory,
    /// As [`Measure::Memory`], and JavaScript run without its optimising tiers, so that compiled
    /// code appearing as functions warm up is not counted as heap growth.
    UnoptimisedMemory,
}

/// Chromium's flags: headless, quiet, one window size, and timers not throttled.
const CHROMIUM_ARGS: [&str; 12] = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--window-size=1200,1400",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
];

fn chromium_args(measure: Measure) -> Vec<&'static str> {
    let mut args = CHROMIUM_ARGS.to_vec();
    match measure {
        Measure::Nothing => {}
        Measure::Memory => args.extend(["--enable-precise-memory-info", "--js-flags=--expose-gc"]),
        Measure::UnoptimisedMemory => args.extend([
            "--enable-precise-memory-info",
            "--js-flags=--expose-gc --no-opt --no-sparkplug --no-maglev",
        ]),
    }
    args
}

/// The WebDriver capabilities of a headless session of `browser` (Chromium at
/// `/usr/bin/chromium`), both with a 1200x1400 window.
pub fn capabilities(browser: Browser, measure: Measure) -> Map<String, Value> {
    let caps = match browser {
        Browser::Chromium => json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": chromium_args(measure)
            }
        }),
        Browser::Firefox => json!({
            "browserName": "firefox",
            "moz:firefoxOptions": { "args": ["-headless", "-width=1200", "-height=1400"] }
        }),
    };
    match caps {
        Value::Object(caps) => caps,
        _ => Map::new(),
    }
}
