//! The `replay` command as a user runs it (`docs/rules.md`, "Replay output"): the real binary,
//! from the repository root, on the fixture file and on the small files in `tests/rejected/`.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod rulebook;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const FIXTURE: &str = "fixtures/B62-16-schedules.json";
const MIXED: &str = "tests/rejected/mixed-good-and-bad.json";
const MALFORMED: &str = "tests/rejected/malformed-truncated.json";
const MISMATCH: &str = "tests/rejected/expect-mismatch.json";
const MISSING: &str = "tests/rejected/no-such-file.json";

/// The outcomes an action can end with: the outcome column of the rulebook's table of causes
/// (`docs/rules.md`, "Why an action stopped"), read from the document itself.
fn outcomes() -> Vec<String> {
    let table = rulebook::table_after("## Why an action stopped");
    (table.iter())
        .flat_map(|row| rulebook::quoted(&row[1]))
        .map(String::from)
        .collect()
}

/// The fields every report prints: the scenario's `name`, then each field of the rulebook's
/// table of the report (`docs/rules.md`, "The report"), read from the document itself.
fn report_fields() -> Vec<String> {
    let table = rulebook::table_after("## The report");
    let fields = table.iter().flat_map(|row| rulebook::quoted(&row[0]));
    std::iter::once("name")
        .chain(fields)
        .map(String::from)
        .collect()
}

fn replay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_replay"))
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("the replay binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

/// Stdout as the one JSON array it must be.
fn entries(out: &Output) -> Vec<Value> {
    let text = stdout(out);
    match serde_json::from_str(&text) {
        Ok(Value::Array(list)) => list,
        other => panic!("stdout is not one JSON array ({other:?}):\n{text}"),
    }
}

/// The names of a scenario file's scenarios, in file order.
fn scenario_names(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(format!("{ROOT}/{path}")).expect("readable");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    doc["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s["name"]
                .as_str()
                .map_or_else(|| format!("scenarios[{i}]"), String::from)
        })
        .collect()
}

fn names(list: &[Value]) -> Vec<&str> {
    list.iter()
        .map(|e| e["name"].as_str().expect("every entry has a name"))
        .collect()
}

fn as_f64(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

/// A report printed in full, that met its `expect`.
fn assert_full_report(entry: &Value) {
    let name = &entry["name"];
    for field in report_fields() {
        assert!(
            entry.get(&field).is_some(),
            "{name}: no `{field}` in {entry}"
        );
    }
    assert!(entry.get("error").is_none(), "{name}: {entry}");
    let outcome = entry["outcome"].as_str().expect("outcome is a string");
    assert!(
        outcomes().iter().any(|o| o == outcome),
        "{name}: outcome {outcome}"
    );
    assert_eq!(
        as_f64(&entry["elapsed_s"]),
        as_f64(&entry["request_s"]) + as_f64(&entry["wait_s"]),
        "{name}: elapsed = request + wait"
    );
    assert_eq!(
        entry["attempt_starts_s"].as_array().map(Vec::len),
        entry["attempts"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok()),
        "{name}: one start per attempt"
    );
    assert!(
        !entry["visible"].as_array().expect("visible").is_empty(),
        "{name}: nothing visible"
    );
    assert_eq!(entry["expect_ok"], Value::Bool(true), "{name}: {entry}");
    assert!(
        entry.get("expect_mismatches").is_none(),
        "{name}: {}",
        entry["expect_mismatches"]
    );
}

/// A rejected scenario or file: `{"name", "error"}` and nothing else, the error naming the
/// scenario (or file) and the field.
fn assert_rejection(entry: &Value, name: &str, field: &str, keyword: &str) {
    let object = entry.as_object().expect("an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["error", "name"], "{entry}");
    assert_eq!(entry["name"], name, "{entry}");
    let error = entry["error"].as_str().expect("error is a string");
    assert!(
        error.contains(name),
        "error does not name {name:?}: {error}"
    );
    if !field.is_empty() {
        assert!(
            error.contains(&format!("`{field}`")),
            "error does not name field {field:?}: {error}"
        );
    }
    assert!(
        error.to_lowercase().contains(keyword),
        "error does not say {keyword:?}: {error}"
    );
}

#[test]
fn the_fixture_file_replays_every_scenario_in_order_and_meets_every_expectation() {
    let out = replay(&[FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", stderr(&out));
    assert_eq!(stderr(&out), "", "nothing to complain about");
    let list = entries(&out);
    assert_eq!(names(&list), scenario_names(FIXTURE), "file order");
    for entry in &list {
        assert_full_report(entry);
    }
}

#[test]
fn wait_exceeds_budget_shows_exactly_the_source_documents_three_lines() {
    let list = entries(&replay(&[FIXTURE]));
    let entry = list
        .iter()
        .find(|e| e["name"] == "wait-exceeds-budget")
        .expect("the scenario is in the fixture file");
    assert_eq!(
        entry["visible"],
        serde_json::json!([
            "Stopped: retry budget cannot fit another request.",
            "Last response: 429. Attempts: 1 of 3. Elapsed: 2 seconds.",
            "The service requested a 30-second delay. No retry was sent."
        ])
    );
    assert_eq!(entry["outcome"], "budget_exhausted");
    assert_eq!(entry["attempt_starts_s"], serde_json::json!([0]));
    assert_eq!(entry["last_response"]["status"], 429);
    assert_eq!(
        entry["last_response"]["retry_after"],
        serde_json::json!({ "raw": "30", "kind": "seconds", "delay_s": 30 })
    );
}

#[test]
fn the_last_response_is_kept_apart_from_the_outcome() {
    let list = entries(&replay(&[FIXTURE]));
    let entry = list
        .iter()
        .find(|e| e["name"] == "transport-error-after-429")
        .expect("the scenario is in the fixture file");
    assert_eq!(entry["outcome"], "transport_error");
    assert_eq!(entry["last_response"]["status"], 429);
    let entry = list
        .iter()
        .find(|e| e["name"] == "user-leaves-during-request")
        .expect("the scenario is in the fixture file");
    assert_eq!(entry["last_response"], Value::Null);
}

#[test]
fn a_file_mixing_good_and_bad_scenarios_prints_all_of_them_in_order_and_exits_1() {
    let out = replay(&[MIXED]);
    assert_eq!(out.status.code(), Some(1));
    let list = entries(&out);
    assert_eq!(names(&list), scenario_names(MIXED), "file order");
    let rejected = [
        (1, "typo-in-policy", "policy.budget", "unknown field"),
        (3, "duration-over-cap", "responses[0].duration_s", "exceeds"),
        (4, "runs-out-of-responses", "responses", "needs a response"),
        (5, "scenarios[5]", "name", "missing"),
        (
            6,
            "header-twice",
            "responses[0].headers.Retry-After",
            "given more than once",
        ),
    ];
    for (i, name, field, keyword) in rejected {
        assert_rejection(&list[i], name, field, keyword);
        assert!(
            stderr(&out).contains(&format!("scenario \"{name}\", field `{field}`")),
            "stderr does not report {name}:\n{}",
            stderr(&out)
        );
    }
    for i in [0, 2, 7] {
        assert_full_report(&list[i]);
    }
}

#[test]
fn an_unreadable_or_malformed_file_is_reported_under_its_name_and_the_others_still_print() {
    let out = replay(&[MALFORMED, FIXTURE, MISSING]);
    assert_eq!(out.status.code(), Some(1));
    let list = entries(&out);
    let fixture_names = scenario_names(FIXTURE);
    assert_eq!(list.len(), fixture_names.len() + 2, "{list:?}");
    assert_rejection(&list[0], MALFORMED, "", "malformed json");
    assert_eq!(names(&list[1..=fixture_names.len()]), fixture_names);
    for entry in &list[1..=fixture_names.len()] {
        assert_full_report(entry);
    }
    assert_rejection(list.last().expect("entries"), MISSING, "", "cannot read");
    let err = stderr(&out);
    assert!(err.contains(MALFORMED) && err.contains(MISSING), "{err}");
    // A file that is not JSON is called a file, not a scenario.
    let said = format!("replay: file \"{MALFORMED}\": malformed JSON");
    assert!(err.contains(&said), "{err}");
}

#[test]
fn a_scenario_that_misses_its_expectation_exits_1_and_names_the_figures() {
    let out = replay(&[MISMATCH]);
    assert_eq!(out.status.code(), Some(1));
    let list = entries(&out);
    assert_eq!(
        names(&list),
        [
            "expects-wrong-elapsed",
            "expects-right-figures",
            "no-expect"
        ]
    );

    let missed = &list[0];
    assert_eq!(missed["expect_ok"], false);
    assert_eq!(
        missed["elapsed_s"], 7,
        "the report is still printed in full"
    );
    let mismatches: Vec<&str> = missed["expect_mismatches"]
        .as_array()
        .expect("expect_mismatches")
        .iter()
        .map(|m| m.as_str().expect("a sentence"))
        .collect();
    assert_eq!(mismatches.len(), 2, "{mismatches:?}");
    for field in ["elapsed_s", "attempt_starts_s"] {
        assert!(
            mismatches.iter().any(|m| m.starts_with(field)),
            "no mismatch names {field}: {mismatches:?}"
        );
    }
    assert!(
        !mismatches.iter().any(|m| m.starts_with("outcome")),
        "the outcome matched"
    );
    let err = stderr(&out);
    assert!(
        err.contains("expects-wrong-elapsed") && err.contains("elapsed_s"),
        "{err}"
    );

    assert_full_report(&list[1]);
    assert!(
        list[2].get("expect_ok").is_none(),
        "expect_ok only with expect: {}",
        list[2]
    );
}

/// Whether `text` shows the command's usage line.
fn usage(text: &str) -> bool {
    text.to_lowercase().contains("usage: replay")
}

#[test]
fn no_arguments_is_a_usage_error() {
    let out = replay(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(usage(&stderr(&out)), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");

    let out = replay(&["--table"]);
    assert_eq!(out.status.code(), Some(2), "--table alone names no file");
    assert!(usage(&stderr(&out)));
}

#[test]
fn an_unknown_option_is_a_usage_error() {
    let out = replay(&["--tabel", FIXTURE]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--tabel") && usage(&err), "{err}");
    assert_eq!(stdout(&out), "");
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    let out = replay(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(usage(&stdout(&out)));
}

#[test]
fn table_prints_the_schedules_like_the_source_document() {
    let out = replay(&["--table", FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let schedule_a: Vec<&str> = text
        .split("\n\n")
        .next()
        .expect("a first table")
        .lines()
        .collect();
    assert_eq!(schedule_a[0], "schedule-a");
    let row = |step: &str| {
        schedule_a
            .iter()
            .find(|l| l.starts_with(&format!("| {step} ")))
            .unwrap_or_else(|| panic!("no row {step} in {schedule_a:#?}"))
    };
    assert!(row("Attempt 1").contains("| 0–2 "), "{}", row("Attempt 1"));
    assert!(row("Attempt 2").contains("| 5–7 "), "{}", row("Attempt 2"));
    assert!(
        row("Attempt 3").contains("| 11–14 "),
        "{}",
        row("Attempt 3")
    );
    assert!(
        schedule_a.contains(&"Elapsed 14 s = requests 7 s + waits 7 s. Attempts: 3."),
        "{schedule_a:#?}"
    );
    assert!(text.contains("  > The service requested a 30-second delay. No retry was sent."));
    // Every scenario's table, in file order.
    let mut from = 0;
    for name in scenario_names(FIXTURE) {
        let at = text[from..]
            .find(&format!("{name}\n| Step"))
            .unwrap_or_else(|| panic!("no table for {name} after byte {from}"));
        from += at + name.len();
    }
    assert!(!text.contains("MISSED"));
}

#[test]
fn table_reports_rejections_in_place() {
    let out = replay(&["--table", MIXED]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let first = text.find("good-first\n| Step").expect("good-first table");
    let rejected = text
        .find("typo-in-policy\n  rejected: ")
        .expect("typo-in-policy rejected");
    let last = text.find("good-last\n| Step").expect("good-last table");
    assert!(first < rejected && rejected < last, "{text}");
}

/// A reader that stops early (`replay ... | head`) closes the pipe; the command must end
/// without a panic.
#[test]
fn a_closed_stdout_does_not_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_replay"))
        .args(["--table", FIXTURE])
        .current_dir(ROOT)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the replay binary runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("it ends");
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    // What the reader did not read it did not want: every scenario met its expectation.
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// Output that cannot be written (a full disk) is a failure, said on stderr, not a silent 0.
#[cfg(target_os = "linux")]
#[test]
fn output_that_cannot_be_written_exits_1() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full on linux");
    let out = Command::new(env!("CARGO_BIN_EXE_replay"))
        .args(["--table", FIXTURE])
        .current_dir(ROOT)
        .stdout(full)
        .output()
        .expect("the replay binary runs");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write the output"), "{err}");
}

/// A table cell cannot be broken out of: a `Retry-After` (or a scenario name) holding a newline
/// and `|` forges no row and no column. Each line of the table has its five column bars.
#[test]
fn table_cells_keep_newlines_and_bars_inside_them() {
    let path = std::env::temp_dir().join(format!("replay-forged-{}.json", std::process::id()));
    let forged = "1\n| Attempt 9 | 0 | forged | x |";
    let scenario = serde_json::json!({ "scenarios": [{
        "name": "forged\n| x | y |",
        "responses": [
            { "duration_s": 0.1, "status": 429, "headers": { "Retry-After": forged } },
            { "duration_s": 0.1, "status": 200, "body": [] },
        ],
    }]});
    std::fs::write(&path, scenario.to_string()).expect("written");
    let out = replay(&["--table", path.to_str().expect("a UTF-8 path")]);
    std::fs::remove_file(&path).expect("removed");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "forged\\n| x | y |",
        "the name on one line: {text}"
    );
    let table: Vec<&str> = lines[1..]
        .iter()
        .copied()
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(table.len(), 5, "a header, its rule and three steps: {text}");
    for line in table {
        let bars = line.matches('|').count() - line.matches("\\|").count();
        assert_eq!(bars, 5, "{line}");
    }
    assert!(text.contains("\\| Attempt 9 \\|"), "{text}");
}

/// Section 4's output additions: every scenario of `fixtures/shared-limits.json` replays and
/// meets its expectation; each block that arrives prints a `blocked` event with `at_s` and
/// `until_s`; every wait event carries `jitter_s`; origin waits say `origin_block`; and a start
/// may come later than 0.
#[test]
fn shared_limits_replay_with_blocked_events_and_jitter() {
    const SHARED: &str = "fixtures/shared-limits.json";
    let out = replay(&[SHARED]);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", stderr(&out));
    let list = entries(&out);
    assert_eq!(names(&list), scenario_names(SHARED), "file order");
    let (mut blocked, mut origin_waits, mut jittered) = (0, 0, 0);
    for entry in &list {
        assert_full_report(entry);
        for event in entry["events"].as_array().expect("events") {
            match event["event"].as_str() {
                Some("blocked") => {
                    let keys: Vec<&str> = event
                        .as_object()
                        .expect("an object")
                        .keys()
                        .map(String::as_str)
                        .collect();
                    assert_eq!(keys, ["at_s", "event", "until_s"], "{event}");
                    blocked += 1;
                }
                Some("wait") => {
                    let jitter = as_f64(&event["jitter_s"]);
                    assert!(jitter >= 0.0, "{event}");
                    jittered += usize::from(jitter > 0.0);
                    origin_waits += usize::from(event["source"] == "origin_block");
                }
                _ => {}
            }
        }
    }
    assert!(
        blocked >= 15 && origin_waits >= 8 && jittered >= 5,
        "{blocked} {origin_waits} {jittered}"
    );
    let late_first = list
        .iter()
        .find(|e| e["name"] == "origin-block-at-start-fits")
        .expect("scenario");
    assert_eq!(late_first["attempt_starts_s"], serde_json::json!([4]));
    let nothing_sent = list
        .iter()
        .find(|e| e["name"] == "origin-block-at-start-cannot-fit")
        .expect("scenario");
    assert_eq!(nothing_sent["last_response"], Value::Null);
    assert_eq!(nothing_sent["attempts"], 0);
}
