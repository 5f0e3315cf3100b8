//! The step table the model makes (`steps::steps`, carried by the replay output and the page's reports) reads as the
//! source document's own tables: Schedule A and Schedule B, row by row.
//!
//! The document's rows are copied below as it prints them. Each of our rows must have the same
//! step and elapsed interval, show what the document observed, and state every fact of the
//! document's decision (the next start, the cap's end, the date arithmetic). Two deliberate
//! differences: the document writes a wait's length in words ("Three seconds", ours "3 s"), and
//! Schedule B adds the receipt's wall clock to each attempt's interval ("0–2 / 12:00:02 GMT"),
//! which the interval column here leaves to the Last HTTP response panel.

use retry_budget_model::scenario::parse_file;
use retry_budget_model::simulate::simulate;
use retry_budget_model::steps::Step;

/// [Step, Elapsed interval, Observed, Decision], as the source document prints them.
const SCHEDULE_A: [[&str; 4]; 5] = [
    [
        "Attempt 1",
        "0–2",
        "429; delay 3",
        "Next start 5; full request cap fits by 9",
    ],
    ["Wait", "2–5", "Three seconds", "No request in flight"],
    [
        "Attempt 2",
        "5–7",
        "429; delay 4",
        "Next start 11; full cap fits by 15",
    ],
    [
        "Wait",
        "7–11",
        "Four seconds",
        "Keep waiting within the same action",
    ],
    [
        "Attempt 3",
        "11–14",
        "200; list returned",
        "Finish with received list",
    ],
];

const SCHEDULE_B: [[&str; 4]; 5] = [
    [
        "Attempt 1",
        "0–2 / 12:00:02 GMT",
        "429; Mon, 01 Jan 2024 12:00:06 GMT",
        "Date minus receipt = 4; next start 6",
    ],
    ["Wait", "2–6", "Four seconds", "Full next cap fits by 10"],
    [
        "Attempt 2",
        "6–8 / 12:00:08 GMT",
        "429; Mon, 01 Jan 2024 12:00:12 GMT",
        "Date minus receipt = 4; next start 12",
    ],
    ["Wait", "8–12", "Four seconds", "Full next cap fits by 16"],
    [
        "Attempt 3",
        "12–14 / 12:00:14 GMT",
        "200; list returned",
        "Finish",
    ],
];

/// The model's rows for one scenario of the source document's fixture file.
fn rows(name: &str) -> Vec<Step> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/B62-16-schedules.json"
    );
    let text = std::fs::read_to_string(path).expect("the fixture file");
    let scenario = parse_file(path, &text)
        .expect("parses")
        .into_iter()
        .map(|s| s.expect("valid"))
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no scenario {name}"));
    simulate(&scenario).expect("runs").steps
}

/// "Three seconds" as the table writes it: "3 s".
fn in_figures(words: &str) -> String {
    let numbers = ["zero", "one", "two", "three", "four", "five", "six"];
    let first = words.split(' ').next().unwrap_or_default().to_lowercase();
    match numbers.iter().position(|n| *n == first) {
        Some(n) => format!("{n} s"),
        None => words.into(),
    }
}

/// The facts a decision states: "next start N", "fits by N", "date minus receipt = N",
/// "finish", "no request in flight", in lower case.
fn facts(decision: &str) -> Vec<String> {
    let lower = decision.to_lowercase();
    let mut out = Vec::new();
    for key in ["next start ", "fits by ", "date minus receipt = "] {
        if let Some(at) = lower.find(key) {
            let rest = &lower[at + key.len()..];
            let number: String = rest.chars().take_while(char::is_ascii_digit).collect();
            out.push(format!("{key}{number}"));
        }
    }
    for phrase in ["finish", "no request in flight"] {
        if lower.contains(phrase) {
            out.push(phrase.into());
        }
    }
    out
}

fn holds_to(name: &str, document: &[[&str; 4]]) {
    let ours = rows(name);
    assert_eq!(ours.len(), document.len(), "{name}: {ours:#?}");
    for (row, [step, elapsed, observed, decision]) in ours.iter().zip(document) {
        let interval = elapsed.split(" / ").next().unwrap_or_default();
        assert_eq!(row.step, *step, "{name}: {row:?}");
        assert_eq!(row.elapsed, interval, "{name}: {row:?}");
        assert_eq!(row.observed, in_figures(observed), "{name}: {row:?}");
        let said = row.decision.to_lowercase();
        for fact in facts(decision) {
            assert!(
                said.contains(&fact),
                "{name}: {row:?} does not say {fact:?}"
            );
        }
    }
}

#[test]
fn schedule_a_reads_as_the_source_documents_table() {
    holds_to("schedule-a", &SCHEDULE_A);
}

#[test]
fn schedule_b_reads_as_the_source_documents_table() {
    holds_to("schedule-b", &SCHEDULE_B);
}

/// The check itself can fail: a row with another next start is caught.
#[test]
#[should_panic(expected = "does not say")]
fn a_wrong_next_start_is_caught() {
    let mut wrong = SCHEDULE_A;
    wrong[0][3] = "Next start 6; full request cap fits by 9";
    holds_to("schedule-a", &wrong);
}
