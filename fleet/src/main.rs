//! `fleet`: a deterministic simulation of many clients against one rate-limited service, one
//! column per retry policy. The simulation is the `fleet` library; this reads the flags
//! (`fleet --help`), times each policy's run and prints the table, or the library's report as
//! JSON with `--json`. Each policy's time goes to stderr.

use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser};
use fleet::report::{decimal, fixed, secs};
use fleet::{columns, run_column, Fleet, Options, Scenario};

/// Many pages of widgets loading against one rate-limited service: each retry policy against
/// its own fresh service with the same arrivals. The defaults are the burst scenario.
#[derive(Debug, Parser)]
#[command(name = "fleet")]
struct Flags {
    #[command(flatten)]
    options: Options,
    /// Print the report as JSON (what simulateFleet returns) instead of the table
    #[arg(long)]
    json: bool,
}

/// The scenario the options describe; a bad one ends the command with its flag named.
fn scenario(options: &Options) -> Scenario {
    options.scenario().unwrap_or_else(|e| {
        let message = format!("{}: {}", e.option.flag(), e.message);
        Flags::command()
            .error(clap::error::ErrorKind::ValueValidation, message)
            .exit()
    })
}

/// How long one policy's run took: by the wall clock, and by the CPU time of the thread that
/// ran it where the system tells it. Another process on a busy machine lengthens the first and
/// not the second, so the second is what compares the policies' work from run to run.
struct Timing {
    wall: Duration,
    cpu: Option<Duration>,
}

/// Runs every policy, timing each.
fn timed_runs(scenario: &Scenario) -> (Fleet, Vec<Timing>) {
    let mut timings = Vec::new();
    let runs = columns()
        .iter()
        .map(|column| {
            let (clock, cpu) = (Instant::now(), thread_cpu());
            let run = run_column(scenario, column);
            let cpu = thread_cpu()
                .zip(cpu)
                .map(|(end, start)| end.saturating_sub(start));
            timings.push(Timing {
                wall: clock.elapsed(),
                cpu,
            });
            run
        })
        .collect();
    (Fleet { runs }, timings)
}

/// The CPU time the calling thread has used so far.
#[cfg(unix)]
fn thread_cpu() -> Option<Duration> {
    // Uninitialised rather than built field by field: on some targets `timespec` has private
    // padding.
    let mut t = std::mem::MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: clock_gettime writes one whole timespec through the pointer, to a local that
    // outlives the call, and reads nothing through it.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, t.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: it returned 0, so it wrote the timespec.
    let t = unsafe { t.assume_init() };
    let seconds = u64::try_from(t.tv_sec).ok()?;
    let nanos = u32::try_from(t.tv_nsec).ok()?;
    Some(Duration::new(seconds, nanos))
}

#[cfg(not(unix))]
fn thread_cpu() -> Option<Duration> {
    None
}

/// The line on stderr with each policy's time by one clock:
/// `fleet: 5 policies in 4.390 s (ours 1.072, ..., naive x3 0.489 s)`, with "of CPU" after the
/// total for the CPU clock. `None` where a policy's time is not known.
fn times_line(fleet: &Fleet, times: &[Option<Duration>], clock: &str) -> Option<String> {
    let times: Vec<f64> = times
        .iter()
        .map(|t| t.map(|t| t.as_secs_f64()))
        .collect::<Option<_>>()?;
    let each: Vec<String> = (fleet.runs.iter().zip(&times))
        .map(|(run, s)| format!("{} {s:.3}", run.name))
        .collect();
    let total: f64 = times.iter().sum();
    let n = times.len();
    Some(format!(
        "fleet: {n} policies in {total:.3} s{clock} ({} s)",
        each.join(", ")
    ))
}

/// How one table cell is written from a policy's figures.
type Cell = fn(&fleet::Figures) -> String;

/// Seconds from nanoseconds, to two places.
fn s2(ns: u64) -> String {
    format!("{} s", fixed(secs(ns), 2))
}

/// One of the times to data (0: p50, 1: p95, 2: max), or "-" when no action had data.
fn to_data(f: &fleet::Figures, which: usize) -> String {
    if f.with_data == 0 {
        return "-".into();
    }
    s2(f.to_data_ns[which])
}

/// The table: a label and one cell per policy on each row.
fn table(fleet: &Fleet) -> String {
    let rows: [(&str, Cell); 11] = [
        ("requests received", |f| f.requests.to_string()),
        ("peak requests / s", |f| f.peak_per_s.to_string()),
        // As the report writes it (six places), then as a percentage to one place.
        ("answered 429", |f| {
            format!("{}%", fixed(decimal(f.refused, f.requests, 6) * 100.0, 1))
        }),
        ("actions with data", |f| {
            format!("{} / {}", f.with_data, f.actions)
        }),
        ("time to data p50", |f| to_data(f, 0)),
        ("time to data p95", |f| to_data(f, 1)),
        ("time to data max", |f| to_data(f, 2)),
        ("longest wait for outcome", |f| s2(f.longest_wait_ns)),
        ("requests / action mean", |f| {
            fixed(decimal(f.requests, f.actions, 6), 2)
        }),
        ("requests / action max", |f| f.most_per_action.to_string()),
        ("requests after outcome", |f| f.after_outcome.to_string()),
    ];
    // Each policy's column: its name, then its cells, right-aligned 16 wide, or wider with a
    // space before its widest cell ("1000000 / 1000000" is 17).
    let columns: Vec<Vec<String>> = (fleet.runs.iter())
        .map(|run| {
            let cells = rows.iter().map(|(_, cell)| cell(&run.figures));
            std::iter::once(run.name.to_owned()).chain(cells).collect()
        })
        .collect();
    let widths: Vec<usize> = (columns.iter())
        .map(|column| column.iter().map(|c| c.len() + 1).fold(16, usize::max))
        .collect();
    let labels = std::iter::once("").chain(rows.iter().map(|(label, _)| *label));
    let mut out = String::new();
    for (i, label) in labels.enumerate() {
        out += &format!("{label:<26}");
        for (column, &width) in columns.iter().zip(&widths) {
            out += &format!("{:>width$}", column[i]);
        }
        out += "\n";
    }
    out
}

fn main() {
    let flags = Flags::parse();
    let (fleet, timings) = timed_runs(&scenario(&flags.options));
    if flags.json {
        let json = serde_json::to_string_pretty(&fleet.report());
        println!("{}", json.expect("the report is plain data"));
    } else {
        print!("{}", table(&fleet));
    }
    let wall: Vec<_> = timings.iter().map(|t| Some(t.wall)).collect();
    let cpu: Vec<_> = timings.iter().map(|t| t.cpu).collect();
    for line in [
        times_line(&fleet, &wall, ""),
        times_line(&fleet, &cpu, " of CPU"),
    ] {
        line.into_iter().for_each(|line| eprintln!("{line}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, String> {
        Flags::try_parse_from(["fleet"].iter().chain(args)).map_err(|e| e.to_string())
    }

    #[test]
    fn flags_set_the_options_and_absent_ones_take_the_defaults() {
        let flags = parse(&["--pages", "20", "--limiter", "window", "--json"]).expect("valid");
        assert!(flags.json);
        let expected = Options {
            pages: 20,
            limiter: fleet::LimiterKind::Window,
            ..Options::default()
        };
        assert_eq!(flags.options, expected);
        let flags = parse(&[
            "--arrive-over",
            "2.5",
            "--retry-after",
            "date",
            "--window",
            "3",
        ]);
        let o = flags.expect("valid").options;
        assert_eq!((o.arrive_over_s, o.window_s), (2.5, 3));
        assert_eq!(o.retry_after, fleet::service::RetryAfterMode::Date);
        assert!(!parse(&[]).expect("valid").json);
    }

    #[test]
    fn a_bad_flag_is_named() {
        let fails = |args: &[&str], names: &str| {
            let message = parse(args).expect_err("rejected");
            assert!(message.contains(names), "{args:?}: {message}");
        };
        fails(&["--pages", "x"], "--pages");
        fails(&["--pages", "2.5"], "--pages");
        fails(&["--limiter", "leaky"], "--limiter");
        fails(&["--seed"], "--seed");
        fails(&["--fast"], "--fast");
        // A negative value is the flag's, not an unknown flag of its own ("-1"): a whole
        // number's is refused as it is read, a number's by the option's range.
        for flag in [
            "--pages",
            "--widgets",
            "--limit",
            "--window",
            "--latency",
            "--serve",
        ] {
            fails(&[flag, "-1"], flag);
        }
        fails(&["--seed", "-1"], "--seed");
        for (flag, opt) in [
            ("--arrive-over", fleet::Opt::ArriveOver),
            ("--rate", fleet::Opt::Rate),
            ("--burst", fleet::Opt::Burst),
            ("--tail", fleet::Opt::Tail),
        ] {
            let flags = parse(&[flag, "-0.1"]).expect("read as a number");
            let e = flags.options.scenario().expect_err("out of range");
            assert_eq!(e.option, opt, "{flag}");
        }
    }

    #[test]
    fn the_help_lists_every_flag_with_its_default() {
        let help = Flags::command().render_help().to_string();
        for opt in fleet::Opt::ALL {
            assert!(help.contains(opt.flag()), "{}: {help}", opt.flag());
        }
        assert!(help.contains("[default: 10000]"), "{help}");
        assert!(help.contains("[default: seconds]"), "{help}");
    }

    /// A run of one policy, "ours", with `figures`.
    fn fleet_of_ours(figures: fleet::Figures) -> Fleet {
        Fleet {
            runs: vec![fleet::PolicyRun {
                name: "ours",
                figures,
                per_tick: Vec::new(),
            }],
        }
    }

    #[test]
    fn the_times_are_written_by_each_clock_and_an_unknown_one_is_left_out() {
        let fleet = fleet_of_ours(fleet::Figures::default());
        let known = [Some(Duration::from_millis(1072))];
        let line = times_line(&fleet, &known, " of CPU");
        assert_eq!(
            line.as_deref(),
            Some("fleet: 1 policies in 1.072 s of CPU (ours 1.072 s)")
        );
        assert_eq!(times_line(&fleet, &[None], " of CPU"), None);
    }

    /// The thread's CPU clock runs while it works and stands still while it sleeps, which the
    /// wall clock does not.
    #[cfg(unix)]
    #[test]
    fn the_cpu_clock_counts_work_and_not_sleep() {
        let start = thread_cpu().expect("the thread's CPU clock on unix");
        let mut x = 0u64;
        while thread_cpu().expect("readable") < start + Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let before_sleep = thread_cpu().expect("readable");
        let wall = Instant::now();
        std::thread::sleep(Duration::from_millis(200));
        let slept = thread_cpu().expect("readable") - before_sleep;
        assert!(x > 0);
        assert!(slept < wall.elapsed() / 2, "{slept:?} of CPU while asleep");
    }

    /// The table of one policy, "ours", with `figures`.
    fn table_of_ours(figures: fleet::Figures) -> String {
        table(&fleet_of_ours(figures))
    }

    /// Each row of the table shows its own figure, under the policy's name.
    #[test]
    fn each_row_shows_its_own_figure() {
        let s = 1_000_000_000;
        let figures = fleet::Figures {
            requests: 5,
            peak_per_s: 4,
            refused: 3,
            actions: 3,
            with_data: 2,
            to_data_ns: [s, 2 * s, 3 * s],
            longest_wait_ns: 3 * s + s / 2,
            most_per_action: 2,
            after_outcome: 1,
            early_sends: 0,
        };
        let text = table_of_ours(figures);
        let mut lines = text.lines();
        assert_eq!(lines.next().map(str::trim), Some("ours"));
        let rows: Vec<(&str, &str)> = lines.map(|l| (l[..26].trim(), l[26..].trim())).collect();
        let expected = [
            ("requests received", "5"),
            ("peak requests / s", "4"),
            ("answered 429", "60.0%"),
            ("actions with data", "2 / 3"),
            ("time to data p50", "1.00 s"),
            ("time to data p95", "2.00 s"),
            ("time to data max", "3.00 s"),
            ("longest wait for outcome", "3.50 s"),
            ("requests / action mean", "1.67"),
            ("requests / action max", "2"),
            ("requests after outcome", "1"),
        ];
        assert_eq!(rows, expected);
    }

    /// Where no action had data, no time to it is shown: not "0.00 s", which reads as data at
    /// once.
    #[test]
    fn no_data_shows_no_time_to_it() {
        let figures = fleet::Figures {
            requests: 2,
            actions: 2,
            longest_wait_ns: 4_000_000_000,
            ..fleet::Figures::default()
        };
        let text = table_of_ours(figures);
        let cell = |label: &str| {
            let line = text.lines().find(|l| l.starts_with(label));
            line.map(|l| l[26..].trim().to_owned())
        };
        for label in ["time to data p50", "time to data p95", "time to data max"] {
            assert_eq!(cell(label).as_deref(), Some("-"), "{text}");
        }
        assert_eq!(cell("longest wait for outcome").as_deref(), Some("4.00 s"));
    }

    /// A figure on a tie is rounded half up from its decimal value, as the page writes it:
    /// 8,400 requests for 3,200 actions is 2.625, written 2.63 (where `{:.2}` wrote 2.62),
    /// 1.005 s is 1.01 s (1.00 s), and 1,029 answered 429 of 8,400 is 12.25%, written 12.3%
    /// (12.2%).
    #[test]
    fn a_tie_is_rounded_half_up_as_the_page_rounds_it() {
        let figures = fleet::Figures {
            requests: 8400,
            peak_per_s: 8,
            refused: 1029,
            actions: 3200,
            with_data: 3200,
            to_data_ns: [1_005_000_000, 2_675_000_000, 2_675_000_000],
            longest_wait_ns: 1_005_000_000,
            most_per_action: 3,
            after_outcome: 0,
            early_sends: 0,
        };
        let text = table_of_ours(figures);
        let cell = |label: &str| {
            let line = text.lines().find(|l| l.starts_with(label)).expect("a row");
            line[26..].trim().to_owned()
        };
        assert_eq!(cell("requests / action mean"), "2.63");
        assert_eq!(cell("time to data p50"), "1.01 s");
        assert_eq!(cell("time to data p95"), "2.68 s");
        assert_eq!(cell("longest wait for outcome"), "1.01 s");
        assert_eq!(cell("answered 429"), "12.3%");
    }

    /// A cell wider than a column's 16 characters widens its column, with a space before it:
    /// seven-digit counts of actions ran into the next column's.
    #[test]
    fn a_wide_cell_widens_its_column_and_stays_apart() {
        let figures = fleet::Figures {
            actions: 1_000_000,
            with_data: 1_000_000,
            ..fleet::Figures::default()
        };
        let run = |name| fleet::PolicyRun {
            name,
            figures: figures.clone(),
            per_tick: Vec::new(),
        };
        let text = table(&Fleet {
            runs: vec![run("ours"), run("ky defaults")],
        });
        let data = (text.lines())
            .find(|l| l.starts_with("actions with data"))
            .expect("the row");
        assert!(
            data.ends_with(" 1000000 / 1000000 1000000 / 1000000"),
            "{data:?}"
        );
        let names = text.lines().next().expect("the names");
        assert_eq!(names.len(), data.len(), "{text}");
    }
}
