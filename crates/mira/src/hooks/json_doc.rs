//! A JSON document edited in place: objects keep their keys in the file's order, and the
//! document is written back in the file's style (its indentation, or one line, and whether it
//! ends with a line break), so that adding an entry and removing it again gives the file back
//! byte for byte when it was written the usual way (as `JSON.stringify(value, null, 2)` or
//! `serde_json`'s pretty printer write it).

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A JSON value whose objects keep their order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, its entries in order.
    Object(Vec<(String, Json)>),
}

/// How a document was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// One level of indentation; `None` for a document on one line.
    indent: Option<String>,
    /// Whether the text ends with a line break.
    final_newline: bool,
}

impl Default for Style {
    /// Two spaces, a final line break.
    fn default() -> Self {
        Style {
            indent: Some("  ".into()),
            final_newline: true,
        }
    }
}

impl Json {
    /// An empty object.
    pub fn object() -> Json {
        Json::Object(Vec::new())
    }

    /// The value of `key`, when this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key`, when this is an object that has it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key` in this object, inserted at the end as `default()` when absent;
    /// `None` when this is not an object.
    pub fn entry(&mut self, key: &str, default: impl FnOnce() -> Json) -> Option<&mut Json> {
        let Json::Object(entries) = self else {
            return None;
        };
        let at = match entries.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                entries.push((key.to_owned(), default()));
                entries.len() - 1
            }
        };
        entries.get_mut(at).map(|(_, v)| v)
    }

    /// Removes `key` from this object; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let Json::Object(entries) = self else {
            return None;
        };
        let at = entries.iter().position(|(k, _)| k == key)?;
        Some(entries.remove(at).1)
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this is an empty object or array.
    pub fn is_empty_container(&self) -> bool {
        matches!(self, Json::Object(e) if e.is_empty())
            || matches!(self, Json::Array(a) if a.is_empty())
    }

    /// A string value.
    pub fn string(s: &str) -> Json {
        Json::String(s.to_owned())
    }
}

/// Reads a document and how it is written.
pub fn parse(text: &str) -> Result<(Json, Style), String> {
    let value: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let indent = text.trim_end().contains('\n').then(|| {
        text.lines()
            .skip(1)
            .map(|l| &l[..l.len() - l.trim_start().len()])
            .find(|w| !w.is_empty())
            .unwrap_or("  ")
            .to_owned()
    });
    Ok((
        value,
        Style {
            indent,
            final_newline: text.ends_with('\n'),
        },
    ))
}

/// Writes a document in `style`.
pub fn write(value: &Json, style: &Style) -> String {
    let mut out = Vec::new();
    let written = match &style.indent {
        Some(indent) => {
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
            value.serialize(&mut ser)
        }
        None => value.serialize(&mut serde_json::Serializer::new(&mut out)),
    };
    debug_assert!(written.is_ok(), "a JSON value always serialises");
    let mut text = String::from_utf8(out).unwrap_or_default();
    if style.final_newline {
        text.push('\n');
    }
    text
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(i) = seq.next_element()? {
            items.push(i);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            entries.push((k, v));
        }
        Ok(Json::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_come_back_as_they_were() {
        for text in [
            "{\n  \"z\": 1,\n  \"a\": [\n    true,\n    null\n  ],\n  \"m\": {}\n}",
            "{\n    \"z\": {\n        \"é\": \"x\\n\\\"y\"\n    }\n}\n",
            "{\n\t\"a\": -2.5\n}\n",
            "{\"b\":1,\"a\":[]}",
        ] {
            let (v, style) = parse(text).expect("valid");
            assert_eq!(write(&v, &style), text, "{text}");
        }
    }

    #[test]
    fn entries_are_added_at_the_end_and_removed() {
        let (mut v, style) = parse("{\n  \"b\": 1\n}\n").expect("valid");
        v.entry("a", Json::object);
        assert_eq!(write(&v, &style), "{\n  \"b\": 1,\n  \"a\": {}\n}\n");
        v.remove("a");
        assert_eq!(write(&v, &style), "{\n  \"b\": 1\n}\n");
    }
}
