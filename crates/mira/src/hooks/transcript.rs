//! Reading a Claude Code session transcript: one JSON record per line
//! (`~/.claude/projects/<project>/<session>.jsonl`), as Claude Code writes it:
//!
//! - `{"type":"user","message":{"role":"user","content":…},"timestamp":…,"uuid":…}`: what the
//!   user typed (`content` a string, or `text` blocks), or tool results (`tool_result` blocks
//!   with `tool_use_id`, `content` and `is_error`);
//! - `{"type":"assistant","message":{"role":"assistant","content":[…]}}`: `text` blocks, `tool_use`
//!   blocks (`id`, `name`, `input`) and `thinking` blocks (left out); one record per block in
//!   recent versions, several blocks per record in older ones;
//! - records of other types (`summary`, `system`, `progress`, `file-history-snapshot`, …) and
//!   records that are not the conversation itself: `isSidechain` (a sub-agent's work),
//!   `isMeta` (text the client injected), `isCompactSummary` (the summary written at a
//!   compaction), `isApiErrorMessage`; all left out.
//!
//! What the client wraps in tags rather than the user typing it (`<command-name>`,
//! `<local-command-stdout>`, `<bash-stdout>`, `<system-reminder>` …) and its bracketed markers
//! (`[Request interrupted by user]`) are not prompts. A line that is not JSON, or a record of
//! an unknown shape, is skipped: a transcript is read as far as it can be.

use chrono::{DateTime, Utc};
use regex::Regex;
use serde_json::Value;
use std::collections::HashSet;
use std::io::BufRead;
use std::sync::LazyLock;

/// One thing that happened in a session, in transcript order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// What the user asked (typed text, cleaned of what the client added).
    Prompt {
        /// The text.
        text: String,
        /// When.
        at: DateTime<Utc>,
    },
    /// Text the assistant wrote.
    Text {
        /// The text.
        text: String,
        /// When.
        at: DateTime<Utc>,
    },
    /// A tool the assistant called.
    Call {
        /// The call's id (its result carries it).
        id: String,
        /// The tool's name.
        name: String,
        /// Its input.
        input: Value,
        /// When.
        at: DateTime<Utc>,
    },
    /// What a tool answered.
    Result {
        /// The id of the call it answers.
        id: String,
        /// Whether the tool reported a failure.
        error: bool,
        /// Its text.
        output: String,
        /// When.
        at: DateTime<Utc>,
    },
}

impl Event {
    /// When it happened.
    pub fn at(&self) -> DateTime<Utc> {
        match self {
            Event::Prompt { at, .. }
            | Event::Text { at, .. }
            | Event::Call { at, .. }
            | Event::Result { at, .. } => *at,
        }
    }
}

/// A session read from its transcript.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// The events, in order.
    pub events: Vec<Event>,
    /// Lines that were not JSON records (skipped).
    pub bad_lines: usize,
    /// The session's working directory, as its first record names it.
    pub cwd: Option<std::path::PathBuf>,
}

/// A block the client wraps around what it inserts (`<system-reminder>…</system-reminder>`).
static TAGGED_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)<([a-z][a-z0-9]*(?:-[a-z0-9]+)+)>.*?</([a-z][a-z0-9]*(?:-[a-z0-9]+)+)>")
        .expect("a valid pattern")
});

/// Reads a transcript. A line that cannot be read as a record is counted and skipped; a
/// record seen before (the same `uuid`, which a client may write again) is read once.
pub fn read(input: impl BufRead) -> std::io::Result<Transcript> {
    let mut out = Transcript::default();
    let mut seen = HashSet::new();
    let mut last = DateTime::<Utc>::UNIX_EPOCH;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(&line) else {
            out.bad_lines += 1;
            continue;
        };
        if let Some(uuid) = record.get("uuid").and_then(Value::as_str) {
            if !seen.insert(uuid.to_owned()) {
                continue;
            }
        }
        let at = record
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or(last);
        last = at;
        if out.cwd.is_none() {
            out.cwd = record
                .get("cwd")
                .and_then(Value::as_str)
                .map(std::path::PathBuf::from);
        }
        events_of(&record, at, &mut out.events);
    }
    Ok(out)
}

/// Whether a flag of the record is set.
fn flag(record: &Value, key: &str) -> bool {
    record.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The events of one record.
fn events_of(record: &Value, at: DateTime<Utc>, out: &mut Vec<Event>) {
    let kind = record.get("type").and_then(Value::as_str).unwrap_or("");
    if !matches!(kind, "user" | "assistant")
        || [
            "isSidechain",
            "isMeta",
            "isCompactSummary",
            "isApiErrorMessage",
        ]
        .iter()
        .any(|k| flag(record, k))
    {
        return;
    }
    let Some(content) = record.get("message").and_then(|m| m.get("content")) else {
        return;
    };
    let blocks: Vec<Value> = match content {
        Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
        Value::Array(blocks) => blocks.clone(),
        _ => return,
    };
    let mut typed = Vec::new();
    for b in &blocks {
        match (kind, b.get("type").and_then(Value::as_str)) {
            ("assistant", Some("text")) => {
                let text = b.get("text").and_then(Value::as_str).unwrap_or("").trim();
                if !text.is_empty() {
                    out.push(Event::Text {
                        text: text.to_owned(),
                        at,
                    });
                }
            }
            (_, Some("text")) => {
                if let Some(t) = b.get("text").and_then(Value::as_str) {
                    typed.push(t);
                }
            }
            ("assistant", Some("tool_use")) => out.push(Event::Call {
                id: text_field(b, "id"),
                name: text_field(b, "name"),
                input: b.get("input").cloned().unwrap_or(Value::Null),
                at,
            }),
            ("user", Some("tool_result")) => out.push(Event::Result {
                id: text_field(b, "tool_use_id"),
                error: flag(b, "is_error"),
                output: block_text(b.get("content")),
                at,
            }),
            _ => {}
        }
    }
    if let Some(text) = typed_by_user(&typed.join("\n")) {
        out.push(Event::Prompt { text, at });
    }
}

fn text_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

/// The text of a tool result's content: a string, or its `text` blocks.
fn block_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What the user typed in a user record's text: without the blocks the client wrapped in
/// tags; `None` when nothing is left, or when what is left is one of the client's bracketed
/// markers (`[Request interrupted by user]`).
fn typed_by_user(text: &str) -> Option<String> {
    // A block's closing name must be its opening one (the pattern cannot say so).
    let cleaned = TAGGED_BLOCK.replace_all(text, |c: &regex::Captures<'_>| {
        if c[1] == c[2] {
            " ".to_owned()
        } else {
            c[0].to_owned()
        }
    });
    let cleaned = cleaned.trim();
    let bracketed = cleaned.starts_with('[') && cleaned.ends_with(']') && !cleaned.contains('\n');
    (!cleaned.is_empty() && !bracketed).then(|| cleaned.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Transcript {
        read(std::io::Cursor::new(s)).expect("in memory")
    }

    #[test]
    fn prompts_texts_calls_and_results_in_order() {
        let t = read_str(concat!(
            r#"{"type":"summary","summary":"Earlier","leafUuid":"x"}"#,
            "\n",
            r#"{"type":"user","uuid":"1","timestamp":"2026-05-04T10:00:00Z","message":{"role":"user","content":"Add retries to the client"}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"2","timestamp":"2026-05-04T10:00:05Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Looking."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo test"}}]}}"#,
            "\n",
            "not json\n",
            r#"{"type":"user","uuid":"3","timestamp":"2026-05-04T10:00:09Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"Exit code 101"}]}]}}"#,
            "\n",
            r#"{"type":"user","uuid":"3","timestamp":"2026-05-04T10:00:09Z","message":{"role":"user","content":"duplicate uuid"}}"#,
            "\n",
        ));
        assert_eq!(t.bad_lines, 1);
        assert_eq!(t.events.len(), 4, "{:?}", t.events);
        assert!(
            matches!(&t.events[0], Event::Prompt { text, .. } if text == "Add retries to the client")
        );
        assert!(matches!(&t.events[1], Event::Text { text, .. } if text == "Looking."));
        assert!(matches!(&t.events[2], Event::Call { name, .. } if name == "Bash"));
        assert!(
            matches!(&t.events[3], Event::Result { error: true, output, .. } if output == "Exit code 101")
        );
    }

    #[test]
    fn what_the_client_inserted_is_not_a_prompt() {
        for text in [
            "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
            "<local-command-stdout>ok</local-command-stdout>",
            "[Request interrupted by user for tool use]",
            "<system-reminder>be brief</system-reminder>",
        ] {
            let rec = serde_json::json!({"type": "user", "message": {"role": "user", "content": text}});
            assert!(read_str(&rec.to_string()).events.is_empty(), "{text}");
        }
        let rec = serde_json::json!({"type": "user", "message": {"role": "user", "content": "<system-reminder>x</system-reminder>Rename the crate"}});
        assert!(
            matches!(&read_str(&rec.to_string()).events[0], Event::Prompt { text, .. } if text == "Rename the crate")
        );
        for flag in ["isSidechain", "isMeta", "isCompactSummary"] {
            let mut rec = serde_json::json!({"type": "user", "message": {"role": "user", "content": "Do it"}});
            rec[flag] = true.into();
            assert!(read_str(&rec.to_string()).events.is_empty(), "{flag}");
        }
    }
}
