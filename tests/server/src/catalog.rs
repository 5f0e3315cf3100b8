//! The scenarios the server answers from: every `*.json` file of the fixtures folder, loaded and
//! checked once at start. The server refuses to start on any problem, so a live run never meets
//! a scenario the model would reject.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use retry_budget::report::EventReport;
use retry_budget::scenario::{parse_file, Reply, Scenario};
use retry_budget::simulate::simulate;
use retry_budget::utc::UtcTime;

/// The only collection the fixture service has.
pub const COLLECTION: &str = "coast";

/// Every loaded scenario, by name.
#[derive(Debug, Default)]
pub struct Catalog {
    scenarios: BTreeMap<String, Loaded>,
}

/// One scenario, ready to serve.
#[derive(Debug)]
pub struct Loaded {
    /// The file it came from (its name within the fixtures folder).
    pub file: String,
    /// The scenario's wall clock at elapsed zero, if it has one.
    pub wall_clock_at_start: Option<UtcTime>,
    /// What the k-th request of a run gets.
    pub responses: Vec<Prepared>,
}

/// One scripted response, checked and encoded.
#[derive(Debug)]
pub struct Prepared {
    /// How long the server waits before answering.
    pub duration: Duration,
    /// The model's receipt time of this attempt (elapsed from the first attempt's start), when
    /// the model's own run of the scenario reaches it.
    pub scripted_receipt: Option<Duration>,
    /// The answer.
    pub reply: PreparedReply,
}

/// An HTTP response to send, or a connection to drop.
#[derive(Debug)]
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
        if let EventReport::Receipt { at_s, attempt, .. } = event {
            receipts.insert(*attempt, at_s.0);
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
                let body = body
                    .as_ref()
                    .map(serde_json::to_vec)
                    .transpose()
                    .map_err(|e| problem(format!("responses[{i}].body"), e.to_string()))?;
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
        });
    }
    Ok((name, responses, scenario.wall_clock_at_start))
}
