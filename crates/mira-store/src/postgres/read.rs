//! Reading memories from PostgreSQL: the row ([`RawRow`]) and the optional [`Parts`] (each
//! part one query for all the memories asked for), and the reads a store relates a new memory
//! with.

use crate::model::{corrupt, Edge, Embedding, Parts, RawRow, StoreStats, StoredMemory, Unembedded};
use crate::{Result, StoreError};
use mira_core::memory::{Memory, MemoryId};
use mira_core::slots::Slot;
use mira_core::tags::Tag;
use postgres::types::ToSql;
use postgres::{GenericClient, Row};
use std::collections::{BTreeMap, HashMap};

/// `SELECT` of one memory's row (`verbatims v` joined with `fingerprints f`, the columns
/// [`raw_row`] reads), to be followed by a `WHERE`.
pub(super) const SELECT_ROWS: &str = "SELECT v.seq, v.id, v.wing, v.room, v.memory_type, \
     v.content, v.content_hash, v.token_count, v.created_at, v.stored_at, v.session_id, \
     v.metadata, v.archived_at, v.superseded_by, v.pinned, v.cost_header, v.cost_fingerprint, \
     v.cost_verbatim, v.cost_version, f.data, f.token_count, v.source \
     FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id";

/// Reads a row selected with [`SELECT_ROWS`].
pub(super) fn raw_row(r: &Row) -> Result<RawRow> {
    Ok(RawRow {
        seq: r.try_get(0)?,
        id: r.try_get(1)?,
        wing: r.try_get(2)?,
        room: r.try_get(3)?,
        memory_type: r.try_get(4)?,
        content: r.try_get(5)?,
        content_hash: r.try_get(6)?,
        token_count: r.try_get(7)?,
        created_at: r.try_get(8)?,
        stored_at: r.try_get(9)?,
        session_id: r.try_get(10)?,
        metadata: r.try_get(11)?,
        archived_at: r.try_get(12)?,
        superseded_by: r.try_get(13)?,
        pinned: r.try_get(14)?,
        source: r.try_get(21)?,
        costs: [
            r.try_get(15)?,
            r.try_get(16)?,
            r.try_get(17)?,
            r.try_get(18)?,
        ],
        fingerprint: r.try_get(19)?,
        fingerprint_tokens: r.try_get(20)?,
    })
}

/// Decodes the rows of a query of [`SELECT_ROWS`] and reads their `parts`, in order.
pub(super) fn decode_all(
    c: &mut impl GenericClient,
    rows: &[Row],
    parts: Parts,
) -> Result<Vec<StoredMemory>> {
    let mut out = rows
        .iter()
        .map(|r| raw_row(r)?.decode())
        .collect::<Result<Vec<_>>>()?;
    fill(c, &mut out, parts)?;
    Ok(out)
}

/// Reads the optional `parts` of `memories`, one query per part.
pub(super) fn fill(
    c: &mut impl GenericClient,
    memories: &mut [StoredMemory],
    parts: Parts,
) -> Result<()> {
    if memories.is_empty() || parts == Parts::NONE {
        return Ok(());
    }
    let ids: Vec<MemoryId> = memories.iter().map(|m| m.memory.id).collect();
    let at: HashMap<MemoryId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut each = |sql: &str, f: &mut dyn FnMut(&mut StoredMemory, &Row) -> Result<()>| {
        for row in c.query(sql, &[&ids])? {
            let id: MemoryId = row.try_get(0)?;
            if let Some(&i) = at.get(&id) {
                f(&mut memories[i], &row)?;
            }
        }
        Ok::<_, StoreError>(())
    };
    if parts.tags {
        each(
            "SELECT memory_id, tag, kind FROM tags WHERE memory_id = ANY($1) ORDER BY memory_id, position",
            &mut |m, r| {
                let kind: String = r.try_get(2)?;
                let kind = kind.parse().map_err(|e| corrupt(m.memory.id, "tag", e))?;
                m.tags.push(Tag {
                    tag: r.try_get(1)?,
                    kind,
                });
                Ok(())
            },
        )?;
    }
    if parts.embedding {
        each(
            "SELECT memory_id, model, vector FROM embeddings WHERE memory_id = ANY($1)",
            &mut |m, r| {
                let v: pgvector::Vector = r.try_get(2)?;
                m.embedding = Some(Embedding {
                    model: r.try_get(1)?,
                    vector: v.to_vec(),
                });
                Ok(())
            },
        )?;
    }
    if parts.causes {
        each(
            "SELECT to_id, from_id, relation, confidence, detected_at FROM causal_edges \
             WHERE to_id = ANY($1) ORDER BY to_id, detected_at, from_id, relation",
            &mut |m, r| {
                m.causes.push(edge(r)?);
                Ok(())
            },
        )?;
    }
    if parts.consequences {
        each(
            "SELECT from_id, to_id, relation, confidence, detected_at FROM causal_edges \
             WHERE from_id = ANY($1) ORDER BY from_id, detected_at, to_id, relation",
            &mut |m, r| {
                m.consequences.push(edge(r)?);
                Ok(())
            },
        )?;
    }
    if parts.supersedes {
        each(
            "SELECT superseded_by, id FROM verbatims WHERE superseded_by = ANY($1) \
             ORDER BY superseded_by, created_at, seq",
            &mut |m, r| {
                m.supersedes.push(r.try_get(1)?);
                Ok(())
            },
        )?;
    }
    Ok(())
}

/// An edge from columns (memory, other, relation, confidence, detected_at).
fn edge(r: &Row) -> Result<Edge> {
    let relation: String = r.try_get(2)?;
    Ok(Edge {
        other: r.try_get(1)?,
        relation: relation.parse().map_err(StoreError::Corrupt)?,
        confidence: r.try_get(3)?,
        detected_at: r.try_get(4)?,
    })
}

/// Runs a query of [`SELECT_ROWS`] and decodes it with `parts`.
pub(super) fn select(
    c: &mut impl GenericClient,
    condition: &str,
    params: &[&(dyn ToSql + Sync)],
    parts: Parts,
) -> Result<Vec<StoredMemory>> {
    let rows = c.query(&format!("{SELECT_ROWS} {condition}"), params)?;
    decode_all(c, &rows, parts)
}

/// See [`crate::MemoryReads::get_many`].
pub(super) fn get_many(
    c: &mut impl GenericClient,
    ids: &[MemoryId],
    parts: Parts,
) -> Result<HashMap<MemoryId, StoredMemory>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let ids = ids.to_vec();
    Ok(select(c, "WHERE v.id = ANY($1)", &[&ids], parts)?
        .into_iter()
        .map(|m| (m.memory.id, m))
        .collect())
}

/// See [`crate::MemoryReads::find_by_hash`].
pub(super) fn find_by_hash(
    c: &mut impl GenericClient,
    wing: &str,
    hash: &str,
) -> Result<Option<MemoryId>> {
    Ok(c.query_opt(
        "SELECT id FROM verbatims WHERE wing = $1 AND content_hash = $2 LIMIT 1",
        &[&wing, &hash],
    )?
    .map(|r| r.try_get(0))
    .transpose()?)
}

/// See [`crate::MemoryReads::recent_in_wing`].
pub(super) fn recent_in_wing(
    c: &mut impl GenericClient,
    wing: &str,
    since_ms: i64,
    limit: usize,
) -> Result<Vec<StoredMemory>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    select(
        c,
        "WHERE v.wing = $1 AND v.created_at >= $2 AND v.archived_at IS NULL \
         ORDER BY v.created_at DESC, v.seq DESC LIMIT $3",
        &[&wing, &since_ms, &limit],
        Parts {
            tags: true,
            embedding: true,
            ..Parts::NONE
        },
    )
}

/// See [`crate::MemoryReads::slot_holders`].
pub(super) fn slot_holders(
    c: &mut impl GenericClient,
    wing: &str,
    attributes: &[String],
    until_ms: i64,
) -> Result<Vec<(MemoryId, Slot)>> {
    if attributes.is_empty() {
        return Ok(Vec::new());
    }
    let rows = c.query(
        "SELECT s.memory_id, s.subject, s.attribute, s.value, s.negated
         FROM slots s JOIN verbatims v ON v.id = s.memory_id
         WHERE v.wing = $1 AND s.attribute = ANY($2) AND v.created_at <= $3
           AND v.archived_at IS NULL AND v.superseded_by IS NULL
         ORDER BY array_position($2, s.attribute), v.seq",
        &[&wing, &attributes, &until_ms],
    )?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                Slot {
                    subject: r.try_get(1)?,
                    attribute: r.try_get(2)?,
                    value: r.try_get(3)?,
                    replaces: None,
                    negated: r.try_get(4)?,
                },
            ))
        })
        .collect()
}

/// Whether a memory with this id exists.
pub(super) fn exists(c: &mut impl GenericClient, id: MemoryId) -> Result<bool> {
    Ok(
        c.query_opt("SELECT 1 FROM verbatims WHERE id = $1", &[&id])?
            .is_some(),
    )
}

/// See [`crate::MemoryStore::ids_with_prefix`]: ids are UUIDs, compared as 128-bit numbers, so
/// the prefix becomes the range from it padded with zeros to it padded with `f`s.
pub(super) fn ids_with_prefix(
    c: &mut impl GenericClient,
    prefix: &str,
    limit: usize,
) -> Result<Vec<MemoryId>> {
    let digits: String = prefix.chars().filter(|ch| *ch != '-').collect();
    if digits.len() > 32 || !digits.chars().all(|ch| ch.is_ascii_hexdigit()) {
        return Ok(Vec::new());
    }
    let pad = |fill: char| -> Result<MemoryId> {
        let hex: String = digits
            .chars()
            .chain(std::iter::repeat(fill))
            .take(32)
            .collect();
        MemoryId::parse_str(&hex).map_err(|e| StoreError::Corrupt(e.to_string()))
    };
    let (low, high) = (pad('0')?, pad('f')?);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = c.query(
        "SELECT id FROM verbatims WHERE id BETWEEN $1 AND $2 ORDER BY id LIMIT $3",
        &[&low, &high, &limit],
    )?;
    Ok(rows
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, _>>()?)
}

/// See [`crate::MemoryStore::uncosted`].
pub(super) fn uncosted(
    c: &mut impl GenericClient,
    version: u32,
    limit: usize,
) -> Result<Vec<Memory>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    Ok(select(
        c,
        "WHERE v.cost_version IS NULL OR v.cost_version <> $1 LIMIT $2",
        &[&i64::from(version), &limit],
        Parts::NONE,
    )?
    .into_iter()
    .map(|m| m.memory)
    .collect())
}

/// See [`crate::MemoryStore::stats`].
pub(super) fn stats(c: &mut impl GenericClient, wings: Option<&[String]>) -> Result<StoreStats> {
    const IN_WINGS: &str = "($1::text[] IS NULL OR wing = ANY($1))";
    let of_wings = format!("SELECT id FROM verbatims WHERE {IN_WINGS}");
    let r = c.query_one(
        &format!(
            "SELECT (SELECT count(*) FROM verbatims WHERE {IN_WINGS}),
                (SELECT count(*) FROM verbatims WHERE archived_at IS NOT NULL AND {IN_WINGS}),
                (SELECT count(*) FROM verbatims WHERE superseded_by IS NOT NULL AND {IN_WINGS}),
                (SELECT count(*) FROM embeddings WHERE $1::text[] IS NULL OR memory_id IN ({of_wings})),
                (SELECT count(*) FROM causal_edges WHERE $1::text[] IS NULL OR from_id IN ({of_wings})),
                (SELECT count(*) FROM tags WHERE $1::text[] IS NULL OR memory_id IN ({of_wings})),
                (SELECT COALESCE(sum(token_count), 0)::bigint FROM verbatims WHERE {IN_WINGS})"
        ),
        &[&wings],
    )?;
    let n = |i: usize| -> Result<u64> { Ok(r.try_get::<_, i64>(i)?.max(0) as u64) };
    let mut stats = StoreStats {
        memories: n(0)?,
        archived: n(1)?,
        superseded: n(2)?,
        embeddings: n(3)?,
        edges: n(4)?,
        tags: n(5)?,
        total_tokens: n(6)?,
        ..StoreStats::default()
    };
    let mut group = |sql: &str, into: &mut BTreeMap<String, u64>| -> Result<()> {
        for row in c.query(sql, &[&wings])? {
            into.insert(row.try_get(0)?, row.try_get::<_, i64>(1)?.max(0) as u64);
        }
        Ok(())
    };
    group(
        &format!(
            "SELECT memory_type, count(*) FROM verbatims WHERE {IN_WINGS} GROUP BY memory_type"
        ),
        &mut stats.by_type,
    )?;
    group(
        &format!("SELECT wing, count(*) FROM verbatims WHERE {IN_WINGS} GROUP BY wing"),
        &mut stats.by_wing,
    )?;
    group(
        &format!(
            "SELECT wing || '/' || room, count(*) FROM verbatims WHERE {IN_WINGS} GROUP BY wing, room"
        ),
        &mut stats.by_room,
    )?;
    for row in c.query(
        "SELECT wing, count(*), max(stored_at) FROM verbatims WHERE source = 'captured' GROUP BY wing",
        &[],
    )? {
        let n: i64 = row.try_get(1)?;
        stats
            .captures
            .insert(row.try_get(0)?, (n.max(0) as u64, row.try_get(2)?));
    }
    Ok(stats)
}

/// See [`crate::MemoryStore::wings`].
pub(super) fn wings(c: &mut impl GenericClient) -> Result<Vec<String>> {
    Ok(
        c.query("SELECT DISTINCT wing FROM verbatims ORDER BY wing", &[])?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()?,
    )
}

/// See [`crate::MemoryStore::without_embedding`].
pub(super) fn without_embedding(
    c: &mut impl GenericClient,
    model: &str,
    limit: usize,
) -> Result<Vec<Unembedded>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = c.query(
        "SELECT v.id, v.content FROM verbatims v
         WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = v.id
                                   AND e.model IN ($1, 'sentence-transformers/' || $1))
         ORDER BY v.seq LIMIT $2",
        &[&model, &limit],
    )?;
    rows.iter()
        .map(|r| {
            Ok(Unembedded {
                id: r.try_get(0)?,
                content: r.try_get(1)?,
            })
        })
        .collect()
}

/// See [`crate::MemoryStore::count_without_embedding`].
pub(super) fn count_without_embedding(
    c: &mut impl GenericClient,
    model: &str,
    wings: Option<&[String]>,
) -> Result<u64> {
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM verbatims v
             WHERE ($2::text[] IS NULL OR v.wing = ANY($2))
               AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = v.id
                                   AND e.model IN ($1, 'sentence-transformers/' || $1))",
            &[&model, &wings],
        )?
        .try_get(0)?;
    Ok(n.max(0) as u64)
}
