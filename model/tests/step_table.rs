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

mod rulebook;

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
    rows_in("B62-16-schedules.json", name)
}

/// The model's rows for scenario `name` of `fixtures/FILE`.
fn rows_in(file: &str, name: &str) -> Vec<Step> {
    let path = format!("{}/../fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the fixture file");
    rows_of(&path, &text, name)
}

/// The model's rows for scenario `name` of a scenario file's `text`.
fn rows_of(source: &str, text: &str, name: &str) -> Vec<Step> {
    let scenario = parse_file(source, text)
        .expect("parses")
        .into_iter()
        .map(|s| s.expect("valid"))
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no scenario {name}"));
    simulate(&scenario).expect("runs").steps
}

/// Rows as `[step, elapsed, observed, decision]`, to compare whole.
fn as_text(rows: &[Step]) -> Vec<[&str; 4]> {
    (rows.iter())
        .map(|r| [&*r.step, &*r.elapsed, &*r.observed, &*r.decision])
        .collect()
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

/// Schedule A's rows are exactly the rulebook's (`docs/rules.md`, the step table, read from the
/// document itself), word for word: a wait's row says what the next cap fits by, and a server
/// delay that needed no raising is not called raised.
#[test]
fn schedule_a_reads_word_for_word_as_the_rulebook() {
    let rulebook = rulebook::table_after("Rows for Schedule A:");
    let rows = rows("schedule-a");
    let ours: Vec<Vec<&str>> = as_text(&rows).into_iter().map(Vec::from).collect();
    assert_eq!(ours, rulebook);
}

/// Rows of blocks and jitter, worked out from the fixtures' stories. A wait's length is the
/// whole wait as it happened, a moved start is said by its `Blocked` row, a stop says where the
/// cap would have ended, and jitter is said as the spread after the earliest start.
#[test]
fn block_and_jitter_rows_say_what_happened() {
    let cases: [(&str, Vec<[&str; 4]>); 5] = [
        (
            "block-during-wait-moves-start",
            vec![
                [
                    "Attempt 1",
                    "0–2",
                    "429; delay 3",
                    "Next start 5; full cap fits by 9",
                ],
                // The wait the block moved: its cap fits by 11, no longer by 9.
                [
                    "Wait",
                    "2–7",
                    "5 s",
                    "No request in flight; the next full cap fits by 11",
                ],
                [
                    "Blocked",
                    "3",
                    "Another action learned: no request before 7",
                    "Blocked until 7; next start 7; full cap fits by 11",
                ],
                [
                    "Attempt 2",
                    "7–9",
                    "200; list returned",
                    "Finish with the received list",
                ],
            ],
        ),
        (
            "block-during-wait-cannot-fit",
            vec![
                [
                    "Attempt 1",
                    "0–2",
                    "429; delay 3",
                    "Next start 5; full cap fits by 9",
                ],
                [
                    "Wait",
                    "2–4",
                    "3 s",
                    "No request in flight; the next full cap fits by 9",
                ],
                [
                    "Blocked",
                    "4",
                    "Another action learned: no request before 17",
                    "Stop at 4: blocked until 17; an attempt then would run to 21, past 20; \
                     no further request",
                ],
            ],
        ),
        (
            "block-during-request-cannot-fit",
            vec![
                [
                    "Blocked",
                    "1",
                    "Another action learned: no request before 17",
                    "No request starts before then",
                ],
                [
                    "Attempt 1",
                    "0–2",
                    "429; delay 1",
                    "Stop at 2: blocked until 17; an attempt then would run to 21, past 20; \
                     no further request",
                ],
            ],
        ),
        (
            "jitter-spreads-start",
            vec![
                [
                    "Attempt 1",
                    "0–2",
                    "429; delay 3",
                    "Next start 6 (1 s of jitter after 5); full cap fits by 10",
                ],
                [
                    "Wait",
                    "2–6",
                    "4 s",
                    "No request in flight; the next full cap fits by 10",
                ],
                [
                    "Attempt 2",
                    "6–8",
                    "200; list returned",
                    "Finish with the received list",
                ],
            ],
        ),
        (
            "jitter-on-the-origin-wait",
            vec![
                [
                    "Blocked",
                    "0",
                    "Another action learned: no request before 4",
                    "Blocked until 4; next start 5 (1 s of jitter after 4); full cap fits by 9",
                ],
                [
                    "Wait",
                    "0–5",
                    "5 s",
                    "No request in flight; the next full cap fits by 9",
                ],
                [
                    "Attempt 1",
                    "5–7",
                    "200; list returned",
                    "Finish with the received list",
                ],
            ],
        ),
    ];
    for (name, expected) in cases {
        assert_eq!(
            as_text(&rows_in("shared-limits.json", name)),
            expected,
            "{name}"
        );
    }
}

/// Two stories no fixture tells. A 429 asking 18 s at 2 gives a next start of 20, the very
/// deadline: the start is not past the budget, its cap is. And a block heard during the second
/// wait that cannot fit: the second wait's row is its own (due at 10, cut short at 8), with no
/// word of the first wait's timer.
#[test]
fn a_start_at_the_deadline_and_a_second_wait_cut_short_say_so() {
    let text = r#"{ "scenarios": [
      { "name": "asked-to-the-deadline",
        "policy": { "budget_s": 20, "max_attempts": 3, "attempt_cap_s": 4 },
        "responses": [ { "duration_s": 2, "status": 429, "headers": { "Retry-After": "18" } } ] },
      { "name": "second-wait-cut-short",
        "policy": { "budget_s": 20, "max_attempts": 3, "attempt_cap_s": 4 },
        "responses": [
          { "duration_s": 2, "status": 429, "headers": { "Retry-After": "3" } },
          { "duration_s": 2, "status": 429, "headers": { "Retry-After": "3" } } ],
        "origin_blocks": [ { "at_s": 8, "until_s": 17 } ] }
    ] }"#;
    let deadline = rows_of("inline", text, "asked-to-the-deadline");
    assert_eq!(
        as_text(&deadline),
        [[
            "Attempt 1",
            "0–2",
            "429; delay 18",
            "Stop at 2: next start 20 needs its cap through 24, past 20; no further attempt"
        ]]
    );
    let cut = rows_of("inline", text, "second-wait-cut-short");
    assert_eq!(
        as_text(&cut),
        [
            [
                "Attempt 1",
                "0–2",
                "429; delay 3",
                "Next start 5; full cap fits by 9"
            ],
            [
                "Wait",
                "2–5",
                "3 s",
                "No request in flight; the next full cap fits by 9"
            ],
            [
                "Attempt 2",
                "5–7",
                "429; delay 3",
                "Next start 10; full cap fits by 14"
            ],
            [
                "Wait",
                "7–8",
                "3 s",
                "No request in flight; the next full cap fits by 14"
            ],
            [
                "Blocked",
                "8",
                "Another action learned: no request before 17",
                "Stop at 8: blocked until 17; an attempt then would run to 21, past 20; \
                 no further request"
            ],
        ]
    );
}
