//! A session's browser goes with it. A test that panics drops its session without closing it;
//! the browser must not outlive it, or a failed run leaves browsers running on the machine for
//! every later suite (and CI) to share two cores with.

use std::time::{Duration, Instant};

use e2e::{session, Browser};

/// The live processes (not yet-unreaped zombies) of process group `group`, by name, read from
/// `/proc/<pid>/stat`: `pid (name) state ppid pgrp ...`.
fn live_in_group(group: u32) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        panic!("/proc cannot be read");
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let mut rest = stat[close + 1..].split_whitespace();
        let (state, pgrp) = (rest.next(), rest.nth(1));
        if state != Some("Z") && pgrp == Some(group.to_string().as_str()) {
            found.push(stat[open + 1..close].to_string());
        }
    }
    found
}

async fn a_dropped_session_leaves_no_browser_running(browser: Browser) {
    let s = session(browser).await;
    let group = s.driver_id().expect("the WebDriver server runs");
    s.client
        .goto("about:blank")
        .await
        .expect("the browser answers");
    let before = live_in_group(group);
    assert!(
        before.len() > 1,
        "the browser runs in its WebDriver server's process group: {before:?}"
    );
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = live_in_group(group);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still running 15 s after the {} session was dropped: {left:?}",
            browser.name()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

e2e::browser_tests!(a_dropped_session_leaves_no_browser_running: chromium_session, firefox_session);
