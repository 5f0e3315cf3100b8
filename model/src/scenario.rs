//! Scenario files (`docs/rules.md`, "Scenario files"): read with serde, which refuses unknown
//! fields (a typo must not pass silently) and values of the wrong type, then checked in one
//! pass. Every error names the scenario and the field; nothing panics on any input, and one bad
//! scenario never hides the others in its file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::http_date::HttpDate;
use crate::keys::{repeated_keys, Step};
use crate::policy::{FieldError, Number, Policy, PolicyInput, Whole};
use crate::utc::UtcTime;

/// One scripted run: a policy, what each attempt gets, and when the user leaves. The default
/// is an unnamed run of the default policy with no responses, no clock and nothing else.
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// Blocks that other actions learned, as they arrive (rules 13-18), in the order the file
    /// lists them; the runner delivers them in time order.
    pub origin_blocks: Vec<OriginBlock>,
    /// The jitter draw, in [0, 1), for the k-th wait; missing entries are 0.
    pub jitter_draws: Vec<f64>,
    /// Figures the run must reproduce: output field names to JSON values.
    pub expect: Option<Map<String, Value>>,
}

/// A block that another action learned: at elapsed `at`, the service asks every request under
/// the same limit to wait until elapsed `until` (both on this action's clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OriginBlock {
    /// When this action hears of it.
    pub at: Duration,
    /// No request may start before this.
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
        /// Header names and values, as written (ordered by name).
        headers: Vec<(String, String)>,
        /// The body, if any (`null` included, when written).
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
        let values: Vec<&str> = headers
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
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
    /// Whether it is the file as a whole that is wrong (`scenario` is then the file's name), so
    /// that it is not called a scenario.
    pub whole_file: bool,
}

impl ScenarioError {
    fn new(scenario: &str, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            scenario: scenario.into(),
            field: field.into(),
            message: message.into(),
            whole_file: false,
        }
    }

    /// An error about the file `source` as a whole: unreadable JSON, or no scenario list.
    fn of_file(source: &str, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            whole_file: true,
            ..ScenarioError::new(source, field, message)
        }
    }

    /// The error as one sentence: `scenario "s", field `f`: message`, or `file "f.json": ...`
    /// (what `Display` prints).
    pub fn describe(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = if self.whole_file { "file" } else { "scenario" };
        write!(f, "{subject} \"{}\"", self.scenario)?;
        if !self.field.is_empty() {
            write!(f, ", field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// A scenario as written, before it is checked. serde refuses unknown fields and wrong types;
/// [`ScenarioInput::check`] does the rest.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
struct ScenarioInput {
    name: Option<String>,
    about: Option<String>,
    policy: Option<Object<PolicyInput>>,
    /// Checked by hand, to say which form of date is wanted.
    wall_clock_at_start: Option<Value>,
    responses: Option<Vec<Object<ResponseInput>>>,
    user_leaves_at_s: Option<Number>,
    timer_late_by_s: Option<Vec<Number>>,
    origin_blocks: Option<Vec<Object<BlockInput>>>,
    jitter_draws: Option<Vec<Number>>,
    expect: Option<Map<String, Value>>,
}

/// One of `responses`, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
struct ResponseInput {
    duration_s: Option<Number>,
    status: Option<Whole>,
    headers: Option<BTreeMap<String, String>>,
    /// Present, even as `null`, is `Some`: a scripted `null` body is served as `null`.
    #[serde(default, deserialize_with = "present")]
    body: Option<Value>,
    /// Checked by hand, to say what a transport error is.
    transport_error: Option<Value>,
}

/// One of `origin_blocks`, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
struct BlockInput {
    at_s: Option<Number>,
    until_s: Option<Number>,
}

/// A JSON object read as `T`. serde's derived structs also take an array of their fields in
/// order (`[1, 4]` for a block), which this format does not have: a mistaken shape must not load.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Members<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Object)
            }
        }
        deserializer.deserialize_map(Members(PhantomData))
    }
}

/// A value that is present, `null` included.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The replay output's fields that `expect` may name, and `last_status`.
pub const EXPECT_FIELDS: &[&str] = &[
    "policy",
    "outcome",
    "cause",
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

/// Loads every scenario of a file's text. Each entry is its own result, so one bad scenario
/// never hides the others. `source` names the input (usually the file name) in errors about
/// the file as a whole. A key given twice in one object rejects the scenario that holds it (or
/// the file, outside the scenarios): a JSON value would keep only one of the two.
pub fn parse_file(
    source: &str,
    text: &str,
) -> Result<Vec<Result<Scenario, ScenarioError>>, ScenarioError> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| ScenarioError::of_file(source, "", format!("malformed JSON: {e}")))?;
    read_document(source, &doc, &repeated_keys(text))
}

/// Loads every scenario of an already-parsed document (`{"scenarios": [...]}`). A parsed
/// `Value` has already kept only one of a key given twice: text goes to [`parse_file`], which
/// refuses that.
pub fn parse_document(
    source: &str,
    doc: &Value,
) -> Result<Vec<Result<Scenario, ScenarioError>>, ScenarioError> {
    read_document(source, doc, &[])
}

/// [`parse_document`], with the paths of the keys that the text gave twice (`repeated`).
fn read_document(
    source: &str,
    doc: &Value,
    repeated: &[Vec<Step>],
) -> Result<Vec<Result<Scenario, ScenarioError>>, ScenarioError> {
    let list = scenario_list(source, doc, repeated)?;
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let name = entry.get("name").and_then(Value::as_str);
        let label = name
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("scenarios[{i}]"), String::from);
        let twice = repeated
            .iter()
            .find_map(|path| in_scenario(path).filter(|(at, _)| *at == i))
            .map(|(_, rest)| rest);
        let mut result = match twice {
            Some(path) => Err(given_twice(&label, path)),
            None => parse_scenario(&label, entry),
        };
        if result.is_ok() && name.is_some_and(|n| seen.contains(n)) {
            result = Err(ScenarioError::new(
                &label,
                "name",
                "another scenario in this file has the same name",
            ));
        }
        seen.extend(name);
        out.push(result);
    }
    Ok(out)
}

/// The file's `scenarios` list, or why the file is not a scenario file: not an object, a key
/// given twice outside the scenarios, an unknown member, or no list.
fn scenario_list<'d>(
    source: &str,
    doc: &'d Value,
    repeated: &[Vec<Step>],
) -> Result<&'d Vec<Value>, ScenarioError> {
    let file_error = |field: &str, message: String| ScenarioError::of_file(source, field, message);
    let Value::Object(members) = doc else {
        let found = json_type(doc);
        return Err(file_error(
            "",
            format!("expected an object with `scenarios`, found {found}"),
        ));
    };
    if let Some(path) = repeated.iter().find(|path| in_scenario(path).is_none()) {
        let twice = given_twice(source, path);
        return Err(ScenarioError {
            whole_file: true,
            ..twice
        });
    }
    if let Some(key) = members.keys().find(|k| *k != "scenarios") {
        return Err(file_error(key, "unknown field".into()));
    }
    match members.get("scenarios") {
        None => Err(file_error("scenarios", "required field is missing".into())),
        Some(Value::Array(list)) => Ok(list),
        Some(other) => {
            let found = json_type(other);
            Err(file_error(
                "scenarios",
                format!("expected an array, found {found}"),
            ))
        }
    }
}

/// The scenario that `path` leads into (its index in `scenarios`) and the rest of the path
/// within it; `None` for a path outside the scenarios.
fn in_scenario(path: &[Step]) -> Option<(usize, &[Step])> {
    match path {
        [Step::Key(top), Step::Index(at), rest @ ..] if top == "scenarios" => Some((*at, rest)),
        _ => None,
    }
}

/// A key given twice in one object: `path` leads to its second occurrence.
fn given_twice(label: &str, path: &[Step]) -> ScenarioError {
    let field = path.iter().fold(String::new(), |field, step| match step {
        Step::Key(key) => under(&field, key),
        Step::Index(i) => under(&field, &format!("[{i}]")),
    });
    let key = match path.last() {
        Some(Step::Key(key)) => key.as_str(),
        _ => "",
    };
    ScenarioError::new(
        label,
        &field,
        format!(
            "the key {key:?} is given more than once in one object; only one of them would be read, so give it once"
        ),
    )
}

/// Loads one scenario object. `label` names it in errors.
pub fn parse_scenario(label: &str, value: &Value) -> Result<Scenario, ScenarioError> {
    let Object(input): Object<ScenarioInput> =
        serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            let field = if field == "." { String::new() } else { field };
            ScenarioError::new(label, &field, in_json_words(&e.inner().to_string()))
        })?;
    input
        .check()
        .map_err(|e| ScenarioError::new(label, &e.field, e.message()))
}

/// serde's words for the JSON types, in JSON's own: an "array", not a "sequence"; an
/// "object", not a "map".
fn in_json_words(message: &str) -> String {
    message
        .replace("invalid type: sequence", "invalid type: an array")
        .replace("invalid type: map", "invalid type: an object")
        .replace("expected a sequence", "expected an array")
        .replace("expected a map", "expected an object")
        .replace("invalid type: unit value", "invalid type: null")
        .replace("expected a boolean", "expected true or false")
}

/// The JSON type of `value`, for messages: "an array", "null".
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `field` under `parent`: `policy.budget_s`, `responses[0].status`.
fn under(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.into()
    } else if field.is_empty() {
        parent.into()
    } else if field.starts_with('[') {
        format!("{parent}{field}")
    } else {
        format!("{parent}.{field}")
    }
}

/// Prefixes a field error's path with `parent`.
fn nested(parent: &str) -> impl Fn(FieldError) -> FieldError + '_ {
    move |e| FieldError::of(under(parent, &e.field), e.problem)
}

impl ScenarioInput {
    /// The checks serde cannot make: required fields, ranges, the policy's consistency, each
    /// duration within the cap, and `expect`'s field names.
    fn check(self) -> Result<Scenario, FieldError> {
        let name = match self.name {
            None => return Err(required("name", "a string")),
            Some(name) if name.is_empty() => {
                return Err(FieldError::new("name", "must not be empty"))
            }
            Some(name) => name,
        };
        let policy = match &self.policy {
            None => Policy::new(),
            Some(Object(input)) => input.build().map_err(nested("policy"))?,
        };
        let Some(responses) = self.responses else {
            return Err(required("responses", "an array"));
        };
        let responses = each("responses", responses, |Object(r)| r.check(&policy))?;
        let wall_clock_at_start = match self.wall_clock_at_start {
            None | Some(Value::Null) => None,
            Some(value) => Some(wall_clock(&value)?),
        };
        let user_leaves_at = self
            .user_leaves_at_s
            .map(|n| n.seconds("user_leaves_at_s"))
            .transpose()?;
        let timer_late_by =
            seconds_list("timer_late_by_s", self.timer_late_by_s.unwrap_or_default())?;
        let blocks = self.origin_blocks.unwrap_or_default();
        let origin_blocks = each("origin_blocks", blocks, |Object(b)| b.check())?;
        let draws = self.jitter_draws.unwrap_or_default();
        let jitter_draws = each("jitter_draws", draws, |n| n.draw(""))?;
        check_expect(self.expect.as_ref())?;
        Ok(Scenario {
            name,
            about: self.about,
            policy,
            wall_clock_at_start,
            responses,
            user_leaves_at,
            timer_late_by,
            origin_blocks,
            jitter_draws,
            expect: self.expect,
        })
    }
}

impl ResponseInput {
    /// A response: a `duration_s` the cap could have allowed, and either a status (with its
    /// headers and body) or a transport error.
    fn check(self, policy: &Policy) -> Result<ScriptedResponse, FieldError> {
        let Some(duration) = self.duration_s else {
            return Err(required("duration_s", "a number of seconds"));
        };
        let duration = duration.seconds("duration_s")?;
        if duration > policy.attempt_cap {
            let (d, cap) = (duration.as_secs_f64(), policy.attempt_cap.as_secs_f64());
            return Err(FieldError::new("duration_s", format!(
                "{d} s exceeds attempt_cap_s ({cap} s): the attempt would have been aborted at its cap, so no response could arrive after it"
            )));
        }
        let reply = match (self.status, self.transport_error) {
            (Some(_), Some(_)) => {
                return Err(FieldError::new(
                    "",
                    "has both `status` and `transport_error`; give one",
                ))
            }
            (None, None) => {
                return Err(required(
                    "status",
                    "a whole number (or give `transport_error`)",
                ))
            }
            (None, Some(word)) => {
                if let Some(key) = [
                    ("headers", self.headers.is_some()),
                    ("body", self.body.is_some()),
                ]
                .into_iter()
                .find_map(|(key, given)| given.then_some(key))
                {
                    return Err(FieldError::new(
                        key,
                        "only an HTTP response (`status`) can have this",
                    ));
                }
                match word {
                    Value::String(word) if !word.is_empty() => Reply::TransportError(word),
                    other => {
                        let found = if other == "" {
                            "an empty string"
                        } else {
                            json_type(&other)
                        };
                        return Err(FieldError::new(
                            "transport_error",
                            format!("expected a non-empty word such as \"network\", found {found}"),
                        ));
                    }
                }
            }
            (Some(Whole(status)), None) => Reply::Http {
                status: status.status("status")?,
                headers: self.headers.unwrap_or_default().into_iter().collect(),
                body: self.body,
            },
        };
        Ok(ScriptedResponse { duration, reply })
    }
}

impl BlockInput {
    /// A block: both times required.
    fn check(self) -> Result<OriginBlock, FieldError> {
        let time = |field: &str, n: Option<Number>| match n {
            None => Err(required(field, "a number of seconds")),
            Some(n) => n.seconds(field),
        };
        Ok(OriginBlock {
            at: time("at_s", self.at_s)?,
            until: time("until_s", self.until_s)?,
        })
    }
}

/// Checks each item of the list `field` with `check`, naming `field[i]` in its errors.
fn each<T, U>(
    field: &str,
    list: Vec<T>,
    check: impl Fn(T) -> Result<U, FieldError>,
) -> Result<Vec<U>, FieldError> {
    (list.into_iter().enumerate())
        .map(|(i, item)| check(item).map_err(nested(&format!("{field}[{i}]"))))
        .collect()
}

/// `expect` names only output fields.
fn check_expect(expect: Option<&Map<String, Value>>) -> Result<(), FieldError> {
    let Some(key) =
        (expect.into_iter().flat_map(Map::keys)).find(|k| !EXPECT_FIELDS.contains(&k.as_str()))
    else {
        return Ok(());
    };
    let known = EXPECT_FIELDS.join(", ");
    Err(FieldError::new(
        format!("expect.{key}"),
        format!("unknown field; expected one of: {known}"),
    ))
}

/// A required field that is absent or `null`.
fn required(field: &str, expected: &str) -> FieldError {
    FieldError::new(
        field,
        format!("required field is missing or null: expected {expected}"),
    )
}

/// `wall_clock_at_start`: an IMF-fixdate.
fn wall_clock(value: &Value) -> Result<UtcTime, FieldError> {
    let Some(text) = value.as_str() else {
        let found = json_type(value);
        return Err(FieldError::new(
            "wall_clock_at_start",
            format!("expected an IMF-fixdate string or null, found {found}"),
        ));
    };
    HttpDate::parse_imf_fixdate(text)
        .and_then(|d| d.resolve(UtcTime::UNIX_EPOCH))
        .ok_or_else(|| {
            FieldError::new(
                "wall_clock_at_start",
                format!(
                    "\"{text}\" is not an IMF-fixdate such as \"Mon, 01 Jan 2024 12:00:00 GMT\""
                ),
            )
        })
}

/// A list of non-negative seconds such as `timer_late_by_s`, each named `field[k]` in errors.
pub fn seconds_list(field: &str, list: Vec<Number>) -> Result<Vec<Duration>, FieldError> {
    each(field, list, |n| n.seconds(""))
}
