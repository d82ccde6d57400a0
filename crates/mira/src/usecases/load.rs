//! The load use case: one memory in full, by id.

use super::access::Access;
use super::{validate, UseCaseResult};
use crate::App;
use mira_core::memory::{Fingerprint, MemoryId, MemoryType, RelationType};
use mira_core::tags::Tag;
use mira_core::{render, slots};
use mira_store::{Source, StoredMemory};
use serde::Serialize;
use std::fmt::Write;

/// Loads the memory with this id (any printed form: the short id, a longer prefix, `<uuid>`,
/// `T0:<uuid>`), in a wing `access` may read.
pub fn load(app: &App, access: &Access, raw_id: &str) -> UseCaseResult<StoredMemory> {
    let m = existing(app, raw_id)?;
    access.check_read(&m.memory.wing)?;
    Ok(m)
}

/// The memory with this id, whoever may see it (callers check the right they need on its
/// wing).
pub(crate) fn existing(app: &App, raw_id: &str) -> UseCaseResult<StoredMemory> {
    let id = validate::memory_id(&*app.store, raw_id)?;
    app.store.load(id)?.ok_or_else(|| {
        validate::unknown_id(
            format!("no memory has id {id}: take ids from "),
            " (it may have been cleared)",
        )
    })
}

/// For a superseded memory, the slot by which its successor replaced it ("location of i:
/// paris → berlin"), when slots did ([`mira_core::slots`]) and `access` may read the
/// successor.
pub fn replaced_slot(
    app: &App,
    access: &Access,
    m: &StoredMemory,
) -> UseCaseResult<Option<String>> {
    let Some(next) = m.memory.superseded_by else {
        return Ok(None);
    };
    let Some(successor) = app.store.memories(&[next])?.remove(&next) else {
        return Ok(None);
    };
    if !access.may_read(&successor.wing) {
        return Ok(None);
    }
    Ok(slots::explain(
        &slots::slots(&successor.content),
        &slots::slots(&m.memory.content),
    ))
}

/// The text form: a header line (short id, wing, room, type, date), the verbatim content, then
/// its facts, where it came from (when a client hook captured it), tags, links and marks
/// (`replaced`: the slot of [`replaced_slot`]).
pub fn render_text(m: &StoredMemory, replaced: Option<&str>) -> String {
    let mem = &m.memory;
    let mut out = format!(
        "[ID: {} | Wing: {} | Room: {} | Type: {} | Date: {}]\n\n{}\n",
        render::short_id(mem.id),
        mem.wing,
        mem.room,
        mem.memory_type,
        mem.created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        mem.content
    );
    let _ = write!(out, "\nFingerprint: {}\n", render::fingerprint_facts(mem));
    if m.bookkeeping.source == Source::Captured {
        let _ = writeln!(
            out,
            "Source: captured by a client hook{}",
            mem.session_id
                .as_deref()
                .map(|s| format!(" (session {s})"))
                .unwrap_or_default()
        );
    }
    if !m.tags.is_empty() {
        let tags: Vec<&str> = m.tags.iter().map(|t| t.tag.as_str()).collect();
        let _ = writeln!(out, "Tags: {}", tags.join(", "));
    }
    for (label, edges) in [("Caused by", &m.causes), ("Led to", &m.consequences)] {
        for e in edges {
            let _ = writeln!(
                out,
                "{label}: {} ({}, confidence {:.2})",
                render::short_id(e.other),
                e.relation,
                e.confidence
            );
        }
    }
    if mem.archived {
        out.push_str("Archived: yes\n");
    }
    if let Some(s) = mem.superseded_by {
        let _ = write!(out, "Superseded by: {}", render::short_id(s));
        if let Some(slot) = replaced {
            let _ = write!(out, " ({slot})");
        }
        out.push('\n');
    }
    out
}

/// The JSON form of a loaded memory (`mira load --json`, `mira_load`'s structured content).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LoadedMemory<'a> {
    /// The memory's UUID.
    pub id: MemoryId,
    /// Its wing.
    pub wing: &'a str,
    /// Its room.
    pub room: &'a str,
    /// Its type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// When it happened (RFC 3339, milliseconds).
    pub created_at: String,
    /// The verbatim text (T0).
    pub content: &'a str,
    /// The extracted facts (T1).
    pub fingerprint: &'a Fingerprint,
    /// How many facts the fingerprint holds.
    pub fact_count: u32,
    /// Tokens of the text.
    pub token_count: u32,
    /// Tokens of the fingerprint's rendering.
    pub fingerprint_tokens: u32,
    /// Its tags.
    pub tags: &'a [Tag],
    /// Causal links from the memories it follows from.
    pub causes: Vec<Link>,
    /// Causal links to the memories that follow from it.
    pub consequences: Vec<Link>,
    /// Whether it is archived (out of recall).
    pub archived: bool,
    /// The memory that replaced it, if any.
    pub superseded_by: Option<MemoryId>,
    /// The conversation it came from.
    pub session_id: Option<&'a str>,
    /// `stored` (by a tool or the CLI) or `captured` (by a client hook).
    pub source: &'static str,
}

/// A causal link of a loaded memory.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Link {
    /// The memory at the other end.
    pub id: MemoryId,
    /// The relation (cause → consequence).
    pub relation: RelationType,
    /// Confidence in [0, 1], to 3 decimals.
    pub confidence: f64,
}

impl<'a> From<&'a StoredMemory> for LoadedMemory<'a> {
    fn from(m: &'a StoredMemory) -> Self {
        let mem = &m.memory;
        let links = |edges: &[mira_store::Edge]| {
            edges
                .iter()
                .map(|e| Link {
                    id: e.other,
                    relation: e.relation,
                    confidence: rounded(e.confidence),
                })
                .collect()
        };
        LoadedMemory {
            id: mem.id,
            wing: &mem.wing,
            room: &mem.room,
            memory_type: mem.memory_type,
            created_at: mem
                .created_at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            content: &mem.content,
            fingerprint: &mem.fingerprint,
            fact_count: m.fact_count(),
            token_count: mem.token_count,
            fingerprint_tokens: m.bookkeeping.fingerprint_tokens,
            tags: &m.tags,
            causes: links(&m.causes),
            consequences: links(&m.consequences),
            archived: mem.archived,
            superseded_by: mem.superseded_by,
            session_id: mem.session_id.as_deref(),
            source: m.bookkeeping.source.as_str(),
        }
    }
}

/// The JSON form of a loaded memory ([`LoadedMemory`]).
pub fn to_json(m: &StoredMemory) -> serde_json::Value {
    serde_json::to_value(LoadedMemory::from(m))
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
}

/// A stored confidence as answers show it: computed in f32 and stored as a double, it is
/// rounded to 3 decimals (0.9, not 0.8999999761581421).
pub fn rounded(confidence: f64) -> f64 {
    (confidence * 1000.0).round() / 1000.0
}
