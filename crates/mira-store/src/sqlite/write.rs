//! Writing memories to SQLite: the one row writer of a store and a restore ([`insert`]), the
//! relations a restore applies once both ends exist, and the small updates (pin, costs, edit).

use super::read::exists;
use super::vector::encode_vector;
use crate::model::{parse_id, Edge, Link, NewMemory, Relation, RestoreOutcome};
use crate::{MemoryEdit, Result};
use mira_core::memory::{MemoryId, RelationType};
use mira_core::render::ModeCosts;
use mira_core::tags::Tag;
use rusqlite::{params, Connection};

/// Writes each memory of `batch` (rows first, then their relations, so a memory may relate to
/// an earlier one of the same batch); returns their `seq`s.
pub(super) fn insert(tx: &Connection, batch: &[NewMemory]) -> Result<Vec<i64>> {
    let seqs = batch
        .iter()
        .map(|new| insert_row(tx, new))
        .collect::<Result<Vec<_>>>()?;
    for new in batch {
        insert_links(tx, new)?;
    }
    Ok(seqs)
}

/// Writes the rows of one memory (T0, T1, T2, tags, slots); returns its `seq`.
fn insert_row(tx: &Connection, new: &NewMemory) -> Result<i64> {
    let m = &new.memory;
    let f = &new.bookkeeping;
    let id = m.id.to_string();
    tx.prepare_cached(
        "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count,
                                created_at, stored_at, session_id, metadata, archived_at,
                                cost_header, cost_fingerprint, cost_verbatim, cost_version, pinned,
                                source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?
    .execute(params![
        id,
        m.wing,
        m.room,
        m.memory_type.as_str(),
        m.content,
        f.content_hash,
        m.token_count,
        m.created_at.timestamp_millis(),
        f.stored_at,
        m.session_id,
        f.metadata,
        f.archived_at,
        f.costs.map(|c| c.header),
        f.costs.map(|c| c.fingerprint),
        f.costs.map(|c| c.verbatim),
        f.costs.map(|_| mira_core::render::RENDER_VERSION),
        f.pinned,
        f.source.as_str(),
    ])?;
    let seq = tx.last_insert_rowid();
    tx.prepare_cached(
        "INSERT INTO fingerprints (memory_id, data, fact_count, token_count) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        id,
        m.fingerprint.to_json(),
        m.fingerprint.fact_count(),
        f.fingerprint_tokens
    ])?;
    if let Some(e) = &new.embedding {
        tx.prepare_cached(
            "INSERT INTO embeddings (memory_id, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![
            id,
            e.model,
            e.vector.len() as i64,
            encode_vector(&e.vector)
        ])?;
    }
    insert_tags(tx, &id, &new.tags)?;
    let mut slot_stmt = tx.prepare_cached(
        "INSERT INTO slots (memory_id, subject, attribute, value, negated) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for s in mira_core::slots::slots(&m.content) {
        slot_stmt.execute(params![id, s.subject, s.attribute, s.value, s.negated])?;
    }
    Ok(seq)
}

fn insert_tags(tx: &Connection, id: &str, tags: &[Tag]) -> Result<()> {
    let mut stmt =
        tx.prepare_cached("INSERT OR IGNORE INTO tags (memory_id, tag, kind) VALUES (?1, ?2, ?3)")?;
    for t in tags {
        stmt.execute(params![id, t.tag, t.kind.as_str()])?;
    }
    Ok(())
}

/// Writes a new memory's causal edges, supersessions (overwriting an older `superseded_by`)
/// and retractions; those whose other memory no longer exists are left out.
fn insert_links(tx: &Connection, new: &NewMemory) -> Result<()> {
    let id = new.memory.id;
    for e in &new.causes {
        insert_edge(tx, e, id)?;
    }
    let key = id.to_string();
    let mut sup =
        tx.prepare_cached("UPDATE verbatims SET superseded_by = ?1 WHERE id = ?2 AND id <> ?1")?;
    for old in &new.supersedes {
        sup.execute(params![key, old.to_string()])?;
    }
    let mut retract = tx.prepare_cached(
        "UPDATE verbatims SET archived_at = ?1 WHERE id = ?2 AND id <> ?3 AND archived_at IS NULL",
    )?;
    for old in &new.retracts {
        retract.execute(params![new.bookkeeping.stored_at, old.to_string(), key])?;
    }
    Ok(())
}

/// Writes edge `e.other → to` unless it is there already or one of its ends does not exist;
/// `None` when an end does not exist (or both are one memory), else whether it was written.
pub(super) fn insert_edge(tx: &Connection, e: &Edge, to: MemoryId) -> Result<Option<bool>> {
    let (from, to) = (e.other.to_string(), to.to_string());
    if from == to || !exists(tx, &from)? || !exists(tx, &to)? {
        return Ok(None);
    }
    let written = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO causal_edges (from_id, to_id, relation, confidence, detected_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            from,
            to,
            e.relation.as_str(),
            e.confidence,
            e.detected_at
        ])?;
    Ok(Some(written > 0))
}

/// Applies a restore's relation when both of its ends exist (never overwriting a
/// `superseded_by`); `None` when they do not, else whether it changed the store.
fn apply_relation(tx: &Connection, r: &Relation) -> Result<Option<bool>> {
    match r {
        Relation::Edge { to, edge } => insert_edge(tx, edge, *to),
        Relation::Supersession { memory, by } => {
            let (memory, by) = (memory.to_string(), by.to_string());
            if memory == by || !exists(tx, &memory)? || !exists(tx, &by)? {
                return Ok(None);
            }
            let written = tx
                .prepare_cached(
                    "UPDATE verbatims SET superseded_by = ?1 WHERE id = ?2 AND superseded_by IS NULL",
                )?
                .execute(params![by, memory])?;
            Ok(Some(written > 0))
        }
    }
}

/// See [`crate::MemoryStore::restore_batch`].
pub(super) fn restore(
    tx: &Connection,
    memories: &[NewMemory],
    relations: &[Relation],
) -> Result<RestoreOutcome> {
    let seqs = insert(tx, memories)?;
    let applied = relations
        .iter()
        .map(|r| apply_relation(tx, r))
        .collect::<Result<Vec<_>>>()?;
    Ok(RestoreOutcome::of(seqs, &applied))
}

/// See [`crate::MemoryStore::remove_links`].
pub(super) fn remove_links(
    tx: &Connection,
    a: MemoryId,
    b: MemoryId,
    relation: Option<RelationType>,
) -> Result<Vec<Link>> {
    let mut stmt = tx.prepare_cached(
        "DELETE FROM causal_edges
         WHERE ((from_id = ?1 AND to_id = ?2) OR (from_id = ?2 AND to_id = ?1))
           AND (?3 IS NULL OR relation = ?3)
         RETURNING from_id, to_id, relation, confidence",
    )?;
    let rows = stmt.query_map(
        params![
            a.to_string(),
            b.to_string(),
            relation.map(RelationType::as_str)
        ],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, f64>(3)?,
            ))
        },
    )?;
    let mut removed = Vec::new();
    for row in rows {
        let (from, to, relation, confidence) = row?;
        removed.push(Link {
            from: parse_id(&from)?,
            to: parse_id(&to)?,
            relation: relation.parse().map_err(crate::StoreError::Corrupt)?,
            confidence,
        });
    }
    removed.sort_by_key(|l| (l.from, l.to, l.relation.as_str()));
    Ok(removed)
}

/// See [`crate::MemoryStore::set_pinned`].
pub(super) fn set_pinned(tx: &Connection, id: MemoryId, pinned: bool) -> Result<bool> {
    let key = id.to_string();
    let n = tx
        .prepare_cached("UPDATE verbatims SET pinned = ?1 WHERE id = ?2 AND pinned <> ?1")?
        .execute(params![pinned, key])?;
    Ok(n > 0 || exists(tx, &key)?)
}

/// See [`crate::MemoryStore::set_superseded_by`].
pub(super) fn set_superseded_by(
    tx: &Connection,
    id: MemoryId,
    by: Option<MemoryId>,
) -> Result<bool> {
    let key = id.to_string();
    let n = tx
        .prepare_cached(
            "UPDATE verbatims SET superseded_by = ?1 WHERE id = ?2 AND superseded_by IS NOT ?1",
        )?
        .execute(params![by.map(|b| b.to_string()), key])?;
    Ok(n > 0 || exists(tx, &key)?)
}

/// See [`crate::MemoryStore::set_costs`].
pub(super) fn set_costs(
    tx: &Connection,
    costs: &[(MemoryId, ModeCosts)],
    version: u32,
) -> Result<()> {
    let mut stmt = tx.prepare_cached(
        "UPDATE verbatims SET cost_header = ?1, cost_fingerprint = ?2, cost_verbatim = ?3, \
         cost_version = ?4 WHERE id = ?5",
    )?;
    for (id, c) in costs {
        stmt.execute(params![
            c.header,
            c.fingerprint,
            c.verbatim,
            version,
            id.to_string()
        ])?;
    }
    Ok(())
}

/// See [`crate::MemoryStore::edit_memory`].
pub(super) fn edit(tx: &Connection, id: MemoryId, edit: &MemoryEdit) -> Result<bool> {
    let key = id.to_string();
    let n = tx
        .prepare_cached(
            "UPDATE verbatims SET wing = ?1, room = ?2, memory_type = ?3, cost_header = ?4, \
             cost_fingerprint = ?5, cost_verbatim = ?6, cost_version = ?7 WHERE id = ?8",
        )?
        .execute(params![
            edit.wing,
            edit.room,
            edit.memory_type.as_str(),
            edit.costs.header,
            edit.costs.fingerprint,
            edit.costs.verbatim,
            edit.cost_version,
            key
        ])?;
    if n == 0 {
        return Ok(false);
    }
    tx.prepare_cached(
        "UPDATE fingerprints SET data = ?1, fact_count = ?2, token_count = ?3 WHERE memory_id = ?4",
    )?
    .execute(params![
        edit.fingerprint.to_json(),
        edit.fingerprint.fact_count(),
        edit.fingerprint_tokens,
        key
    ])?;
    tx.prepare_cached("DELETE FROM tags WHERE memory_id = ?1")?
        .execute([&key])?;
    insert_tags(tx, &key, &edit.tags)?;
    Ok(true)
}

/// See [`crate::MemoryStore::set_embeddings`].
pub(super) fn set_embeddings(
    tx: &Connection,
    model: &str,
    vectors: &[(MemoryId, Vec<f32>)],
) -> Result<usize> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO embeddings (memory_id, model, dim, vector)
         SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM verbatims WHERE id = ?1)
         ON CONFLICT (memory_id) DO UPDATE
             SET model = excluded.model, dim = excluded.dim, vector = excluded.vector
             WHERE embeddings.model NOT IN (excluded.model, 'sentence-transformers/' || excluded.model)",
    )?;
    let mut written = 0;
    for (id, v) in vectors.iter().filter(|(_, v)| !v.is_empty()) {
        written += stmt.execute(params![
            id.to_string(),
            model,
            v.len() as i64,
            encode_vector(v)
        ])?;
    }
    Ok(written)
}
