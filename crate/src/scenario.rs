//! Scenario files (`scenario-format.md`, section 1): strict loading with errors that name the
//! scenario and the field. A typo must not pass silently, and nothing panics on any input.

use core::time::Duration;

use serde_json::{Map, Value};

use crate::http_date::HttpDate;
use crate::policy::{Policy, StatusSet};
use crate::utc::UtcTime;

/// One scripted run: a policy, what each attempt gets, and when the user leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Unique within its file.
    pub name: String,
    /// Free text for people.
    pub about: Option<String>,
    /// The policy, with the source document's defaults for absent fields.
    pub policy: Policy,
    /// The UTC wall clock at elapsed zero; `None` means no usable clock evidence.
    pub wall_clock_at_start: Option<UtcTime>,
    /// What attempt i+1 gets.
    pub responses: Vec<ScriptedResponse>,
    /// When the screen stops owning the action.
    pub user_leaves_at: Option<Duration>,
    /// How late the k-th wait's timer fires.
    pub timer_late_by: Vec<Duration>,
    /// Figures the run must reproduce: output field names to JSON values.
    pub expect: Option<Map<String, Value>>,
}

/// What one attempt gets, after how long.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedResponse {
    /// From the attempt's start to its receipt.
    pub duration: Duration,
    /// The answer.
    pub reply: Reply,
}

/// An HTTP response or a failure without one.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// An HTTP response.
    Http {
        /// 100-599.
        status: u16,
        /// Header names and values, as written.
        headers: Vec<(String, String)>,
        /// The body, if any.
        body: Option<Value>,
    },
    /// A failure below HTTP, named by a word such as `"network"`.
    TransportError(String),
}

impl ScriptedResponse {
    /// The value of header `name`, matched case-insensitively; repeated fields are joined with
    /// `", "` as `Headers.get()` joins them in a browser.
    pub fn header(&self, name: &str) -> Option<String> {
        let Reply::Http { headers, .. } = &self.reply else {
            return None;
        };
        let mut found: Option<String> = None;
        for (key, value) in headers {
            if key.eq_ignore_ascii_case(name) {
                match &mut found {
                    Some(joined) => {
                        joined.push_str(", ");
                        joined.push_str(value);
                    }
                    None => found = Some(value.clone()),
                }
            }
        }
        found
    }
}

/// A scenario that cannot be run, naming the scenario (or the file) and the field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario's name, `scenarios[i]` when it has none, or the file's name.
    pub scenario: String,
    /// The field at fault, as a path such as `responses[1].duration_s`; empty for the whole
    /// input.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl core::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "scenario \"{}\"", self.scenario)?;
        if !self.field.is_empty() {
            write!(f, ", field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Loads every scenario of a file's text. Each entry is its own result, so one bad scenario
/// never hides the others. `source` names the input (usually the file name) in errors about
/// the file as a whole.
pub fn parse_file(
    source: &str,
    text: &str,
) -> Result<Vec<Result<Scenario, ScenarioError>>, ScenarioError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ScenarioError {
        scenario: source.into(),
        field: String::new(),
        message: format!("malformed JSON: {e}"),
    })?;
    parse_document(source, &value)
}

/// Loads every scenario of an already-parsed document (`{"scenarios": [...]}`).
pub fn parse_document(
    source: &str,
    doc: &Value,
) -> Result<Vec<Result<Scenario, ScenarioError>>, ScenarioError> {
    let file_error = |field: &str, message: String| ScenarioError {
        scenario: source.into(),
        field: field.into(),
        message,
    };
    let Value::Object(top) = doc else {
        return Err(file_error(
            "",
            format!(
                "expected an object with `scenarios`, found {}",
                type_name(doc)
            ),
        ));
    };
    if let Some(key) = top.keys().find(|k| *k != "scenarios") {
        return Err(file_error(key, "unknown field".into()));
    }
    let Some(list) = top.get("scenarios") else {
        return Err(file_error("scenarios", "required field is missing".into()));
    };
    let Value::Array(list) = list else {
        return Err(file_error(
            "scenarios",
            format!("expected an array, found {}", type_name(list)),
        ));
    };
    let mut seen: Vec<&str> = Vec::with_capacity(list.len());
    let mut out = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let label = entry
            .get("name")
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
            .map_or_else(|| format!("scenarios[{i}]"), String::from);
        let mut result = parse_scenario(&label, entry);
        if let Ok(scenario) = &result {
            if seen.contains(&scenario.name.as_str()) {
                result = Err(ScenarioError {
                    scenario: label,
                    field: "name".into(),
                    message: "another scenario in this file has the same name".into(),
                });
            }
        }
        if let Some(name) = entry.get("name").and_then(Value::as_str) {
            seen.push(name);
        }
        out.push(result);
    }
    Ok(out)
}

/// Loads one scenario object. `label` names it in errors.
pub fn parse_scenario(label: &str, value: &Value) -> Result<Scenario, ScenarioError> {
    Reader { label }.scenario(value)
}

/// Loads a policy object (the scenario format's `policy`, with its defaults). `label` names the
/// caller in errors.
pub fn parse_policy(label: &str, value: &Value) -> Result<Policy, ScenarioError> {
    Reader { label }.policy(value)
}

const SCENARIO_FIELDS: &[&str] = &[
    "name",
    "about",
    "policy",
    "wall_clock_at_start",
    "responses",
    "user_leaves_at_s",
    "timer_late_by_s",
    "expect",
];
const POLICY_FIELDS: &[&str] = &[
    "budget_s",
    "max_attempts",
    "attempt_cap_s",
    "min_wait_s",
    "fallback_base_s",
    "retry_statuses",
    "trust_local_clock",
];
const RESPONSE_FIELDS: &[&str] = &["duration_s", "status", "headers", "body", "transport_error"];
/// The replay output's fields that `expect` may name, and `last_status`.
pub const EXPECT_FIELDS: &[&str] = &[
    "outcome",
    "elapsed_s",
    "attempts",
    "request_s",
    "wait_s",
    "attempt_starts_s",
    "last_response",
    "last_status",
    "events",
    "visible",
];

struct Reader<'a> {
    label: &'a str,
}

impl Reader<'_> {
    fn error(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            scenario: self.label.into(),
            field: field.into(),
            message: message.into(),
        }
    }

    fn object<'v>(
        &self,
        field: &str,
        value: &'v Value,
        known: &[&str],
    ) -> Result<&'v Map<String, Value>, ScenarioError> {
        let Value::Object(map) = value else {
            return Err(self.error(
                field,
                format!("expected an object, found {}", type_name(value)),
            ));
        };
        if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(self.error(
                &join(field, key),
                format!("unknown field; expected one of: {}", known.join(", ")),
            ));
        }
        Ok(map)
    }

    fn scenario(&self, value: &Value) -> Result<Scenario, ScenarioError> {
        let map = self.object("", value, SCENARIO_FIELDS)?;
        let name = match map.get("name") {
            None => return Err(self.error("name", "required field is missing")),
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(self.error("name", "must not be empty")),
            Some(other) => {
                return Err(self.error(
                    "name",
                    format!("expected a string, found {}", type_name(other)),
                ))
            }
        };
        let about = match map.get("about") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(self.error(
                    "about",
                    format!("expected a string, found {}", type_name(other)),
                ))
            }
        };
        let policy = match map.get("policy") {
            None | Some(Value::Null) => Policy::new(),
            Some(p) => self.policy(p)?,
        };
        let wall_clock_at_start = match map.get("wall_clock_at_start") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(
                HttpDate::parse_imf_fixdate(s)
                    .and_then(|d| d.resolve(UtcTime::UNIX_EPOCH))
                    .ok_or_else(|| {
                        self.error(
                            "wall_clock_at_start",
                            format!("\"{s}\" is not an IMF-fixdate such as \"Mon, 01 Jan 2024 12:00:00 GMT\""),
                        )
                    })
                    .and_then(|at| {
                        if at.is_saturated() {
                            Err(self.error(
                                "wall_clock_at_start",
                                format!("\"{s}\" is outside the years 1678-2261 that the clock can represent"),
                            ))
                        } else {
                            Ok(at)
                        }
                    })?,
            ),
            Some(other) => {
                return Err(self.error(
                    "wall_clock_at_start",
                    format!("expected an IMF-fixdate string or null, found {}", type_name(other)),
                ))
            }
        };
        let responses = match map.get("responses") {
            None => return Err(self.error("responses", "required field is missing")),
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, r)| self.response(&format!("responses[{i}]"), r, &policy))
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => {
                return Err(self.error(
                    "responses",
                    format!("expected an array, found {}", type_name(other)),
                ))
            }
        };
        let user_leaves_at = match map.get("user_leaves_at_s") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.seconds("user_leaves_at_s", v)?),
        };
        let timer_late_by = match map.get("timer_late_by_s") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(k, v)| self.seconds(&format!("timer_late_by_s[{k}]"), v))
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => {
                return Err(self.error(
                    "timer_late_by_s",
                    format!("expected an array, found {}", type_name(other)),
                ))
            }
        };
        let expect = match map.get("expect") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.object("expect", v, EXPECT_FIELDS)?.clone()),
        };
        Ok(Scenario {
            name,
            about,
            policy,
            wall_clock_at_start,
            responses,
            user_leaves_at,
            timer_late_by,
            expect,
        })
    }

    fn policy(&self, value: &Value) -> Result<Policy, ScenarioError> {
        let map = self.object("policy", value, POLICY_FIELDS)?;
        let mut policy = Policy::new();
        if let Some(v) = map.get("budget_s") {
            policy.budget = self.seconds("policy.budget_s", v)?;
        }
        if let Some(v) = map.get("max_attempts") {
            let n = self.integer("policy.max_attempts", v)?;
            // Saturate: more attempts than u32 holds is "unlimited" for any real budget.
            policy.max_attempts = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(v) = map.get("attempt_cap_s") {
            policy.attempt_cap = self.seconds("policy.attempt_cap_s", v)?;
        }
        if let Some(v) = map.get("min_wait_s") {
            policy.min_wait = self.seconds("policy.min_wait_s", v)?;
        }
        if let Some(v) = map.get("fallback_base_s") {
            policy.fallback_base = self.seconds("policy.fallback_base_s", v)?;
        }
        if let Some(v) = map.get("retry_statuses") {
            let Value::Array(list) = v else {
                return Err(self.error(
                    "policy.retry_statuses",
                    format!("expected an array, found {}", type_name(v)),
                ));
            };
            let mut set = StatusSet::EMPTY;
            for (i, s) in list.iter().enumerate() {
                let field = format!("policy.retry_statuses[{i}]");
                let status = self.status(&field, s)?;
                set = set
                    .try_with(status)
                    .map_err(|e| self.error(&field, e.message()))?;
            }
            policy.retry_statuses = set;
        }
        if let Some(v) = map.get("trust_local_clock") {
            policy.trust_local_clock = v.as_bool().ok_or_else(|| {
                self.error(
                    "policy.trust_local_clock",
                    format!("expected true or false, found {}", type_name(v)),
                )
            })?;
        }
        policy
            .validate()
            .map_err(|e| self.error(&join("policy", e.field()), e.message()))?;
        Ok(policy)
    }

    fn response(
        &self,
        field: &str,
        value: &Value,
        policy: &Policy,
    ) -> Result<ScriptedResponse, ScenarioError> {
        let map = self.object(field, value, RESPONSE_FIELDS)?;
        let duration_field = join(field, "duration_s");
        let duration = match map.get("duration_s") {
            None => return Err(self.error(&duration_field, "required field is missing")),
            Some(v) => self.seconds(&duration_field, v)?,
        };
        if duration > policy.attempt_cap {
            return Err(self.error(
                &duration_field,
                format!(
                    "{} s exceeds attempt_cap_s ({} s): the model does not enforce timeouts, so it refuses a duration the cap could not have allowed",
                    duration.as_secs_f64(),
                    policy.attempt_cap.as_secs_f64()
                ),
            ));
        }
        let reply = match (map.get("status"), map.get("transport_error")) {
            (Some(_), Some(_)) => {
                return Err(self.error(field, "has both `status` and `transport_error`; give one"));
            }
            (None, None) => {
                return Err(self.error(
                    &join(field, "status"),
                    "required field is missing (or give `transport_error`)",
                ));
            }
            (None, Some(word)) => {
                if let Some(key) = ["headers", "body"]
                    .into_iter()
                    .find(|k| map.contains_key(*k))
                {
                    return Err(self.error(
                        &join(field, key),
                        "only an HTTP response (`status`) can have this",
                    ));
                }
                match word {
                    Value::String(w) if !w.is_empty() => Reply::TransportError(w.clone()),
                    other => {
                        return Err(self.error(
                            &join(field, "transport_error"),
                            format!(
                                "expected a non-empty word such as \"network\", found {}",
                                type_name(other)
                            ),
                        ))
                    }
                }
            }
            (Some(status), None) => {
                let status = self.status(&join(field, "status"), status)?;
                let headers = match map.get("headers") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(v) => {
                        let hfield = join(field, "headers");
                        let Value::Object(h) = v else {
                            return Err(self.error(
                                &hfield,
                                format!("expected an object, found {}", type_name(v)),
                            ));
                        };
                        let mut headers = Vec::with_capacity(h.len());
                        for (name, value) in h {
                            let Value::String(value) = value else {
                                return Err(self.error(
                                    &join(&hfield, name),
                                    format!("expected a string, found {}", type_name(value)),
                                ));
                            };
                            headers.push((name.clone(), value.clone()));
                        }
                        headers
                    }
                };
                Reply::Http {
                    status,
                    headers,
                    body: map.get("body").cloned(),
                }
            }
        };
        Ok(ScriptedResponse { duration, reply })
    }

    /// A non-negative, finite number of seconds.
    fn seconds(&self, field: &str, value: &Value) -> Result<Duration, ScenarioError> {
        let Value::Number(n) = value else {
            return Err(self.error(
                field,
                format!("expected a number of seconds, found {}", type_name(value)),
            ));
        };
        let Some(secs) = n.as_f64().filter(|f| f.is_finite()) else {
            return Err(self.error(field, format!("{n} is not a finite number")));
        };
        if secs < 0.0 {
            return Err(self.error(field, format!("{n} is negative")));
        }
        // Finite and non-negative: only a value beyond Duration::MAX can fail; saturate it.
        Ok(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
    }

    /// A non-negative whole number.
    fn integer(&self, field: &str, value: &Value) -> Result<u64, ScenarioError> {
        let Value::Number(n) = value else {
            return Err(self.error(
                field,
                format!("expected a whole number, found {}", type_name(value)),
            ));
        };
        if let Some(i) = n.as_u64() {
            return Ok(i);
        }
        // Written as a decimal (`2.0`, `1e3`) or too large for u64: read it as a float.
        match n.as_f64() {
            Some(f) if f.is_nan() || f.is_infinite() => {
                Err(self.error(field, format!("{n} is not a finite number")))
            }
            Some(f) if f < 0.0 => Err(self.error(field, format!("{n} is negative"))),
            // A float-to-int `as` cast saturates, which is the meaning wanted for a huge count.
            Some(f) if f.fract() == 0.0 => Ok(f as u64),
            _ => Err(self.error(field, format!("{n} is not a whole number"))),
        }
    }

    /// An HTTP status, 100-599.
    fn status(&self, field: &str, value: &Value) -> Result<u16, ScenarioError> {
        let n = self.integer(field, value)?;
        match u16::try_from(n) {
            Ok(s) if (100..=599).contains(&s) => Ok(s),
            _ => Err(self.error(field, format!("{n} is not an HTTP status (100-599)"))),
        }
    }
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.into()
    } else {
        format!("{parent}.{key}")
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
