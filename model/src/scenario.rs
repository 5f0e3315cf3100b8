//! Scenario files (`scenario-format.md`, section 1): strict loading with errors that name the
//! scenario and the field. A typo must not pass silently, and nothing panics on any input.

use crate::prelude::*;
use core::time::Duration;

use crate::http_date::HttpDate;
use crate::json::{push_exact_secs, push_u64, Json, Number};
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
    /// Blocks on the origin that other actions learned, as they arrive (section 4), in the
    /// order the file lists them; the runner delivers them in time order.
    pub origin_blocks: Vec<OriginBlock>,
    /// The jitter draw, in [0, 1), for the k-th wait; missing entries are 0.
    pub jitter_draws: Vec<f64>,
    /// Figures the run must reproduce: an object of output field names to JSON values.
    pub expect: Option<Json>,
}

/// A block on the origin that another action learned: at elapsed `at`, the service asks every
/// request to the site to wait until elapsed `until` (both on this action's clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OriginBlock {
    /// When this action hears of it.
    pub at: Duration,
    /// No request to the origin may start before this.
    pub until: Duration,
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
        body: Option<Json>,
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

impl ScenarioError {
    /// The error as one sentence: `scenario "s", field `f`: message` (what `Display` prints).
    /// Built without the formatting machinery, because the browser build shows it too.
    pub fn describe(&self) -> String {
        let mut out = String::from("scenario \"");
        out.push_str(&self.scenario);
        out.push('"');
        if !self.field.is_empty() {
            out.push_str(", field `");
            out.push_str(&self.field);
            out.push('`');
        }
        out.push_str(": ");
        out.push_str(&self.message);
        out
    }
}

impl core::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ScenarioError {}

/// Loads every scenario of a file's text. Each entry is its own result, so one bad scenario
/// never hides the others. `source` names the input (usually the file name) in errors about
/// the file as a whole.
#[cfg(feature = "serde_json")]
pub fn parse_file(
    source: &str,
    text: &str,
) -> Result<Vec<Result<Scenario, ScenarioError>>, ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ScenarioError {
        scenario: source.into(),
        field: String::new(),
        message: alloc::format!("malformed JSON: {e}"),
    })?;
    parse_document(source, &value)
}

/// Loads every scenario of an already-parsed document (`{"scenarios": [...]}`).
pub fn parse_document<N: Node>(
    source: &str,
    doc: N,
) -> Result<Vec<Result<Scenario, ScenarioError>>, ScenarioError> {
    let file_error = |field: &str, message: String| ScenarioError {
        scenario: source.into(),
        field: field.into(),
        message,
    };
    if doc.kind() != Kind::Object {
        return Err(file_error(
            "",
            found("expected an object with `scenarios`, found ", &doc),
        ));
    }
    if let Some(key) = doc.keys().into_iter().find(|k| *k != "scenarios") {
        return Err(file_error(&key, "unknown field".into()));
    }
    let Some(list) = doc.member("scenarios") else {
        return Err(file_error("scenarios", "required field is missing".into()));
    };
    if list.kind() != Kind::Array {
        return Err(file_error(
            "scenarios",
            found("expected an array, found ", &list),
        ));
    }
    let list = list.items();
    let mut seen: Vec<String> = Vec::with_capacity(list.len());
    let mut out = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let name = entry.member("name").and_then(|n| n.string());
        let label = match &name {
            Some(name) if !name.is_empty() => name.clone(),
            _ => indexed("scenarios", i),
        };
        let mut result = Reader { label: &label }.scenario(entry);
        if let Ok(scenario) = &result {
            if seen.contains(&scenario.name) {
                result = Err(ScenarioError {
                    scenario: label,
                    field: "name".into(),
                    message: "another scenario in this file has the same name".into(),
                });
            }
        }
        if let Some(name) = name {
            seen.push(name);
        }
        out.push(result);
    }
    Ok(out)
}

/// Loads one scenario object. `label` names it in errors.
pub fn parse_scenario<N: Node>(label: &str, value: N) -> Result<Scenario, ScenarioError> {
    Reader { label }.scenario(&value)
}

/// Loads a policy object (the scenario format's `policy`, with its defaults). `label` names the
/// caller in errors.
pub fn parse_policy<N: Node>(label: &str, value: N) -> Result<Policy, ScenarioError> {
    Reader { label }.policy(&value)
}

/// Loads a list of non-negative seconds such as `timer_late_by_s`, naming it `field` in errors.
pub fn parse_seconds_list<N: Node>(
    label: &str,
    field: &str,
    value: N,
) -> Result<Vec<Duration>, ScenarioError> {
    Reader { label }.seconds_list(field, &value)
}

const SCENARIO_FIELDS: &[&str] = &[
    "name",
    "about",
    "policy",
    "wall_clock_at_start",
    "responses",
    "user_leaves_at_s",
    "timer_late_by_s",
    "origin_blocks",
    "jitter_draws",
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
    "jitter_s",
];
const BLOCK_FIELDS: &[&str] = &["at_s", "until_s"];
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

/// The JSON types, as the loader tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
    /// Something JSON cannot hold (a JavaScript function, symbol or bigint), named.
    Other(&'static str),
}

impl Kind {
    /// The type's name in messages: "a number", "an object", "null".
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
            Kind::Other(name) => name,
        }
    }
}

/// Read access to a JSON-like value, so that the loader's rules and messages are written once
/// for every source: a `serde_json::Value` natively (with the `serde_json` feature), a
/// JavaScript value in the browser module, or the model's own [`Json`]. Handles are cheap to
/// produce: a reference, or a copy of a JavaScript handle.
pub trait Node: Sized {
    /// Which JSON type this is.
    fn kind(&self) -> Kind;
    /// An object's member; `None` when absent (in JavaScript, also when `undefined`).
    fn member(&self, key: &str) -> Option<Self>;
    /// An object's keys in sorted order; empty for anything else.
    fn keys(&self) -> Vec<String>;
    /// An array's elements; empty for anything else.
    fn items(&self) -> Vec<Self>;
    /// A string's text.
    fn string(&self) -> Option<String>;
    /// A boolean's value.
    fn boolean(&self) -> Option<bool>;
    /// A number's value as the nearest `f64` (infinite when it overflows).
    fn float(&self) -> Option<f64>;
    /// A number written as a whole number that fits in `u64`, exactly (`None` where the source
    /// only has floats, as JavaScript does: the loader then reads the whole value from
    /// [`Node::float`]).
    fn whole(&self) -> Option<u64>;
    /// A number as written, or as the source prints it.
    fn push_number(&self, out: &mut String);

    /// The value as the model keeps it (a response's `body`, a scenario's `expect`). A value
    /// JSON cannot hold reads as `null`.
    fn to_json(&self) -> Json {
        match self.kind() {
            Kind::Null | Kind::Other(_) => Json::Null,
            Kind::Bool => Json::Bool(self.boolean().unwrap_or_default()),
            Kind::Number => {
                let mut text = String::new();
                self.push_number(&mut text);
                Json::Number(Number::Read {
                    value: self.float().unwrap_or(f64::NAN),
                    text,
                })
            }
            Kind::String => Json::String(self.string().unwrap_or_default()),
            Kind::Array => Json::Array(self.items().iter().map(Node::to_json).collect()),
            Kind::Object => Json::Object(
                self.keys()
                    .into_iter()
                    .map(|k| {
                        let v = self.member(&k).map_or(Json::Null, |v| v.to_json());
                        (k.into(), v)
                    })
                    .collect(),
            ),
        }
    }
}

#[cfg(feature = "serde_json")]
impl Node for &serde_json::Value {
    fn kind(&self) -> Kind {
        use serde_json::Value;
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    fn member(&self, key: &str) -> Option<Self> {
        self.as_object()?.get(key)
    }

    fn keys(&self) -> Vec<String> {
        // serde_json's map is ordered by key.
        self.as_object()
            .map_or_else(Vec::new, |map| map.keys().cloned().collect())
    }

    fn items(&self) -> Vec<Self> {
        self.as_array()
            .map_or_else(Vec::new, |list| list.iter().collect())
    }

    fn string(&self) -> Option<String> {
        self.as_str().map(String::from)
    }

    fn boolean(&self) -> Option<bool> {
        self.as_bool()
    }

    fn float(&self) -> Option<f64> {
        self.as_f64()
    }

    fn whole(&self) -> Option<u64> {
        self.as_u64()
    }

    fn push_number(&self, out: &mut String) {
        if let serde_json::Value::Number(n) = self {
            // With `arbitrary_precision`, the number exactly as written.
            out.push_str(&n.to_string());
        }
    }
}

impl Node for &Json {
    fn kind(&self) -> Kind {
        match self {
            Json::Null => Kind::Null,
            Json::Bool(_) => Kind::Bool,
            Json::Number(_) => Kind::Number,
            Json::String(_) => Kind::String,
            Json::Array(_) => Kind::Array,
            Json::Object(_) => Kind::Object,
        }
    }

    fn member(&self, key: &str) -> Option<Self> {
        self.get(key)
    }

    fn keys(&self) -> Vec<String> {
        let Json::Object(members) = self else {
            return Vec::new();
        };
        let mut keys: Vec<String> = members.iter().map(|(k, _)| k.to_string()).collect();
        keys.sort_unstable();
        keys
    }

    fn items(&self) -> Vec<Self> {
        match self {
            Json::Array(items) => items.iter().collect(),
            _ => Vec::new(),
        }
    }

    fn string(&self) -> Option<String> {
        match self {
            Json::String(s) => Some(s.clone()),
            _ => None,
        }
    }

    fn boolean(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn float(&self) -> Option<f64> {
        match self {
            Json::Number(n) => Some(n.value()),
            _ => None,
        }
    }

    fn whole(&self) -> Option<u64> {
        match self {
            Json::Number(Number::Count(n)) => Some(*n),
            Json::Number(Number::Secs(d)) if d.subsec_nanos() == 0 => Some(d.as_secs()),
            _ => None,
        }
    }

    fn push_number(&self, out: &mut String) {
        if let Json::Number(_) = self {
            self.write(out);
        }
    }
}

/// `prefix` followed by the type of `value`: "expected an array, found a string".
fn found<N: Node>(prefix: &str, value: &N) -> String {
    let mut out = String::from(prefix);
    out.push_str(value.kind().name());
    out
}

/// `name[i]`.
fn indexed(name: &str, i: usize) -> String {
    let mut out = String::from(name);
    out.push('[');
    push_u64(&mut out, i as u64);
    out.push(']');
    out
}

/// A number's text followed by `rest`: "-1 is negative".
fn number_then<N: Node>(value: &N, rest: &str) -> String {
    let mut out = String::new();
    value.push_number(&mut out);
    out.push_str(rest);
    out
}

/// `"text"` followed by `rest`.
fn quoted_then(text: &str, rest: &str) -> String {
    let mut out = String::from("\"");
    out.push_str(text);
    out.push('"');
    out.push_str(rest);
    out
}

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

    /// Checks that `value` is an object with only `known` keys.
    fn object<N: Node>(&self, field: &str, value: &N, known: &[&str]) -> Result<(), ScenarioError> {
        if value.kind() != Kind::Object {
            return Err(self.error(field, found("expected an object, found ", value)));
        }
        if let Some(key) = value
            .keys()
            .into_iter()
            .find(|k| !known.contains(&k.as_str()))
        {
            let mut message = String::from("unknown field; expected one of: ");
            for (i, name) in known.iter().enumerate() {
                if i > 0 {
                    message.push_str(", ");
                }
                message.push_str(name);
            }
            return Err(self.error(&join(field, &key), message));
        }
        Ok(())
    }

    fn scenario<N: Node>(&self, value: &N) -> Result<Scenario, ScenarioError> {
        self.object("", value, SCENARIO_FIELDS)?;
        let name = match value.member("name") {
            None => return Err(self.error("name", "required field is missing")),
            Some(v) => match v.string() {
                Some(s) if !s.is_empty() => s,
                Some(_) => return Err(self.error("name", "must not be empty")),
                None => return Err(self.error("name", found("expected a string, found ", &v))),
            },
        };
        let about = match present(value.member("about")) {
            None => None,
            Some(v) => match v.string() {
                Some(s) => Some(s),
                None => return Err(self.error("about", found("expected a string, found ", &v))),
            },
        };
        let policy = match present(value.member("policy")) {
            None => Policy::new(),
            Some(p) => self.policy(&p)?,
        };
        let wall_clock_at_start = match present(value.member("wall_clock_at_start")) {
            None => None,
            Some(v) => Some(self.wall_clock(&v)?),
        };
        let responses = match value.member("responses") {
            None => return Err(self.error("responses", "required field is missing")),
            Some(list) if list.kind() == Kind::Array => list
                .items()
                .iter()
                .enumerate()
                .map(|(i, r)| self.response(&indexed("responses", i), r, &policy))
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => {
                return Err(self.error("responses", found("expected an array, found ", &other)))
            }
        };
        let user_leaves_at = match present(value.member("user_leaves_at_s")) {
            None => None,
            Some(v) => Some(self.seconds("user_leaves_at_s", &v)?),
        };
        let timer_late_by = match present(value.member("timer_late_by_s")) {
            None => Vec::new(),
            Some(v) => self.seconds_list("timer_late_by_s", &v)?,
        };
        let origin_blocks = match present(value.member("origin_blocks")) {
            None => Vec::new(),
            Some(v) => self.origin_blocks(&v)?,
        };
        let jitter_draws = match present(value.member("jitter_draws")) {
            None => Vec::new(),
            Some(v) => self.draws(&v)?,
        };
        let expect = match present(value.member("expect")) {
            None => None,
            Some(v) => {
                self.object("expect", &v, EXPECT_FIELDS)?;
                Some(v.to_json())
            }
        };
        Ok(Scenario {
            name,
            about,
            policy,
            wall_clock_at_start,
            responses,
            user_leaves_at,
            timer_late_by,
            origin_blocks,
            jitter_draws,
            expect,
        })
    }

    /// `origin_blocks`: a list of `{ "at_s", "until_s" }`, both required, nothing else.
    fn origin_blocks<N: Node>(&self, value: &N) -> Result<Vec<OriginBlock>, ScenarioError> {
        const FIELD: &str = "origin_blocks";
        if value.kind() != Kind::Array {
            return Err(self.error(FIELD, found("expected an array, found ", value)));
        }
        let mut blocks = Vec::new();
        for (i, block) in value.items().iter().enumerate() {
            let field = indexed(FIELD, i);
            self.object(&field, block, BLOCK_FIELDS)?;
            let time = |key: &str| {
                let path = join(&field, key);
                match block.member(key) {
                    None => Err(self.error(&path, "required field is missing")),
                    Some(v) => self.seconds(&path, &v),
                }
            };
            blocks.push(OriginBlock {
                at: time("at_s")?,
                until: time("until_s")?,
            });
        }
        Ok(blocks)
    }

    /// `jitter_draws`: a list of numbers in [0, 1).
    fn draws<N: Node>(&self, value: &N) -> Result<Vec<f64>, ScenarioError> {
        const FIELD: &str = "jitter_draws";
        if value.kind() != Kind::Array {
            return Err(self.error(FIELD, found("expected an array, found ", value)));
        }
        let mut draws = Vec::new();
        for (k, draw) in value.items().iter().enumerate() {
            let field = indexed(FIELD, k);
            if draw.kind() != Kind::Number {
                return Err(self.error(&field, found("expected a number in [0, 1), found ", draw)));
            }
            match draw.float() {
                Some(d) if (0.0..1.0).contains(&d) => draws.push(d),
                Some(d) if d.is_finite() => {
                    return Err(self.error(&field, number_then(draw, " is outside [0, 1)")));
                }
                _ => return Err(self.error(&field, number_then(draw, " is not a finite number"))),
            }
        }
        Ok(draws)
    }

    fn wall_clock<N: Node>(&self, value: &N) -> Result<UtcTime, ScenarioError> {
        const FIELD: &str = "wall_clock_at_start";
        let Some(s) = value.string() else {
            return Err(self.error(
                FIELD,
                found("expected an IMF-fixdate string or null, found ", value),
            ));
        };
        let Some(at) = HttpDate::parse_imf_fixdate(&s).and_then(|d| d.resolve(UtcTime::UNIX_EPOCH))
        else {
            return Err(self.error(
                FIELD,
                quoted_then(
                    &s,
                    " is not an IMF-fixdate such as \"Mon, 01 Jan 2024 12:00:00 GMT\"",
                ),
            ));
        };
        Ok(at)
    }

    fn seconds_list<N: Node>(
        &self,
        field: &str,
        value: &N,
    ) -> Result<Vec<Duration>, ScenarioError> {
        if value.kind() != Kind::Array {
            return Err(self.error(field, found("expected an array, found ", value)));
        }
        value
            .items()
            .iter()
            .enumerate()
            .map(|(k, v)| self.seconds(&indexed(field, k), v))
            .collect()
    }

    fn policy<N: Node>(&self, value: &N) -> Result<Policy, ScenarioError> {
        self.object("policy", value, POLICY_FIELDS)?;
        let mut policy = Policy::new();
        if let Some(v) = value.member("budget_s") {
            policy.budget = self.seconds("policy.budget_s", &v)?;
        }
        if let Some(v) = value.member("max_attempts") {
            let n = self.integer("policy.max_attempts", &v)?;
            // Saturate: more attempts than u32 holds is "unlimited" for any real budget.
            policy.max_attempts = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(v) = value.member("attempt_cap_s") {
            policy.attempt_cap = self.seconds("policy.attempt_cap_s", &v)?;
        }
        if let Some(v) = value.member("min_wait_s") {
            policy.min_wait = self.seconds("policy.min_wait_s", &v)?;
        }
        if let Some(v) = value.member("fallback_base_s") {
            policy.fallback_base = self.seconds("policy.fallback_base_s", &v)?;
        }
        if let Some(v) = value.member("retry_statuses") {
            if v.kind() != Kind::Array {
                return Err(self.error(
                    "policy.retry_statuses",
                    found("expected an array, found ", &v),
                ));
            }
            let mut set = StatusSet::EMPTY;
            for (i, s) in v.items().iter().enumerate() {
                let field = indexed("policy.retry_statuses", i);
                let status = self.status(&field, s)?;
                set = set
                    .try_with(status)
                    .map_err(|e| self.error(&field, e.message()))?;
            }
            policy.retry_statuses = set;
        }
        if let Some(v) = value.member("jitter_s") {
            policy.jitter = self.seconds("policy.jitter_s", &v)?;
        }
        if let Some(v) = value.member("trust_local_clock") {
            policy.trust_local_clock = v.boolean().ok_or_else(|| {
                self.error(
                    "policy.trust_local_clock",
                    found("expected true or false, found ", &v),
                )
            })?;
        }
        policy
            .validate()
            .map_err(|e| self.error(&join("policy", e.field()), e.message()))?;
        Ok(policy)
    }

    fn response<N: Node>(
        &self,
        field: &str,
        value: &N,
        policy: &Policy,
    ) -> Result<ScriptedResponse, ScenarioError> {
        self.object(field, value, RESPONSE_FIELDS)?;
        let duration = self.duration(&join(field, "duration_s"), value, policy)?;
        let reply = match (value.member("status"), value.member("transport_error")) {
            (Some(_), Some(_)) => {
                return Err(self.error(field, "has both `status` and `transport_error`; give one"));
            }
            (None, None) => {
                return Err(self.error(
                    &join(field, "status"),
                    "required field is missing (or give `transport_error`)",
                ));
            }
            (None, Some(word)) => self.transport_error(field, value, &word)?,
            (Some(status), None) => Reply::Http {
                status: self.status(&join(field, "status"), &status)?,
                headers: match present(value.member("headers")) {
                    None => Vec::new(),
                    Some(h) => self.headers(&join(field, "headers"), &h)?,
                },
                body: value.member("body").map(|b| b.to_json()),
            },
        };
        Ok(ScriptedResponse { duration, reply })
    }

    /// A response's `duration_s`: required, and within the per-attempt cap.
    fn duration<N: Node>(
        &self,
        field: &str,
        value: &N,
        policy: &Policy,
    ) -> Result<Duration, ScenarioError> {
        let duration = match value.member("duration_s") {
            None => return Err(self.error(field, "required field is missing")),
            Some(v) => self.seconds(field, &v)?,
        };
        if duration > policy.attempt_cap {
            let mut message = String::new();
            push_exact_secs(&mut message, duration);
            message.push_str(" s exceeds attempt_cap_s (");
            push_exact_secs(&mut message, policy.attempt_cap);
            message.push_str(
                " s): the model does not enforce timeouts, so it refuses a duration the cap could not have allowed",
            );
            return Err(self.error(field, message));
        }
        Ok(duration)
    }

    /// A failure below HTTP: a non-empty word, and no `headers` or `body`.
    fn transport_error<N: Node>(
        &self,
        field: &str,
        value: &N,
        word: &N,
    ) -> Result<Reply, ScenarioError> {
        if let Some(key) = ["headers", "body"]
            .into_iter()
            .find(|k| value.member(k).is_some())
        {
            return Err(self.error(
                &join(field, key),
                "only an HTTP response (`status`) can have this",
            ));
        }
        match word.string() {
            Some(w) if !w.is_empty() => Ok(Reply::TransportError(w)),
            _ => Err(self.error(
                &join(field, "transport_error"),
                found(
                    "expected a non-empty word such as \"network\", found ",
                    word,
                ),
            )),
        }
    }

    /// A response's `headers`: an object of strings, names as written.
    fn headers<N: Node>(
        &self,
        field: &str,
        value: &N,
    ) -> Result<Vec<(String, String)>, ScenarioError> {
        if value.kind() != Kind::Object {
            return Err(self.error(field, found("expected an object, found ", value)));
        }
        let names = value.keys();
        let mut headers = Vec::with_capacity(names.len());
        for name in names {
            let text = value.member(&name).and_then(|v| v.string());
            let Some(text) = text else {
                let kind = value.member(&name).map_or(Kind::Null, |v| v.kind());
                let mut message = String::from("expected a string, found ");
                message.push_str(kind.name());
                return Err(self.error(&join(field, &name), message));
            };
            headers.push((name, text));
        }
        Ok(headers)
    }

    /// A non-negative, finite number of seconds.
    fn seconds<N: Node>(&self, field: &str, value: &N) -> Result<Duration, ScenarioError> {
        if value.kind() != Kind::Number {
            return Err(self.error(field, found("expected a number of seconds, found ", value)));
        }
        let Some(secs) = value.float().filter(|f| f.is_finite()) else {
            return Err(self.error(field, number_then(value, " is not a finite number")));
        };
        if secs < 0.0 {
            return Err(self.error(field, number_then(value, " is negative")));
        }
        // Finite and non-negative: only a value beyond Duration::MAX can fail; saturate it.
        Ok(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
    }

    /// A non-negative whole number.
    fn integer<N: Node>(&self, field: &str, value: &N) -> Result<u64, ScenarioError> {
        if value.kind() != Kind::Number {
            return Err(self.error(field, found("expected a whole number, found ", value)));
        }
        if let Some(i) = value.whole() {
            return Ok(i);
        }
        // Written as a decimal (`2.0`, `1e3`) or too large for u64: read it as a float.
        match value.float() {
            Some(f) if f.is_nan() || f.is_infinite() => {
                Err(self.error(field, number_then(value, " is not a finite number")))
            }
            Some(f) if f < 0.0 => Err(self.error(field, number_then(value, " is negative"))),
            // A float-to-int `as` cast saturates, which is the meaning wanted for a huge count.
            Some(f) if crate::float::is_whole(f) => Ok(f as u64),
            _ => Err(self.error(field, number_then(value, " is not a whole number"))),
        }
    }

    /// An HTTP status, 100-599.
    fn status<N: Node>(&self, field: &str, value: &N) -> Result<u16, ScenarioError> {
        let n = self.integer(field, value)?;
        match u16::try_from(n) {
            Ok(s) if (100..=599).contains(&s) => Ok(s),
            _ => {
                let mut message = String::new();
                push_u64(&mut message, n);
                message.push_str(" is not an HTTP status (100-599)");
                Err(self.error(field, message))
            }
        }
    }
}

/// A member that is there and not null: optional fields may be given as `null`.
fn present<N: Node>(member: Option<N>) -> Option<N> {
    member.filter(|v| v.kind() != Kind::Null)
}

fn join(parent: &str, key: &str) -> String {
    let mut out = String::from(parent);
    if !parent.is_empty() {
        out.push('.');
    }
    out.push_str(key);
    out
}
