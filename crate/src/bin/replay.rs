//! `replay [--table] FILE...`: runs every scenario of each file through the model.
//!
//! Prints one JSON array, one object per scenario in file order (`scenario-format.md`,
//! section 3). A scenario that cannot be run prints `{ "name", "error" }` in its place, and so
//! does a file that cannot be read or parsed, under the file's name. `--table` prints readable
//! schedules instead, like the source document's tables.
//!
//! Exit status: 0 when every scenario ran and met its `expect`; 1 when any was rejected or
//! missed an expected figure; 2 for a usage error.
//!
//! A native command: built for wasm32 it is empty, since the browser build has no files and no
//! JSON text.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use std::io::Write;
use std::process::ExitCode;

use retry_budget::report::{EventReport, Report};
use retry_budget::scenario::parse_file;
use retry_budget::simulate::simulate;
use serde_json::{json, Value};

const USAGE: &str = "usage: replay [--table] FILE...\n\
  Replays each scenario file through the retry-budget model and prints the trace as JSON\n\
  (or, with --table, as readable schedules). Exits 1 if a scenario is rejected or misses\n\
  its expected figures.";

fn main() -> ExitCode {
    let mut table = false;
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--table" => table = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            flag if flag.starts_with("--") => {
                eprintln!("replay: unknown option {flag}\n{USAGE}");
                return ExitCode::from(2);
            }
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }

    let mut failed = false;
    let mut entries: Vec<Result<Report, (String, String)>> = Vec::new();
    for file in &files {
        let loaded = std::fs::read_to_string(file)
            .map_err(|e| (file.clone(), format!("cannot read {file}: {e}")))
            .and_then(|text| parse_file(file, &text).map_err(|e| (file.clone(), e.to_string())));
        match loaded {
            Err(entry) => entries.push(Err(entry)),
            Ok(scenarios) => {
                for scenario in scenarios {
                    entries.push(
                        scenario
                            .and_then(|s| simulate(&s))
                            .map_err(|e| (e.scenario.clone(), e.to_string())),
                    );
                }
            }
        }
    }
    for entry in &entries {
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

    let mut printed = String::new();
    if table {
        for entry in &entries {
            match entry {
                Ok(report) => printed.push_str(&render_table(report)),
                Err((name, error)) => printed.push_str(&format!("{name}\n  rejected: {error}\n\n")),
            }
        }
    } else {
        let out: Vec<Value> = entries
            .iter()
            .map(|entry| match entry {
                Ok(report) => serde_json::to_value(report)
                    .unwrap_or_else(|e| json!({ "error": e.to_string() })),
                Err((name, error)) => json!({ "name": name, "error": error }),
            })
            .collect();
        match serde_json::to_string_pretty(&out) {
            Ok(text) => {
                printed.push_str(&text);
                printed.push('\n');
            }
            Err(e) => {
                eprintln!("replay: cannot print the output: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    // A reader that stops early (`| head`) closes the pipe; that is not worth a panic.
    let _ = std::io::stdout().lock().write_all(printed.as_bytes());
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// A schedule like the source document's: step, elapsed interval, what was observed, decision.
fn render_table(report: &Report) -> String {
    let value = serde_json::to_value(report).unwrap_or(Value::Null);
    let secs = |v: &Value| v.as_f64().map_or_else(|| "?".into(), trim);
    let mut rows: Vec<[String; 4]> = Vec::new();
    let mut open_attempt: Option<(u32, String)> = None;
    for event in &report.events {
        let e = serde_json::to_value(event).unwrap_or(Value::Null);
        let at = secs(&e["at_s"]);
        match event {
            EventReport::Start { attempt, .. } => {
                open_attempt = Some((*attempt, at));
            }
            EventReport::Receipt {
                attempt,
                status,
                retry_after,
                ..
            } => {
                let from = open_attempt
                    .take()
                    .map(|(_, from)| from)
                    .unwrap_or_default();
                let observed = match (&retry_after.raw, (200..300).contains(status)) {
                    (_, true) => format!("{status}"),
                    (Some(raw), false) => {
                        let delay = retry_after.delay_s.map_or(String::new(), |d| {
                            format!(", delay {}", trim(d.0.as_secs_f64()))
                        });
                        format!(
                            "{status}; Retry-After \"{raw}\" ({}{delay})",
                            retry_after.kind
                        )
                    }
                    (None, false) => format!("{status}; no Retry-After"),
                };
                rows.push([
                    format!("Attempt {attempt}"),
                    format!("{from}-{at}"),
                    observed,
                    String::new(),
                ]);
            }
            EventReport::Failure { attempt, error, .. } => {
                let from = open_attempt
                    .take()
                    .map(|(_, from)| from)
                    .unwrap_or_default();
                rows.push([
                    format!("Attempt {attempt}"),
                    format!("{from}-{at}"),
                    format!("failed: {error}"),
                    String::new(),
                ]);
            }
            EventReport::Wait { .. } => {
                let source = e["source"].as_str().unwrap_or("?").replace('_', " ");
                let decision = format!(
                    "wait {} s ({source}); next start {}; cap fits by {}; {} s left",
                    secs(&e["wait_s"]),
                    secs(&e["until_s"]),
                    trim(
                        e["until_s"].as_f64().unwrap_or(0.0)
                            + report.policy.attempt_cap_s.0.as_secs_f64()
                    ),
                    secs(&e["remaining_s"]),
                );
                if let Some(row) = rows.last_mut() {
                    row[3] = decision;
                }
                rows.push([
                    "Wait".into(),
                    format!("{at}-{}", secs(&e["until_s"])),
                    format!("{} s, no request in flight", secs(&e["wait_s"])),
                    String::new(),
                ]);
            }
            EventReport::Timer { .. } => {
                let due = secs(&e["due_s"]);
                if due != at {
                    if let Some(row) = rows.last_mut() {
                        row[1] = format!("{}-{at}", row[1].split('-').next().unwrap_or(""));
                        row[2] = format!("timer due at {due} fired at {at}");
                    }
                }
            }
            EventReport::Left { .. } => {
                if let Some((attempt, from)) = open_attempt.take() {
                    rows.push([
                        format!("Attempt {attempt}"),
                        format!("{from}-{at}"),
                        "user left; response discarded".into(),
                        String::new(),
                    ]);
                } else if let Some(row) = rows.last_mut() {
                    row[1] = format!("{}-{at}", row[1].split('-').next().unwrap_or(""));
                    row[2] = "user left during the wait".into();
                }
            }
            EventReport::Stop { outcome, .. } => {
                let outcome = serde_json::to_value(outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default();
                let decision = format!(
                    "stop at {at}: {outcome}; {} s left",
                    secs(&e["remaining_s"])
                );
                match rows.last_mut() {
                    Some(row) if row[3].is_empty() => row[3] = decision,
                    _ => rows.push(["Stop".into(), at, String::new(), decision]),
                }
            }
        }
    }
    let headers = ["Step", "Elapsed", "Observed", "Decision"];
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 4]| {
        let mut s = String::from("|");
        for (cell, w) in cells.iter().zip(widths) {
            s.push_str(&format!(" {cell:<w$} |"));
        }
        s.push('\n');
        s
    };
    let mut out = format!("{}\n", report.name);
    out.push_str(&line(headers));
    out.push_str(&line(
        widths.map(|w| "-".repeat(w)).each_ref().map(String::as_str),
    ));
    for row in &rows {
        out.push_str(&line(row.each_ref().map(String::as_str)));
    }
    out.push_str(&format!(
        "Elapsed {} s = requests {} s + waits {} s. Attempts: {}.\n",
        secs(&value["elapsed_s"]),
        secs(&value["request_s"]),
        secs(&value["wait_s"]),
        report.attempts
    ));
    for visible in &report.visible {
        out.push_str(&format!("  > {visible}\n"));
    }
    match report.expect_ok {
        Some(true) => out.push_str("Expected figures: all met.\n"),
        Some(false) => out.push_str(&format!(
            "Expected figures MISSED: {}\n",
            report.expect_mismatches.join("; ")
        )),
        None => {}
    }
    out.push('\n');
    out
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
