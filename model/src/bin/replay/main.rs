//! `replay [--table] FILE...`: runs every scenario of each file through the model.
//!
//! Prints one JSON array, one object per scenario in file order (`docs/rules.md`, "Replay
//! output"). A scenario that cannot be run prints `{ "name", "error" }` in its place, and so
//! does a file that cannot be read or parsed, under the file's name. `--table` prints readable
//! schedules instead, like the source document's tables.
//!
//! Exit status: 0 when every scenario ran and met its `expect`; 1 when any was rejected or
//! missed an expected figure, or the output could not be written; 2 for a usage error.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use retry_budget_model::scenario::parse_file;
use retry_budget_model::simulate::{simulate, Replay};
use serde::Serialize;

mod table;

/// Replays each scenario file through the retry-budget model and prints the trace as JSON (or,
/// with --table, as readable schedules). Exits 1 if a scenario is rejected or misses its
/// expected figures.
#[derive(Parser)]
#[command(name = "replay")]
struct Args {
    /// Print readable schedules (Step, Elapsed interval, Observed, Decision) instead of JSON.
    #[arg(long)]
    table: bool,
    /// Scenario files (`{"scenarios": [...]}`).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
}

/// One scenario's run, or why it could not run: (what to name it, the error).
type Entry = Result<Replay, (String, String)>;

fn main() -> ExitCode {
    // `--help` prints the usage and exits 0; a usage error says why and exits 2.
    let args = Args::parse();
    let entries: Vec<Entry> = args.files.iter().flat_map(|f| replay_file(f)).collect();
    let failed = report_failures(&entries);
    let printed = if args.table {
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
    if let Err(e) = print(&printed) {
        eprintln!("replay: cannot write the output: {e}");
        return ExitCode::FAILURE;
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes the output to stdout. A reader that stops early (`| head`) closes the pipe, and what
/// it did not read it did not want: that is no failure. Any other error (a full disk) is.
fn print(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        done => done,
    }
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
            Ok(replay) if replay.expect_ok == Some(false) => {
                failed = true;
                for miss in &replay.expect_mismatches {
                    eprintln!(
                        "replay: scenario \"{}\" missed its expectation: {miss}",
                        replay.name
                    );
                }
            }
            Ok(_) => {}
        }
    }
    failed
}

/// One entry as printed: the run, or `{ "name", "error" }` in its place.
#[derive(Serialize)]
#[serde(untagged)]
enum Printed<'a> {
    Ran(&'a Replay),
    Rejected { name: &'a str, error: &'a str },
}

/// The replay output: one pretty JSON array of every entry (and the errors), each object's
/// fields in the order the rulebook lists them.
fn as_json(entries: &[Entry]) -> serde_json::Result<String> {
    let printed: Vec<Printed> = entries
        .iter()
        .map(|entry| match entry {
            Ok(replay) => Printed::Ran(replay),
            Err((name, error)) => Printed::Rejected { name, error },
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&printed)?;
    text.push('\n');
    Ok(text)
}
