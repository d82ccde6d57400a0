//! Tool arguments: their JSON Schemas (generated from these structs) and their parsing into
//! use-case requests, with errors that tell the model how to fix the call.
//!
//! Every field is optional for serde, so that a missing required argument gets mira's own
//! message instead of serde's; the schemas still list them under `required`. Unknown arguments
//! are rejected (`additionalProperties: false`).
//!
//! The fields' doc comments are their schema descriptions, read by the model: plain text with
//! `<uuid>`-style placeholders, not Markdown for rustdoc.
#![allow(
    rustdoc::invalid_html_tags,
    rustdoc::broken_intra_doc_links,
    reason = "field docs are the schema descriptions agents read, written as plain text"
)]

use crate::usecases::recall::MAX_BUDGET;
use crate::usecases::{archive, causal, timeline};
use mira_core::MemoryType;
use rmcp::model::JsonObject;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// Arguments of `mira_store`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreArgs {
    /// One self-contained statement that makes sense out of context (what, why, who), e.g.
    /// "We chose PostgreSQL over MySQL for ACID". At most 64 KiB: split longer text.
    #[schemars(with = "String", length(min = 1))]
    pub content: Option<String>,
    /// The project it belongs to, e.g. "my-app": ASCII letters, digits, '-', '_', '.'. Reuse
    /// the project's existing wing (mira_status lists them).
    #[schemars(with = "String", length(min = 1, max = 64))]
    pub wing: Option<String>,
    /// A topic inside the wing, same naming rules. Default: the type's room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 64))]
    pub room: Option<String>,
    /// The kind of memory; omit it to let mira classify the text.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "memory_type_schema")]
    pub memory_type: Option<String>,
    /// Id of an earlier memory this one replaces (e.g. "3f2c0d1e" from mira_recall): it stays
    /// loadable but recall prefers the new one. Updates and contradictions stated in the text
    /// are detected without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub supersedes: Option<String>,
    /// Show it first in every recall of its wing (standing rules such as "never deploy on
    /// Fridays").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
    /// When it happened, RFC 3339 (e.g. "2024-03-01T12:00:00Z"); default now. For history
    /// imported from elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub created_at: Option<String>,
    /// The conversation it comes from (1-200 characters); memories of one session are
    /// neighbours for recall. Default: this server's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub session_id: Option<String>,
    /// Ignored (accepted for MIRA's clients); do not send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub metrics: Option<serde::de::IgnoredAny>,
}

/// Arguments of `mira_recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// What you are looking for: the task at hand or a question ("how do we deploy the
    /// API?").
    #[schemars(with = "String", length(min = 1, max = 10000))]
    pub query: Option<String>,
    /// Tokens (cl100k) the whole answer may use; with less room, less relevant memories come
    /// as facts or a one-line header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "budget_schema")]
    pub budget: Option<Value>,
    /// Only memories of this wing (project). Default: every wing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 64))]
    pub wing: Option<String>,
    /// Only memories of this room (topic), e.g. "decisions".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 64))]
    pub room: Option<String>,
    /// Wings tried in order when `wing` has no memory, comma-separated, e.g. "shared,company".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub fallback_wings: Option<Value>,
    /// "relevance" (the default: under their day, the most relevant memory's day first) or
    /// "time" (oldest first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub order: Option<String>,
}

/// Arguments of `mira_load`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadArgs {
    /// The short id mira_recall or mira_timeline prints (8 hex digits, e.g. "0a1b2c3d"), a
    /// longer prefix or the UUID.
    #[schemars(with = "String", length(min = 1))]
    pub id: Option<String>,
}

/// Arguments of `mira_status` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {}

/// Arguments of `mira_timeline`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// Only this wing (project). Default: every wing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 64))]
    pub wing: Option<String>,
    /// Only this room (topic), e.g. "decisions".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 64))]
    pub room: Option<String>,
    /// Only this kind of memory.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "memory_type_schema")]
    pub memory_type: Option<String>,
    /// Created at or after: a date "2025-01-31", an RFC 3339 time, or an age ago ("7d",
    /// "12h", "2w").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub since: Option<String>,
    /// Created at or before (a bare date includes the day); forms of `since`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub until: Option<String>,
    /// Memories per page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "limit_schema")]
    pub limit: Option<Value>,
    /// The next_cursor of the previous page, for the next one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
    /// Newest or oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "order_schema")]
    pub order: Option<String>,
    /// Also list archived memories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bool_schema")]
    pub include_archived: Option<Value>,
    /// Also list memories replaced by newer ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bool_schema")]
    pub include_superseded: Option<Value>,
    /// Only what was stored on purpose (stored) or kept from sessions by client hooks (captured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "source_schema")]
    pub source: Option<String>,
}

/// Arguments of `mira_causal_chain`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CausalArgs {
    /// The memory's id (short id, prefix or UUID) from mira_recall or mira_timeline.
    #[schemars(with = "String", length(min = 1))]
    pub id: Option<String>,
    /// How many links to follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "depth_schema")]
    pub max_depth: Option<Value>,
    /// Also list what it led to, not only its causes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bool_schema")]
    pub include_consequences: Option<Value>,
}

/// Arguments of `mira_archive`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchiveArgs {
    /// Archive session notes and debug logs older than this many days, instead of the
    /// thresholds (decisions, facts and preferences never age out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "days_schema")]
    pub older_than_days: Option<Value>,
    /// Archive exactly these memories (ids from mira_recall or mira_timeline) instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "id_list_schema")]
    pub ids: Option<Value>,
    /// Only report what would be archived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bool_schema")]
    pub dry_run: Option<Value>,
    /// Un-archive these instead (mira_timeline with include_archived lists them); takes no
    /// other argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "id_list_schema")]
    pub restore: Option<Value>,
}

/// Arguments of `mira_clear_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClearArgs {
    /// "global": every wing; "wing": one whole wing; "room": one room of a wing (without
    /// `room`, the whole wing).
    #[schemars(schema_with = "mode_schema")]
    pub mode: Option<String>,
    /// The wing to clear (unless mode is global).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 64))]
    pub wing: Option<String>,
    /// The room to clear, with mode "room".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 64))]
    pub room: Option<String>,
    /// Must be true to delete; without it, only what would go is reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bool_schema")]
    pub confirm: Option<Value>,
}

/// Arguments of `mira_supersede`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SupersedeArgs {
    /// The earlier memory, no longer true (an id as printed).
    #[schemars(with = "String", length(min = 1))]
    pub old: Option<String>,
    /// The memory that replaces it.
    #[schemars(with = "String", length(min = 1))]
    pub new: Option<String>,
    /// Why (echoed and logged, not stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 1000))]
    pub reason: Option<String>,
    /// true: make old current again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bool_schema")]
    pub undo: Option<Value>,
}

/// Arguments of `mira_forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetArgs {
    /// The memory's id (short id, prefix or UUID) from mira_recall or mira_timeline.
    #[schemars(with = "String", length(min = 1))]
    pub id: Option<String>,
}

/// Arguments of `mira_link` and `mira_unlink`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkArgs {
    /// The earlier memory, the cause (short id, prefix or UUID from mira_recall or
    /// mira_timeline): the bug, the problem, the decision that led to the other.
    #[schemars(with = "String", length(min = 1))]
    pub from: Option<String>,
    /// The later memory it led to: the fix, the consequence.
    #[schemars(with = "String", length(min = 1))]
    pub to: Option<String>,
    /// mira_link: "because" (the default: `to` happened because of `from`), "triggered" or
    /// "resolves" (`to` fixes what `from` describes). mira_unlink: only links of this relation
    /// (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub relation: Option<String>,
}

fn memory_type_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = MemoryType::ALL.iter().map(|t| t.as_str()).collect();
    json_schema!({ "type": "string", "enum": names })
}

fn budget_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": MAX_BUDGET, "default": 4000 })
}

fn limit_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": timeline::MAX_LIMIT, "default": timeline::DEFAULT_LIMIT })
}

fn depth_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": causal::MAX_DEPTH, "default": causal::DEFAULT_DEPTH })
}

fn days_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": archive::MAX_OLDER_THAN_DAYS })
}

fn bool_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "boolean", "default": false })
}

fn id_list_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": { "type": "string" }, "maxItems": archive::MAX_IDS })
}

fn order_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["newest", "oldest"], "default": "newest" })
}

fn source_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["stored", "captured"] })
}

fn mode_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["global", "wing", "room"] })
}

/// The input schema of a tool, from its argument struct: always with `properties` (even when
/// empty), descriptions on one line. (rmcp only refuses schemas whose root is not an object,
/// which no argument struct is; the fallback is the empty object schema.)
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let Ok(schema) = rmcp::handler::server::tool::schema_for_input::<T>() else {
        return rmcp::handler::server::common::schema_for_empty_input();
    };
    let mut schema = JsonObject::clone(&schema);
    // The dialect (2020-12, MCP's default) goes without saying in every tool.
    schema.remove("$schema");
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    for p in properties
        .as_object_mut()
        .into_iter()
        .flat_map(|m| m.values_mut())
    {
        if let Some(Value::String(d)) = p.get_mut("description") {
            *d = d.replace('\n', " ");
        }
    }
    Arc::new(schema)
}

/// The output schema of a tool (its `outputSchema`): what `T`, the type its handler answers with
/// as structured content, serialises to. The root is an object, as clients of MCP 2025-06-18
/// require (a union of outcomes is an object of one of their shapes).
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = JsonObject::clone(&rmcp::handler::server::tool::schema_for_output::<T>());
    schema.remove("$schema");
    schema.insert("type".into(), Value::String("object".into()));
    Arc::new(schema)
}

/// Parses a tool's arguments; the error names the argument and what is wrong with it.
pub fn parse<T: DeserializeOwned>(tool: &str, args: JsonObject) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            format!("{tool}: {inner}. Fix the arguments (see the tool's input schema) and call it again.")
        } else {
            format!("{tool}: argument `{path}`: {inner}. Fix it and call the tool again.")
        }
    })
}

/// A string argument, with blank values treated as absent.
pub fn non_blank(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// The `budget` of a recall: a number (fractions are truncated) or a numeric string; absent,
/// null or blank means the default. Out-of-range values are left to the use case, which
/// states the range.
pub fn budget(value: Option<&Value>, default: u32) -> Result<Option<i64>, String> {
    integer(
        "budget",
        value,
        &format!("give a whole number of tokens from 1 to {MAX_BUDGET} (default {default})"),
    )
}

/// A whole-number argument: a number (fractions are truncated) or a numeric string; absent,
/// null or blank means absent. `hint` says what is valid. Range checks are the use case's.
pub fn integer(name: &str, value: Option<&Value>, hint: &str) -> Result<Option<i64>, String> {
    let from_f64 = |f: f64, raw: &str| {
        let t = f.trunc();
        if t.is_finite() && t >= i64::MIN as f64 && t <= i64::MAX as f64 {
            Ok(Some(t as i64))
        } else {
            Err(format!("{name} {raw} is out of range: {hint}"))
        }
    };
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => from_f64(n.as_f64().unwrap_or(f64::INFINITY), &n.to_string()),
        },
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                return Ok(None);
            }
            if let Ok(i) = t.parse::<i64>() {
                return Ok(Some(i));
            }
            match t.parse::<f64>() {
                Ok(f) if f.is_finite() => from_f64(f, t),
                _ => Err(format!(
                    "{name} '{}' is not a number: {hint}",
                    s.escape_debug()
                )),
            }
        }
        Some(other) => Err(format!(
            "{name} must be a number, not {}: {hint}",
            kind(other)
        )),
    }
}

/// A boolean argument (`true`/`false`, also as strings); absent or null is false.
pub fn flag(name: &str, value: Option<&Value>) -> Result<bool, String> {
    match value {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("false") || s.trim().is_empty() => {
            Ok(false)
        }
        Some(other) => Err(format!("{name} must be true or false, not {}", kind(other))),
    }
}

/// A list of names or ids: an array of strings or, leniently, one comma-separated string;
/// blank parts are dropped.
pub fn string_list(name: &str, value: Option<&Value>) -> Result<Vec<String>, String> {
    let expected = || format!("{name} must be a list of strings (or one comma-separated string)");
    let parts: Vec<String> = match value {
        None | Some(Value::Null) => vec![],
        Some(Value::String(s)) => s.split(',').map(str::to_owned).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!("{}, found {} in it", expected(), kind(other))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("{}, not {}", expected(), kind(other))),
    };
    Ok(parts
        .into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn schemas_have_required_descriptions_and_no_extra_properties() {
        let s = input_schema::<StoreArgs>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["content", "wing"]));
        assert_eq!(s["additionalProperties"], false);
        let props = s["properties"].as_object().expect("properties");
        for (name, p) in props {
            assert!(
                p["description"].as_str().is_some_and(|d| d.len() > 20),
                "{name}: {p}"
            );
            assert_ne!(p["type"], json!(["string", "null"]), "{name}");
        }
        assert_eq!(
            props["type"]["enum"],
            json!([
                "decision",
                "fact",
                "preference",
                "session_note",
                "debug_log"
            ])
        );
        let r = input_schema::<RecallArgs>();
        assert_eq!(r["required"], json!(["query"]));
        assert_eq!(r["properties"]["budget"]["type"], "integer");
        assert_eq!(r["properties"]["budget"]["maximum"], MAX_BUDGET);
        assert_eq!(r["properties"]["budget"]["default"], 4000);
        assert!(
            r["properties"]["wing"].get("default").is_none(),
            "no null defaults: {r:?}"
        );
        assert!(!r["properties"]["query"]["description"]
            .as_str()
            .unwrap_or("\n")
            .contains('\n'));
        assert_eq!(input_schema::<LoadArgs>()["required"], json!(["id"]));
        let st = input_schema::<StatusArgs>();
        assert_eq!(st["type"], "object");
        assert_eq!(st["properties"], json!({}));
        assert!(st.get("required").is_none());
    }

    #[test]
    fn parse_reports_the_argument() {
        let e = parse::<StoreArgs>("mira_store", obj(json!({"content": 5}))).unwrap_err();
        assert!(
            e.contains("argument `content`") && e.contains("expected a string"),
            "{e}"
        );
        let e = parse::<StoreArgs>("mira_store", obj(json!({"content": "x", "colour": 1})))
            .unwrap_err();
        assert!(
            e.contains("unknown field `colour`") && e.contains("`wing`"),
            "{e}"
        );
        let a = parse::<StoreArgs>(
            "mira_store",
            obj(json!({"content": "x", "room": null, "metrics": {"a": 1}})),
        )
        .expect("valid");
        assert_eq!(a.content.as_deref(), Some("x"));
        assert!(a.wing.is_none() && a.room.is_none());
        assert!(parse::<StatusArgs>("mira_status", obj(json!({"x": 1}))).is_err());
        assert!(parse::<StatusArgs>("mira_status", JsonObject::new()).is_ok());
    }

    #[test]
    fn budget_forms() {
        let b = |v: Value| budget(Some(&v), 4000);
        assert_eq!(budget(None, 4000), Ok(None));
        assert_eq!(b(json!(null)), Ok(None));
        assert_eq!(b(json!(1500)), Ok(Some(1500)));
        assert_eq!(b(json!(1500.9)), Ok(Some(1500)));
        assert_eq!(b(json!("1500")), Ok(Some(1500)));
        assert_eq!(b(json!(" 200.5 ")), Ok(Some(200)));
        assert_eq!(b(json!("")), Ok(None));
        assert_eq!(b(json!(0)), Ok(Some(0)));
        assert_eq!(b(json!(-5)), Ok(Some(-5)));
        assert_eq!(b(json!(u64::MAX)).unwrap_err(), format!("budget {} is out of range: give a whole number of tokens from 1 to 100000 (default 4000)", u64::MAX));
        assert!(b(json!(1e300)).unwrap_err().contains("out of range"));
        let e = b(json!("abc")).unwrap_err();
        assert!(
            e.starts_with("budget 'abc' is not a number") && e.contains("1 to 100000"),
            "{e}"
        );
        assert!(b(json!("NaN")).unwrap_err().contains("not a number"));
        assert!(b(json!(true)).unwrap_err().contains("a boolean"));
    }

    #[test]
    fn lists_and_flags() {
        let w = |v: Value| string_list("fallback_wings", Some(&v));
        assert_eq!(
            w(json!(" empty2 , w2,, ")),
            Ok(vec!["empty2".to_owned(), "w2".to_owned()])
        );
        assert_eq!(
            w(json!(["a", " ", "b"])),
            Ok(vec!["a".to_owned(), "b".to_owned()])
        );
        assert_eq!(string_list("ids", None), Ok(vec![]));
        assert!(w(json!(3))
            .unwrap_err()
            .starts_with("fallback_wings must be a list"));
        assert!(w(json!(["a", 1])).is_err());
        let f = |v: Value| flag("confirm", Some(&v));
        assert_eq!(
            (
                f(json!(true)),
                f(json!("TRUE")),
                f(json!(false)),
                f(json!(null))
            ),
            (Ok(true), Ok(true), Ok(false), Ok(false))
        );
        assert!(f(json!(1)).unwrap_err().contains("true or false"));
        assert_eq!(
            integer("limit", Some(&json!("20")), "1 to 1000"),
            Ok(Some(20))
        );
    }

    #[test]
    fn lifecycle_schemas() {
        let t = input_schema::<TimelineArgs>();
        assert!(
            t.get("required").is_none(),
            "timeline's wing is optional: {t:?}"
        );
        assert_eq!(t["properties"]["limit"]["maximum"], 1000);
        assert_eq!(t["properties"]["include_archived"]["type"], "boolean");
        assert_eq!(input_schema::<CausalArgs>()["required"], json!(["id"]));
        assert_eq!(input_schema::<ClearArgs>()["required"], json!(["mode"]));
        assert_eq!(input_schema::<ForgetArgs>()["required"], json!(["id"]));
        assert_eq!(
            input_schema::<ArchiveArgs>()["properties"]["ids"]["type"],
            "array"
        );
    }
}
