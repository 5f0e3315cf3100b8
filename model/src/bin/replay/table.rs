//! `--table`: a report as a schedule in the source document's format (Step, Elapsed interval,
//! Observed, Decision), drawn from the report's typed events.

use core::time::Duration;

use retry_budget_model::action::PlannedWait;
use retry_budget_model::action::RetryAfterReading;
use retry_budget_model::report::Report;
use retry_budget_model::simulate::Replay;
use retry_budget_model::Event;

/// One scenario's schedule, or the line saying why it was rejected.
pub fn render_entry(entry: &Result<Replay, (String, String)>) -> String {
    match entry {
        Ok(replay) => render(replay),
        Err((name, error)) => format!("{name}\n  rejected: {error}\n\n"),
    }
}

/// The schedule, the figures, the visible lines and whether `expect` was met.
fn render(replay: &Replay) -> String {
    let report = &replay.report;
    let rows = Rows::of(report);
    let mut out = format!("{}\n", replay.name);
    out.push_str(&rows.grid());
    out.push_str(&format!(
        "Elapsed {} s = requests {} s + waits {} s. Attempts: {}.\n",
        secs(report.elapsed_s.0),
        secs(report.request_s.0),
        secs(report.wait_s.0),
        report.attempts
    ));
    for visible in &report.visible {
        out.push_str(&format!("  > {visible}\n"));
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

/// The table's rows: [step, elapsed interval, observed, decision].
struct Rows {
    rows: Vec<[String; 4]>,
    /// The attempt in flight and when it started.
    open: Option<(u32, String)>,
    /// The row of the wait in progress: a late timer, a departure or a stop ends it.
    wait_row: Option<usize>,
    cap: Duration,
}

impl Rows {
    fn of(report: &Report) -> Rows {
        let mut rows = Rows {
            rows: Vec::new(),
            open: None,
            wait_row: None,
            cap: report.policy.attempt_cap,
        };
        for event in &report.events {
            rows.add(event);
        }
        rows
    }

    fn add(&mut self, event: &Event) {
        match event {
            Event::Start { at, attempt, .. } => {
                self.wait_row = None;
                self.open = Some((*attempt, secs(*at)));
            }
            Event::Receipt {
                at,
                attempt,
                status,
                retry_after,
            } => {
                let observed = observed(*status, retry_after);
                self.close_attempt(*attempt, *at, observed);
            }
            Event::Failure { at, attempt, error } => {
                self.close_attempt(*attempt, *at, format!("failed: {}", error.as_str()));
            }
            Event::Wait {
                at,
                plan,
                remaining,
            } => self.wait(*at, plan, *remaining),
            Event::Timer { at, due } if due != at => {
                let fired = format!("timer due at {} fired at {}", secs(*due), secs(*at));
                self.stretch_wait(*at, fired);
            }
            Event::Timer { .. } => {}
            Event::Blocked { at, until } => self.push(
                "Blocked".into(),
                secs(*at),
                format!("origin blocked until {}", secs(*until)),
            ),
            Event::Left { at } => self.left(*at),
            Event::Stop {
                at,
                outcome,
                remaining,
            } => self.stop(*at, outcome.as_str(), *remaining),
        }
    }

    /// A wait begins (or, after a block moved it, begins again): its row, and the decision on
    /// the row before.
    fn wait(&mut self, at: Duration, plan: &PlannedWait, remaining: Duration) {
        let source = plan.source.as_str().replace('_', " ");
        let jitter = if plan.jitter.is_zero() {
            String::new()
        } else {
            format!(" + jitter {}", secs(plan.jitter))
        };
        let (step, wait) = if self.wait_row.is_some() {
            // A block moved the start: the wait so far ends here, a longer one follows.
            self.stretch_wait(at, "then a block moved the start".into());
            ("Wait (moved)", plan.until.saturating_sub(at))
        } else {
            ("Wait", plan.until.saturating_sub(plan.from))
        };
        self.decide(format!(
            "wait {} s ({source}){jitter}; next start {}; cap fits by {}; {} s left",
            secs(plan.wait),
            secs(plan.until),
            trim(plan.until.as_secs_f64() + self.cap.as_secs_f64()),
            secs(remaining),
        ));
        self.push(
            step.into(),
            format!("{}-{}", secs(at), secs(plan.until)),
            format!("{} s, no request in flight", secs(wait)),
        );
        self.wait_row = Some(self.rows.len() - 1);
    }

    /// The user left: during a request (its row ends here) or during a wait.
    fn left(&mut self, at: Duration) {
        match self.open.take() {
            Some((attempt, from)) => self.push(
                format!("Attempt {attempt}"),
                format!("{from}-{}", secs(at)),
                "user left; response discarded".into(),
            ),
            None => self.stretch_wait(at, "user left during the wait".into()),
        }
    }

    /// The stop: the decision on the last row, or a row of its own.
    fn stop(&mut self, at: Duration, outcome: &str, remaining: Duration) {
        let decision = format!(
            "stop at {}: {outcome}; {} s left",
            secs(at),
            secs(remaining)
        );
        // A wait still open ends at the stop: a late timer or a departure already moved its
        // end there; a block that cannot fit stops it early.
        if let Some(row) = self.wait_row.take().and_then(|i| self.rows.get_mut(i)) {
            let ended = format!("{}-{}", row[1].split('-').next().unwrap_or(""), secs(at));
            if row[1] != ended {
                row[1] = ended;
                row[2] = "stopped by a block on the origin".into();
            }
        }
        match self.rows.last_mut() {
            Some(row) if row[3].is_empty() => row[3] = decision,
            _ => self
                .rows
                .push(["Stop".into(), secs(at), String::new(), decision]),
        }
    }

    fn push(&mut self, step: String, interval: String, observed: String) {
        self.rows.push([step, interval, observed, String::new()]);
    }

    /// Ends the open attempt's row at `at` with what was observed.
    fn close_attempt(&mut self, attempt: u32, at: Duration, observed: String) {
        let from = self.open.take().map(|(_, from)| from).unwrap_or_default();
        self.push(
            format!("Attempt {attempt}"),
            format!("{from}-{}", secs(at)),
            observed,
        );
    }

    /// The decision taken at the end of the last row.
    fn decide(&mut self, decision: String) {
        if let Some(row) = self.rows.last_mut() {
            row[3] = decision;
        }
    }

    /// Moves the end of the wait in progress (or else the last row) to `at`, with what was
    /// observed instead.
    fn stretch_wait(&mut self, at: Duration, observed: String) {
        let row = match self.wait_row {
            Some(i) => self.rows.get_mut(i),
            None => self.rows.last_mut(),
        };
        if let Some(row) = row {
            row[1] = format!("{}-{}", row[1].split('-').next().unwrap_or(""), secs(at));
            row[2] = observed;
        }
    }

    /// The rows as a Markdown table with aligned columns.
    fn grid(&self) -> String {
        let headers = ["Step", "Elapsed", "Observed", "Decision"];
        let mut widths = headers.map(str::len);
        for row in &self.rows {
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
        let mut out = line(headers);
        out.push_str(&line(
            widths.map(|w| "-".repeat(w)).each_ref().map(String::as_str),
        ));
        for row in &self.rows {
            out.push_str(&line(row.each_ref().map(String::as_str)));
        }
        out
    }
}

/// What a response showed: its status, and its `Retry-After` unless it succeeded.
fn observed(status: u16, retry_after: &RetryAfterReading) -> String {
    let header = &retry_after.header;
    match (header.raw(), (200..300).contains(&status)) {
        (_, true) => format!("{status}"),
        (Some(raw), false) => {
            let delay =
                (retry_after.delay).map_or(String::new(), |d| format!(", delay {}", secs(d)));
            format!("{status}; Retry-After \"{raw}\" ({}{delay})", header.kind())
        }
        (None, false) => format!("{status}; no Retry-After"),
    }
}

/// A duration in seconds, to at most three decimals.
fn secs(d: Duration) -> String {
    trim(d.as_secs_f64())
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
