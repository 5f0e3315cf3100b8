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

pub fn render(r: &Value) -> String {
    let mut out = String::new();
    let cfg = &r["config"];
    let _ = writeln!(
        out,
        "retry-budget benchmark ({} CPUs; browsers: {}; measured in {} s)",
        int(&r["machine"]["cpus"]),
        cfg["browsers"]
            .as_array()
            .map(|a| a
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default(),
        num(&r["runtime_s"], 0)
    );

    // 1. Size.
    let size = &r["size"];
    let _ = writeln!(
        out,
        "\n## 1. Size of what a page downloads (`{}`)\n",
        size["target"].as_str().unwrap_or_default()
    );
    let rows: Vec<Vec<String>> = size["files"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|f| error_of(f).is_none())
        .map(|f| {
            let b = &f["bytes"];
            vec![
                f["file"].as_str().unwrap_or_default().to_owned(),
                bytes(&b["raw"]),
                bytes(&b["gzip9"]),
                bytes(&b["brotli11"]),
            ]
        })
        .collect();
    out += &table(&["file", "raw B", "gzip -9 B", "brotli 11 B"], 1, &rows);
    let refs: Vec<String> = size["reference_min_gzip_bytes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["name"].as_str().unwrap_or_default(),
                r["bytes"].as_u64().map_or("-".into(), kb)
            )
        })
        .collect();
    let total_gzip = size["files"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["file"] == "total"))
        .and_then(|f| f["bytes"]["gzip9"].as_u64());
    let _ = writeln!(
        out,
        "\nReference points, min+gzip (constants, not measured here): {}.{}",
        refs.join(", "),
        total_gzip
            .map(|g| format!(
                " This package, gzip -9: {} ({:.1}x ky).",
                kb(g),
                g as f64 / 7300.0
            ))
            .unwrap_or_default()
    );
    let tw = &size["twiggy"];
    if let Some(e) = error_of(tw) {
        let _ = writeln!(out, "\nCode size by crate: not measured ({e})");
    } else {
        let _ = writeln!(
            out,
            "\nCode size by crate (twiggy top over the same build with its names kept: {} B without them, \
             the shipped module {} B; inlined code counts where it was inlined):\n",
            bytes(&tw["sum_bytes"]),
            bytes(&tw["shipped_bytes"])
        );
        let rows: Vec<Vec<String>> = tw["by_crate"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|c| {
                vec![
                    c["crate"].as_str().unwrap_or_default().to_owned(),
                    bytes(&c["bytes"]),
                    format!("{}%", num(&c["percent"], 1)),
                ]
            })
            .collect();
        out += &table(&["crate", "bytes", "share"], 1, &rows);
        let _ = writeln!(out, "\nLargest items (twiggy top -n 15):\n");
        let rows: Vec<Vec<String>> = tw["top"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|i| {
                let mut name = i["item"].as_str().unwrap_or_default().to_owned();
                if name.chars().count() > 90 {
                    name = name.chars().take(89).collect::<String>() + "…";
                }
                vec![
                    name,
                    bytes(&i["bytes"]),
                    format!("{}%", num(&i["percent"], 1)),
                ]
            })
            .collect();
        out += &table(&["item", "bytes", "share"], 1, &rows);
    }

    // 2. Start-up.
    let _ = writeln!(
        out,
        "\n## 2. Start-up ({} page loads per row; every response is no-store, so each load fetches and compiles afresh)\n",
        int(&cfg["startup_loads_per_mode"])
    );
    let mut rows = Vec::new();
    for (browser, s) in browsers(&r["startup"]) {
        if let Some(e) = error_of(s) {
            rows.push(vec![
                browser.clone(),
                format!("not measured: {e}"),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        for (key, label) in [
            ("init_ms", "init(): fetch + compile + instantiate"),
            ("fetch_ms", "  fetch the bytes"),
            ("compile_ms", "  WebAssembly.compile"),
            ("instantiate_ms", "  instantiate (initSync)"),
            ("ready_ms", "navigation start to module ready"),
        ] {
            let v = &s[key];
            rows.push(vec![
                browser.clone(),
                label.into(),
                num(&v["p50"], 2),
                num(&v["p95"], 2),
                num(&v["first"], 2),
            ]);
        }
    }
    out += &table(
        &["browser", "step", "median ms", "p95 ms", "first load ms"],
        2,
        &rows,
    );

    // 3. Timing fidelity.
    let _ = writeln!(
        out,
        "\n## 3. Timing fidelity ({} rounds of every fixture scenario, live against the fixture server, {} at a time)\n",
        int(&cfg["fidelity_rounds"]),
        int(&cfg["fidelity_concurrency"])
    );
    let _ = writeln!(
        out,
        "How much later than the model attempts 2, 3, ... start, in ms (attempt 1 is time zero on both clocks); \
         early = started before the model's time.\n"
    );
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (browser, f) in browsers(&r["fidelity"]) {
        if let Some(e) = error_of(f) {
            rows.push(vec![
                browser.clone(),
                format!("not measured: {e}"),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        for (key, label) in [
            ("trace_late_ms", "driver trace vs model"),
            ("server_late_ms", "server arrival vs model"),
            ("wake_late_ms", "timer wake vs planned wait end"),
        ] {
            let v = &f[key];
            rows.push(vec![
                browser.clone(),
                label.into(),
                int(&v["n"]),
                num(&v["p50"], 1),
                num(&v["p99"], 1),
                num(&v["max"], 1),
                num(&v["min"], 1),
                int(&v["early"]),
            ]);
        }
        let count = |k: &str| f[k].as_array().map_or(0, Vec::len);
        notes.push(format!(
            "{browser}: {} runs in {} s; outcome differs from the model in {}, attempt count in {}, errors {}",
            int(&f["runs"]),
            num(&f["wall_s"], 0),
            count("outcome_mismatches"),
            count("attempt_count_mismatches"),
            count("errors"),
        ));
        for k in ["outcome_mismatches", "attempt_count_mismatches", "errors"] {
            for m in f[k].as_array().map(Vec::as_slice).unwrap_or_default() {
                notes.push(format!("  {browser}: {}", m.as_str().unwrap_or_default()));
            }
        }
    }
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
    if !notes.is_empty() {
        out += "\n";
        for n in notes {
            let _ = writeln!(out, "{n}");
        }
    }

    // 4. Decision cost.
    let _ = writeln!(out, "\n## 4. Decision cost\n");
    let native = &r["decision"]["native"];
    if let Some(e) = error_of(native) {
        let _ = writeln!(out, "Native: not measured ({e})");
    } else {
        let _ = writeln!(
            out,
            "Native (divan, `cargo bench -p retry-budget --bench decisions`):\n"
        );
        let rows: Vec<Vec<String>> = native
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|b| {
                vec![
                    b["name"].as_str().unwrap_or_default().to_owned(),
                    b["median_ns"].as_f64().map_or("-".into(), duration_ns),
                    b["fastest_ns"].as_f64().map_or("-".into(), duration_ns),
                ]
            })
            .collect();
        out += &table(&["benchmark", "median", "fastest"], 1, &rows);
    }
    let _ = writeln!(
        out,
        "\nIn the browser, through the JS API (Schedule A as a JS object in, the report object out):\n"
    );
    let mut rows = Vec::new();
    for (browser, b) in browsers(&r["decision"]["browser"]) {
        if let Some(e) = error_of(b) {
            rows.push(vec![
                browser.clone(),
                format!("not measured: {e}"),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        rows.push(vec![
            browser.clone(),
            format!("{} µs", num(&b["simulate"]["p50_us"], 2)),
            format!("{} µs", num(&b["simulate"]["min_us"], 2)),
            format!("{} µs", num(&b["boundary"]["p50_us"], 3)),
        ]);
    }
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

    // 5. Memory.
    let _ = writeln!(
        out,
        "\n## 5. Memory, timers and listeners around {} actions in one page\n",
        int(&cfg["memory_actions"])
    );
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (browser, m) in browsers(&r["memory"]) {
        if let Some(e) = error_of(m) {
            rows.push(vec![
                browser.clone(),
                format!("not measured: {e}"),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        for (key, label, is_bytes) in [
            ("wasm_memory_bytes", "wasm memory, bytes", true),
            ("js_heap_used_bytes", "JS heap used, bytes", true),
            ("live_timeouts", "live timers", false),
            ("live_listeners", "live listeners", false),
            ("running_actions", "runningActions()", false),
            ("owned_screens", "ownedScreens()", false),
        ] {
            let cell = |v: &Value| if is_bytes { bytes(v) } else { int(v) };
            rows.push(vec![
                browser.clone(),
                label.into(),
                cell(&m["before"][key]),
                cell(&m["half"][key]),
                cell(&m["after"][key]),
                cell(&m["after_idle"][key]),
                m["peak"].get(key).map_or("-".into(), cell),
            ]);
        }
        let outcomes: Vec<String> = m["outcomes"]
            .as_object()
            .map(|o| o.iter().map(|(k, v)| format!("{k} {}", int(v))).collect())
            .unwrap_or_default();
        notes.push(format!(
            "{browser}: {} actions in {} ms; {}",
            int(&m["actions"]),
            num(&m["run_ms"], 0),
            outcomes.join(", ")
        ));
    }
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
    if !notes.is_empty() {
        out += "\n";
        for n in notes {
            let _ = writeln!(out, "{n}");
        }
    }

    if let Some(errors) = r["errors"].as_array().filter(|e| !e.is_empty()) {
        let _ = writeln!(out, "\nNot measured:");
        for e in errors {
            let _ = writeln!(out, "- {}", e.as_str().unwrap_or_default());
        }
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
    }
}
