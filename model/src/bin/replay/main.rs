//! `replay [--table] FILE...`: runs every scenario of each file through the model.
//!
//! Prints one JSON array, one object per scenario in file order (`scenario-format.md`,
//! section 3). A scenario that cannot be run prints `{ "name", "error" }` in its place, and so
//! does a file that cannot be read or parsed, under the file's name. `--table` prints readable
//! schedules instead, like the source document's tables.
//!
//! Exit status: 0 when every scenario ran and met its `expect`; 1 when any was rejected or
//! missed an expected figure; 2 for a usage error.

use std::io::Write;
use std::process::ExitCode;

use retry_budget_model::report::Report;
use retry_budget_model::scenario::parse_file;
use retry_budget_model::simulate::simulate;
use serde_json::{json, Value};

mod table;

const USAGE: &str = "usage: replay [--table] FILE...\n\
  Replays each scenario file through the retry-budget model and prints the trace as JSON\n\
  (or, with --table, as readable schedules). Exits 1 if a scenario is rejected or misses\n\
  its expected figures.";

/// One scenario's run, or why it could not run: (what to name it, the error).
type Entry = Result<Report, (String, String)>;

fn main() -> ExitCode {
    let (table, files) = match arguments(std::env::args().skip(1)) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("{problem}{USAGE}");
            return ExitCode::from(2);
        }
    };
    let entries: Vec<Entry> = files.iter().flat_map(|file| replay_file(file)).collect();
    let failed = report_failures(&entries);
    let printed = if table {
        entries.iter().map(table::render_entry).collect()
    } else {
        match as_json(&entries) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("replay: cannot print the output: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    // A reader that stops early (`| head`) closes the pipe; that is not worth a panic.
    let _ = std::io::stdout().lock().write_all(printed.as_bytes());
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `--table` and the files; `None` for `--help`; a message (ending in a newline) for a usage
/// error.
fn arguments(args: impl Iterator<Item = String>) -> Result<Option<(bool, Vec<String>)>, String> {
    let mut table = false;
    let mut files = Vec::new();
    for arg in args {
        match arg.as_str() {
            "--table" => table = true,
            "-h" | "--help" => return Ok(None),
            flag if flag.starts_with("--") => {
                return Err(format!("replay: unknown option {flag}\n"));
            }
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        return Err(String::new());
    }
    Ok(Some((table, files)))
}

/// Every scenario of `file`, run; or one entry for a file that cannot be read or parsed.
fn replay_file(file: &str) -> Vec<Entry> {
    let loaded = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {file}: {e}"))
        .and_then(|text| parse_file(file, &text).map_err(|e| e.to_string()));
    match loaded {
        Err(error) => vec![Err((file.to_owned(), error))],
        Ok(scenarios) => scenarios
            .into_iter()
            .map(|scenario| {
                scenario
                    .and_then(|s| simulate(&s))
                    .map_err(|e| (e.scenario.clone(), e.to_string()))
            })
            .collect(),
    }
}

/// Says on stderr what was rejected or missed; whether anything was.
fn report_failures(entries: &[Entry]) -> bool {
    let mut failed = false;
    for entry in entries {
        match entry {
            Err((_, error)) => {
                failed = true;
                eprintln!("replay: {error}");
            }
            Ok(report) if report.expect_ok == Some(false) => {
                failed = true;
                for miss in &report.expect_mismatches {
                    eprintln!(
                        "replay: scenario \"{}\" missed its expectation: {miss}",
                        report.name
                    );
                }
            }
            Ok(_) => {}
        }
    }
    failed
}

/// The replay output: one pretty JSON array of every report's view (and the errors).
fn as_json(entries: &[Entry]) -> serde_json::Result<String> {
    let out: Vec<Value> = entries
        .iter()
        .map(|entry| match entry {
            Ok(report) => Value::from(&report.to_json()),
            Err((name, error)) => json!({ "name": name, "error": error }),
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&out)?;
    text.push('\n');
    Ok(text)
}
