//! The clear and forget use cases: permanent deletion of a scope (everything, a wing, a room)
//! or of one memory, in one transaction, then removal from the vector index.
//!
//! Deleting a memory deletes its verbatim row; its fingerprint, embedding, tags and causal
//! edges cascade, its FTS row goes with the delete trigger, and memories it superseded become
//! current again. The persisted vector index is reconciled with SQLite at
//! start, so nothing deleted comes back after a restart.
//!
//! Forgetting one memory is its own use case (`mira_forget {id}`) rather than a scope of
//! `mira_clear_memory`: the reference's clear tool keeps its `mode` interface, a single id needs
//! no confirmation round trip, and an LLM asked to forget one thing cannot widen it to a room by
//! a wrong `mode`.

use super::access::Access;
use super::timeline::summary;
use super::{validate, UseCaseError, UseCaseResult};
use crate::webhooks::{EventKind, MemoryEvent};
use crate::App;
use mira_core::memory::{Memory, MemoryId};
use mira_core::message::Term;
use mira_core::render::short_id;
use mira_core::text::plural;
use mira_store::{DeleteCounts, DeleteScope};
use serde::Serialize;

/// What a clear covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClearScope {
    /// Every memory (reference `mode: global`).
    All,
    /// Every memory of a wing (reference `mode: room` without a room).
    Wing {
        /// The wing.
        wing: String,
    },
    /// Every memory of one room of a wing (reference `mode: room` with a room).
    Room {
        /// The wing.
        wing: String,
        /// The room.
        room: String,
    },
}

fn present(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

impl ClearScope {
    /// The scope from the tool's arguments: `mode` `global` (or `all`), `wing` or `room`;
    /// `wing` is required unless global, `room` is optional with `mode: room` (absent = the
    /// whole wing). Blank strings count as absent.
    pub fn from_args(
        mode: Option<&str>,
        wing: Option<&str>,
        room: Option<&str>,
    ) -> UseCaseResult<ClearScope> {
        let (wing, room) = (present(wing), present(room));
        let mode = present(mode).map(str::to_ascii_lowercase);
        let scope = match (mode.as_deref(), wing, room) {
            (Some("global" | "all"), None, None) => ClearScope::All,
            (Some("global" | "all"), _, _) => {
                return Err(UseCaseError::Invalid(
                    "mode 'global' clears every wing and takes no wing or room: drop them, or use mode 'room' with a wing"
                        .into(),
                ))
            }
            (Some("room" | "wing"), None, _) => {
                return Err(UseCaseError::Invalid("wing is required when mode is 'room' or 'wing'".into()))
            }
            (Some("wing"), Some(_), Some(_)) => {
                return Err(UseCaseError::Invalid(
                    "mode 'wing' clears a whole wing and takes no room: drop room, or use mode 'room'".into(),
                ))
            }
            (Some("room" | "wing"), Some(w), None) => ClearScope::Wing { wing: w.to_owned() },
            (Some("room"), Some(w), Some(r)) => ClearScope::Room { wing: w.to_owned(), room: r.to_owned() },
            _ => {
                return Err(UseCaseError::Invalid(
                    "mode is required and must be 'global', 'wing' or 'room' ('room' without a room clears the whole wing)"
                        .into(),
                ))
            }
        };
        scope.validated()
    }

    fn validated(self) -> UseCaseResult<ClearScope> {
        match &self {
            ClearScope::All => {}
            ClearScope::Wing { wing } => validate::name(Term::Wing, wing)?,
            ClearScope::Room { wing, room } => {
                validate::name(Term::Wing, wing)?;
                validate::name(Term::Room, room)?;
            }
        }
        Ok(self)
    }

    fn store_scope(&self) -> DeleteScope {
        match self {
            ClearScope::All => DeleteScope::All,
            ClearScope::Wing { wing } => DeleteScope::Wing(wing.clone()),
            ClearScope::Room { wing, room } => DeleteScope::Room {
                wing: wing.clone(),
                room: room.clone(),
            },
        }
    }

    /// Refuses unless `access` may remove the memories of this scope.
    fn check(&self, access: &Access) -> UseCaseResult<()> {
        match self {
            ClearScope::All => {
                access.check_write_all("clear every wing")?;
                access.check_destructive("clear every wing")
            }
            ClearScope::Wing { wing } | ClearScope::Room { wing, .. } => {
                access.check_remove("clear", wing)
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            ClearScope::All => "every wing".into(),
            ClearScope::Wing { wing } => format!("wing '{wing}' (all rooms)"),
            ClearScope::Room { wing, room } => format!("wing '{wing}' / room '{room}'"),
        }
    }
}

/// What a clear would delete; nothing is deleted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClearPreview {
    /// The scope.
    pub scope: ClearScope,
    /// Memories that would be deleted.
    pub memories: u64,
    /// Causal edges that would be deleted.
    pub edges: u64,
    /// Tags that would be deleted.
    pub tags: u64,
    /// Always true: nothing was deleted.
    pub dry_run: bool,
}

/// What clearing `scope` would delete, without deleting anything.
pub fn preview(app: &App, scope: &ClearScope) -> UseCaseResult<ClearPreview> {
    let scope = scope.clone().validated()?;
    let c = app.store.delete_preview(&scope.store_scope())?;
    Ok(ClearPreview {
        memories: c.ids.len() as u64,
        edges: c.edges,
        tags: c.tags,
        scope,
        dry_run: true,
    })
}

/// The text form of a preview, for the command line (`--yes` confirms).
pub fn render_preview_text(p: &ClearPreview) -> String {
    format!(
        "Clearing {} would permanently delete {}. Nothing was deleted: run the same command with --yes to delete {}.\n",
        p.scope.describe(),
        counts(p.memories, p.edges, p.tags),
        if p.memories == 1 { "it" } else { "them" }
    )
}

/// A clear request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearRequest {
    /// What to delete.
    pub scope: ClearScope,
    /// Must be true (tool `confirm: true`); otherwise nothing is deleted and the error says
    /// what would be (the command line shows [`preview`] instead).
    pub confirm: bool,
}

/// What a clear or forget deleted.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ClearOutcome {
    /// The scope cleared.
    pub scope: ClearScope,
    /// Memories deleted.
    pub memories: u64,
    /// Causal edges deleted.
    pub edges: u64,
    /// Tags deleted.
    pub tags: u64,
    /// T0 tokens deleted.
    pub tokens: u64,
    /// The ids deleted.
    pub ids: Vec<MemoryId>,
}

/// What a forget deleted.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ForgetOutcome {
    /// The memory forgotten.
    pub id: MemoryId,
    /// Its type.
    pub memory_type: mira_core::memory::MemoryType,
    /// Its wing.
    pub wing: String,
    /// Its summary.
    pub summary: String,
    /// Causal edges deleted with it.
    pub edges: u64,
    /// Tags deleted with it.
    pub tags: u64,
}

/// Deletes `scope` in one transaction and removes the deleted ids from the vector index.
fn delete(app: &App, scope: &DeleteScope) -> UseCaseResult<DeleteCounts> {
    let counts = app.store.delete(scope)?;
    app.sync_index();
    Ok(counts)
}

/// Clears a scope permanently. Without `confirm`, deletes nothing and returns
/// [`UseCaseError::Invalid`] with the counts that would be deleted and how to confirm.
pub fn clear(app: &App, access: &Access, req: &ClearRequest) -> UseCaseResult<ClearOutcome> {
    let scope = req.scope.clone().validated()?;
    scope.check(access)?;
    let store_scope = scope.store_scope();
    if !req.confirm {
        let p = preview(app, &scope)?;
        return Err(UseCaseError::Invalid(
            format!(
                "clearing {} would permanently delete {}; nothing was deleted. \
             To proceed, repeat the call with confirm: true",
                scope.describe(),
                counts(p.memories, p.edges, p.tags)
            )
            .into(),
        ));
    }
    let c = delete(app, &store_scope)?;
    access.audit(&format!(
        "cleared {} ({} memories)",
        scope.describe(),
        c.ids.len()
    ));
    app.notify_webhooks(|| {
        let (wing, room) = match &scope {
            ClearScope::All => (None, None),
            ClearScope::Wing { wing } => (Some(wing.as_str()), None),
            ClearScope::Room { wing, room } => (Some(wing.as_str()), Some(room.as_str())),
        };
        c.ids
            .iter()
            .map(|id| MemoryEvent::cleared(*id, wing, room))
            .collect()
    });
    Ok(ClearOutcome {
        scope,
        memories: c.ids.len() as u64,
        edges: c.edges,
        tags: c.tags,
        tokens: c.tokens,
        ids: c.ids,
    })
}

/// What forgetting memory `raw_id` would delete (nothing is deleted): the memory and the tags
/// and causal edges that go with it.
pub fn forget_preview(app: &App, access: &Access, raw_id: &str) -> UseCaseResult<ForgetOutcome> {
    let m = to_forget(app, access, raw_id)?;
    let c = app.store.delete_preview(&DeleteScope::Memory(m.id))?;
    Ok(forgotten(&m, &c))
}

/// The memory `raw_id` names, which must exist, in a wing `access` may remove from.
fn to_forget(app: &App, access: &Access, raw_id: &str) -> UseCaseResult<Memory> {
    let id = validate::memory_id(&*app.store, raw_id)?;
    let m = app
        .store
        .memories(&[id])?
        .remove(&id)
        .ok_or_else(|| not_forgettable(id))?;
    access.check_remove("forget", &m.wing)?;
    Ok(m)
}

fn not_forgettable(id: MemoryId) -> UseCaseError {
    validate::unknown_id(
        format!("no memory has id {id}: take ids from "),
        " (it may already be forgotten)",
    )
}

/// What forgetting `m` deletes, with `c` the counts of its deletion.
fn forgotten(m: &Memory, c: &DeleteCounts) -> ForgetOutcome {
    ForgetOutcome {
        id: m.id,
        memory_type: m.memory_type,
        wing: m.wing.clone(),
        summary: summary(m),
        edges: c.edges,
        tags: c.tags,
    }
}

/// What forgetting deletes, as a question or a refusal names it: `SHORT_ID ([TYPE] SUMMARY, wing
/// W) with its N tags and M causal edges`.
pub fn render_forget_target(o: &ForgetOutcome) -> String {
    format!(
        "{} ([{}] {}, wing {}) with its {} and {}",
        short_id(o.id),
        o.memory_type,
        o.summary,
        o.wing,
        plural(o.tags, "tag", "tags"),
        plural(o.edges, "causal edge", "causal edges")
    )
}

/// Forgets one memory permanently (any printed id form): it never comes back from recall,
/// timeline, load, lexical search or the index, also after a restart.
pub fn forget(app: &App, access: &Access, raw_id: &str) -> UseCaseResult<ForgetOutcome> {
    let m = to_forget(app, access, raw_id)?;
    let c = delete(app, &DeleteScope::Memory(m.id))?;
    if c.ids.is_empty() {
        return Err(not_forgettable(m.id));
    }
    access.audit(&format!("forgot memory {} of wing '{}'", m.id, m.wing));
    app.notify_webhooks(|| vec![MemoryEvent::about(EventKind::Cleared, &m)]);
    Ok(forgotten(&m, &c))
}

/// `3 memories (2 causal edges, 1 tag)`.
fn counts(memories: u64, edges: u64, tags: u64) -> String {
    format!(
        "{} ({}, {})",
        plural(memories, "memory", "memories"),
        plural(edges, "causal edge", "causal edges"),
        plural(tags, "tag", "tags")
    )
}

/// The text form of a clear: `All memories have been permanently deleted.` or
/// `Cleared <n> memories in wing '<w>' / room '<r>'.`, then the counts.
pub fn render_text(o: &ClearOutcome) -> String {
    let cleared = plural(o.memories, "memory", "memories");
    let head = match &o.scope {
        ClearScope::All => "All memories have been permanently deleted.".to_owned(),
        ClearScope::Wing { wing } => format!("Cleared {cleared} in wing '{wing}' (all rooms)."),
        ClearScope::Room { wing, room } => {
            format!("Cleared {cleared} in wing '{wing}' / room '{room}'.")
        }
    };
    format!(
        "{head}\nDeleted: {cleared}, {}, {} ({}).\n",
        plural(o.edges, "causal edge", "causal edges"),
        plural(o.tags, "tag", "tags"),
        plural(o.tokens, "token", "tokens")
    )
}

/// The text form of a forget: what was deleted.
pub fn render_forget_text(o: &ForgetOutcome) -> String {
    format!(
        "Forgot {}, fingerprint and embedding: deleted for good.\n",
        render_forget_target(o)
    )
}
