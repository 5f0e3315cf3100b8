//! The scenarios the server answers from: every `*.json` file of the fixtures folder, loaded and
//! checked once at start. The server refuses to start on any problem, so a live run never meets
//! a scenario the model would reject.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use retry_budget_model::scenario::{parse_file, Reply, Scenario};
use retry_budget_model::simulate::simulate;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::Event;
use serde_json::Value;

use crate::faults::{Fault, FaultFile};

/// The only collection the fixture service has.
pub const COLLECTION: &str = "coast";

/// Every loaded scenario, by name.
#[derive(Debug, Default)]
pub struct Catalog {
    scenarios: BTreeMap<String, Loaded>,
    /// Each fixture file and its scenario objects as written, in file order (for `/scenarios`).
    documents: Vec<(String, Vec<Value>)>,
    /// The faulted scenarios of the server's fault file, in file order: the scenario object
    /// served (the base's, renamed, without `expect`) and what is injected.
    faulted: Vec<(Value, FaultInfo)>,
    /// The fault file's name and its `about`, when one was loaded.
    fault_file: Option<(String, Option<String>)>,
}

/// What the server injects into a faulted scenario, for `/scenarios`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FaultInfo {
    /// The fixture scenario it is based on.
    pub base: String,
    /// Each fault: which scripted response (1-based) and what happens to it.
    pub faults: Vec<FaultListed>,
    /// Whether the faults only show when the page fetches from a second origin.
    pub needs_cross_origin: bool,
}

/// One fault of a faulted scenario, as `/scenarios` lists it.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct FaultListed {
    /// Which scripted response, 1-based.
    pub attempt: usize,
    /// The fault's name (`omit_cors`, `reset`, ...).
    pub fault: &'static str,
}

/// One scenario, ready to serve.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The file it came from (its name within the fixtures folder).
    pub file: String,
    /// The scenario's wall clock at elapsed zero, if it has one.
    pub wall_clock_at_start: Option<UtcTime>,
    /// What the k-th request of a run gets.
    pub responses: Vec<Prepared>,
}

/// One scripted response, checked and encoded.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// How long the server waits before answering.
    pub duration: Duration,
    /// The model's receipt time of this attempt (elapsed from the first attempt's start), when
    /// the model's own run of the scenario reaches it.
    pub scripted_receipt: Option<Duration>,
    /// The answer.
    pub reply: PreparedReply,
    /// A transport fault injected instead of (or into) the answer; only in a faulted scenario.
    pub fault: Option<Fault>,
}

/// An HTTP response to send, or a connection to drop.
#[derive(Clone, Debug)]
pub enum PreparedReply {
    /// Status, headers as scripted (values still raw text, already checked to be valid), body.
    Http {
        status: StatusCode,
        headers: Vec<(HeaderName, String)>,
        body: Option<Vec<u8>>,
    },
    /// Drop the connection without a response.
    TransportError(String),
}

impl Catalog {
    /// Loads every `*.json` file of `dir`, in name order. Every problem found is returned, each
    /// naming its file, scenario and field.
    pub fn load(dir: &Path) -> Result<(Catalog, Vec<String>), Vec<String>> {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            vec![format!(
                "cannot read the fixtures folder {}: {e}",
                dir.display()
            )]
        })?;
        let mut files: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json") && path.is_file())
            .collect();
        files.sort();
        let mut catalog = Catalog::default();
        let mut problems = Vec::new();
        let mut loaded_files = Vec::new();
        for path in &files {
            let file = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) => {
                    problems.push(format!("{file}: cannot read: {e}"));
                    continue;
                }
            };
            let results = match parse_file(&file, &text) {
                Ok(results) => results,
                Err(e) => {
                    problems.push(format!("{file}: {e}"));
                    continue;
                }
            };
            // The objects as written, for the page's scenario picker and its model prediction.
            let written: Vec<Value> = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|doc| doc.get("scenarios").and_then(Value::as_array).cloned())
                .unwrap_or_default();
            catalog.documents.push((file.clone(), written));
            for result in results {
                match result.map_err(|e| e.to_string()).and_then(prepare) {
                    Err(e) => problems.push(format!("{file}: {e}")),
                    Ok((name, responses, wall_clock_at_start)) => {
                        if let Some(earlier) = catalog.scenarios.get(&name) {
                            problems.push(format!(
                                "{file}: scenario \"{name}\": the name is already used in {}; \
                                 names must be unique across all fixture files",
                                earlier.file
                            ));
                            continue;
                        }
                        catalog.scenarios.insert(
                            name,
                            Loaded {
                                file: file.clone(),
                                wall_clock_at_start,
                                responses,
                            },
                        );
                    }
                }
            }
            loaded_files.push(file);
        }
        if problems.is_empty() {
            Ok((catalog, loaded_files))
        } else {
            Err(problems)
        }
    }

    /// The scenario called `name`.
    pub fn get(&self, name: &str) -> Option<&Loaded> {
        self.scenarios.get(name)
    }

    /// All names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.scenarios.keys().map(String::as_str).collect()
    }

    /// How many scenarios there are.
    pub fn len(&self) -> usize {
        self.scenarios.len()
    }

    /// Adds the faulted scenarios of the server's fault file (`source` names it in messages).
    /// Every problem is returned, each naming the entry and the field.
    pub fn add_faulted(&mut self, source: &str, file: FaultFile) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        let mut added = Vec::new();
        for (i, faulted) in file.faulted.iter().cloned().enumerate() {
            let at = |field: &str| {
                format!(
                    "{source}: faulted[{i}] (\"{}\"), field `{field}`",
                    faulted.name
                )
            };
            if faulted.name.is_empty() {
                problems.push(format!("{}: the name is empty", at("name")));
                continue;
            }
            if self.scenarios.contains_key(&faulted.name) {
                problems.push(format!(
                    "{}: the name is already used by a scenario; names must be unique",
                    at("name")
                ));
                continue;
            }
            let Some(base) = self.scenarios.get(&faulted.base) else {
                problems.push(format!(
                    "{}: no fixture scenario is called \"{}\"",
                    at("base"),
                    faulted.base
                ));
                continue;
            };
            if faulted.faults.is_empty() {
                problems.push(format!("{}: list at least one fault", at("faults")));
                continue;
            }
            let mut loaded = base.clone();
            loaded.file = source.to_string();
            let scripted = loaded.responses.len();
            let mut ok = true;
            for (j, fault_at) in faulted.faults.iter().enumerate() {
                let field = at(&format!("faults[{j}].attempt"));
                let index = fault_at.attempt.checked_sub(1);
                let Some(prepared) = index.and_then(|k| loaded.responses.get_mut(k)) else {
                    problems.push(format!(
                        "{field}: {} is not a scripted response of \"{}\" (1 to {scripted})",
                        fault_at.attempt, faulted.base
                    ));
                    ok = false;
                    continue;
                };
                if prepared.fault.is_some() {
                    problems.push(format!(
                        "{field}: response {} has two faults",
                        fault_at.attempt
                    ));
                    ok = false;
                    continue;
                }
                let needs_http = matches!(
                    fault_at.fault,
                    Fault::OmitCors | Fault::OmitExpose | Fault::EndlessBody | Fault::ResetMidBody
                );
                if needs_http && matches!(prepared.reply, PreparedReply::TransportError(_)) {
                    problems.push(format!(
                        "{field}: {} needs an HTTP response, and response {} is a transport_error",
                        fault_at.fault.as_str(),
                        fault_at.attempt
                    ));
                    ok = false;
                    continue;
                }
                if fault_at.fault == Fault::Redirect && fault_at.attempt >= scripted {
                    problems.push(format!(
                        "{field}: a redirect needs a next scripted response for the request it \
                         leads to, and response {} is the last",
                        fault_at.attempt
                    ));
                    ok = false;
                    continue;
                }
                prepared.fault = Some(fault_at.fault);
            }
            if !ok {
                continue;
            }
            // The object the page lists and simulates: the base's, renamed, with the fault's
            // description, and without the base's `expect` (the fault changes the outcome).
            let written = self
                .documents
                .iter()
                .flat_map(|(_, objects)| objects)
                .find(|o| o.get("name").and_then(Value::as_str) == Some(faulted.base.as_str()))
                .cloned();
            let mut object = match written {
                Some(Value::Object(object)) => object,
                _ => serde_json::Map::new(),
            };
            object.insert("name".into(), Value::from(faulted.name.clone()));
            object.insert("about".into(), Value::from(faulted.about.clone()));
            object.remove("expect");
            let info = FaultInfo {
                base: faulted.base.clone(),
                faults: faulted
                    .faults
                    .iter()
                    .map(|f| FaultListed {
                        attempt: f.attempt,
                        fault: f.fault.as_str(),
                    })
                    .collect(),
                needs_cross_origin: faulted.faults.iter().any(|f| f.fault.needs_cross_origin()),
            };
            added.push((faulted.name, loaded, Value::Object(object), info));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (name, ..) in &added {
            if !seen.insert(name.clone()) {
                problems.push(format!(
                    "{source}: \"{name}\" is used by two faulted entries"
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        for (name, loaded, object, info) in added {
            self.scenarios.insert(name, loaded);
            self.faulted.push((object, info));
        }
        self.fault_file = Some((source.to_string(), file.about));
        Ok(())
    }

    /// How many faulted scenarios there are.
    pub fn faulted_len(&self) -> usize {
        self.faulted.len()
    }

    /// Everything the page needs to list and simulate the scenarios, as `GET /scenarios`
    /// returns it: the files in order with their scenario names, every scenario object as
    /// written (faulted ones last), and what each faulted scenario injects.
    pub fn listing(&self) -> Value {
        let mut files = Vec::new();
        let mut scenarios = Vec::new();
        for (file, objects) in &self.documents {
            let names: Vec<Value> = objects
                .iter()
                .filter_map(|o| o.get("name").cloned())
                .collect();
            files.push(serde_json::json!({ "file": file, "scenarios": names }));
            scenarios.extend(objects.iter().cloned());
        }
        let mut faults = serde_json::Map::new();
        if let Some((file, about)) = &self.fault_file {
            let names: Vec<Value> = self
                .faulted
                .iter()
                .filter_map(|(o, _)| o.get("name").cloned())
                .collect();
            files.push(serde_json::json!({
                "file": file, "about": about, "scenarios": names, "faulted": true
            }));
            for (object, info) in &self.faulted {
                let name = object
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                faults.insert(name, serde_json::to_value(info).unwrap_or(Value::Null));
                scenarios.push(object.clone());
            }
        }
        serde_json::json!({ "files": files, "scenarios": scenarios, "faults": faults })
    }
}

type PreparedScenario = (String, Vec<Prepared>, Option<UtcTime>);

/// Checks that a scenario the model accepts can also be served, and encodes it.
fn prepare(scenario: Scenario) -> Result<PreparedScenario, String> {
    let name = scenario.name.clone();
    let problem = |field: String, message: String| -> String {
        format!("scenario \"{name}\", field `{field}`: {message}")
    };
    // The model's own run: it rejects a scenario that runs out of responses, and it gives the
    // scripted receipt time of every attempt it reaches.
    let report = simulate(&scenario).map_err(|e| e.to_string())?;
    let mut receipts: BTreeMap<u32, Duration> = BTreeMap::new();
    for event in &report.events {
        if let Event::Receipt { at, attempt, .. } = event {
            receipts.insert(*attempt, *at);
        }
    }
    let mut responses = Vec::with_capacity(scenario.responses.len());
    for (i, scripted) in scenario.responses.iter().enumerate() {
        let attempt = u32::try_from(i).unwrap_or(u32::MAX).saturating_add(1);
        let reply = match &scripted.reply {
            Reply::TransportError(word) => PreparedReply::TransportError(word.clone()),
            Reply::Http {
                status,
                headers,
                body,
            } => {
                let code = StatusCode::from_u16(*status)
                    .ok()
                    .filter(|code| !code.is_informational())
                    .ok_or_else(|| {
                        problem(
                            format!("responses[{i}].status"),
                            format!(
                                "{status} cannot be served as a final HTTP response \
                                 (1xx statuses are interim)"
                            ),
                        )
                    })?;
                let mut checked = Vec::with_capacity(headers.len());
                for (key, value) in headers {
                    let field = format!("responses[{i}].headers.{key}");
                    let header = HeaderName::from_bytes(key.as_bytes()).map_err(|_| {
                        problem(field.clone(), "not a valid HTTP header name".into())
                    })?;
                    HeaderValue::from_str(value).map_err(|_| {
                        problem(
                            field,
                            "not a valid HTTP header value (visible ASCII, spaces and tabs only)"
                                .into(),
                        )
                    })?;
                    checked.push((header, value.clone()));
                }
                let body = body.as_ref().map(|b| b.to_text().into_bytes());
                PreparedReply::Http {
                    status: code,
                    headers: checked,
                    body,
                }
            }
        };
        responses.push(Prepared {
            duration: scripted.duration,
            scripted_receipt: receipts.get(&attempt).copied(),
            reply,
            fault: None,
        });
    }
    Ok((name, responses, scenario.wall_clock_at_start))
}
