//! Reads divan's table (`cargo bench -p retry-budget --bench decisions`).

use serde_json::{json, Value};

/// One benchmark's times, in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Group path and name, `decision/start`.
    pub name: String,
    pub fastest_ns: f64,
    pub median_ns: f64,
    pub mean_ns: f64,
    pub samples: u64,
}

impl Row {
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "fastest_ns": self.fastest_ns,
            "median_ns": self.median_ns,
            "mean_ns": self.mean_ns,
            "samples": self.samples,
        })
    }
}

/// `43.26 ns`, `1.01 µs`, `2 ms`, `1.5 s` in nanoseconds.
fn nanos(text: &str) -> Option<f64> {
    let mut parts = text.split_whitespace();
    let value: f64 = parts.next()?.parse().ok()?;
    let scale = match parts.next()? {
        "ps" => 1e-3,
        "ns" => 1.0,
        "µs" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some(value * scale)
}

/// A row's first column: the name, which may hold spaces (an argument such as `ky defaults`),
/// and the fastest time after it (`51.35 ms`); a group's row has the name alone.
fn name_and_fastest(column: &str) -> (String, Option<f64>) {
    let words: Vec<&str> = column.split_whitespace().collect();
    if let [name @ .., value, unit] = words.as_slice() {
        if let Some(ns) = nanos(&format!("{value} {unit}")).filter(|_| !name.is_empty()) {
            return (name.join(" "), Some(ns));
        }
    }
    (words.join(" "), None)
}

/// The benchmarks of a divan table; groups become path prefixes.
pub fn parse(text: &str) -> Vec<Row> {
    let mut groups: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        let prefix = line
            .chars()
            .take_while(|c| matches!(c, '│' | '├' | '╰' | '─' | ' '))
            .count();
        if prefix == 0 {
            // The header (the file's name and the column names) or anything else.
            continue;
        }
        let depth = prefix / 3;
        let rest: String = line.chars().skip(prefix).collect();
        let columns: Vec<&str> = rest.split('│').map(str::trim).collect();
        let Some(first) = columns.first() else {
            continue;
        };
        let (name, fastest) = name_and_fastest(first);
        groups.truncate(depth.saturating_sub(1));
        let Some(fastest_ns) = fastest else {
            groups.push(name);
            continue;
        };
        let path = groups
            .iter()
            .map(String::as_str)
            .chain([name.as_str()])
            .collect::<Vec<_>>()
            .join("/");
        let (Some(median_ns), Some(mean_ns)) = (
            columns.get(2).and_then(|c| nanos(c)),
            columns.get(3).and_then(|c| nanos(c)),
        ) else {
            continue;
        };
        rows.push(Row {
            name: path,
            fastest_ns,
            median_ns,
            mean_ns,
            samples: columns.get(4).and_then(|c| c.parse().ok()).unwrap_or(0),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "Timer precision: 16 ns
decisions                   fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ decision                               │               │               │               │         │
│  ├─ response_200          43.26 ns      │ 278 ns        │ 44.25 ns      │ 46.63 ns      │ 100     │ 6400
│  ╰─ timer_after_wait      52.21 ns      │ 868.2 ns      │ 56.3 ns       │ 64.68 ns      │ 100     │ 3200
╰─ schedule_a                             │               │               │               │         │
   ├─ decisions             352.8 ns      │ 479.8 ns      │ 383.3 ns      │ 382.6 ns      │ 100     │ 400
   ╰─ simulate              7.454 µs      │ 21.25 µs      │ 10.18 µs      │ 9.925 µs      │ 100     │ 100
";

    #[test]
    fn reads_the_table() {
        let rows = parse(SAMPLE);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "decision/response_200",
                "decision/timer_after_wait",
                "schedule_a/decisions",
                "schedule_a/simulate"
            ]
        );
        assert_eq!(rows[0].median_ns, 44.25);
        assert!((rows[3].median_ns - 10_180.0).abs() < 1e-6);
        assert_eq!(rows[3].samples, 100);
    }

    #[test]
    fn names_may_hold_spaces() {
        let rows = parse(
            "burst        fastest       │ slowest       │ median        │ mean          │ samples │ iters
╰─ policy                  │               │               │               │         │
   ├─ ky defaults  51.35 ms │ 60.55 ms      │ 52.01 ms      │ 53.68 ms      │ 5       │ 5
   ╰─ ours         432.1 ms │ 572.8 ms      │ 527.2 ms      │ 500.4 ms      │ 5       │ 5
",
        );
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["policy/ky defaults", "policy/ours"]);
        assert!((rows[0].fastest_ns - 51_350_000.0).abs() < 1e-3);
    }
}
