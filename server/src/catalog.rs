//! The scenarios the server answers from: every `*.json` file of the fixtures folder, loaded and
//! checked once at start. The server refuses to start on any problem, so a live run never meets
//! a scenario the model would reject.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use retry_budget_model::scenario::{parse_file, Reply, Scenario};
use retry_budget_model::simulate::run;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::Event;
use serde_json::Value;

use crate::faults::{Fault, FaultAt, FaultFile, Faulted};

/// The collections the fixture service has; the scripted scenario decides every response.
pub const COLLECTIONS: [&str; 3] = ["coast", "forest", "desert"];

/// The collections, as the service's messages list them: `"coast", "forest", "desert"`.
pub fn collection_list() -> String {
    COLLECTIONS
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every loaded scenario, by name.
#[derive(Debug, Default)]
pub struct Catalog {
    /// Every scenario served (fixture and faulted), by name.
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

impl FaultInfo {
    /// What `faulted` injects.
    fn of(faulted: &Faulted) -> FaultInfo {
        FaultInfo {
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
        }
    }
}

/// A faulted scenario, checked and ready to add: its name, what it serves, and how
/// `/scenarios` lists it.
struct FaultedScenario {
    /// The name it is served under.
    name: String,
    /// Its base's responses, with the faults on them.
    loaded: Loaded,
    /// The scenario object `/scenarios` lists for it.
    object: Value,
    /// What it injects, for `/scenarios`.
    info: FaultInfo,
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
        /// The status, a final one.
        status: StatusCode,
        /// The headers in the order of their names as written (the model's loader keeps
        /// them sorted so); each name and value can be sent.
        headers: Vec<(HeaderName, String)>,
        /// The body, encoded as JSON, if scripted.
        body: Option<Vec<u8>>,
    },
    /// Drop the connection without a response.
    TransportError(String),
}

impl Catalog {
    /// Loads every `*.json` file of `dir`, in name order. Every problem found is returned, each
    /// naming its file, scenario and field.
    pub fn load(dir: &Path) -> Result<(Catalog, Vec<String>), Vec<String>> {
        let mut catalog = Catalog::default();
        let mut problems = Vec::new();
        let mut loaded_files = Vec::new();
        for path in &list_fixture_files(dir)? {
            let file = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            match catalog.load_file(&file, path) {
                Ok(found) => {
                    problems.extend(found);
                    loaded_files.push(file);
                }
                Err(problem) => problems.push(problem),
            }
        }
        if problems.is_empty() {
            Ok((catalog, loaded_files))
        } else {
            Err(problems)
        }
    }

    /// Adds the scenarios of the fixture file `file` at `path`; returns the problems with its
    /// scenarios, or the problem that kept the whole file from being read.
    fn load_file(&mut self, file: &str, path: &Path) -> Result<Vec<String>, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
        let results = parse_file(file, &text).map_err(|e| format!("{file}: {e}"))?;
        // The objects as written, for the page's scenario picker and its model prediction.
        let written: Vec<Value> = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|doc| doc.get("scenarios").and_then(Value::as_array).cloned())
            .unwrap_or_default();
        self.documents.push((file.to_string(), written));
        let mut problems = Vec::new();
        for result in results {
            let added = result
                .map_err(|e| e.to_string())
                .and_then(prepare)
                .and_then(|prepared| self.insert(file, prepared));
            if let Err(e) = added {
                problems.push(format!("{file}: {e}"));
            }
        }
        Ok(problems)
    }

    /// Adds a prepared scenario of `file`, unless its name is already used.
    fn insert(&mut self, file: &str, prepared: PreparedScenario) -> Result<(), String> {
        let (name, responses, wall_clock_at_start) = prepared;
        if let Some(earlier) = self.scenarios.get(&name) {
            return Err(format!(
                "scenario \"{name}\": the name is already used in {}; names must be unique \
                 across all fixture files",
                earlier.file
            ));
        }
        let loaded = Loaded {
            file: file.to_string(),
            wall_clock_at_start,
            responses,
        };
        self.scenarios.insert(name, loaded);
        Ok(())
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
        let mut added: Vec<FaultedScenario> = Vec::new();
        for (i, faulted) in file.faulted.iter().enumerate() {
            match self.faulted_scenario(source, i, faulted) {
                Ok(scenario) => added.push(scenario),
                Err(found) => problems.extend(found),
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for scenario in &added {
            if !seen.insert(scenario.name.as_str()) {
                problems.push(format!(
                    "{source}: \"{}\" is used by two faulted entries",
                    scenario.name
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        for scenario in added {
            self.scenarios.insert(scenario.name, scenario.loaded);
            self.faulted.push((scenario.object, scenario.info));
        }
        self.fault_file = Some((source.to_string(), file.about));
        Ok(())
    }

    /// Entry `i` of the fault file `source`, checked against the scenarios loaded so far and
    /// built; or every problem with it.
    fn faulted_scenario(
        &self,
        source: &str,
        i: usize,
        faulted: &Faulted,
    ) -> Result<FaultedScenario, Vec<String>> {
        let at = |field: &str| {
            format!(
                "{source}: faulted[{i}] (\"{}\"), field `{field}`",
                faulted.name
            )
        };
        let refuse = |field: &str, message: String| vec![format!("{}: {message}", at(field))];
        if faulted.name.is_empty() {
            return Err(refuse("name", "the name is empty".into()));
        }
        if self.scenarios.contains_key(&faulted.name) {
            let message = "the name is already used by a scenario; names must be unique";
            return Err(refuse("name", message.into()));
        }
        let Some(base) = self.scenarios.get(&faulted.base) else {
            let message = format!("no fixture scenario is called \"{}\"", faulted.base);
            return Err(refuse("base", message));
        };
        if faulted.faults.is_empty() {
            return Err(refuse("faults", "list at least one fault".into()));
        }
        let mut loaded = base.clone();
        loaded.file = source.to_string();
        let problems: Vec<String> = faulted
            .faults
            .iter()
            .enumerate()
            .filter_map(|(j, fault_at)| {
                let field = at(&format!("faults[{j}].attempt"));
                put_fault(&mut loaded, *fault_at, &faulted.base)
                    .err()
                    .map(|message| format!("{field}: {message}"))
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(FaultedScenario {
            name: faulted.name.clone(),
            loaded,
            object: self.listed_object(faulted),
            info: FaultInfo::of(faulted),
        })
    }

    /// The object the page lists and simulates for a faulted scenario: its base's, renamed,
    /// with the fault's description, and without the base's `expect` (the fault changes the
    /// outcome).
    fn listed_object(&self, faulted: &Faulted) -> Value {
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
        Value::Object(object)
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

/// A scenario ready to add: its name, its responses and its wall clock at elapsed zero.
type PreparedScenario = (String, Vec<Prepared>, Option<UtcTime>);

/// Puts `fault_at` on its response of `loaded` (a copy of scenario `base`), or says why that
/// response cannot take it.
fn put_fault(loaded: &mut Loaded, fault_at: FaultAt, base: &str) -> Result<(), String> {
    let scripted = loaded.responses.len();
    let FaultAt { attempt, fault } = fault_at;
    let index = attempt.checked_sub(1);
    let Some(prepared) = index.and_then(|k| loaded.responses.get_mut(k)) else {
        return Err(format!(
            "{attempt} is not a scripted response of \"{base}\" (1 to {scripted})"
        ));
    };
    if prepared.fault.is_some() {
        return Err(format!("response {attempt} has two faults"));
    }
    let needs_http = matches!(
        fault,
        Fault::OmitCors | Fault::OmitExpose | Fault::EndlessBody | Fault::ResetMidBody
    );
    if needs_http && matches!(prepared.reply, PreparedReply::TransportError(_)) {
        return Err(format!(
            "{} needs an HTTP response, and response {attempt} is a transport_error",
            fault.as_str()
        ));
    }
    if fault == Fault::Redirect && attempt >= scripted {
        return Err(format!(
            "a redirect needs a next scripted response for the request it leads to, and \
             response {attempt} is the last"
        ));
    }
    prepared.fault = Some(fault);
    Ok(())
}

/// The `*.json` files of the fixtures folder `dir`, in name order.
fn list_fixture_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, Vec<String>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        vec![format!(
            "cannot read the fixtures folder {}: {e}",
            dir.display()
        )]
    })?;
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        // Whatever is named `*.json` is read: a link to nowhere or a folder is refused, not
        // skipped unseen.
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    Ok(files)
}

/// Checks that a scenario the model accepts can also be served, and encodes it.
fn prepare(scenario: Scenario) -> Result<PreparedScenario, String> {
    let receipts = simulate_receipts(&scenario)?;
    let mut responses = Vec::with_capacity(scenario.responses.len());
    for (i, scripted) in scenario.responses.iter().enumerate() {
        let attempt = u32::try_from(i).unwrap_or(u32::MAX).saturating_add(1);
        responses.push(Prepared {
            duration: scripted.duration,
            scripted_receipt: receipts.get(&attempt).copied(),
            reply: prepare_reply(&scenario.name, i, &scripted.reply)?,
            fault: None,
        });
    }
    Ok((
        scenario.name.clone(),
        responses,
        scenario.wall_clock_at_start,
    ))
}

/// The model's receipt time of each attempt its own run of `scenario` reaches. The model
/// rejects a scenario that runs out of responses.
fn simulate_receipts(scenario: &Scenario) -> Result<BTreeMap<u32, Duration>, String> {
    let action = run(scenario).map_err(|e| e.to_string())?;
    let mut receipts = BTreeMap::new();
    for event in action.events() {
        if let Event::Receipt { at, attempt, .. } = event {
            receipts.insert(*attempt, *at);
        }
    }
    Ok(receipts)
}

/// The final statuses whose responses never carry content (RFC 9110, sections 15.3.5, 15.3.6
/// and 15.4.5): a scripted body there could not be sent, and its `Content-Length` and
/// `Content-Type` would describe bytes that never come.
const NO_CONTENT: [StatusCode; 3] = [
    StatusCode::NO_CONTENT,
    StatusCode::RESET_CONTENT,
    StatusCode::NOT_MODIFIED,
];

/// Scripted response `i` of scenario `name`, checked to be servable (a final status, no body
/// where the status carries none, headers that can be sent) and encoded.
fn prepare_reply(name: &str, i: usize, reply: &Reply) -> Result<PreparedReply, String> {
    let problem = |field: &str, message: &str| -> String {
        format!("scenario \"{name}\", field `responses[{i}].{field}`: {message}")
    };
    let (status, headers, body) = match reply {
        Reply::TransportError(word) => return Ok(PreparedReply::TransportError(word.clone())),
        Reply::Http {
            status,
            headers,
            body,
        } => (*status, headers, body),
    };
    let code = StatusCode::from_u16(status)
        .ok()
        .filter(|code| !code.is_informational())
        .ok_or_else(|| {
            problem(
                "status",
                &format!(
                    "{status} cannot be served as a final HTTP response (1xx statuses are interim)"
                ),
            )
        })?;
    let headers = headers
        .iter()
        .map(|(key, value)| {
            check_header(key, value).map_err(|message| problem(&format!("headers.{key}"), message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if body.is_some() && NO_CONTENT.contains(&code) {
        return Err(problem(
            "body",
            &format!(
                "a {status} response carries no content (RFC 9110), so it cannot be sent; \
                 remove the body"
            ),
        ));
    }
    let body = body.as_ref().map(|b| b.to_string().into_bytes());
    Ok(PreparedReply::Http {
        status: code,
        headers,
        body,
    })
}

/// Headers that frame the message or the connection (RFC 9110 sections 7.6.1 and 8.6, RFC
/// 9112 section 6): the server writes them from the body it sends, and a scripted one would
/// either be replaced or contradict the body, and the client would read a broken response.
const FRAMING: [&str; 7] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "upgrade",
];

/// A scripted header as it will be sent, or why it cannot be.
fn check_header(key: &str, value: &str) -> Result<(HeaderName, String), &'static str> {
    let name =
        HeaderName::from_bytes(key.as_bytes()).map_err(|_| "not a valid HTTP header name")?;
    if FRAMING.contains(&name.as_str()) {
        return Err(
            "frames the message or the connection, which the server does itself from \
                    the body it sends; it cannot be scripted",
        );
    }
    // `HeaderValue` takes bytes above 0x7f too (obsolete text), so a value outside ASCII would
    // go out as raw UTF-8 bytes, which each client decodes its own way.
    let invalid = "not a valid HTTP header value (visible ASCII, spaces and tabs only)";
    if !value.is_ascii() {
        return Err(invalid);
    }
    HeaderValue::from_str(value).map_err(|_| invalid)?;
    Ok((name, value.to_string()))
}
