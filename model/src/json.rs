//! JSON values as the model keeps and writes them: a small tree for a report's view, a
//! scenario's `expect` and a response's `body`, written out compactly without any formatting
//! machinery (the browser hands that text to `JSON.parse`). Natively, with the `serde_json`
//! feature, the same tree converts to a `serde_json::Value` for pretty printing.

use crate::prelude::*;
use alloc::borrow::Cow;
use core::time::Duration;

/// An object member's name: borrowed for the names a view writes, owned for names read.
pub type Key = Cow<'static, str>;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, its members in the order they are written.
    Object(Vec<(Key, Json)>),
}

/// A JSON number, kept in the form that writes it exactly.
#[derive(Clone, Debug, PartialEq)]
pub enum Number {
    /// A whole count (an attempt, a status).
    Count(u64),
    /// A duration in seconds: a whole number when it is one (`14`, not `14.0`), else its exact
    /// decimal (`2.5`).
    Secs(Duration),
    /// A number read from input: its nearest `f64`, and its text as written (or as the source
    /// prints it), which is what messages quote.
    Read {
        /// The value, infinite when it overflows.
        value: f64,
        /// The text.
        text: String,
    },
}

impl Number {
    /// The number's value as the nearest `f64`.
    pub fn value(&self) -> f64 {
        match self {
            Number::Count(n) => *n as f64,
            Number::Secs(d) => d.as_secs_f64(),
            Number::Read { value, .. } => *value,
        }
    }
}

impl Json {
    /// A duration in seconds.
    pub fn secs(d: Duration) -> Json {
        Json::Number(Number::Secs(d))
    }

    /// A whole count.
    pub fn count(n: impl Into<u64>) -> Json {
        Json::Number(Number::Count(n.into()))
    }

    /// A string.
    pub fn text(s: impl Into<String>) -> Json {
        Json::String(s.into())
    }

    /// `f(x)` for `Some(x)`, `null` for `None`.
    pub fn or_null<T>(value: Option<T>, f: impl FnOnce(T) -> Json) -> Json {
        value.map_or(Json::Null, f)
    }

    /// An object's member; `None` for anything else or when absent.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value as compact JSON text: no spaces, numbers exact, strings escaped as JSON
    /// requires (and as `JSON.stringify` and serde_json escape them).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// Appends the value as compact JSON text.
    pub fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => write_number(out, n),
            Json::String(s) => write_string(out, s),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, key);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    /// JSON equality where numbers compare by value, within a relative 1e-9 (so `14` equals
    /// `14.0`, and a live figure read back from its decimal equals the model's).
    pub fn same(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Number(x), Json::Number(y)) => {
                let (x, y) = (x.value(), y.value());
                x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0)
            }
            (Json::Array(x), Json::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| x.same(y))
            }
            (Json::Object(x), Json::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| other.get(k).is_some_and(|w| v.same(w)))
            }
            _ => self == other,
        }
    }
}

fn write_number(out: &mut String, n: &Number) {
    match n {
        Number::Count(n) => push_u64(out, *n),
        Number::Secs(d) => push_exact_secs(out, *d),
        Number::Read { text, .. } => out.push_str(text),
    }
}

/// A duration in seconds as an exact decimal: `14`, `2.5`, `0.000000001`.
pub(crate) fn push_exact_secs(out: &mut String, d: Duration) {
    push_u64(out, d.as_secs());
    let mut nanos = d.subsec_nanos();
    if nanos == 0 {
        return;
    }
    out.push('.');
    let mut digits = 9;
    while nanos % 10 == 0 {
        nanos /= 10;
        digits -= 1;
    }
    let mut place = 10u32.pow(digits - 1);
    while place > 0 {
        out.push(char::from(b'0' + (nanos / place % 10) as u8));
        place /= 10;
    }
}

/// A decimal number, without the formatting machinery.
pub(crate) fn push_u64(out: &mut String, n: u64) {
    if n >= 10 {
        push_u64(out, n / 10);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// A JSON string: `"` and `\` escaped, control characters as `\n`-style escapes or `\u00XX`.
fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => {
                let byte = c as u8;
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(byte >> 4)]));
                out.push(char::from(HEX[usize::from(byte & 0xf)]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(feature = "serde_json")]
impl From<&Json> for serde_json::Value {
    /// The same tree as serde_json holds it. A whole number of seconds below 2^53 is an
    /// integer; other durations are the `f64` nearest to them, as serde_json prints floats.
    fn from(json: &Json) -> Self {
        use serde_json::Value;
        const EXACT_IN_F64: u64 = 1 << 53;
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(Number::Count(n)) => Value::from(*n),
            Json::Number(Number::Secs(d))
                if d.subsec_nanos() == 0 && d.as_secs() < EXACT_IN_F64 =>
            {
                Value::from(d.as_secs())
            }
            Json::Number(Number::Secs(d)) => Value::from(d.as_secs_f64()),
            Json::Number(Number::Read { text, value }) => text
                .parse::<serde_json::Number>()
                .map_or_else(|_| Value::from(*value), Value::Number),
            Json::String(s) => Value::String(s.clone()),
            Json::Array(items) => Value::Array(items.iter().map(Value::from).collect()),
            Json::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), Value::from(v)))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_text_is_exact_and_escaped() {
        let value = Json::Object(vec![
            ("a".into(), Json::secs(Duration::from_millis(2500))),
            ("b".into(), Json::secs(Duration::from_secs(14))),
            ("c".into(), Json::secs(Duration::from_nanos(1))),
            ("d".into(), Json::text("q\"\\\n\u{1}é")),
            (
                "e".into(),
                Json::Array(vec![Json::Null, Json::Bool(true), Json::count(7u32)]),
            ),
            ("f".into(), Json::Array(vec![])),
        ]);
        assert_eq!(
            value.to_text(),
            r#"{"a":2.5,"b":14,"c":0.000000001,"d":"q\"\\\n\u0001é","e":[null,true,7],"f":[]}"#
        );
    }

    #[test]
    fn numbers_compare_by_value() {
        let read = |text: &str, value: f64| {
            Json::Number(Number::Read {
                value,
                text: text.into(),
            })
        };
        assert!(read("14.0", 14.0).same(&Json::secs(Duration::from_secs(14))));
        assert!(read("0.3", 0.3).same(&Json::secs(Duration::from_millis(300))));
        assert!(!read("6", 6.0).same(&Json::secs(Duration::from_secs(7))));
        assert!(!Json::Null.same(&Json::Bool(false)));
    }

    #[cfg(feature = "serde_json")]
    #[test]
    fn serde_view_keeps_serde_numbers() {
        let value = Json::Array(vec![
            Json::secs(Duration::from_secs(14)),
            Json::secs(Duration::from_millis(100)),
            Json::secs(Duration::from_secs(u64::MAX)),
        ]);
        assert_eq!(
            serde_json::Value::from(&value).to_string(),
            "[14,0.1,1.8446744073709552e+19]"
        );
    }
}
