//! The edit use case: file a memory under another wing, room or type. Its text never changes
//! (a correction is a new memory that supersedes it); what is derived from the type (the
//! fingerprint, its tags, the section costs) is derived again, as a store would.

use super::access::Access;
use super::{load, validate, UseCaseError, UseCaseResult};
use crate::App;
use mira_core::memory::{MemoryId, MemoryType};
use mira_core::message::Term;
use mira_core::{fingerprint, render, tokens};
use mira_store::MemoryEdit;
use serde::Serialize;

/// An edit request: the fields to change (absent or blank ones are kept).
#[derive(Debug, Clone, Default)]
pub struct EditRequest {
    /// The memory (any printed id form or unique prefix).
    pub id: String,
    /// The new wing.
    pub wing: Option<String>,
    /// The new room.
    pub room: Option<String>,
    /// The new type name.
    pub memory_type: Option<String>,
}

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EditOutcome {
    /// The memory.
    pub id: MemoryId,
    /// Its wing now.
    pub wing: String,
    /// Its room now.
    pub room: String,
    /// Its type now.
    pub memory_type: MemoryType,
    /// The fields that changed (`wing`, `room`, `type`); empty when nothing did.
    pub changed: Vec<&'static str>,
}

fn given(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// Files memory `req.id` under the requested wing, room and type (`access` must write to its
/// wing, and to the new one).
pub fn edit(app: &App, access: &Access, req: &EditRequest) -> UseCaseResult<EditOutcome> {
    let (wing, room, memory_type) = (given(&req.wing), given(&req.room), given(&req.memory_type));
    if wing.is_none() && room.is_none() && memory_type.is_none() {
        return Err(UseCaseError::Invalid(
            "nothing to change: give a new wing, room or type".into(),
        ));
    }
    if let Some(w) = wing {
        validate::name(Term::Wing, w)?;
    }
    if let Some(r) = room {
        validate::name(Term::Room, r)?;
    }
    let memory_type = memory_type.map(validate::memory_type).transpose()?;
    let mut m = load::existing(app, &req.id)?.memory;
    access.check_write(&m.wing)?;
    if let Some(w) = wing {
        access.check_write(w)?;
    }
    let id = m.id;
    let mut changed = Vec::new();
    if let Some(w) = wing.filter(|w| *w != m.wing) {
        let hash = super::store::content_hash(&m.content);
        if let Some(other) = app.store.find_by_hash(w, &hash)? {
            return Err(UseCaseError::Invalid(format!(
                "wing '{w}' already holds the same text (memory {other}): forget one of the two instead of moving this one"
            ).into()));
        }
        m.wing = w.to_owned();
        changed.push("wing");
    }
    if let Some(r) = room.filter(|r| *r != m.room) {
        m.room = r.to_owned();
        changed.push("room");
    }
    if let Some(t) = memory_type.filter(|t| *t != m.memory_type) {
        m.memory_type = t;
        changed.push("type");
    }
    if !changed.is_empty() {
        m.fingerprint = fingerprint::extract(
            &m.content,
            m.memory_type,
            app.config.extraction.min_entity_length,
        );
        let edit = MemoryEdit {
            wing: m.wing.clone(),
            room: m.room.clone(),
            memory_type: m.memory_type,
            fingerprint_tokens: tokens::count(&render::fingerprint_text(&m)) as u32,
            tags: super::store::stored_tags(&m.content, &m.fingerprint),
            costs: render::mode_costs(&m),
            cost_version: render::RENDER_VERSION,
            fingerprint: m.fingerprint.clone(),
        };
        if !app.store.edit_memory(id, &edit)? {
            return Err(UseCaseError::NotFound(
                format!("memory {id} was forgotten meanwhile: nothing was changed").into(),
            ));
        }
        app.sync_index();
    }
    Ok(EditOutcome {
        id,
        wing: m.wing,
        room: m.room,
        memory_type: m.memory_type,
        changed,
    })
}
