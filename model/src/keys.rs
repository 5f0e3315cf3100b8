//! Keys given twice in one JSON object. `serde_json::Value` keeps only the last of them, so a
//! scenario file read through it would silently lose the first; the loader scans the text with
//! this first, and refuses a scenario (or the file) that gives a key twice, naming where.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// One step of a path into a document: a member's key or an array's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The member named this.
    Key(String),
    /// The entry at this index.
    Index(usize),
}

/// Every key given more than once in one object of `text`, as the path to its second
/// occurrence, in document order. Text that is not JSON gives an empty list: the caller reports
/// it by reading the text as a value.
pub(crate) fn repeated_keys(text: &str) -> Vec<Vec<Step>> {
    let mut state = State::default();
    let mut reader = serde_json::Deserializer::from_str(text);
    match Scan(&mut state).deserialize(&mut reader) {
        Ok(()) => state.found,
        Err(_) => Vec::new(),
    }
}

/// The path to the value being read, and what has been found so far.
#[derive(Default)]
struct State {
    path: Vec<Step>,
    found: Vec<Vec<Step>>,
}

/// Reads one value (and everything in it) without keeping it.
struct Scan<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            self.0.path.push(Step::Index(index));
            let more = seq.next_element_seed(Scan(&mut *self.0))?;
            self.0.path.pop();
            if more.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    /// An object; with `arbitrary_precision`, serde_json also hands each number over as a map
    /// of one private key, which can never repeat.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.path.push(Step::Key(key.clone()));
            if !seen.insert(key) {
                self.0.found.push(self.0.path.clone());
            }
            map.next_value_seed(Scan(&mut *self.0))?;
            self.0.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(path: &[Step]) -> Vec<String> {
        path.iter()
            .map(|step| match step {
                Step::Key(key) => key.clone(),
                Step::Index(i) => format!("[{i}]"),
            })
            .collect()
    }

    #[test]
    fn finds_each_second_occurrence_at_any_depth() {
        let text = r#"{"a": 1, "b": [{"c": 2, "c": 3e999, "c": "x"}], "a": {"d": null}}"#;
        let found: Vec<Vec<String>> = repeated_keys(text).iter().map(|p| keys(p)).collect();
        assert_eq!(
            found,
            [vec!["b", "[0]", "c"], vec!["b", "[0]", "c"], vec!["a"]]
        );
    }

    #[test]
    fn keys_are_compared_after_unescaping_and_case_counts() {
        let found = repeated_keys(r#"{"status": 1, "st\u0061tus": 2, "Status": 3}"#);
        assert_eq!(found.len(), 1);
        assert!(repeated_keys(r#"{"a": {"x": 1}, "b": {"x": 1}}"#).is_empty());
    }

    #[test]
    fn text_that_is_not_json_finds_nothing() {
        assert!(repeated_keys(r#"{"a": 1, "a": 2,"#).is_empty());
        assert!(repeated_keys("").is_empty());
    }
}
