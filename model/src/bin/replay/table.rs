//! `--table`: each run as the model's step table (Step, Elapsed interval, Observed, Decision),
//! drawn as an aligned Markdown table, with its figures and what the user was told.

use retry_budget_model::simulate::Replay;
use retry_budget_model::steps::{secs, Step};

/// One scenario's schedule, or the line saying why it was rejected.
pub fn render_entry(entry: &Result<Replay, (String, String)>) -> String {
    match entry {
        Ok(replay) => render(replay),
        Err((name, error)) => format!("{}\n  rejected: {}\n\n", one_line(name), one_line(error)),
    }
}

/// The schedule, the figures, the visible lines and whether `expect` was met.
fn render(replay: &Replay) -> String {
    let report = &replay.report;
    let mut out = format!("{}\n{}", one_line(&replay.name), grid(&replay.steps));
    out.push_str(&format!(
        "Elapsed {} s = requests {} s + waits {} s. Attempts: {}.\n",
        secs(report.elapsed_s.0),
        secs(report.request_s.0),
        secs(report.wait_s.0),
        report.attempts
    ));
    for visible in &report.visible {
        out.push_str(&format!("  > {}\n", one_line(visible)));
    }
    match replay.expect_ok {
        Some(true) => out.push_str("Expected figures: all met.\n"),
        Some(false) => out.push_str(&format!(
            "Expected figures MISSED: {}\n",
            replay.expect_mismatches.join("; ")
        )),
        None => {}
    }
    out.push('\n');
    out
}

/// `text` on one line: a control character (a newline in a header's value or a scenario's
/// name) written as its escape, `\n`, so that it cannot start a line of its own.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().collect()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` as a table cell: on one line, with `|` escaped so that it cannot end the cell.
fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

/// The rows as a Markdown table with aligned columns.
fn grid(rows: &[Step]) -> String {
    let cells =
        |row: &Step| [&row.step, &row.elapsed, &row.observed, &row.decision].map(|c| cell(c));
    let headers = ["Step", "Elapsed", "Observed", "Decision"].map(String::from);
    let body: Vec<[String; 4]> = rows.iter().map(cells).collect();
    let mut widths = headers.clone().map(|h| h.chars().count());
    for row in &body {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 4]| {
        let mut s = String::from("|");
        for (cell, w) in cells.iter().zip(widths) {
            s.push_str(&format!(" {cell:<w$} |"));
        }
        s.push('\n');
        s
    };
    let mut out = line(&headers);
    out.push_str(&line(&widths.map(|w| "-".repeat(w))));
    for row in &body {
        out.push_str(&line(row));
    }
    out
}
