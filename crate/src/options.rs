//! `fetchWithBudget`'s arguments, read and checked before anything is sent. What a valid policy
//! is is decided by the model ([`PolicyInput::build`]), as for a scenario file; this reader only
//! takes the JavaScript values apart, and names the option at fault in every error.

use std::time::Duration;

use js_sys::{Function, Object};
use retry_budget_model::action::BlockScope;
use retry_budget_model::policy::{FieldError, Number, Whole};
use retry_budget_model::scenario::seconds_list;
use retry_budget_model::{Policy, PolicyInput};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::blocks::Share;
use crate::js::{
    global, has_method, is_array, is_relative, keys_of, member, origin_of, read_member, string_of,
};

/// What one call of `fetchWithBudget` asked for.
pub(crate) struct Request {
    pub(crate) url: String,
    pub(crate) policy: Policy,
    pub(crate) fetch: Function,
    pub(crate) on_update: Option<Function>,
    pub(crate) signal: Option<AbortSignal>,
    pub(crate) screen: Option<String>,
    /// Who hears of this action's blocks, and whose it hears.
    pub(crate) share: Share,
    /// The limit the request falls under: the URL's origin, or the scope the caller named.
    pub(crate) scope: String,
    /// What that limit is, for the words the user is told.
    pub(crate) covers: BlockScope,
    /// For tests and demos only: the k-th wait's timer is armed this much later, as in a
    /// throttled background tab. The model sees the real wake-up time either way.
    pub(crate) timer_late_by: Vec<Duration>,
}

/// The options a caller may give, as an unknown option's message offers them.
const OPTIONS: &[&str] = &[
    "policy", "signal", "fetch", "onUpdate", "method", "screen", "share", "scope",
];

/// The test hook, taken as an option too but offered to nobody: for tests and demos only.
const TEST_HOOK: &str = "testOnlyTimerLateBy_s";

/// Why the arguments cannot be used: a `TypeError` (a value of the wrong type, an unknown
/// option, a method other than GET) or a `RangeError` (a value out of range), naming the option.
pub(crate) enum OptionError {
    Type(String),
    Range(String),
}

impl OptionError {
    /// The JavaScript error, its message starting `fetchWithBudget: `.
    pub(crate) fn into_js(self) -> JsValue {
        let (make, message): (fn(&str) -> js_sys::Error, String) = match self {
            OptionError::Type(m) => (|m| js_sys::TypeError::new(m).into(), m),
            OptionError::Range(m) => (|m| js_sys::RangeError::new(m).into(), m),
        };
        make(&format!("fetchWithBudget: {message}")).into()
    }
}

/// A value of the wrong type: `options.NAME must be WHAT, not TYPE`, or `not "TEXT"` for a
/// string, which may be of the right type and still not one of the values allowed.
fn wrong_type(name: &str, what: &str, value: &JsValue) -> OptionError {
    let given = if value.is_null() {
        "null".into()
    } else if let Some(text) = value.as_string() {
        quoted(&text)
    } else if is_array(value) == Ok(true) {
        "an array".into()
    } else {
        value.js_typeof().as_string().unwrap_or_default()
    };
    let name = option_name(name);
    OptionError::Type(format!("{name} must be {what}, not {given}"))
}

/// `text` in double quotes, escaped as JSON writes it (Rust's `{:?}` would bring Unicode
/// tables into the build).
fn quoted(text: &str) -> String {
    js_sys::JSON::stringify(&JsValue::from_str(text))
        .map_or_else(|_| "a string".into(), String::from)
}

/// `options.NAME`, or `options` itself for the empty name.
fn option_name(name: &str) -> String {
    if name.is_empty() {
        "options".into()
    } else {
        format!("options.{name}")
    }
}

/// A value that could not be read: a getter or a `Proxy` threw.
fn threw(name: &str) -> OptionError {
    OptionError::Type(format!("{} threw when read", option_name(name)))
}

/// `value[key]` of a value the caller gave, `null` read as absent; `name` is `value[key]`'s
/// name in errors.
fn given(value: &JsValue, key: &str, name: &str) -> Result<Option<JsValue>, OptionError> {
    read_member(value, key)
        .map(|v| v.filter(|v| !v.is_null()))
        .map_err(|_| threw(name))
}

/// A value the model refused, its numbers written as JavaScript writes them.
fn refused(prefix: &str, e: &FieldError) -> OptionError {
    let message = e.message_with(|x| string_of(&JsValue::from_f64(x)));
    OptionError::Range(format!("options.{prefix}{}: {message}", e.field))
}

/// Reads `url` and `options`.
pub(crate) fn read(url: &JsValue, options: &JsValue) -> Result<Request, OptionError> {
    let url = read_url(url)?;
    let options = Options::of(options)?;
    options.refuse_writes()?;
    let (scope, covers) = match options.string("scope")? {
        Some(scope) => (scope, BlockScope::Named),
        // A URL with no origin to read here (a relative one given to the caller's own fetch in
        // Node, or one whose origin is opaque, "null") is a scope of its own: two such URLs may
        // go to two services, and a wait shared between them would hold back one for the other.
        None => (
            origin_of(&url)
                .filter(|origin| origin != "null")
                .unwrap_or_else(|| url.clone()),
            BlockScope::Site,
        ),
    };
    Ok(Request {
        policy: options.policy()?,
        fetch: options.fetch(&url)?,
        on_update: options.function("onUpdate")?,
        signal: options.signal()?,
        screen: options.string("screen")?,
        share: options.share()?,
        timer_late_by: options.late_timers()?,
        url,
        scope,
        covers,
    })
}

/// The first argument: a URL string, or a URL object (its `href`, read as a property: a
/// `toString` that throws never runs).
fn read_url(url: &JsValue) -> Result<String, OptionError> {
    if let Some(url) = url.as_string() {
        Ok(url)
    } else if let Some(href) = member(url, "href").and_then(|h| h.as_string()) {
        Ok(href)
    } else {
        Err(OptionError::Type(
            "the first argument must be a URL string or URL object".into(),
        ))
    }
}

/// The options object (`undefined` and `null` are none).
struct Options(JsValue);

impl Options {
    /// Checks that `value` is an object, not an array, whose keys are all options.
    fn of(value: &JsValue) -> Result<Options, OptionError> {
        if value.is_undefined() || value.is_null() {
            return Ok(Options(Object::new().into()));
        }
        object(value, "")?;
        unknown_key(value, (OPTIONS, &[TEST_HOOK]), "option", "the options are")?;
        Ok(Options(value.clone()))
    }

    /// An option that is set: `undefined` and `null` are absent.
    fn set(&self, name: &str) -> Result<Option<JsValue>, OptionError> {
        given(&self.0, name, name)
    }

    /// A string option that is set; the empty string is refused.
    fn string(&self, name: &str) -> Result<Option<String>, OptionError> {
        let Some(value) = self.set(name)? else {
            return Ok(None);
        };
        match value.as_string() {
            Some(text) if !text.is_empty() => Ok(Some(text)),
            _ => Err(wrong_type(name, "a non-empty string", &value)),
        }
    }

    /// A function option that is set.
    fn function(&self, name: &str) -> Result<Option<Function>, OptionError> {
        self.set(name)?
            .map(|f| {
                f.dyn_into::<Function>()
                    .map_err(|f| wrong_type(name, "a function", &f))
            })
            .transpose()
    }

    /// `fetch`, or the global one. The global fetch reads `url` against the page's address, so
    /// a URL it could not read (a relative one where there is no page) is refused here, not
    /// left to fail as a network error; a caller's own fetch may read URLs its own way.
    fn fetch(&self, url: &str) -> Result<Function, OptionError> {
        if let Some(fetch) = self.function("fetch")? {
            return Ok(fetch);
        }
        if origin_of(url).is_none() {
            let why = if is_relative(url) {
                "is not a URL fetch can read here (without a page address, as in Node, a URL \
                 must be absolute)"
            } else {
                "is not a valid URL"
            };
            return Err(OptionError::Type(format!("{} {why}", quoted(url))));
        }
        member(&global(), "fetch")
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or_else(|| OptionError::Type("there is no global fetch; pass options.fetch".into()))
    }

    /// `signal`: an `AbortSignal`, read by what it has, as a response is: an `aborted` that
    /// reads as a boolean and an `addEventListener` method. So a signal of another realm (an
    /// iframe's) or of a polyfill is taken; a `Proxy` of a signal, or an object made from
    /// `AbortSignal.prototype`, whose `aborted` throws, is not. Every later call on it catches.
    fn signal(&self) -> Result<Option<AbortSignal>, OptionError> {
        let Some(value) = self.set("signal")? else {
            return Ok(None);
        };
        let aborted = read_member(&value, "aborted").ok().flatten();
        if aborted.is_some_and(|a| a.as_bool().is_some()) && has_method(&value, "addEventListener")
        {
            Ok(Some(value.unchecked_into()))
        } else {
            Err(wrong_type("signal", "an AbortSignal", &value))
        }
    }

    /// `share`: `"page"` (the default), `"tabs"` or `"none"`.
    fn share(&self) -> Result<Share, OptionError> {
        let Some(value) = self.set("share")? else {
            return Ok(Share::Page);
        };
        match value.as_string().as_deref() {
            Some("page") => Ok(Share::Page),
            Some("tabs") => Ok(Share::Tabs),
            Some("none") => Ok(Share::None),
            _ => Err(wrong_type(
                "share",
                "\"page\", \"tabs\" or \"none\"",
                &value,
            )),
        }
    }

    /// Refuses any method but GET (`null` included): this scheduler retries reads only.
    fn refuse_writes(&self) -> Result<(), OptionError> {
        let Some(method) = read_member(&self.0, "method").map_err(|_| threw("method"))? else {
            return Ok(());
        };
        if method
            .as_string()
            .is_some_and(|m| m.eq_ignore_ascii_case("GET"))
        {
            return Ok(());
        }
        let what = "\"GET\" (it retries reads only: a write needs an operation identity and a \
                    recovery contract before it may be retried)";
        Err(wrong_type("method", what, &method))
    }

    /// `policy`, on the defaults.
    fn policy(&self) -> Result<Policy, OptionError> {
        let Some(value) = self.set("policy")? else {
            return Ok(Policy::new());
        };
        read_policy(&value)?
            .build()
            .map_err(|e| refused("policy.", &e))
    }

    /// The test hook `testOnlyTimerLateBy_s`: a list of seconds.
    fn late_timers(&self) -> Result<Vec<Duration>, OptionError> {
        const NAME: &str = TEST_HOOK;
        let Some(value) = self.set(NAME)? else {
            return Ok(Vec::new());
        };
        let numbers = numbers(&value, NAME)?.into_iter().map(Number).collect();
        seconds_list(NAME, numbers).map_err(|e| refused("", &e))
    }
}

/// A `policy` object taken apart into the model's [`PolicyInput`]: each field of the type its
/// name says, nothing else. Whether the values make a policy is the model's to say.
fn read_policy(value: &JsValue) -> Result<PolicyInput, OptionError> {
    object(value, "policy")?;
    unknown_key(
        value,
        (PolicyInput::FIELDS, &[]),
        "policy field",
        "the fields are",
    )?;
    let field = |name: &str| given(value, name, &policy(name));
    let number = |name: &str| -> Result<Option<Number>, OptionError> {
        field(name)?
            .map(|v| {
                v.as_f64()
                    .map(Number)
                    .ok_or_else(|| wrong_type(&policy(name), "a number", &v))
            })
            .transpose()
    };
    let boolean = |name: &str| -> Result<Option<bool>, OptionError> {
        field(name)?
            .map(|v| {
                v.as_bool()
                    .ok_or_else(|| wrong_type(&policy(name), "true or false", &v))
            })
            .transpose()
    };
    let statuses = field("retry_statuses")?
        .map(|v| numbers(&v, "policy.retry_statuses"))
        .transpose()?;
    Ok(PolicyInput {
        budget_s: number("budget_s")?,
        max_attempts: number("max_attempts")?.map(Whole),
        attempt_cap_s: number("attempt_cap_s")?,
        min_wait_s: number("min_wait_s")?,
        fallback_base_s: number("fallback_base_s")?,
        retry_statuses: statuses.map(|list| list.into_iter().map(|n| Whole(Number(n))).collect()),
        trust_local_clock: boolean("trust_local_clock")?,
        jitter_s: number("jitter_s")?,
        ratelimit_fields: boolean("ratelimit_fields")?,
    })
}

/// `policy.NAME`.
fn policy(name: &str) -> String {
    format!("policy.{name}")
}

/// Checks that `value`, named `name` in errors, is an object and not an array or a function.
fn object(value: &JsValue, name: &str) -> Result<(), OptionError> {
    let array = is_array(value).map_err(|_| threw(name))?;
    if !value.is_object() || value.is_function() || array {
        return Err(wrong_type(name, "an object", value));
    }
    Ok(())
}

/// The most entries a list option is read for: there are 500 statuses, and a test's timers are
/// fewer. A `Proxy` may claim 2^32 - 1 entries and answer for each.
const MOST_ENTRIES: u32 = 1000;

/// An array of numbers, named `name` in errors.
fn numbers(value: &JsValue, name: &str) -> Result<Vec<f64>, OptionError> {
    if !is_array(value).map_err(|_| threw(name))? {
        return Err(wrong_type(name, "an array of numbers", value));
    }
    let length = read_member(value, "length").map_err(|_| threw(&format!("{name}.length")))?;
    // An array's length is a whole number below 2^32; `as` saturates anything else a `Proxy`
    // might report.
    let length = length.and_then(|l| l.as_f64()).unwrap_or(0.0) as u32;
    if length > MOST_ENTRIES {
        return Err(OptionError::Range(format!(
            "options.{name} has {length} entries, more than the {MOST_ENTRIES} read"
        )));
    }
    (0..length)
        .map(|i| match js_sys::Reflect::get_u32(value, i) {
            Ok(item) => item
                .as_f64()
                .ok_or_else(|| wrong_type(&format!("{name}[{i}]"), "a number", &item)),
            Err(_) => Err(OptionError::Type(format!(
                "options.{name}[{i}] threw when read"
            ))),
        })
        .collect()
}

/// Refuses a key of `value` that is neither `offered` nor `hidden`, naming the offered ones: a
/// typo must not pass silently (a misspelt `signal` would lose the caller's abort).
fn unknown_key(
    value: &JsValue,
    (offered, hidden): (&[&str], &[&str]),
    what: &str,
    list: &str,
) -> Result<(), OptionError> {
    let Ok(keys) = keys_of(value) else {
        let message = format!("the {what}s cannot be listed: listing their keys threw");
        return Err(OptionError::Type(message));
    };
    for key in keys.iter().filter_map(|k| k.as_string()) {
        if !offered.contains(&key.as_str()) && !hidden.contains(&key.as_str()) {
            let offered = offered.join(", ");
            return Err(OptionError::Type(format!(
                "unknown {what} \"{key}\"; {list} {offered}"
            )));
        }
    }
    Ok(())
}
