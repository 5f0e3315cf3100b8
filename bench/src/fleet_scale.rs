//! The fleet at scale: what `/usr/bin/time -v fleet --pages 333333 --widgets 3 --arrive-over
//! 600` wrote for each run (the command's own line with each policy's time, then `time`'s
//! figures), read into the report: each run's wall and CPU time, peak memory and policies'
//! times, and the fastest of the runs.

use std::path::PathBuf;

use serde_json::{json, Value};

/// One run read from its text: the command's line and `time -v`'s.
pub fn parse(text: &str) -> Result<Value, String> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name)?.trim().strip_prefix(':'))
            .map(str::trim)
            .ok_or_else(|| format!("no \"{name}\" line"))
    };
    let number = |name: &str| -> Result<f64, String> {
        let v = field(name)?;
        v.parse().map_err(|_| format!("{name}: not a number: {v}"))
    };
    let wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")?;
    Ok(json!({
        "command": field("Command being timed")?.trim_matches('"'),
        "wall_s": clock_seconds(wall).ok_or_else(|| format!("wall clock: {wall}"))?,
        "user_s": number("User time (seconds)")?,
        "system_s": number("System time (seconds)")?,
        "max_rss_kb": number("Maximum resident set size (kbytes)")?,
        "policies": policies(text)?,
    }))
}

/// `h:mm:ss` or `m:ss.ss` as seconds.
fn clock_seconds(text: &str) -> Option<f64> {
    text.split(':').try_fold(0.0, |total, part| {
        Some(total * 60.0 + part.parse::<f64>().ok()?)
    })
}

/// Each policy's time from the command's line:
/// `fleet: 5 policies in 10.445 s (ours 2.523, ..., naive x3 1.137 s)`.
fn policies(text: &str) -> Result<Vec<Value>, String> {
    let line = text
        .lines()
        .find(|l| l.starts_with("fleet: "))
        .ok_or("no \"fleet:\" line")?;
    let inner = line
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(" s)"))
        .ok_or_else(|| format!("unreadable: {line}"))?;
    inner
        .split(", ")
        .map(|item| {
            let (name, seconds) = item.rsplit_once(' ').ok_or(format!("unreadable: {item}"))?;
            let seconds: f64 = seconds.parse().map_err(|_| format!("unreadable: {item}"))?;
            Ok(json!({ "policy": name, "seconds": seconds }))
        })
        .collect()
}

/// The section of the report: every run, and the fastest figures over the runs (the least
/// disturbed by whatever else the machine was doing) with ours' time over ky's.
pub fn section(paths: &[PathBuf], errors: &mut Vec<String>) -> Value {
    let mut runs = Vec::new();
    for path in paths {
        let read = std::fs::read_to_string(path).map_err(|e| e.to_string());
        match read.and_then(|text| parse(&text)) {
            Ok(run) => runs.push(run),
            Err(e) => {
                errors.push(format!("fleet at scale: {}: {e}", path.display()));
                return json!({ "error": format!("{}: {e}", path.display()) });
            }
        }
    }
    if runs.is_empty() {
        errors.push("fleet at scale: no runs".into());
        return json!({ "error": "no runs" });
    }
    let least = |key: &str| {
        runs.iter()
            .filter_map(|r| r[key].as_f64())
            .fold(f64::MAX, f64::min)
    };
    let names: Vec<String> = items(&runs[0]["policies"])
        .iter()
        .filter_map(|p| p["policy"].as_str().map(str::to_owned))
        .collect();
    let fastest: Vec<Value> = names
        .iter()
        .map(|name| {
            let seconds = runs
                .iter()
                .flat_map(|r| items(&r["policies"]))
                .filter(|p| p["policy"] == name.as_str())
                .filter_map(|p| p["seconds"].as_f64())
                .fold(f64::MAX, f64::min);
            json!({ "policy": name, "seconds": seconds })
        })
        .collect();
    let of = |name: &str| {
        fastest
            .iter()
            .find(|p| p["policy"] == name)
            .and_then(|p| p["seconds"].as_f64())
    };
    let ratio = of("ours").zip(of("ky defaults")).map(|(a, b)| a / b);
    let most_rss = runs
        .iter()
        .filter_map(|r| r["max_rss_kb"].as_f64())
        .fold(0.0, f64::max);
    json!({
        "runs": runs,
        "fastest": {
            "wall_s": least("wall_s"),
            "user_s": least("user_s"),
            "policies": fastest,
            "ours_over_ky": ratio,
        },
        "max_rss_kb": most_rss,
    })
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "fleet: 5 policies in 10.445 s (ours 2.523, ours+jitter 2.880, ours no-share 2.468, ky defaults 1.437, naive x3 1.137 s)
\tCommand being timed: \"target/release/fleet --pages 333333 --widgets 3 --arrive-over 600\"
\tUser time (seconds): 9.74
\tSystem time (seconds): 0.30
\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:10.44
\tMaximum resident set size (kbytes): 102356
";

    #[test]
    fn a_run_is_read_from_the_commands_line_and_times() {
        let run = parse(RUN).expect("readable");
        assert_eq!(run["wall_s"], 10.44);
        assert_eq!(run["user_s"], 9.74);
        assert_eq!(run["max_rss_kb"], 102356.0);
        assert_eq!(
            run["policies"][3],
            json!({ "policy": "ky defaults", "seconds": 1.437 })
        );
        assert_eq!(run["policies"].as_array().map(Vec::len), Some(5));
        assert_eq!(clock_seconds("1:02:03.5"), Some(3723.5));
        assert!(parse("fleet: nothing").is_err());
    }
}
