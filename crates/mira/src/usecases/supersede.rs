//! Explicit supersession after the fact: the agent (or a person) confirms that a memory replaces
//! an earlier one (`mira_supersede`, `mira supersede OLD NEW`), typically one of the "May update"
//! candidates a store offered. The older memory stays loadable; recall shows it only as a header
//! right after its successor. Undoing it makes the older memory current again. A memory's page
//! in the browser offers [`candidates`]: the newer memories that may replace it.

use super::access::Access;
use super::{validate, UseCaseError, UseCaseResult};
use crate::webhooks::MemoryEvent;
use crate::App;
use mira_core::memory::{Memory, MemoryId};
use mira_core::message::Term;
use mira_core::render::short_id;
use mira_core::sameness::{cosine, same_first, same_thing, Statement};
use mira_store::index::VectorIndexManager;
use mira_store::{MemoryReads, Parts, Scope, StoredMemory};
use serde::Serialize;

/// Longest reason accepted, in bytes.
pub const MAX_REASON: usize = 1000;
/// Most candidates [`candidates`] offers.
pub const MAX_CANDIDATES: usize = 5;
/// Nearest memories of the wing [`candidates`] and a store's "May update" look at (one more:
/// the memory itself may be among them).
const NEIGHBOURS: usize = 20;

/// A request to mark `old` as superseded by `new`, or with `undo`, to make `old` current again.
#[derive(Debug, Clone, Default)]
pub struct SupersedeRequest {
    /// The earlier memory (any printed form of its id, or a unique prefix).
    pub old: String,
    /// The memory that replaces it.
    pub new: String,
    /// Why (kept in the answer and the log; not stored).
    pub reason: Option<String>,
    /// Undo an earlier supersession of `old` by `new`.
    pub undo: bool,
}

/// What a supersede (or its undo) did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SupersedeOutcome {
    /// The earlier memory.
    pub old: MemoryId,
    /// The memory that replaces it.
    pub new: MemoryId,
    /// Whether `old` is superseded by `new` now.
    pub superseded: bool,
    /// Whether this call changed anything (false when it was already so).
    pub changed: bool,
    /// The reason given.
    pub reason: Option<String>,
}

/// Marks `req.old` as superseded by `req.new` (both in one wing, `new` not itself replaced by
/// `old`), or undoes that; idempotent. `access` must write to the wing of both memories.
pub fn supersede(
    app: &App,
    access: &Access,
    req: &SupersedeRequest,
) -> UseCaseResult<SupersedeOutcome> {
    let reason = reason(req.reason.as_deref())?;
    let old = validate::memory_id(&*app.store, &req.old)?;
    let new = validate::memory_id(&*app.store, &req.new)?;
    if old == new {
        return Err(UseCaseError::Invalid(
            "old and new are the same memory: give the earlier memory as old and the one that replaces it as new".into(),
        ));
    }
    let load = |id: MemoryId| -> UseCaseResult<StoredMemory> {
        app.store.load(id)?.ok_or_else(|| {
            validate::unknown_id(format!("no memory has id {id}: take ids from "), "")
        })
    };
    let (o, n) = (load(old)?.memory, load(new)?.memory);
    access.check_write(&o.wing)?;
    access.check_write(&n.wing)?;
    let mut outcome = SupersedeOutcome {
        old,
        new,
        superseded: o.superseded_by == Some(new),
        changed: false,
        reason,
    };
    if req.undo {
        match o.superseded_by {
            Some(by) if by != new => {
                return Err(UseCaseError::Invalid(
                    format!(
                        "{} is superseded by {}, not by {}: undo that one instead",
                        short_id(old),
                        short_id(by),
                        short_id(new)
                    )
                    .into(),
                ))
            }
            Some(_) => {
                app.store.set_superseded_by(old, None)?;
                outcome.superseded = false;
                outcome.changed = true;
            }
            None => {}
        }
    } else if !outcome.superseded {
        if o.wing != n.wing {
            return Err(UseCaseError::Invalid(format!(
                "{} is in wing '{}' and {} in wing '{}': a memory can only replace one of its own wing",
                short_id(old),
                o.wing,
                short_id(new),
                n.wing
            ).into()));
        }
        if n.superseded_by == Some(old) {
            return Err(UseCaseError::Invalid(
                format!(
                "{} already replaces {}: undo that first (mira_supersede old={} new={} undo=true)",
                short_id(old),
                short_id(new),
                short_id(new),
                short_id(old)
            )
                .into(),
            ));
        }
        if let Some(by) = o.superseded_by {
            return Err(UseCaseError::Invalid(format!(
                "{} is already superseded by {}: undo that first (mira_supersede old={} new={} undo=true)",
                short_id(old),
                short_id(by),
                short_id(old),
                short_id(by)
            ).into()));
        }
        app.store.set_superseded_by(old, Some(new))?;
        outcome.superseded = true;
        outcome.changed = true;
        app.notify_webhooks(|| vec![MemoryEvent::superseded(&o, new)]);
    }
    if outcome.changed {
        app.sync_index();
        tracing::info!(
            old = %old,
            new = %new,
            undo = req.undo,
            reason = outcome.reason.as_deref().unwrap_or(""),
            "supersession changed"
        );
    }
    Ok(outcome)
}

/// The reason given, trimmed (none when blank); refused beyond [`MAX_REASON`] bytes.
pub fn reason(raw: Option<&str>) -> UseCaseResult<Option<String>> {
    let reason = raw.map(str::trim).filter(|r| !r.is_empty());
    match reason {
        Some(r) if r.len() > MAX_REASON => Err(UseCaseError::Invalid(Term::Reason.then(format!(
            " is {} bytes, longer than {MAX_REASON}: say it in a sentence",
            r.len()
        )))),
        _ => Ok(reason.map(str::to_owned)),
    }
}

/// The memories that may replace `old`: current memories of its wing created at or after it,
/// among its 20 nearest, offered as a store offers its "May update" lines
/// ([`same_first`]: those about the same thing first, then the other close ones), at most
/// [`MAX_CANDIDATES`]. None when `old` is superseded or archived already, or has no embedding.
pub fn candidates(app: &App, old: &Memory) -> UseCaseResult<Vec<Memory>> {
    if old.superseded_by.is_some() || old.archived {
        return Ok(Vec::new());
    }
    let with_vector = Parts {
        embedding: true,
        ..Parts::NONE
    };
    let Some(vector) = app
        .store
        .get(old.id, with_vector)?
        .and_then(|m| m.embedding)
        .map(|e| e.vector)
    else {
        return Ok(Vec::new());
    };
    let nearest = nearest_ids(app.synced_index()?, &old.wing, &vector);
    let later: Vec<(StoredMemory, f32)> = current_with_vectors(app.store.as_ref(), &nearest)?
        .into_iter()
        .filter(|c| c.memory.id != old.id && c.memory.created_at >= old.created_at)
        .filter_map(|c| {
            let similarity = cosine(&c.embedding.as_ref()?.vector, &vector);
            Some((c, similarity))
        })
        .collect();
    let older = Statement::new(&old.content, &vector, old.created_at)
        .with_entities(&old.fingerprint.entities);
    Ok(same_first(later, MAX_CANDIDATES, |c| {
        c.embedding.as_ref().is_some_and(|e| {
            let n = &c.memory;
            same_thing(
                &older,
                &Statement::new(&n.content, &e.vector, n.created_at)
                    .with_entities(&n.fingerprint.entities),
                None,
            )
        })
    })
    .into_iter()
    .map(|c| c.memory)
    .collect())
}

/// The memories of `wing` nearest to `vector` in `index`, nearest first: [`NEIGHBOURS`] and
/// one more (the memory itself may be among them).
pub(crate) fn nearest_ids(index: &VectorIndexManager, wing: &str, vector: &[f32]) -> Vec<MemoryId> {
    index
        .search(vector, NEIGHBOURS + 1, &Scope::wing(wing))
        .into_iter()
        .map(|h| h.id)
        .collect()
}

/// The current memories of `ids` (neither archived nor superseded), with their vectors, in
/// the order of `ids`.
pub(crate) fn current_with_vectors(
    reads: &dyn MemoryReads,
    ids: &[MemoryId],
) -> UseCaseResult<Vec<StoredMemory>> {
    let with_vector = Parts {
        embedding: true,
        ..Parts::NONE
    };
    let mut found = reads.get_many(ids, with_vector)?;
    Ok(ids
        .iter()
        .filter_map(|id| found.remove(id))
        .filter(|c| !c.memory.archived && c.memory.superseded_by.is_none() && c.embedding.is_some())
        .collect())
}

/// The text form of a supersede outcome.
pub fn render_text(o: &SupersedeOutcome) -> String {
    use std::fmt::Write;
    let (old, new) = (short_id(o.old), short_id(o.new));
    let mut out = match (o.superseded, o.changed) {
        (true, true) => format!(
            "Superseded: {old} by {new}\nRecall now shows {new} and {old} only as a header after it. Undo: mira_supersede old={old} new={new} undo=true\n"
        ),
        (true, false) => format!("Already superseded: {old} by {new}\n"),
        (false, true) => {
            format!("Undone: {old} is current again (no longer superseded by {new})\n")
        }
        (false, false) => format!("Nothing to undo: {old} is not superseded by {new}\n"),
    };
    if let Some(r) = &o.reason {
        let _ = writeln!(out, "Reason: {r}");
    }
    out
}
