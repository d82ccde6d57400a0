//! The memory repository: writing a memory with everything derived from it in one transaction,
//! and the queries the use cases need.

use crate::transfer::{MemoryRecord, StoredEmbedding};
use crate::{Result, Store, StoreError};
use mira_core::allocate::ModeCosts;
use mira_core::fingerprint::Fingerprint;
use mira_core::memory::{Memory, MemoryId, MemoryType, RelationType};
use mira_core::slots::Slot;
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::collections::{BTreeMap, HashMap};

/// A tag to store with a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTag {
    /// Normalised tag text.
    pub tag: String,
    /// `entity`, `subject` or `keyword`.
    pub kind: String,
}

/// A causal edge from an earlier memory to the memory being stored.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEdge {
    /// The earlier memory (the cause).
    pub from: MemoryId,
    /// The relation.
    pub relation: RelationType,
    /// Confidence in [0, 1].
    pub confidence: f32,
}

/// Everything written for one memory.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    /// The T0 record and its metadata.
    pub memory: Memory,
    /// SHA-256 of the content (hex), used for exact-duplicate detection within a wing.
    pub content_hash: String,
    /// cl100k tokens of the rendered fingerprint.
    pub fingerprint_tokens: u32,
    /// When it was written (unix ms).
    pub stored_at: i64,
    /// Free-form JSON metadata.
    pub metadata: String,
    /// T2: the L2-normalised embedding; empty when there is none yet (no model installed):
    /// no embedding row is written and [`Store::without_embedding`] lists the memory.
    pub embedding: Vec<f32>,
    /// Name of the embedding model.
    pub model: String,
    /// Tags.
    pub tags: Vec<NewTag>,
    /// Causal edges from earlier memories to this one.
    pub edges: Vec<NewEdge>,
    /// Earlier memories this one supersedes (they get `superseded_by` = this id).
    pub supersedes: Vec<MemoryId>,
    /// Earlier memories this one retracts ("please forget …"): archived in the same
    /// transaction, restorable.
    pub retracts: Vec<MemoryId>,
    /// Token cost of each render mode's section ([`mira_core::render::mode_costs`]).
    pub costs: ModeCosts,
    /// Shown in every recall of its wing, before anything else.
    pub pinned: bool,
}

/// One edge as seen from a loaded memory.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRef {
    /// The memory at the other end.
    pub other: MemoryId,
    /// The relation.
    pub relation: RelationType,
    /// Confidence in [0, 1].
    pub confidence: f32,
}

/// A memory with everything stored about it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedMemory {
    /// The memory.
    pub memory: Memory,
    /// cl100k tokens of the rendered fingerprint.
    pub fingerprint_tokens: u32,
    /// Number of facts in the fingerprint.
    pub fact_count: u32,
    /// Tags with their kind.
    pub tags: Vec<NewTag>,
    /// Edges whose target is this memory (its causes).
    pub causes: Vec<EdgeRef>,
    /// Edges whose source is this memory (its consequences).
    pub consequences: Vec<EdgeRef>,
}

/// An earlier memory of a wing, as causal detection sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentMemory {
    /// Its id.
    pub id: MemoryId,
    /// When it was created (unix ms).
    pub created_at: i64,
    /// Its embedding.
    pub embedding: Vec<f32>,
    /// Its entity tags (lower case).
    pub entities: Vec<String>,
}

/// Counts over the whole store.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoreStats {
    /// All memories, archived included.
    pub memories: u64,
    /// Archived memories.
    pub archived: u64,
    /// Superseded memories.
    pub superseded: u64,
    /// Stored embeddings.
    pub embeddings: u64,
    /// Causal edges.
    pub edges: u64,
    /// Tags.
    pub tags: u64,
    /// Sum of T0 token counts.
    pub total_tokens: u64,
    /// Memories per type name.
    pub by_type: BTreeMap<String, u64>,
    /// Memories per wing.
    pub by_wing: BTreeMap<String, u64>,
    /// Memories per `wing/room`.
    pub by_room: BTreeMap<String, u64>,
}

/// Encodes an embedding as little-endian f32 bytes.
pub fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decodes little-endian f32 bytes.
pub fn decode_vector(bytes: &[u8]) -> Result<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(StoreError::Corrupt(format!(
            "embedding blob of {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

pub(crate) fn parse_id(s: &str) -> Result<MemoryId> {
    MemoryId::parse_str(s).map_err(|_| StoreError::Corrupt(format!("bad id '{s}'")))
}

fn millis_to_time(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// Columns selected by [`memory_from_row`], prefixed by table alias `v` and `f`.
pub(crate) const MEMORY_COLUMNS: &str = "v.id, v.wing, v.room, v.memory_type, v.content, v.token_count, \
     v.created_at, v.session_id, v.archived_at, v.superseded_by, f.data, f.token_count, f.fact_count";

/// Builds a memory from a row selected with [`MEMORY_COLUMNS`]; returns it with
/// (fingerprint tokens, fact count).
pub(crate) fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<(Memory, u32, u32)> {
    let bad = |i: usize, msg: String| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, msg.into())
    };
    let id: String = row.get(0)?;
    let memory_type: String = row.get(3)?;
    let data: String = row.get(10)?;
    let superseded: Option<String> = row.get(9)?;
    let memory = Memory {
        id: MemoryId::parse_str(&id).map_err(|e| bad(0, e.to_string()))?,
        wing: row.get(1)?,
        room: row.get(2)?,
        memory_type: memory_type
            .parse::<MemoryType>()
            .map_err(|e| bad(3, e.to_string()))?,
        content: row.get(4)?,
        token_count: row.get(5)?,
        created_at: millis_to_time(row.get(6)?),
        session_id: row.get(7)?,
        archived: row.get::<_, Option<i64>>(8)?.is_some(),
        superseded_by: superseded
            .map(|s| MemoryId::parse_str(&s).map_err(|e| bad(9, e.to_string())))
            .transpose()?,
        fingerprint: serde_json::from_str::<Fingerprint>(&data)
            .map_err(|e| bad(10, e.to_string()))?,
    };
    Ok((memory, row.get(11)?, row.get(12)?))
}

fn edges(conn: &Connection, sql: &str, id: &str) -> Result<Vec<EdgeRef>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map([id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, f64>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (other, relation, confidence) = row?;
        out.push(EdgeRef {
            other: parse_id(&other)?,
            relation: relation.parse().map_err(StoreError::Corrupt)?,
            confidence: confidence as f32,
        });
    }
    Ok(out)
}

impl Store {
    /// Writes a memory, its fingerprint, embedding, tags, causal edges and supersession marks in
    /// one transaction. Nothing is written if any part fails. Returns the row's `seq` (its index key).
    pub fn insert_memory(&self, new: &NewMemory) -> Result<i64> {
        Ok(self.insert_memories(std::slice::from_ref(new))?[0])
    }

    /// Writes several memories in one transaction (all or nothing); returns their `seq`s in order.
    pub fn insert_memories(&self, batch: &[NewMemory]) -> Result<Vec<i64>> {
        self.write(|tx| batch.iter().map(|new| insert_one(tx, new)).collect())
    }

    /// The slots asserted for `attributes` by the live, current (not archived, not superseded)
    /// memories of `wing` created at or before `until_ms`, with their memory ids.
    pub fn slot_holders(
        &self,
        wing: &str,
        attributes: &[String],
        until_ms: i64,
    ) -> Result<Vec<(MemoryId, Slot)>> {
        if attributes.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT s.memory_id, s.subject, s.attribute, s.value, s.negated
                 FROM slots s JOIN verbatims v ON v.id = s.memory_id
                 WHERE v.wing = ?1 AND s.attribute = ?2 AND v.created_at <= ?3
                   AND v.archived_at IS NULL AND v.superseded_by IS NULL",
            )?;
            let mut out = Vec::new();
            for attribute in attributes {
                let rows = stmt.query_map(params![wing, attribute, until_ms], |r| {
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
                })?;
                for row in rows {
                    let (id, slot) = row?;
                    out.push((parse_id(&id)?, slot));
                }
            }
            Ok(out)
        })
    }

    /// The id of a memory of `wing` with exactly this content hash, if any.
    pub fn find_by_hash(&self, wing: &str, content_hash: &str) -> Result<Option<MemoryId>> {
        self.read(|conn| {
            let id: Option<String> = conn
                .query_row(
                    "SELECT id FROM verbatims WHERE wing = ?1 AND content_hash = ?2 LIMIT 1",
                    params![wing, content_hash],
                    |r| r.get(0),
                )
                .optional()?;
            id.map(|s| parse_id(&s)).transpose()
        })
    }

    /// Loads one memory with its tags and causal links, or `None` if no such id exists.
    pub fn load(&self, id: MemoryId) -> Result<Option<LoadedMemory>> {
        self.read(|conn| {
            let key = id.to_string();
            let sql = format!(
                "SELECT {MEMORY_COLUMNS} FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id WHERE v.id = ?1"
            );
            let Some((memory, fingerprint_tokens, fact_count)) =
                conn.query_row(&sql, [&key], memory_from_row).optional()?
            else {
                return Ok(None);
            };
            let mut stmt = conn.prepare_cached("SELECT tag, kind FROM tags WHERE memory_id = ?1 ORDER BY rowid")?;
            let tags = stmt
                .query_map([&key], |r| Ok(NewTag { tag: r.get(0)?, kind: r.get(1)? }))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let causes = edges(
                conn,
                "SELECT from_id, relation, confidence FROM causal_edges WHERE to_id = ?1 ORDER BY detected_at, from_id",
                &key,
            )?;
            let consequences = edges(
                conn,
                "SELECT to_id, relation, confidence FROM causal_edges WHERE from_id = ?1 ORDER BY detected_at, to_id",
                &key,
            )?;
            Ok(Some(LoadedMemory { memory, fingerprint_tokens, fact_count, tags, causes, consequences }))
        })
    }

    /// The memories with these ids (T0 and T1, without tags or edges), read in one query per
    /// 500 ids; missing ids are absent from the map.
    pub fn memories(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Memory>> {
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            self.read(|conn| {
                let sql = format!(
                    "SELECT {MEMORY_COLUMNS} FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id \
                     WHERE v.id IN ({})",
                    vec!["?"; chunk.len()].join(",")
                );
                let mut stmt = conn.prepare_cached(&sql)?;
                let keys: Vec<String> = chunk.iter().map(|i| i.to_string()).collect();
                let rows = stmt.query_map(rusqlite::params_from_iter(keys.iter()), memory_from_row)?;
                for row in rows {
                    let (m, _, _) = row?;
                    out.insert(m.id, m);
                }
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Up to `limit` memories whose stored section costs are missing or were computed for
    /// another render format than `version`.
    pub fn uncosted(&self, version: u32, limit: usize) -> Result<Vec<Memory>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id \
                 WHERE v.cost_version IS NULL OR v.cost_version <> ?1 LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![version, limit as i64], memory_from_row)?;
            Ok(rows
                .map(|r| r.map(|(m, _, _)| m))
                .collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// Stores section costs computed for render format `version`.
    pub fn set_costs(&self, costs: &[(MemoryId, ModeCosts)], version: u32) -> Result<()> {
        self.write(|tx| {
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
        })
    }

    /// Pins or unpins memory `id`; false when no memory has that id.
    pub fn set_pinned(&self, id: MemoryId, pinned: bool) -> Result<bool> {
        self.write(|tx| {
            let n = tx
                .prepare_cached("UPDATE verbatims SET pinned = ?1 WHERE id = ?2 AND pinned <> ?1")?
                .execute(params![pinned, id.to_string()])?;
            let exists = n > 0
                || tx
                    .prepare_cached("SELECT 1 FROM verbatims WHERE id = ?1")?
                    .exists([id.to_string()])?;
            Ok(exists)
        })
    }

    /// Up to `limit` ids, in order, of the memories whose id (lower-case, hyphenated) starts
    /// with `prefix`.
    pub fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<MemoryId>> {
        self.read(|conn| {
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
        })
    }

    /// The most recent non-archived memories of `wing` created at or after `since_ms`
    /// (newest first, at most `limit`), with their embeddings and entity tags.
    pub fn recent_in_wing(
        &self,
        wing: &str,
        since_ms: i64,
        limit: usize,
    ) -> Result<Vec<RecentMemory>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT v.id, v.created_at, e.vector,
                        (SELECT group_concat(t.tag, char(31)) FROM tags t WHERE t.memory_id = v.id AND t.kind = 'entity')
                 FROM verbatims v JOIN embeddings e ON e.memory_id = v.id
                 WHERE v.wing = ?1 AND v.created_at >= ?2 AND v.archived_at IS NULL
                 ORDER BY v.created_at DESC, v.seq DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![wing, since_ms, limit as i64], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, Vec<u8>>(2)?, r.get::<_, Option<String>>(3)?))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, created_at, blob, entities) = row?;
                out.push(RecentMemory {
                    id: parse_id(&id)?,
                    created_at,
                    embedding: decode_vector(&blob)?,
                    entities: entities
                        .map(|s| s.split('\u{1f}').map(str::to_owned).collect())
                        .unwrap_or_default(),
                });
            }
            Ok(out)
        })
    }

    /// Counts for `mira status`.
    pub fn stats(&self) -> Result<StoreStats> {
        self.read(|conn| {
            let one = |sql: &str| {
                conn.query_row(sql, [], |r| r.get::<_, i64>(0))
                    .map(|n| n.max(0) as u64)
            };
            let mut stats = StoreStats {
                memories: one("SELECT count(*) FROM verbatims")?,
                archived: one("SELECT count(*) FROM verbatims WHERE archived_at IS NOT NULL")?,
                superseded: one("SELECT count(*) FROM verbatims WHERE superseded_by IS NOT NULL")?,
                embeddings: one("SELECT count(*) FROM embeddings")?,
                edges: one("SELECT count(*) FROM causal_edges")?,
                tags: one("SELECT count(*) FROM tags")?,
                total_tokens: one("SELECT COALESCE(sum(token_count), 0) FROM verbatims")?,
                ..StoreStats::default()
            };
            let group = |sql: &str, into: &mut BTreeMap<String, u64>| -> Result<()> {
                let mut stmt = conn.prepare(sql)?;
                for row in
                    stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
                {
                    let (k, n) = row?;
                    into.insert(k, n.max(0) as u64);
                }
                Ok(())
            };
            group(
                "SELECT memory_type, count(*) FROM verbatims GROUP BY memory_type",
                &mut stats.by_type,
            )?;
            group(
                "SELECT wing, count(*) FROM verbatims GROUP BY wing",
                &mut stats.by_wing,
            )?;
            group(
                "SELECT wing || '/' || room, count(*) FROM verbatims GROUP BY wing, room",
                &mut stats.by_room,
            )?;
            Ok(stats)
        })
    }

    /// The distinct wings, sorted.
    pub fn wings(&self) -> Result<Vec<String>> {
        self.read(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT DISTINCT wing FROM verbatims ORDER BY wing")?;
            let wings = stmt
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(wings)
        })
    }
}

fn insert_one(tx: &Connection, new: &NewMemory) -> Result<i64> {
    let m = &new.memory;
    let record = MemoryRecord {
        id: m.id,
        wing: m.wing.clone(),
        room: m.room.clone(),
        memory_type: m.memory_type,
        content: m.content.clone(),
        content_hash: new.content_hash.clone(),
        token_count: m.token_count,
        created_at: m.created_at.timestamp_millis(),
        stored_at: new.stored_at,
        session_id: m.session_id.clone(),
        metadata: new.metadata.clone(),
        archived_at: m.archived.then_some(new.stored_at),
        fingerprint: m.fingerprint.to_json(),
        fact_count: m.fingerprint.fact_count(),
        fingerprint_tokens: new.fingerprint_tokens,
        tags: new.tags.clone(),
        costs: Some(new.costs),
        pinned: new.pinned,
    };
    let embedding = StoredEmbedding {
        model: new.model.clone(),
        vector: new.embedding.clone(),
    };
    let superseded_by = m.superseded_by.map(|s| s.to_string());
    let seq = insert_record(tx, &record, superseded_by.as_deref(), &embedding)?;
    let id = m.id.to_string();
    let mut edge_stmt = tx.prepare_cached(
        "INSERT OR IGNORE INTO causal_edges (from_id, to_id, relation, confidence, detected_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for e in &new.edges {
        edge_stmt.execute(params![
            e.from.to_string(),
            id,
            e.relation.as_str(),
            e.confidence as f64,
            new.stored_at
        ])?;
    }
    let mut sup =
        tx.prepare_cached("UPDATE verbatims SET superseded_by = ?1 WHERE id = ?2 AND id <> ?1")?;
    for old in &new.supersedes {
        sup.execute(params![id, old.to_string()])?;
    }
    let mut retract = tx.prepare_cached(
        "UPDATE verbatims SET archived_at = ?1 WHERE id = ?2 AND id <> ?3 AND archived_at IS NULL",
    )?;
    for old in &new.retracts {
        retract.execute(params![new.stored_at, old.to_string(), id])?;
    }
    Ok(seq)
}

/// Writes the rows of one memory (T0, T1, T2 unless its vector is empty, tags); returns its
/// `seq`. Relations are the caller's.
pub(crate) fn insert_record(
    tx: &Connection,
    m: &MemoryRecord,
    superseded_by: Option<&str>,
    embedding: &StoredEmbedding,
) -> Result<i64> {
    let id = m.id.to_string();
    tx.prepare_cached(
        "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count,
                                created_at, stored_at, session_id, metadata, archived_at, superseded_by,
                                cost_header, cost_fingerprint, cost_verbatim, cost_version, pinned)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?
    .execute(params![
        id,
        m.wing,
        m.room,
        m.memory_type.as_str(),
        m.content,
        m.content_hash,
        m.token_count,
        m.created_at,
        m.stored_at,
        m.session_id,
        m.metadata,
        m.archived_at,
        superseded_by,
        m.costs.map(|c| c.header),
        m.costs.map(|c| c.fingerprint),
        m.costs.map(|c| c.verbatim),
        m.costs.map(|_| mira_core::render::RENDER_VERSION),
        m.pinned,
    ])?;
    let seq = tx.last_insert_rowid();
    tx.prepare_cached(
        "INSERT INTO fingerprints (memory_id, data, fact_count, token_count) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![id, m.fingerprint, m.fact_count, m.fingerprint_tokens])?;
    if !embedding.vector.is_empty() {
        tx.prepare_cached(
            "INSERT INTO embeddings (memory_id, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![
            id,
            embedding.model,
            embedding.vector.len() as i64,
            encode_vector(&embedding.vector)
        ])?;
    }
    let mut tag_stmt =
        tx.prepare_cached("INSERT OR IGNORE INTO tags (memory_id, tag, kind) VALUES (?1, ?2, ?3)")?;
    for t in &m.tags {
        tag_stmt.execute(params![id, t.tag, t.kind])?;
    }
    let mut slot_stmt = tx.prepare_cached(
        "INSERT INTO slots (memory_id, subject, attribute, value, negated) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for s in mira_core::slots::slots(&m.content) {
        slot_stmt.execute(params![id, s.subject, s.attribute, s.value, s.negated])?;
    }
    Ok(seq)
}
