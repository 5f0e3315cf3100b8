//! The report's shape as the rulebook gives it (`docs/rules.md`: the causes in "Why an action
//! stopped", the events in "The report"), read from the document itself. Over the runs of every
//! scenario in `fixtures/`, each cause and each event is of a kind the rulebook lists, carries
//! no field its row does not name, and a cause has its row's outcome; and every kind listed is
//! met by some fixture.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use retry_budget_model::scenario::parse_file;
use retry_budget_model::simulate::simulate;
use serde_json::Value;

mod rulebook;

/// Each kind in a rulebook table (its first cell) and the names its other cells quote.
fn kinds_after(marker: &str) -> BTreeMap<String, Vec<String>> {
    (rulebook::table_after(marker).iter())
        .map(|row| {
            let kind = rulebook::quoted(&row[0]).concat();
            let named = row[1..].iter().flat_map(|cell| rulebook::quoted(cell));
            (kind, named.map(String::from).collect())
        })
        .collect()
}

/// The replay output of every scenario in `fixtures/`, as JSON.
fn fixture_reports() -> Vec<Value> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures"));
    let mut files: Vec<PathBuf> = (std::fs::read_dir(&dir).expect("fixtures/ is listed"))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut reports = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable fixture");
        let name = file.display().to_string();
        for scenario in parse_file(&name, &text).unwrap_or_else(|e| panic!("{e}")) {
            let scenario = scenario.unwrap_or_else(|e| panic!("{e}"));
            let report = simulate(&scenario).unwrap_or_else(|e| panic!("{e}"));
            reports.push(serde_json::to_value(&report).expect("serializes"));
        }
    }
    reports
}

/// Checks that `value`, whose kind is under `tag`, is a kind `rows` lists and carries no field
/// its row does not name; returns its kind.
fn check(rows: &BTreeMap<String, Vec<String>>, tag: &str, value: &Value, whose: &str) -> String {
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("{whose}: {value}"));
    let kind = object[tag]
        .as_str()
        .unwrap_or_else(|| panic!("{whose}: {value}"));
    let named = (rows.get(kind))
        .unwrap_or_else(|| panic!("{whose}: {tag} {kind:?} is not in docs/rules.md"));
    for field in object.keys().filter(|k| *k != tag) {
        assert!(
            named.contains(field),
            "{whose}: the {kind} {tag}'s field {field:?} is not named in docs/rules.md"
        );
    }
    kind.to_owned()
}

#[test]
fn every_cause_and_event_is_as_the_rulebook_lists_it() {
    let causes = kinds_after("## Why an action stopped");
    let events = kinds_after("Events (times in seconds");
    let (mut causes_met, mut events_met) = (BTreeSet::new(), BTreeSet::new());
    for report in fixture_reports() {
        let whose = report["name"].to_string();
        let its_events = report["events"].as_array().expect("events");
        for event in its_events {
            events_met.insert(check(&events, "event", event, &whose));
        }
        // The cause of the stop event, and the report's own.
        let stops = (its_events.iter())
            .filter(|e| e["event"] == "stop")
            .map(|e| (&e["cause"], &e["outcome"]));
        for (cause, outcome) in stops.chain([(&report["cause"], &report["outcome"])]) {
            let kind = check(&causes, "kind", cause, &whose);
            // The outcome column is the row's first name after the kind.
            assert_eq!(outcome.as_str(), Some(causes[&kind][0].as_str()), "{whose}");
            causes_met.insert(kind);
        }
    }
    let listed = |rows: &BTreeMap<String, Vec<String>>| rows.keys().cloned().collect();
    assert_eq!(causes_met, listed(&causes), "causes no fixture meets");
    assert_eq!(events_met, listed(&events), "events no fixture meets");
}
