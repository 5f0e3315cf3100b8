//! Every scenario in `fixtures/` is a test: it must load, run, and reproduce its `expect`.

use std::path::PathBuf;

use retry_budget_model::scenario::parse_file;
use retry_budget_model::simulate::simulate;

fn fixture_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_fixture_scenario_meets_its_expectations() {
    let files = fixture_files();
    assert!(!files.is_empty(), "no fixture files found");
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(&file).expect("readable fixture");
        let scenarios = parse_file(&name, &text).unwrap_or_else(|e| panic!("{e}"));
        for scenario in scenarios {
            let scenario = match scenario {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            let Some(expect) = &scenario.expect else {
                failures.push(format!("{name}: scenario {} has no expect", scenario.name));
                continue;
            };
            assert!(!expect.is_empty(), "{}: empty expect", scenario.name);
            match simulate(&scenario) {
                Ok(report) if report.expect_ok == Some(true) => checked += 1,
                Ok(report) => {
                    failures.push(format!("{}: {:?}", scenario.name, report.expect_mismatches))
                }
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(checked >= 17, "only {checked} scenarios checked");
}

/// The source document's stop table, row by row: each named case exists with its outcome.
#[test]
fn the_stop_table_is_covered() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/B62-16-schedules.json"
    ))
    .expect("fixture");
    let scenarios: Vec<_> = parse_file("B62-16", &text)
        .expect("parses")
        .into_iter()
        .map(|s| s.expect("valid"))
        .collect();
    let outcome = |name: &str| {
        let scenario = scenarios
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no scenario {name}"));
        simulate(scenario)
            .expect("runs")
            .report
            .outcome
            .map(|o| o.as_str())
    };
    for (name, want) in [
        ("schedule-a", "success"),
        ("schedule-b", "success"),
        ("missing-header", "success"),
        ("invalid-decimal", "success"),
        ("invalid-negative", "success"),
        ("invalid-word", "success"),
        ("invalid-nan", "success"),
        ("wait-exceeds-budget", "budget_exhausted"),
        ("wait-fits-attempt-does-not", "budget_exhausted"),
        ("attempt-cap", "attempts_exhausted"),
        ("user-leaves-while-waiting", "user_left"),
        ("date-untrusted-clock", "clock_untrusted"),
        ("late-wake", "budget_exhausted"),
    ] {
        assert_eq!(outcome(name), Some(want), "{name}");
    }
}
