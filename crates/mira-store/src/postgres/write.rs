//! Writing memories to PostgreSQL: the row writer of a store and a restore ([`insert`]), the
//! relations a restore applies once both ends exist, and the small updates (pin, costs, edit).
//! Every function runs inside the caller's transaction.

use super::read::exists;
use crate::model::{day_text, Edge, Link, NewMemory, Relation, RestoreOutcome};
use crate::{MemoryEdit, Result};
use mira_core::memory::{MemoryId, RelationType};
use mira_core::render::ModeCosts;
use mira_core::tags::Tag;
use postgres::Client;

/// The text search configuration of the `search` column and of queries: English stemming and
/// stop words, the nearest to the catalog's Porter-stemmed BM25.
pub(super) const TEXT_SEARCH: &str = "english";

/// Takes the write lock of each wing (sorted, so two transactions never wait on each other in
/// opposite orders), held until the transaction ends.
pub(super) fn lock_wings(c: &mut Client, wings: &[&str]) -> Result<()> {
    let mut wings = wings.to_vec();
    wings.sort_unstable();
    wings.dedup();
    for w in wings {
        c.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('mira wing ' || $1, 0))",
            &[&w],
        )?;
    }
    Ok(())
}

/// Writes each memory of `batch` (rows first, then their relations, so a memory may relate to
/// an earlier one of the same batch); returns their `seq`s.
pub(super) fn insert(c: &mut Client, batch: &[NewMemory]) -> Result<Vec<i64>> {
    let seqs = batch
        .iter()
        .map(|new| insert_row(c, new))
        .collect::<Result<Vec<_>>>()?;
    for new in batch {
        insert_links(c, new)?;
    }
    Ok(seqs)
}

fn insert_row(c: &mut Client, new: &NewMemory) -> Result<i64> {
    let m = &new.memory;
    let f = &new.bookkeeping;
    let costs = f.costs;
    let cost = |pick: fn(&ModeCosts) -> u32| costs.map(|c| i64::from(pick(&c)));
    let created_at = m.created_at.timestamp_millis();
    let searched = format!("{} {}", m.content, day_text(created_at));
    let seq: i64 = c
        .query_one(
            &format!(
                "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash,
                    token_count, created_at, stored_at, session_id, metadata, archived_at,
                    cost_header, cost_fingerprint, cost_verbatim, cost_version, pinned, source,
                    search)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                    $17, $18, to_tsvector('{TEXT_SEARCH}', $19))
                 RETURNING seq"
            ),
            &[
                &m.id,
                &m.wing,
                &m.room,
                &m.memory_type.as_str(),
                &m.content,
                &f.content_hash,
                &i64::from(m.token_count),
                &created_at,
                &f.stored_at,
                &m.session_id,
                &f.metadata,
                &f.archived_at,
                &cost(|c| c.header),
                &cost(|c| c.fingerprint),
                &cost(|c| c.verbatim),
                &costs.map(|_| i64::from(mira_core::render::RENDER_VERSION)),
                &f.pinned,
                &f.source.as_str(),
                &searched,
            ],
        )?
        .try_get(0)?;
    c.execute(
        "INSERT INTO fingerprints (memory_id, data, fact_count, token_count) VALUES ($1, $2, $3, $4)",
        &[
            &m.id,
            &m.fingerprint.to_json(),
            &i64::from(m.fingerprint.fact_count()),
            &i64::from(f.fingerprint_tokens),
        ],
    )?;
    if let Some(e) = &new.embedding {
        c.execute(
            "INSERT INTO embeddings (memory_id, model, dim, vector) VALUES ($1, $2, $3, $4)",
            &[
                &m.id,
                &e.model,
                &i32::try_from(e.vector.len()).unwrap_or(i32::MAX),
                &pgvector::Vector::from(e.vector.clone()),
            ],
        )?;
    }
    insert_tags(c, m.id, &new.tags)?;
    for s in mira_core::slots::slots(&m.content) {
        c.execute(
            "INSERT INTO slots (memory_id, subject, attribute, value, negated) VALUES ($1, $2, $3, $4, $5)",
            &[&m.id, &s.subject, &s.attribute, &s.value, &s.negated],
        )?;
    }
    Ok(seq)
}

fn insert_tags(c: &mut Client, id: MemoryId, tags: &[Tag]) -> Result<()> {
    if tags.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = tags.iter().map(|t| t.tag.as_str()).collect();
    let kinds: Vec<&str> = tags.iter().map(|t| t.kind.as_str()).collect();
    c.execute(
        "INSERT INTO tags (memory_id, tag, kind, position)
         SELECT $1, t.tag, t.kind, t.position - 1
         FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(tag, kind, position)
         ON CONFLICT (memory_id, tag) DO NOTHING",
        &[&id, &names, &kinds],
    )?;
    Ok(())
}

/// Writes a new memory's causal edges, supersessions (overwriting an older `superseded_by`)
/// and retractions; those whose other memory no longer exists are left out.
fn insert_links(c: &mut Client, new: &NewMemory) -> Result<()> {
    let id = new.memory.id;
    for e in &new.causes {
        insert_edge(c, e, id)?;
    }
    for old in &new.supersedes {
        c.execute(
            "UPDATE verbatims SET superseded_by = $1 WHERE id = $2 AND id <> $1",
            &[&id, old],
        )?;
    }
    for old in &new.retracts {
        c.execute(
            "UPDATE verbatims SET archived_at = $1 WHERE id = $2 AND id <> $3 AND archived_at IS NULL",
            &[&new.bookkeeping.stored_at, old, &id],
        )?;
    }
    Ok(())
}

/// Writes edge `e.other → to` unless it is there already or one of its ends does not exist;
/// `None` when an end does not exist (or both are one memory), else whether it was written.
pub(super) fn insert_edge(c: &mut Client, e: &Edge, to: MemoryId) -> Result<Option<bool>> {
    if e.other == to || !exists(c, e.other)? || !exists(c, to)? {
        return Ok(None);
    }
    let written = c.execute(
        "INSERT INTO causal_edges (from_id, to_id, relation, confidence, detected_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        &[
            &e.other,
            &to,
            &e.relation.as_str(),
            &e.confidence,
            &e.detected_at,
        ],
    )?;
    Ok(Some(written > 0))
}

/// Applies a restore's relation when both of its ends exist (never overwriting a
/// `superseded_by`); `None` when they do not, else whether it changed the store.
fn apply_relation(c: &mut Client, r: &Relation) -> Result<Option<bool>> {
    match r {
        Relation::Edge { to, edge } => insert_edge(c, edge, *to),
        Relation::Supersession { memory, by } => {
            if memory == by || !exists(c, *memory)? || !exists(c, *by)? {
                return Ok(None);
            }
            let written = c.execute(
                "UPDATE verbatims SET superseded_by = $1 WHERE id = $2 AND superseded_by IS NULL",
                &[by, memory],
            )?;
            Ok(Some(written > 0))
        }
    }
}

/// See [`crate::MemoryStore::restore_batch`].
pub(super) fn restore(
    c: &mut Client,
    memories: &[NewMemory],
    relations: &[Relation],
) -> Result<RestoreOutcome> {
    let seqs = insert(c, memories)?;
    let applied = relations
        .iter()
        .map(|r| apply_relation(c, r))
        .collect::<Result<Vec<_>>>()?;
    Ok(RestoreOutcome::of(seqs, &applied))
}

/// See [`crate::MemoryStore::remove_links`].
pub(super) fn remove_links(
    c: &mut Client,
    a: MemoryId,
    b: MemoryId,
    relation: Option<RelationType>,
) -> Result<Vec<Link>> {
    let relation = relation.map(RelationType::as_str);
    let rows = c.query(
        "DELETE FROM causal_edges
         WHERE ((from_id = $1 AND to_id = $2) OR (from_id = $2 AND to_id = $1))
           AND ($3::TEXT IS NULL OR relation = $3)
         RETURNING from_id, to_id, relation, confidence",
        &[&a, &b, &relation],
    )?;
    let mut removed = rows
        .iter()
        .map(|r| {
            let relation: String = r.try_get(2)?;
            Ok(Link {
                from: r.try_get(0)?,
                to: r.try_get(1)?,
                relation: relation.parse().map_err(crate::StoreError::Corrupt)?,
                confidence: r.try_get(3)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    removed.sort_by_key(|l| (l.from, l.to, l.relation.as_str()));
    Ok(removed)
}

/// See [`crate::MemoryStore::set_pinned`].
pub(super) fn set_pinned(c: &mut Client, id: MemoryId, pinned: bool) -> Result<bool> {
    let n = c.execute(
        "UPDATE verbatims SET pinned = $1 WHERE id = $2 AND pinned <> $1",
        &[&pinned, &id],
    )?;
    Ok(n > 0 || exists(c, id)?)
}

/// See [`crate::MemoryStore::set_superseded_by`].
pub(super) fn set_superseded_by(
    c: &mut Client,
    id: MemoryId,
    by: Option<MemoryId>,
) -> Result<bool> {
    let n = c.execute(
        "UPDATE verbatims SET superseded_by = $1 WHERE id = $2 \
         AND superseded_by IS DISTINCT FROM $1",
        &[&by, &id],
    )?;
    Ok(n > 0 || exists(c, id)?)
}

/// See [`crate::MemoryStore::set_costs`].
pub(super) fn set_costs(
    c: &mut Client,
    costs: &[(MemoryId, ModeCosts)],
    version: u32,
) -> Result<()> {
    let statement = c.prepare(
        "UPDATE verbatims SET cost_header = $1, cost_fingerprint = $2, cost_verbatim = $3, \
         cost_version = $4 WHERE id = $5",
    )?;
    for (id, k) in costs {
        c.execute(
            &statement,
            &[
                &i64::from(k.header),
                &i64::from(k.fingerprint),
                &i64::from(k.verbatim),
                &i64::from(version),
                id,
            ],
        )?;
    }
    Ok(())
}

/// See [`crate::MemoryStore::edit_memory`].
pub(super) fn edit(c: &mut Client, id: MemoryId, edit: &MemoryEdit) -> Result<bool> {
    let n = c.execute(
        "UPDATE verbatims SET wing = $1, room = $2, memory_type = $3, cost_header = $4, \
         cost_fingerprint = $5, cost_verbatim = $6, cost_version = $7 WHERE id = $8",
        &[
            &edit.wing,
            &edit.room,
            &edit.memory_type.as_str(),
            &i64::from(edit.costs.header),
            &i64::from(edit.costs.fingerprint),
            &i64::from(edit.costs.verbatim),
            &i64::from(edit.cost_version),
            &id,
        ],
    )?;
    if n == 0 {
        return Ok(false);
    }
    c.execute(
        "UPDATE fingerprints SET data = $1, fact_count = $2, token_count = $3 WHERE memory_id = $4",
        &[
            &edit.fingerprint.to_json(),
            &i64::from(edit.fingerprint.fact_count()),
            &i64::from(edit.fingerprint_tokens),
            &id,
        ],
    )?;
    c.execute("DELETE FROM tags WHERE memory_id = $1", &[&id])?;
    insert_tags(c, id, &edit.tags)?;
    Ok(true)
}

/// See [`crate::MemoryStore::set_embeddings`].
pub(super) fn set_embeddings(
    c: &mut Client,
    model: &str,
    vectors: &[(MemoryId, Vec<f32>)],
) -> Result<usize> {
    let stmt = c.prepare(
        "INSERT INTO embeddings (memory_id, model, dim, vector)
         SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM verbatims WHERE id = $1)
         ON CONFLICT (memory_id) DO UPDATE
             SET model = excluded.model, dim = excluded.dim, vector = excluded.vector
             WHERE embeddings.model NOT IN (excluded.model, 'sentence-transformers/' || excluded.model)",
    )?;
    let mut written = 0;
    for (id, v) in vectors.iter().filter(|(_, v)| !v.is_empty()) {
        let dim = i32::try_from(v.len()).unwrap_or(i32::MAX);
        written += c.execute(
            &stmt,
            &[id, &model, &dim, &pgvector::Vector::from(v.clone())],
        )?;
    }
    Ok(usize::try_from(written).unwrap_or(usize::MAX))
}
