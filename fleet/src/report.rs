//! The figures of one run.

use serde_json::{json, Value};

use crate::service::NS;
use crate::sim::Run;

/// The figures one policy produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Requests the service received.
    pub requests: usize,
    /// The most requests that reached the service in one second.
    pub peak_per_s: usize,
    /// Share of requests answered 429.
    pub share_429: f64,
    /// Widgets (actions).
    pub actions: usize,
    /// Actions that ended with data.
    pub with_data: usize,
    /// Time to data, p50, p95 and max, in seconds.
    pub to_data_s: [f64; 3],
    /// The longest any user waited before a final outcome, in seconds.
    pub longest_wait_s: f64,
    /// Requests per action, mean and max.
    pub per_action: (f64, u32),
    /// Requests that reached the service after their user was told a final outcome.
    pub after_outcome: usize,
    /// Our sends before a block the client knew of had ended.
    pub early_sends: u32,
}

/// Computes the figures of `run`.
pub fn figures(run: &Run) -> Figures {
    let mut per_s = std::collections::HashMap::<u64, usize>::new();
    for r in &run.requests {
        *per_s.entry(r.arrive / NS).or_default() += 1;
    }
    let refused = run
        .requests
        .iter()
        .filter(|r| r.answer.status == 429)
        .count();
    let late = run.requests.iter().filter(|r| {
        let slot = &run.slots[r.action as usize];
        slot.done.is_some_and(|(at, _)| r.arrive > at)
    });
    let secs = |s: &crate::sim::Slot| {
        s.done
            .map_or(f64::INFINITY, |(at, _)| (at - s.start) as f64 / NS as f64)
    };
    let mut data: Vec<f64> = run
        .slots
        .iter()
        .filter(|s| s.done.is_some_and(|d| d.1))
        .map(secs)
        .collect();
    data.sort_by(f64::total_cmp);
    let total = run.requests.len();
    Figures {
        requests: total,
        peak_per_s: per_s.values().copied().max().unwrap_or(0),
        share_429: refused as f64 / total.max(1) as f64,
        actions: run.slots.len(),
        with_data: data.len(),
        to_data_s: [
            rank(&data, 0.5),
            rank(&data, 0.95),
            data.last().copied().unwrap_or(0.0),
        ],
        longest_wait_s: run.slots.iter().map(secs).fold(0.0, f64::max),
        per_action: (
            total as f64 / run.slots.len().max(1) as f64,
            run.slots.iter().map(|s| s.sent).max().unwrap_or(0),
        ),
        after_outcome: late.count(),
        early_sends: run.early_sends,
    }
}

/// The nearest-rank quantile `q` of sorted `v`; 0 when empty.
fn rank(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[i - 1]
}

/// How one table cell is written from a policy's figures.
type Cell = fn(&Figures) -> String;

/// The table rows: a label and one cell per policy.
pub fn table(names: &[&str], all: &[Figures]) -> String {
    let rows: [(&str, Cell); 11] = [
        ("requests received", |f| f.requests.to_string()),
        ("peak requests / s", |f| f.peak_per_s.to_string()),
        ("answered 429", |f| format!("{:.1}%", f.share_429 * 100.0)),
        ("actions with data", |f| {
            format!("{} / {}", f.with_data, f.actions)
        }),
        ("time to data p50", |f| format!("{:.2} s", f.to_data_s[0])),
        ("time to data p95", |f| format!("{:.2} s", f.to_data_s[1])),
        ("time to data max", |f| format!("{:.2} s", f.to_data_s[2])),
        ("longest wait for outcome", |f| {
            format!("{:.2} s", f.longest_wait_s)
        }),
        ("requests / action mean", |f| {
            format!("{:.2}", f.per_action.0)
        }),
        ("requests / action max", |f| f.per_action.1.to_string()),
        ("requests after outcome", |f| f.after_outcome.to_string()),
    ];
    let mut out = format!("{:<26}", "");
    for n in names {
        out += &format!("{n:>16}");
    }
    for (label, cell) in rows {
        out += &format!("\n{label:<26}");
        for f in all {
            out += &format!("{:>16}", cell(f));
        }
    }
    out + "\n"
}

/// The figures as JSON, one object per policy.
pub fn to_json(names: &[&str], all: &[Figures]) -> Value {
    let rows = names.iter().zip(all).map(|(n, f)| {
        json!({
            "policy": n, "requests": f.requests, "peak_per_s": f.peak_per_s,
            "share_429": f.share_429, "actions": f.actions, "with_data": f.with_data,
            "time_to_data_s": { "p50": f.to_data_s[0], "p95": f.to_data_s[1], "max": f.to_data_s[2] },
            "longest_wait_for_outcome_s": f.longest_wait_s,
            "requests_per_action": { "mean": f.per_action.0, "max": f.per_action.1 },
            "requests_after_outcome": f.after_outcome, "early_sends": f.early_sends,
        })
    });
    Value::Array(rows.collect())
}
