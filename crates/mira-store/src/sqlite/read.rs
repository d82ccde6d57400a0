//! Reading memories from SQLite: the row ([`RawRow`]) and the optional [`Parts`], and the reads
//! a store relates a new memory with.

use super::vector::decode_vector;
use crate::model::{
    parse_id, Edge, Embedding, Parts, RawRow, StoreStats, StoredMemory, Unembedded,
};
use crate::{Result, StoreError};
use mira_core::memory::{Memory, MemoryId};
use mira_core::slots::Slot;
use mira_core::tags::Tag;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row};
use std::collections::{BTreeMap, HashMap};

/// `SELECT` of one memory's row (`verbatims v` joined with `fingerprints f`, the columns
/// [`raw_row`] reads), to be followed by a `WHERE`.
pub(super) const SELECT_ROWS: &str = "SELECT v.seq, v.id, v.wing, v.room, v.memory_type, \
     v.content, v.content_hash, v.token_count, v.created_at, v.stored_at, v.session_id, \
     v.metadata, v.archived_at, v.superseded_by, v.pinned, v.cost_header, v.cost_fingerprint, \
     v.cost_verbatim, v.cost_version, f.data, f.token_count, v.source \
     FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id";

/// Reads a row selected with [`SELECT_ROWS`].
pub(super) fn raw_row(r: &Row<'_>) -> Result<RawRow> {
    let id: String = r.get(1)?;
    let superseded: Option<String> = r.get(13)?;
    Ok(RawRow {
        seq: r.get(0)?,
        id: parse_id(&id)?,
        wing: r.get(2)?,
        room: r.get(3)?,
        memory_type: r.get(4)?,
        content: r.get(5)?,
        content_hash: r.get(6)?,
        token_count: r.get(7)?,
        created_at: r.get(8)?,
        stored_at: r.get(9)?,
        session_id: r.get(10)?,
        metadata: r.get(11)?,
        archived_at: r.get(12)?,
        superseded_by: superseded.map(|s| parse_id(&s)).transpose()?,
        pinned: r.get::<_, i64>(14)? != 0,
        source: r.get(21)?,
        costs: [r.get(15)?, r.get(16)?, r.get(17)?, r.get(18)?],
        fingerprint: r.get(19)?,
        fingerprint_tokens: r.get(20)?,
    })
}

/// Decodes a row selected with [`SELECT_ROWS`] and reads the `parts` asked for.
pub(super) fn stored(conn: &Connection, r: &Row<'_>, parts: Parts) -> Result<StoredMemory> {
    let mut m = raw_row(r)?.decode()?;
    fill(conn, &mut m, parts)?;
    Ok(m)
}

/// Reads the optional `parts` of `m`.
pub(super) fn fill(conn: &Connection, m: &mut StoredMemory, parts: Parts) -> Result<()> {
    fill_many(conn, std::slice::from_mut(m), parts)
}

/// Reads `m`'s causal links and the memories it supersedes, as `parts` asks (`key`: its id).
fn fill_links(conn: &Connection, m: &mut StoredMemory, key: &str, parts: Parts) -> Result<()> {
    if parts.causes {
        m.causes = edges(
            conn,
            "SELECT from_id, relation, confidence, detected_at FROM causal_edges WHERE to_id = ?1 \
             ORDER BY detected_at, from_id, relation",
            key,
        )?;
    }
    if parts.consequences {
        m.consequences = edges(
            conn,
            "SELECT to_id, relation, confidence, detected_at FROM causal_edges WHERE from_id = ?1 \
             ORDER BY detected_at, to_id, relation",
            key,
        )?;
    }
    if parts.supersedes {
        let mut stmt = conn.prepare_cached(
            "SELECT id FROM verbatims WHERE superseded_by = ?1 ORDER BY created_at, seq",
        )?;
        let ids = stmt
            .query_map([key], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        m.supersedes = ids.iter().map(|s| parse_id(s)).collect::<Result<_>>()?;
    }
    Ok(())
}

/// Reads the `parts` of `memories`: tags and embeddings in one query each per 500 memories,
/// the links one memory at a time ([`fill_links`]).
fn fill_many(conn: &Connection, memories: &mut [StoredMemory], parts: Parts) -> Result<()> {
    for chunk in memories.chunks_mut(500) {
        let keys: Vec<String> = chunk.iter().map(|m| m.memory.id.to_string()).collect();
        if parts.tags {
            let mut tags = rows_by_memory(
                conn,
                "SELECT memory_id, tag, kind FROM tags WHERE memory_id IN ({}) ORDER BY rowid",
                &keys,
                |key, r| tag(key, r.get(1)?, r.get(2)?),
            )?;
            for (m, key) in chunk.iter_mut().zip(&keys) {
                m.tags = tags.remove(key).unwrap_or_default();
            }
        }
        if parts.embedding {
            let mut embeddings = rows_by_memory(
                conn,
                "SELECT memory_id, model, vector FROM embeddings WHERE memory_id IN ({})",
                &keys,
                |_, r| embedding_of(r.get(1)?, &r.get::<_, Vec<u8>>(2)?),
            )?;
            for (m, key) in chunk.iter_mut().zip(&keys) {
                m.embedding = embeddings.remove(key).and_then(|e| e.into_iter().next());
            }
        }
        for (m, key) in chunk.iter_mut().zip(&keys) {
            fill_links(conn, m, key, parts)?;
        }
    }
    Ok(())
}

/// The rows of `sql` (its `{}` replaced by one `?` per key, its first column the memory id)
/// for the memories `keys`, each read by `read`, grouped by memory in the order they come.
fn rows_by_memory<T>(
    conn: &Connection,
    sql: &str,
    keys: &[String],
    read: impl Fn(&str, &Row<'_>) -> Result<T>,
) -> Result<HashMap<String, Vec<T>>> {
    let marks = vec!["?"; keys.len()].join(",");
    let mut stmt = conn.prepare_cached(&sql.replace("{}", &marks))?;
    let mut rows = stmt.query(params_from_iter(keys.iter()))?;
    let mut out: HashMap<String, Vec<T>> = HashMap::new();
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        let value = read(&key, r)?;
        out.entry(key).or_default().push(value);
    }
    Ok(out)
}

/// A tag read from the `tags` table for the memory `key`.
fn tag(key: &str, tag: String, kind: String) -> Result<Tag> {
    let kind = kind
        .parse()
        .map_err(|e| crate::model::corrupt(key, "tag", e))?;
    Ok(Tag { tag, kind })
}

/// An embedding read from the `embeddings` table.
fn embedding_of(model: String, blob: &[u8]) -> Result<Embedding> {
    decode_vector(blob).map(|vector| Embedding { model, vector })
}

fn edges(conn: &Connection, sql: &str, key: &str) -> Result<Vec<Edge>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt
        .query_map([key], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(other, relation, confidence, detected_at)| {
            Ok(Edge {
                other: parse_id(&other)?,
                relation: relation.parse().map_err(StoreError::Corrupt)?,
                confidence,
                detected_at,
            })
        })
        .collect()
}

/// The memories with these ids, with `parts`, read 500 ids a query.
pub(super) fn get_many(
    conn: &Connection,
    ids: &[MemoryId],
    parts: Parts,
) -> Result<HashMap<MemoryId, StoredMemory>> {
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!(
            "{SELECT_ROWS} WHERE v.id IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let keys: Vec<String> = chunk.iter().map(|i| i.to_string()).collect();
        let mut rows = stmt.query(params_from_iter(keys.iter()))?;
        let mut memories = Vec::with_capacity(chunk.len());
        while let Some(r) = rows.next()? {
            memories.push(raw_row(r)?.decode()?);
        }
        fill_many(conn, &mut memories, parts)?;
        out.extend(memories.into_iter().map(|m| (m.memory.id, m)));
    }
    Ok(out)
}

/// See [`crate::MemoryReads::find_by_hash`].
pub(super) fn find_by_hash(
    conn: &Connection,
    wing: &str,
    content_hash: &str,
) -> Result<Option<MemoryId>> {
    let id: Option<String> = conn
        .prepare_cached("SELECT id FROM verbatims WHERE wing = ?1 AND content_hash = ?2 LIMIT 1")?
        .query_row(params![wing, content_hash], |r| r.get(0))
        .optional()?;
    id.map(|s| parse_id(&s)).transpose()
}

/// See [`crate::MemoryReads::recent_in_wing`].
pub(super) fn recent_in_wing(
    conn: &Connection,
    wing: &str,
    since_ms: i64,
    limit: usize,
) -> Result<Vec<StoredMemory>> {
    let mut stmt = conn.prepare_cached(&format!(
        "{SELECT_ROWS} WHERE v.wing = ?1 AND v.created_at >= ?2 AND v.archived_at IS NULL \
         ORDER BY v.created_at DESC, v.seq DESC LIMIT ?3"
    ))?;
    let mut rows = stmt.query(params![wing, since_ms, limit as i64])?;
    let parts = Parts {
        tags: true,
        embedding: true,
        ..Parts::NONE
    };
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(raw_row(r)?.decode()?);
    }
    fill_many(conn, &mut out, parts)?;
    Ok(out)
}

/// See [`crate::MemoryReads::slot_holders`].
pub(super) fn slot_holders(
    conn: &Connection,
    wing: &str,
    attributes: &[String],
    until_ms: i64,
) -> Result<Vec<(MemoryId, Slot)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.memory_id, s.subject, s.attribute, s.value, s.negated
         FROM slots s JOIN verbatims v ON v.id = s.memory_id
         WHERE v.wing = ?1 AND s.attribute = ?2 AND v.created_at <= ?3
           AND v.archived_at IS NULL AND v.superseded_by IS NULL",
    )?;
    let mut out = Vec::new();
    for attribute in attributes {
        let rows = stmt
            .query_map(params![wing, attribute, until_ms], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Slot {
                        subject: r.get(1)?,
                        attribute: r.get(2)?,
                        value: r.get(3)?,
                        replaces: None,
                        negated: r.get(4)?,
                    },
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (id, slot) in rows {
            out.push((parse_id(&id)?, slot));
        }
    }
    Ok(out)
}

/// Whether a memory with this id exists.
pub(super) fn exists(conn: &Connection, id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM verbatims WHERE id = ?1")?
        .exists([id])?)
}

/// See [`crate::MemoryStore::uncosted`].
pub(super) fn uncosted(conn: &Connection, version: u32, limit: usize) -> Result<Vec<Memory>> {
    let mut stmt = conn.prepare_cached(&format!(
        "{SELECT_ROWS} WHERE v.cost_version IS NULL OR v.cost_version <> ?1 LIMIT ?2"
    ))?;
    let mut rows = stmt.query(params![version, limit as i64])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(raw_row(r)?.decode()?.memory);
    }
    Ok(out)
}

/// See [`crate::MemoryStore::ids_with_prefix`].
pub(super) fn ids_with_prefix(
    conn: &Connection,
    prefix: &str,
    limit: usize,
) -> Result<Vec<MemoryId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM verbatims WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3",
    )?;
    let upper = format!("{prefix}~");
    let ids = stmt
        .query_map(params![prefix, upper, limit as i64], |r| {
            r.get::<_, String>(0)
        })?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    ids.iter().map(|s| parse_id(s)).collect()
}

/// The condition "`wing` is one of ?1" of a wing list bound as [`wing_list`] (always true
/// for NULL).
pub(super) const IN_WINGS: &str = "(?1 IS NULL OR wing IN (SELECT value FROM json_each(?1)))";

/// A wing list as one SQL parameter: a JSON array, or NULL for every wing.
pub(super) fn wing_list(wings: Option<&[String]>) -> Option<String> {
    wings.map(|w| serde_json::Value::from(w.to_vec()).to_string())
}

/// See [`crate::MemoryStore::stats_in`].
pub(super) fn stats(conn: &Connection, wings: Option<&[String]>) -> Result<StoreStats> {
    let list = wing_list(wings);
    let of_wings = format!("SELECT id FROM verbatims WHERE {IN_WINGS}");
    let one = |sql: &str| {
        conn.query_row(sql, [&list], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
    };
    let mut stats = StoreStats {
        memories: one(&format!("SELECT count(*) FROM verbatims WHERE {IN_WINGS}"))?,
        archived: one(&format!(
            "SELECT count(*) FROM verbatims WHERE archived_at IS NOT NULL AND {IN_WINGS}"
        ))?,
        superseded: one(&format!(
            "SELECT count(*) FROM verbatims WHERE superseded_by IS NOT NULL AND {IN_WINGS}"
        ))?,
        embeddings: one(&format!(
            "SELECT count(*) FROM embeddings WHERE ?1 IS NULL OR memory_id IN ({of_wings})"
        ))?,
        edges: one(&format!(
            "SELECT count(*) FROM causal_edges WHERE ?1 IS NULL OR from_id IN ({of_wings})"
        ))?,
        tags: one(&format!(
            "SELECT count(*) FROM tags WHERE ?1 IS NULL OR memory_id IN ({of_wings})"
        ))?,
        total_tokens: one(&format!(
            "SELECT COALESCE(sum(token_count), 0) FROM verbatims WHERE {IN_WINGS}"
        ))?,
        ..StoreStats::default()
    };
    let group = |sql: &str, into: &mut BTreeMap<String, u64>| -> Result<()> {
        let mut stmt = conn.prepare(sql)?;
        for row in stmt.query_map([&list], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })? {
            let (k, n) = row?;
            into.insert(k, n.max(0) as u64);
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
    let mut stmt = conn.prepare(
        "SELECT wing, count(*), max(stored_at) FROM verbatims WHERE source = 'captured' GROUP BY wing",
    )?;
    for row in stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })? {
        let (wing, n, last) = row?;
        stats.captures.insert(wing, (n.max(0) as u64, last));
    }
    Ok(stats)
}

/// See [`crate::MemoryStore::wings`].
pub(super) fn wings(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT DISTINCT wing FROM verbatims ORDER BY wing")?;
    let wings = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(wings)
}

/// See [`crate::MemoryStore::without_embedding`].
pub(super) fn without_embedding(
    conn: &Connection,
    model: &str,
    limit: usize,
) -> Result<Vec<Unembedded>> {
    let mut stmt = conn.prepare_cached(
        "SELECT v.id, v.content FROM verbatims v
         WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = v.id
                                   AND e.model IN (?1, 'sentence-transformers/' || ?1))
         ORDER BY v.seq LIMIT ?2",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(params![model, limit], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, content) = row?;
        out.push(Unembedded {
            id: parse_id(&id)?,
            content,
        });
    }
    Ok(out)
}

/// See [`crate::MemoryStore::count_without_embedding`].
pub(super) fn count_without_embedding(
    conn: &Connection,
    model: &str,
    wings: Option<&[String]>,
) -> Result<u64> {
    let n: i64 = conn.query_row(
        &format!(
            "SELECT count(*) FROM verbatims v
             WHERE {IN_WINGS} AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = v.id
                                   AND e.model IN (?2, 'sentence-transformers/' || ?2))"
        ),
        params![wing_list(wings), model],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}
