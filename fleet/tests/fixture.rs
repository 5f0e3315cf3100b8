//! `small-runs.json` holds small fleet runs as the command prints them, for the browser suite
//! (`crate/tests/fleet_web.rs`) to check `simulateFleet` against: each case's `options` (by
//! their JavaScript names) and the command's `--json` for them. This test keeps the two from
//! drifting: the fixture must be what the command prints now. `UPDATE_FLEET_FIXTURE=1 cargo
//! test -p fleet --test fixture` rewrites it from the command.

use std::process::Command;

use fleet::Opt;
use serde_json::Value;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/small-runs.json");

/// The command's flags for a case's options.
fn flags(options: &Value) -> Vec<String> {
    let Value::Object(options) = options else {
        panic!("options is not an object: {options}");
    };
    let mut args = Vec::new();
    for (key, value) in options {
        let opt = Opt::ALL
            .into_iter()
            .find(|o| o.key() == key)
            .unwrap_or_else(|| panic!("no option {key}"));
        let value = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned);
        args.extend([opt.flag().to_owned(), value]);
    }
    args
}

/// What `fleet FLAGS --json` prints.
fn command(options: &Value) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(flags(options))
        .arg("--json")
        .output()
        .expect("the command runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn the_fixture_is_what_the_command_prints() {
    let text = std::fs::read_to_string(FIXTURE).expect("the fixture");
    let cases: Vec<Value> = serde_json::from_str(&text).expect("fixture JSON");
    assert!(cases.len() >= 3, "too few cases");
    let fresh: Vec<Value> = cases
        .iter()
        .map(|case| {
            let options = &case["options"];
            serde_json::json!({ "options": options, "result": command(options) })
        })
        .collect();
    if std::env::var_os("UPDATE_FLEET_FIXTURE").is_some() {
        let text = serde_json::to_string_pretty(&fresh).expect("JSON") + "\n";
        std::fs::write(FIXTURE, text).expect("the fixture is written");
        return;
    }
    for (case, fresh) in cases.iter().zip(&fresh) {
        assert_eq!(
            case["result"], fresh["result"],
            "the command prints otherwise for {}: rerun with UPDATE_FLEET_FIXTURE=1 if that is meant",
            case["options"]
        );
    }
}
