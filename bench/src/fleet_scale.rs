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

/// Each policy's time from the command's lines: by the wall clock,
/// `fleet: 5 policies in 10.445 s (ours 2.523, ..., naive x3 1.137 s)`, and by its thread's
/// CPU time where the command could read it,
/// `fleet: 5 policies in 10.402 s of CPU (ours 2.511, ..., naive x3 1.130 s)`.
fn policies(text: &str) -> Result<Vec<Value>, String> {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("fleet: ")).collect();
    let (cpu, wall): (Vec<&str>, Vec<&str>) = lines.iter().partition(|l| l.contains(" s of CPU ("));
    let wall = times(wall.first().ok_or("no \"fleet:\" line")?)?;
    let cpu = cpu.first().map(|line| times(line)).transpose()?;
    wall.into_iter()
        .enumerate()
        .map(|(i, (name, seconds))| {
            let cpu_seconds = match &cpu {
                None => None,
                Some(cpu) => match cpu.get(i) {
                    Some((n, s)) if *n == name => Some(*s),
                    _ => {
                        return Err(format!(
                            "the CPU line does not list {name} where the wall clock's does"
                        ))
                    }
                },
            };
            Ok(json!({ "policy": name, "seconds": seconds, "cpu_seconds": cpu_seconds }))
        })
        .collect()
}

/// The policies' names and seconds in one of the command's lines.
fn times(line: &str) -> Result<Vec<(String, f64)>, String> {
    let inner = line
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(" s)"))
        .ok_or_else(|| format!("unreadable: {line}"))?;
    inner
        .split(", ")
        .map(|item| {
            let (name, seconds) = item.rsplit_once(' ').ok_or(format!("unreadable: {item}"))?;
            let seconds: f64 = seconds.parse().map_err(|_| format!("unreadable: {item}"))?;
            Ok((name.to_owned(), seconds))
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
    // The least of each policy's times over the runs, by one clock (`null` where a run lacks it).
    let least_of = |name: &str, key: &str| {
        let times = runs
            .iter()
            .flat_map(|r| items(&r["policies"]))
            .filter(|p| p["policy"] == name)
            .map(|p| p[key].as_f64());
        times
            .collect::<Option<Vec<f64>>>()
            .and_then(|t| t.into_iter().reduce(f64::min))
    };
    let fastest: Vec<Value> = names
        .iter()
        .map(|name| {
            json!({ "policy": name, "seconds": least_of(name, "seconds"),
                    "cpu_seconds": least_of(name, "cpu_seconds") })
        })
        .collect();
    let ratio = |key: &str| {
        let of = |name: &str| least_of(name, key);
        of("ours").zip(of("ky defaults")).map(|(a, b)| a / b)
    };
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
            "ours_over_ky": ratio("seconds"),
            "ours_over_ky_cpu": ratio("cpu_seconds"),
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

    const WALL: &str = "fleet: 5 policies in 10.445 s (ours 2.523, ours+jitter 2.880, ours no-share 2.468, ky defaults 1.437, naive x3 1.137 s)";
    const CPU: &str = "fleet: 5 policies in 5.302 s of CPU (ours 1.201, ours+jitter 1.540, ours no-share 0.990, ky defaults 0.681, naive x3 0.890 s)";
    const TIME: &str = "\tCommand being timed: \"target/release/fleet --pages 333333 --widgets 3 --arrive-over 600\"
\tUser time (seconds): 9.74
\tSystem time (seconds): 0.30
\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:10.44
\tMaximum resident set size (kbytes): 102356
";

    fn run_text(lines: &[&str]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect::<String>() + TIME
    }

    #[test]
    fn a_run_is_read_from_the_commands_lines_and_times() {
        let run = parse(&run_text(&[WALL, CPU])).expect("readable");
        assert_eq!(run["wall_s"], 10.44);
        assert_eq!(run["user_s"], 9.74);
        assert_eq!(run["max_rss_kb"], 102356.0);
        let ky = json!({ "policy": "ky defaults", "seconds": 1.437, "cpu_seconds": 0.681 });
        assert_eq!(run["policies"][3], ky);
        assert_eq!(run["policies"].as_array().map(Vec::len), Some(5));
        assert_eq!(clock_seconds("1:02:03.5"), Some(3723.5));
        assert!(parse("fleet: nothing").is_err());
    }

    #[test]
    fn a_run_without_the_cpu_line_has_no_cpu_times_and_a_mismatched_one_is_refused() {
        let run = parse(&run_text(&[WALL])).expect("readable");
        assert_eq!(run["policies"][0]["cpu_seconds"], Value::Null);
        let other = CPU.replace("ours 1.201, ", "");
        let e = parse(&run_text(&[WALL, &other])).expect_err("a policy missing");
        assert!(e.contains("ours"), "{e}");
    }

    #[test]
    fn the_section_takes_each_policys_least_time_by_each_clock() {
        let dir = std::env::temp_dir().join(format!("fleet-scale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let slower_cpu = CPU.replace("ours 1.201", "ours 1.500");
        let faster_wall = WALL.replace("ours 2.523", "ours 2.000");
        let paths: Vec<PathBuf> = [
            run_text(&[WALL, CPU]),
            run_text(&[&faster_wall, &slower_cpu]),
        ]
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = dir.join(format!("run-{i}.txt"));
            std::fs::write(&path, text).expect("written");
            path
        })
        .collect();
        let mut errors = Vec::new();
        let section = section(&paths, &mut errors);
        std::fs::remove_dir_all(&dir).expect("removed");
        assert!(errors.is_empty(), "{errors:?}");
        let fastest = &section["fastest"];
        assert_eq!(
            fastest["policies"][0],
            json!({ "policy": "ours", "seconds": 2.0, "cpu_seconds": 1.201 })
        );
        assert_eq!(fastest["ours_over_ky"], 2.0 / 1.437);
        assert_eq!(fastest["ours_over_ky_cpu"], 1.201 / 0.681);
    }
}
