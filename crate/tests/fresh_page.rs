//! A page whose first use of the module is an action that shares with tabs, in headless Chrome
//! and Firefox. It needs a page of its own: in `web.rs`, an earlier test has always opened the
//! channel to the other tabs already, so a driver that never opened it for such an action would
//! pass there. Here nothing has run before, so the action itself must open it, ask the other tabs
//! what they know, and hear a block that another tab announces while it waits.
#![cfg(target_arch = "wasm32")]

use js_sys::Object;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

mod support;
use support::{now_ms, set, sleep, to_json, OtherTab, ScriptedFetch};

/// When each call of `fetch` started, in `performance.now()` milliseconds.
fn starts_ms(fetch: &ScriptedFetch) -> Vec<f64> {
    let calls: Value = serde_json::from_str(&fetch.calls_json()).expect("calls");
    (calls.as_array().expect("a list").iter())
        .map(|call| call["start_ms"].as_f64().expect("start_ms"))
        .collect()
}

/// The first action of the page shares with tabs; its first response is a 429 with no
/// `Retry-After`, so it waits its 1 s fallback. Once that response is in, another tab announces
/// a block of 1.5 s. The action asked the other tabs when it began, and its second request waits
/// for the block (it would go at the end of its own wait, half a second earlier, if the action
/// had not opened the channel).
#[wasm_bindgen_test]
async fn the_first_action_sharing_with_tabs_opens_the_channel_and_hears_the_tabs() {
    let origin = "http://fresh.invalid";
    let tab = OtherTab::new();
    let script = json!([
        { "duration_s": 0.05, "status": 429 },
        { "duration_s": 0.05, "status": 200, "body": ["kelp"] }
    ]);
    let fetch = ScriptedFetch::new(&script.to_string());
    let policy = json!({
        "budget_s": 4, "max_attempts": 2, "attempt_cap_s": 0.4,
        "min_wait_s": 0.05, "fallback_base_s": 1
    });
    let options = Object::new();
    set(&options, "share", &JsValue::from_str("tabs"));
    set(&options, "fetch", &fetch.fetch());
    let policy = js_sys::JSON::parse(&policy.to_string()).expect("a policy");
    set(&options, "policy", &policy);
    let run = retry_budget::fetch_with_budget(
        JsValue::from_str(&format!("{origin}/palettes")),
        options.into(),
    );

    while fetch.count() == 0 {
        sleep(5.0).await;
    }
    JsFuture::from(fetch.when_settled(0))
        .await
        .expect("the first call settles");
    let announced_ms = now_ms();
    tab.announce(origin, 1500.0);

    let report = JsFuture::from(run).await.expect("the action resolves");
    let report = to_json(&report);
    assert_eq!(report["outcome"], "success", "{report}");
    let starts = starts_ms(&fetch);
    assert_eq!(starts.len(), 2, "{report}");
    let second = starts[1] - announced_ms;
    assert!(
        second >= 1500.0 - 5.0,
        "the second request went {second} ms after another tab blocked the origin for 1500 ms"
    );

    let heard: Value = serde_json::from_str(&tab.heard_json()).expect("messages");
    tab.close();
    assert!(
        (heard.as_array().expect("messages").iter()).any(|m| m["ask"] == true),
        "the action asked the other tabs for their blocks: {heard}"
    );
    assert_eq!(retry_budget::running_actions(), 0, "running actions");
}
