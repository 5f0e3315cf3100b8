//! The report as readable tables (Markdown, so they paste as they print).

use std::fmt::Write as _;

use serde_json::Value;

/// A table with the first `text` columns left-aligned and the others (figures) right-aligned.
fn table(head: &[&str], text: usize, rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| -> String {
        let mut out = String::from("|");
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            if i < text {
                let _ = write!(out, " {cell}{} |", " ".repeat(pad));
            } else {
                let _ = write!(out, " {}{cell} |", " ".repeat(pad));
            }
        }
        out + "\n"
    };
    let mut out = line(head.iter().map(|h| (*h).to_owned()).collect());
    let mut rule = String::from("|");
    for (i, w) in widths.iter().enumerate() {
        if i < text {
            let _ = write!(rule, "{}|", "-".repeat(w + 2));
        } else {
            let _ = write!(rule, "{}:|", "-".repeat(w + 1));
        }
    }
    out += &rule;
    out += "\n";
    for row in rows {
        out += &line(row.clone());
    }
    out
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn bytes(v: &Value) -> String {
    v.as_u64().map_or("-".into(), thousands)
}

fn num(v: &Value, decimals: usize) -> String {
    v.as_f64().map_or("-".into(), |x| format!("{x:.decimals$}"))
}

fn int(v: &Value) -> String {
    v.as_u64()
        .map(|n| n.to_string())
        .or_else(|| v.as_i64().map(|n| n.to_string()))
        .unwrap_or_else(|| "-".into())
}

fn duration_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

fn kb(n: u64) -> String {
    format!("{:.1} kB", n as f64 / 1000.0)
}

fn browsers(section: &Value) -> Vec<(&String, &Value)> {
    section
        .as_object()
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

fn error_of(v: &Value) -> Option<&str> {
    v.get("error").and_then(Value::as_str)
}

/// The elements of an array, none for anything else.
fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// A string's text, empty for anything else.
fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// An item's `percent` as a share.
fn share(item: &Value) -> String {
    format!("{}%", num(&item["percent"], 1))
}

/// `name`, cut to `max` characters by an ellipsis in the middle, so that both its path and its
/// last segment show.
fn elided(name: String, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name;
    }
    let head = max / 2;
    let tail = max - head - 1;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(n - tail).collect();
    start + "…" + &end
}

/// The rows of a table of one section's browsers: `rows_of` each measured browser, and a row
/// of `columns` cells saying why for each browser that was not.
fn per_browser(
    section: &Value,
    columns: usize,
    mut rows_of: impl FnMut(&str, &Value) -> Vec<Vec<String>>,
) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (browser, part) in browsers(section) {
        match error_of(part) {
            Some(e) => {
                let mut row = vec![browser.clone(), format!("not measured: {e}")];
                row.resize(columns, "-".into());
                rows.push(row);
            }
            None => rows.extend(rows_of(browser, part)),
        }
    }
    rows
}

/// Notes under a table, after a blank line; nothing when there are none.
fn notes_block(notes: &[String]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n");
    for n in notes {
        let _ = writeln!(out, "{n}");
    }
    out
}

/// The report `r` (as `report.json` holds it) as the tables `scripts/bench` prints.
pub fn render(r: &Value) -> String {
    let mut out = heading(r);
    out += &size(&r["size"]);
    out += &startup(r);
    out += &fidelity(r);
    out += &decisions(r);
    out += &memory(r);
    out += &fleet_speed(r);
    out += &fleet_scale(r);
    out += &not_measured(&r["errors"]);
    out
}

fn heading(r: &Value) -> String {
    let browsers: Vec<&str> = items(&r["config"]["browsers"])
        .iter()
        .filter_map(Value::as_str)
        .collect();
    format!(
        "retry-budget benchmark ({} CPUs; browsers: {}; measured in {} s)\n",
        int(&r["machine"]["cpus"]),
        browsers.join(", "),
        num(&r["runtime_s"], 0)
    )
}

fn size(size: &Value) -> String {
    let mut out = String::from(
        "\n## 1. Size of what a page downloads (wasm-pack --target web: the app build in crate/pkg/, \
         the full build with simulate in crate/pkg-full/)\n\n",
    );
    out += &file_sizes(size);
    out += &references(size);
    out += &twiggy_app(&size["twiggy"]["app"]);
    out += &twiggy_full(&size["twiggy"]["full"]);
    out
}

/// Every build's files side by side, then ky's published figure.
fn file_sizes(size: &Value) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for build in items(&size["builds"]) {
        for f in items(&build["files"])
            .iter()
            .filter(|f| error_of(f).is_none())
        {
            let b = &f["bytes"];
            rows.push(vec![
                text(&build["build"]),
                text(&f["file"]),
                bytes(&b["raw"]),
                bytes(&b["gzip9"]),
                bytes(&b["brotli11"]),
            ]);
        }
    }
    if let Some(ky) = items(&size["reference_min_gzip_bytes"]).first() {
        rows.push(vec![
            text(&ky["name"]),
            "min+gzip (published, not measured)".into(),
            "-".into(),
            bytes(&ky["bytes"]),
            "-".into(),
        ]);
    }
    table(
        &["build", "file", "raw B", "gzip -9 B", "brotli 11 B"],
        2,
        &rows,
    )
}

/// Each build's gzip total against ky's, and the other reference points.
fn references(size: &Value) -> String {
    let refs = items(&size["reference_min_gzip_bytes"]);
    let others: Vec<String> = refs
        .iter()
        .skip(1)
        .map(|r| {
            format!(
                "{} {}",
                text(&r["name"]),
                r["bytes"].as_u64().map_or("-".into(), kb)
            )
        })
        .collect();
    let ky = refs.first().and_then(|r| r["bytes"].as_u64()).unwrap_or(0);
    let builds: Vec<String> = items(&size["builds"])
        .iter()
        .filter_map(|b| {
            let total = items(&b["files"]).iter().find(|f| f["file"] == "total")?;
            let g = total["bytes"]["gzip9"].as_u64()?;
            let times = g as f64 / ky.max(1) as f64;
            Some(format!(
                "{} build {} ({times:.1}x ky)",
                text(&b["build"]),
                kb(g)
            ))
        })
        .collect();
    format!(
        "\ngzip -9, wasm + JS glue: {}. Other reference points, min+gzip (constants): {}.\n",
        builds.join(", "),
        others.join(", ")
    )
}

/// The head line of a twiggy table: the module's sum with and without its names.
fn twiggy_head(tw: &Value, what: &str) -> String {
    format!(
        "\n{what} (twiggy top over the same build with its names kept: {} B without them, \
         the shipped module {} B; inlined code counts where it was inlined):\n\n",
        bytes(&tw["sum_bytes"]),
        bytes(&tw["shipped_bytes"])
    )
}

/// The app build's largest items, each with its part, and the bytes of each part.
fn twiggy_app(tw: &Value) -> String {
    if let Some(e) = error_of(tw) {
        return format!("\nApp build, largest items: not measured ({e})\n");
    }
    let mut out = twiggy_head(tw, "App build, the largest items by shallow bytes");
    let top: Vec<Vec<String>> = items(&tw["top"])
        .iter()
        .enumerate()
        .map(|(n, i)| {
            vec![
                (n + 1).to_string(),
                elided(text(&i["item"]), 80),
                text(&i["part"]),
                bytes(&i["bytes"]),
                share(i),
            ]
        })
        .collect();
    out += &table(&["#", "item", "part", "bytes", "share"], 3, &top);
    let parts: Vec<String> = items(&tw["by_part"])
        .iter()
        .map(|p| {
            format!(
                "{} {} B ({})",
                text(&p["part"]),
                bytes(&p["bytes"]),
                share(p)
            )
        })
        .collect();
    out += &format!(
        "\nApp build, all items by part: {}. An exported function's shim counts as glue, with \
         the driver code inlined into it.\n",
        parts.join(", ")
    );
    out
}

/// The full build's bytes by crate.
fn twiggy_full(tw: &Value) -> String {
    if let Some(e) = error_of(tw) {
        return format!("\nFull build, code size by crate: not measured ({e})\n");
    }
    let mut out = twiggy_head(tw, "Full build, code size by crate");
    let crates: Vec<Vec<String>> = items(&tw["by_crate"])
        .iter()
        .map(|c| vec![text(&c["crate"]), bytes(&c["bytes"]), share(c)])
        .collect();
    out += &table(&["crate", "bytes", "share"], 1, &crates);
    out
}

/// The start-up steps: the report's key and the row's label.
const STARTUP_STEPS: [(&str, &str); 6] = [
    ("compile_instantiate_ms", "compile + instantiate"),
    ("init_ms", "init(): fetch + compile + instantiate"),
    ("fetch_ms", "  fetch the bytes"),
    ("compile_ms", "  WebAssembly.compile"),
    ("instantiate_ms", "  instantiate (initSync)"),
    ("ready_ms", "navigation start to module ready"),
];

fn startup(r: &Value) -> String {
    let mut out = format!(
        "\n## 2. Start-up ({} page loads per row, the builds taking turns; every response is no-store, \
         so each load fetches and compiles afresh)\n\n",
        int(&r["config"]["startup_loads_per_mode"])
    );
    let rows = per_browser(&r["startup"], 6, |browser, by_build| {
        browsers(by_build)
            .into_iter()
            .flat_map(|(build, s)| startup_rows(browser, build, s))
            .collect()
    });
    out += &table(
        &[
            "browser",
            "build",
            "step",
            "median ms",
            "p95 ms",
            "first load ms",
        ],
        3,
        &rows,
    );
    out += "\ncompile + instantiate is WebAssembly.compile and initSync of one load, timed together. \
            The builds take turns, which goes first changing every pair of loads; the first load of the \
            session is the app build's, the full build's first load follows it. \
            Firefox's performance.now() counts whole milliseconds here.\n";
    out
}

/// One browser's rows of one build.
fn startup_rows(browser: &str, build: &str, s: &Value) -> Vec<Vec<String>> {
    STARTUP_STEPS
        .iter()
        .map(|(key, label)| {
            let v = &s[*key];
            vec![
                browser.to_owned(),
                build.to_owned(),
                (*label).into(),
                num(&v["p50"], 2),
                num(&v["p95"], 2),
                num(&v["first"], 2),
            ]
        })
        .collect()
}

/// The clocks lateness is measured by: the report's key and the row's label.
const FIDELITY_CLOCKS: [(&str, &str); 3] = [
    ("trace_late_ms", "driver trace vs model"),
    ("server_late_ms", "server arrival vs model"),
    ("wake_late_ms", "timer wake vs planned wait end"),
];

/// The lists of runs that went wrong, in the order the notes give them.
const FIDELITY_LISTS: [&str; 3] = ["outcome_mismatches", "attempt_count_mismatches", "errors"];

fn fidelity(r: &Value) -> String {
    let cfg = &r["config"];
    let mut out = format!(
        "\n## 3. Timing fidelity ({} rounds of every fixture scenario, live against the fixture server, {} at a time)\n\n",
        int(&cfg["fidelity_rounds"]),
        int(&cfg["fidelity_concurrency"])
    );
    out += "How much later than the model attempts 2, 3, ... start, in ms (attempt 1 is time zero on both clocks); \
            early = started before the model's time.\n\n";
    let mut notes = Vec::new();
    let rows = per_browser(&r["fidelity"], 8, |browser, f| {
        notes.extend(fidelity_notes(browser, f));
        fidelity_rows(browser, f)
    });
    out += &table(
        &[
            "browser",
            "measured by",
            "attempts",
            "p50 ms",
            "p99 ms",
            "max ms",
            "min ms",
            "early",
        ],
        2,
        &rows,
    );
    out += &notes_block(&notes);
    out
}

fn fidelity_rows(browser: &str, f: &Value) -> Vec<Vec<String>> {
    FIDELITY_CLOCKS
        .iter()
        .map(|(key, label)| {
            let v = &f[*key];
            vec![
                browser.to_owned(),
                (*label).into(),
                int(&v["n"]),
                num(&v["p50"], 1),
                num(&v["p99"], 1),
                num(&v["max"], 1),
                num(&v["min"], 1),
                int(&v["early"]),
            ]
        })
        .collect()
}

fn fidelity_notes(browser: &str, f: &Value) -> Vec<String> {
    let count = |k: &str| items(&f[k]).len();
    let mut notes = vec![format!(
        "{browser}: {} runs in {} s; outcome differs from the model in {}, attempt count in {}, errors {}",
        int(&f["runs"]),
        num(&f["wall_s"], 0),
        count("outcome_mismatches"),
        count("attempt_count_mismatches"),
        count("errors"),
    )];
    for k in FIDELITY_LISTS {
        for m in items(&f[k]) {
            notes.push(format!("  {browser}: {}", text(m)));
        }
    }
    notes
}

fn decisions(r: &Value) -> String {
    let mut out = String::from("\n## 4. Decision cost\n\n");
    out += &native_decisions(&r["decision"]["native"]);
    out += "\nIn the browser, through the JS API (Schedule A as a JS object in, the report object out):\n\n";
    let rows = per_browser(&r["decision"]["browser"], 4, |browser, b| {
        vec![vec![
            browser.to_owned(),
            format!("{} µs", num(&b["simulate"]["p50_us"], 2)),
            format!("{} µs", num(&b["simulate"]["min_us"], 2)),
            format!("{} µs", num(&b["boundary"]["p50_us"], 3)),
        ]]
    });
    out += &table(
        &[
            "browser",
            "simulate() median",
            "simulate() fastest batch",
            "runningActions() (a bare call)",
        ],
        1,
        &rows,
    );
    out
}

fn native_decisions(native: &Value) -> String {
    if let Some(e) = error_of(native) {
        return format!("Native: not measured ({e})\n");
    }
    let time = |v: &Value| v.as_f64().map_or("-".into(), duration_ns);
    let rows: Vec<Vec<String>> = items(native)
        .iter()
        .map(|b| {
            vec![
                text(&b["name"]),
                time(&b["median_ns"]),
                time(&b["fastest_ns"]),
            ]
        })
        .collect();
    "Native (divan, `cargo bench -p retry-budget-model --bench decisions`):\n\n".to_owned()
        + &table(&["benchmark", "median", "fastest"], 1, &rows)
}

/// The fleet simulation's speed on the default burst scenario: each policy's run and all five.
fn fleet_speed(r: &Value) -> String {
    let mut out = String::from(
        "\n## 6. Fleet simulation speed (divan, `cargo bench -p fleet --bench burst`: the default burst scenario, 10,000 pages x 3 widgets, native)\n\n",
    );
    let fleet = &r["fleet_speed"];
    if let Some(e) = error_of(fleet) {
        return out + &format!("Not measured ({e})\n");
    }
    let time = |v: &Value| v.as_f64().map_or("-".into(), duration_ns);
    let rows: Vec<Vec<String>> = items(fleet)
        .iter()
        .map(|b| {
            let name = text(&b["name"]);
            let label = match name.strip_prefix("policy/") {
                Some(policy) => format!("{policy} alone"),
                None => name.replace('_', " "),
            };
            vec![label, time(&b["median_ns"]), time(&b["fastest_ns"])]
        })
        .collect();
    out += &table(&["run", "median", "fastest"], 1, &rows);
    out
}

/// The fleet at scale: each run's wall and CPU time, peak memory and policies' times, and
/// the fastest of each.
fn fleet_scale(r: &Value) -> String {
    let mut out = String::from(
        "\n## 7. The fleet at scale (a million widgets: `fleet --pages 333333 --widgets 3 --arrive-over 600`, all five policies, native, under `/usr/bin/time -v`)\n\n",
    );
    let scale = &r["fleet_scale"];
    if let Some(e) = error_of(scale) {
        return out + &format!("Not measured ({e})\n");
    }
    let s = |v: &Value| v.as_f64().map_or("-".into(), |s| format!("{s:.2} s"));
    let mut head = vec!["run", "wall", "CPU (user)", "peak RSS"];
    let names: Vec<String> = items(&scale["runs"][0]["policies"])
        .iter()
        .map(|p| text(&p["policy"]))
        .collect();
    head.extend(names.iter().map(String::as_str));
    // A policy's time by the wall clock, then by its thread's CPU time.
    let policy_cells = |policies: &Value| -> Vec<String> {
        let cell = |p: &Value| format!("{} / {}", s(&p["seconds"]), s(&p["cpu_seconds"]));
        items(policies).iter().map(cell).collect()
    };
    let mut rows: Vec<Vec<String>> = items(&scale["runs"])
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let rss = run["max_rss_kb"].as_f64().map_or(0, |kb| kb as u64 * 1024);
            let mut row = vec![(i + 1).to_string(), s(&run["wall_s"]), s(&run["user_s"])];
            row.push(format!("{} MB", thousands(rss / 1_000_000)));
            row.extend(policy_cells(&run["policies"]));
            row
        })
        .collect();
    let fastest = &scale["fastest"];
    let mut row = vec![
        "fastest".into(),
        s(&fastest["wall_s"]),
        s(&fastest["user_s"]),
        "-".into(),
    ];
    row.extend(policy_cells(&fastest["policies"]));
    rows.push(row);
    out += &table(&head, 1, &rows);
    let ratio = |key: &str| {
        fastest[key]
            .as_f64()
            .map_or("-".into(), |r| format!("{r:.2}"))
    };
    out + &format!(
        "\nA policy's cell is its time by the wall clock / by the CPU time of the thread that ran \
         it, which another process on the machine does not lengthen.\n\n\
         ours' time over ky's (fastest of each): {} by the wall clock, {} by CPU time\n",
        ratio("ours_over_ky"),
        ratio("ours_over_ky_cpu")
    )
}

/// The memory measures: the report's key, the row's label, and whether it counts bytes.
const MEMORY_MEASURES: [(&str, &str, bool); 6] = [
    ("wasm_memory_bytes", "wasm memory, bytes", true),
    ("js_heap_used_bytes", "JS heap used, bytes", true),
    ("live_timeouts", "live timers", false),
    ("live_listeners", "live listeners", false),
    ("running_actions", "runningActions()", false),
    ("owned_screens", "ownedScreens()", false),
];

fn memory(r: &Value) -> String {
    let mut out = format!(
        "\n## 5. Memory, timers and listeners around {} actions in one page\n\n",
        int(&r["config"]["memory_actions"])
    );
    let mut notes = Vec::new();
    let rows = per_browser(&r["memory"], 7, |browser, m| {
        notes.push(memory_note(browser, m));
        memory_rows(browser, m)
    });
    out += &table(
        &[
            "browser",
            "measure",
            "before",
            "after half",
            "after all",
            "after 250 ms idle",
            "peak",
        ],
        2,
        &rows,
    );
    out += &notes_block(&notes);
    out
}

fn memory_rows(browser: &str, m: &Value) -> Vec<Vec<String>> {
    MEMORY_MEASURES
        .iter()
        .map(|&(key, label, is_bytes)| {
            let cell = |v: &Value| if is_bytes { bytes(v) } else { int(v) };
            vec![
                browser.to_owned(),
                label.into(),
                cell(&m["before"][key]),
                cell(&m["half"][key]),
                cell(&m["after"][key]),
                cell(&m["after_idle"][key]),
                m["peak"].get(key).map_or("-".into(), cell),
            ]
        })
        .collect()
}

fn memory_note(browser: &str, m: &Value) -> String {
    let outcomes: Vec<String> = m["outcomes"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| format!("{k} {}", int(v))).collect())
        .unwrap_or_default();
    format!(
        "{browser}: {} actions in {} ms; {}",
        int(&m["actions"]),
        num(&m["run_ms"], 0),
        outcomes.join(", ")
    )
}

fn not_measured(errors: &Value) -> String {
    let errors = items(errors);
    if errors.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nNot measured:\n");
    for e in errors {
        let _ = writeln!(out, "- {}", text(e));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let t = table(&["a", "bb"], 1, &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "| a   | bb |\n|-----|---:|\n| xyz |  1 |\n");
        assert_eq!(thousands(174_275), "174,275");
        assert_eq!(thousands(999), "999");
        assert_eq!(elided("abcdefghij".into(), 7), "abc…hij");
        assert_eq!(elided("abc".into(), 7), "abc");
    }

    #[test]
    fn fleet_speed_names_each_policy() {
        let text = "burst        fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ all_five  1.303 s       │ 1.437 s       │ 1.377 s       │ 1.363 s       │ 5       │ 5
╰─ policy                  │               │               │               │         │
   ├─ ours      432.1 ms      │ 572.8 ms      │ 527.2 ms      │ 500.4 ms      │ 5       │ 5
   ╰─ ky defaults      51.35 ms      │ 60.55 ms      │ 52.01 ms      │ 53.68 ms      │ 5       │ 5
";
        let rows: Vec<Value> = crate::divan::parse(text)
            .iter()
            .map(|r| r.to_json())
            .collect();
        let out = fleet_speed(&serde_json::json!({ "fleet_speed": rows }));
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[1].starts_with("| all five "), "{out}");
        assert!(
            lines[2].starts_with("| ours alone ") && lines[2].contains("527.20 ms"),
            "{out}"
        );
        assert!(lines[3].starts_with("| ky defaults alone "), "{out}");
    }

    #[test]
    fn fleet_scale_has_a_row_per_run_and_the_fastest() {
        let run = |wall: f64, ours: f64| {
            serde_json::json!({ "wall_s": wall, "user_s": wall, "max_rss_kb": 102_400.0,
                "policies": [{ "policy": "ours", "seconds": ours, "cpu_seconds": 1.7 },
                             { "policy": "ky defaults", "seconds": 1.0, "cpu_seconds": 1.0 }] })
        };
        let r = serde_json::json!({ "fleet_scale": {
            "runs": [run(7.5, 1.8), run(8.5, 2.2)],
            "fastest": { "wall_s": 7.5, "user_s": 7.5, "ours_over_ky": 1.8,
                         "ours_over_ky_cpu": 1.7,
                         "policies": [{ "policy": "ours", "seconds": 1.8, "cpu_seconds": 1.7 },
                                      { "policy": "ky defaults", "seconds": 1.0,
                                        "cpu_seconds": 1.0 }] },
            "max_rss_kb": 102_400.0 } });
        let out = fleet_scale(&r);
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[0].contains("ky defaults"), "{out}");
        assert!(
            lines[1].contains("7.50 s") && lines[1].contains("104 MB"),
            "{out}"
        );
        assert!(lines[3].starts_with("| fastest"), "{out}");
        assert!(lines[1].contains("| 1.80 s / 1.70 s |"), "{out}");
        assert!(
            out.contains(
                "ours' time over ky's (fastest of each): 1.80 by the wall clock, 1.70 by CPU time"
            ),
            "{out}"
        );
    }
}
