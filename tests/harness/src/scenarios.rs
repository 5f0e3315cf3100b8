//! The fixture scenarios of the repository, and the form in which a live run can play one.

use std::path::PathBuf;
use std::time::Duration;

use retry_budget_model::scenario::{parse_file, Scenario};

/// The repository's root (where `fixtures/`, `www/` and `crate/` are).
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Every `fixtures/*.json` file, in file-name order. Panics if the folder cannot be read.
pub fn fixture_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures"))
        .expect("the fixtures folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Every scenario of every `fixtures/*.json` file, in file-name order. Panics if a file does
/// not parse or holds an invalid scenario.
pub fn fixture_scenarios() -> Vec<Scenario> {
    let mut all = Vec::new();
    for path in fixture_files() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path).expect("a fixture file");
        for scenario in parse_file(&name, &text).expect("the fixture file parses") {
            all.push(scenario.expect("a valid scenario"));
        }
    }
    all
}

/// Whether the page can play `scenario` live as the model runs it. A scenario of section 4 of
/// the scenario format (blocks another action on the origin learned, jitter draws, or a policy
/// with jitter) needs the browser driver to share blocks and draw jitter, which it does not yet:
/// its run is checked by the model's own tests only.
pub fn plays_live(scenario: &Scenario) -> bool {
    scenario.origin_blocks.is_empty()
        && scenario.jitter_draws.is_empty()
        && scenario.policy.jitter.is_zero()
}

/// The fixture scenario called `name`. Panics if there is none.
pub fn fixture(name: &str) -> Scenario {
    fixture_scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no fixture scenario {name}"))
}

/// The scenario as a live run can play it. A response scripted to arrive exactly at its cap
/// cannot arrive by the cap over a real connection (the server sends it at the cap, and it
/// lands a moment later), so a live run is compared with the model of the scenario with that
/// response one millisecond past the cap: the driver's cap aborts it, as it must.
pub fn live_form(scenario: &Scenario) -> Scenario {
    let mut live = scenario.clone();
    for response in &mut live.responses {
        if response.duration == live.policy.attempt_cap {
            response.duration += Duration::from_millis(1);
        }
    }
    live
}
