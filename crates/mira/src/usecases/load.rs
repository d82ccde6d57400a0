//! The load use case: one memory in full, by id.

use super::access::Access;
use super::{validate, UseCaseError, UseCaseResult};
use crate::App;
use mira_core::{render, slots};
use mira_store::StoredMemory;
use std::fmt::Write;

/// Loads the memory with this id (any printed form: `<uuid>`, `T0:<uuid>`), in a wing
/// `access` may read.
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
        UseCaseError::NotFound(format!(
            "no memory has id {id}: take ids from mira_recall or mira_timeline (it may have been cleared)"
        ))
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

/// The text form: a header line, the verbatim content, then fingerprint, tags and links
/// (`replaced`: the slot of [`replaced_slot`]).
pub fn render_text(m: &StoredMemory, replaced: Option<&str>) -> String {
    let mem = &m.memory;
    let mut out = format!(
        "[ID: {} | Wing: {} | Room: {} | Type: {} | Date: {}]\n\n{}\n",
        mem.id,
        mem.wing,
        mem.room,
        mem.memory_type,
        mem.created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        mem.content
    );
    let _ = write!(out, "\nFingerprint: {}\n", render::fingerprint_text(mem));
    if !m.tags.is_empty() {
        let tags: Vec<&str> = m.tags.iter().map(|t| t.tag.as_str()).collect();
        let _ = writeln!(out, "Tags: {}", tags.join(", "));
    }
    for e in &m.causes {
        let _ = writeln!(
            out,
            "Caused by: T0:{} ({}, confidence {:.2})",
            e.other, e.relation, e.confidence
        );
    }
    for e in &m.consequences {
        let _ = writeln!(
            out,
            "Led to: T0:{} ({}, confidence {:.2})",
            e.other, e.relation, e.confidence
        );
    }
    if mem.archived {
        out.push_str("Archived: yes\n");
    }
    if let Some(s) = mem.superseded_by {
        match replaced {
            Some(slot) => {
                let _ = writeln!(out, "Superseded by: T0:{s} ({slot})");
            }
            None => {
                let _ = writeln!(out, "Superseded by: T0:{s}");
            }
        }
    }
    out
}

/// The JSON form of a loaded memory.
pub fn to_json(m: &StoredMemory) -> serde_json::Value {
    let mem = &m.memory;
    // Confidences are computed in f32: shown as such.
    let edge = |e: &mira_store::Edge| serde_json::json!({"id": e.other, "relation": e.relation, "confidence": e.confidence as f32});
    serde_json::json!({
        "id": mem.id,
        "wing": mem.wing,
        "room": mem.room,
        "type": mem.memory_type,
        "created_at": mem.created_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "content": mem.content,
        "fingerprint": mem.fingerprint,
        "fact_count": m.fact_count(),
        "token_count": mem.token_count,
        "fingerprint_tokens": m.facts.fingerprint_tokens,
        "tags": m.tags.iter().map(|t| serde_json::json!({"tag": t.tag, "kind": t.kind})).collect::<Vec<_>>(),
        "causes": m.causes.iter().map(edge).collect::<Vec<_>>(),
        "consequences": m.consequences.iter().map(edge).collect::<Vec<_>>(),
        "archived": mem.archived,
        "superseded_by": mem.superseded_by,
        "session_id": mem.session_id,
    })
}
