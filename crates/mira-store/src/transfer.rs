//! Export and exact restore: every stored row of a memory read back in a stable order, and full
//! records written with their own ids, timestamps, archive state, tags, edges and supersession.
//!
//! Restoring is split in two so that a file can be imported in any order and in batches:
//! [`Store::restore_batch`] writes the memories of a batch (without `superseded_by`) and then, in
//! the same transaction, every relation (causal edge, supersession) whose two ends exist. The
//! caller keeps the relations that could not be applied yet and offers them again with the next
//! batch. Relations are only ever added: an existing edge is kept as it is (`INSERT OR IGNORE`)
//! and an existing `superseded_by` is never overwritten.

use crate::repo::insert_record;
use crate::{decode_vector, NewTag, Result, Store, StoreError};
use mira_core::allocate::ModeCosts;
use mira_core::memory::{MemoryId, MemoryType, RelationType};
use rusqlite::{params, Connection, OptionalExtension};

/// A stored embedding (T2).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEmbedding {
    /// Name of the model that computed it.
    pub model: String,
    /// The vector (`dim` = its length), bit for bit as stored; empty: the memory is written
    /// without an embedding.
    pub vector: Vec<f32>,
}

/// A causal edge from an earlier memory (`from`) to the memory that carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEdge {
    /// The cause.
    pub from: MemoryId,
    /// The relation.
    pub relation: RelationType,
    /// Confidence, as stored (SQLite REAL).
    pub confidence: f64,
    /// When the link was detected (unix ms).
    pub detected_at: i64,
}

/// The rows every memory has (T0 with its metadata, T1, tags), as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    /// The id.
    pub id: MemoryId,
    /// The wing.
    pub wing: String,
    /// The room.
    pub room: String,
    /// The type.
    pub memory_type: MemoryType,
    /// T0, the verbatim text.
    pub content: String,
    /// SHA-256 (hex) of the trimmed content.
    pub content_hash: String,
    /// cl100k tokens of the content.
    pub token_count: u32,
    /// When it happened (unix ms).
    pub created_at: i64,
    /// When it was written (unix ms).
    pub stored_at: i64,
    /// The session it was stored in.
    pub session_id: Option<String>,
    /// Free-form JSON metadata, as stored.
    pub metadata: String,
    /// When it was archived (unix ms), if it is.
    pub archived_at: Option<i64>,
    /// T1, the canonical fingerprint JSON, as stored.
    pub fingerprint: String,
    /// Facts counted in the fingerprint.
    pub fact_count: u32,
    /// cl100k tokens of the rendered fingerprint.
    pub fingerprint_tokens: u32,
    /// Tags in stored order (the order in which they were extracted).
    pub tags: Vec<NewTag>,
    /// Token cost of each render mode's section for the current render format (`None`: not
    /// computed; the application fills it in the background).
    pub costs: Option<ModeCosts>,
    /// Shown in every recall of its wing, before anything else.
    pub pinned: bool,
}

/// Every row stored for one memory, as [`Store::export_memories`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct FullMemory {
    /// T0, T1 and tags.
    pub record: MemoryRecord,
    /// The newer memory that supersedes it, if any.
    pub superseded_by: Option<MemoryId>,
    /// T2, when it has one (and it was asked for).
    pub embedding: Option<StoredEmbedding>,
    /// Edges whose target is this memory, sorted by (from, relation).
    pub causes: Vec<StoredEdge>,
}

/// A memory to restore exactly: [`FullMemory`] without its relations (those go through
/// [`Relation`], because their other end may not be written yet).
#[derive(Debug, Clone, PartialEq)]
pub struct RestoreMemory {
    /// T0, T1 and tags.
    pub record: MemoryRecord,
    /// T2 (required: callers embed first when the source had none).
    pub embedding: StoredEmbedding,
}

/// A relation between two memories, applied only once both exist.
#[derive(Debug, Clone, PartialEq)]
pub enum Relation {
    /// A causal edge `from → to`.
    Edge {
        /// The newer memory (which carries the edge in an export).
        to: MemoryId,
        /// The edge.
        edge: StoredEdge,
    },
    /// `memory` is superseded by `by`.
    Supersession {
        /// The older memory.
        memory: MemoryId,
        /// The newer one.
        by: MemoryId,
    },
}

/// What [`Store::restore_batch`] did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RestoreOutcome {
    /// The `seq` of each memory written, in input order.
    pub seqs: Vec<i64>,
    /// For each relation offered, whether both of its ends exist now (so it is in the store:
    /// written, or already there). Those still `false` can be offered again later.
    pub resolved: Vec<bool>,
}

const FULL_COLUMNS: &str = "v.id, v.wing, v.room, v.memory_type, v.content, v.content_hash, \
     v.token_count, v.created_at, v.stored_at, v.session_id, v.metadata, v.archived_at, \
     v.superseded_by, f.data, f.fact_count, f.token_count, v.pinned";

fn parse_id(s: &str) -> Result<MemoryId> {
    MemoryId::parse_str(s).map_err(|_| StoreError::Corrupt(format!("bad id '{s}'")))
}

fn exists(conn: &Connection, id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM verbatims WHERE id = ?1")?
        .query_row([id], |_| Ok(()))
        .optional()?
        .is_some())
}

fn read_full(conn: &Connection, row: &rusqlite::Row<'_>, embeddings: bool) -> Result<FullMemory> {
    let id: String = row.get(0)?;
    let memory_type: String = row.get(3)?;
    let superseded: Option<String> = row.get(12)?;
    let embedding = if embeddings {
        conn.prepare_cached("SELECT model, vector FROM embeddings WHERE memory_id = ?1")?
            .query_row([&id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .optional()?
            .map(|(model, blob)| {
                decode_vector(&blob).map(|vector| StoredEmbedding { model, vector })
            })
            .transpose()?
    } else {
        None
    };
    let tags = conn
        .prepare_cached("SELECT tag, kind FROM tags WHERE memory_id = ?1 ORDER BY rowid")?
        .query_map([&id], |r| {
            Ok(NewTag {
                tag: r.get(0)?,
                kind: r.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut causes = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT from_id, relation, confidence, detected_at FROM causal_edges
         WHERE to_id = ?1 ORDER BY from_id, relation",
    )?;
    let rows = stmt.query_map([&id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, f64>(2)?,
            r.get::<_, i64>(3)?,
        ))
    })?;
    for r in rows {
        let (from, relation, confidence, detected_at) = r?;
        causes.push(StoredEdge {
            from: parse_id(&from)?,
            relation: relation.parse().map_err(StoreError::Corrupt)?,
            confidence,
            detected_at,
        });
    }
    let record =
        MemoryRecord {
            id: parse_id(&id)?,
            wing: row.get(1)?,
            room: row.get(2)?,
            memory_type: memory_type.parse().map_err(
                |e: mira_core::memory::UnknownMemoryType| StoreError::Corrupt(e.to_string()),
            )?,
            content: row.get(4)?,
            content_hash: row.get(5)?,
            token_count: row.get(6)?,
            created_at: row.get(7)?,
            stored_at: row.get(8)?,
            session_id: row.get(9)?,
            metadata: row.get(10)?,
            archived_at: row.get(11)?,
            fingerprint: row.get(13)?,
            fact_count: row.get(14)?,
            fingerprint_tokens: row.get(15)?,
            tags,
            costs: None,
            pinned: row.get::<_, i64>(16)? != 0,
        };
    Ok(FullMemory {
        record,
        superseded_by: superseded.map(|s| parse_id(&s)).transpose()?,
        embedding,
        causes,
    })
}

fn apply_relation(tx: &Connection, r: &Relation) -> Result<bool> {
    match r {
        Relation::Edge { to, edge } => {
            let (from, to) = (edge.from.to_string(), to.to_string());
            if from == to || !exists(tx, &from)? || !exists(tx, &to)? {
                return Ok(false);
            }
            tx.prepare_cached(
                "INSERT OR IGNORE INTO causal_edges (from_id, to_id, relation, confidence, detected_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![from, to, edge.relation.as_str(), edge.confidence, edge.detected_at])?;
            Ok(true)
        }
        Relation::Supersession { memory, by } => {
            let (memory, by) = (memory.to_string(), by.to_string());
            if memory == by || !exists(tx, &memory)? || !exists(tx, &by)? {
                return Ok(false);
            }
            tx.prepare_cached(
                "UPDATE verbatims SET superseded_by = ?1 WHERE id = ?2 AND superseded_by IS NULL",
            )?
            .execute(params![by, memory])?;
            Ok(true)
        }
    }
}

impl Store {
    /// Calls `visit` with every memory (of `wing`, or all), ordered by `created_at` then `seq`,
    /// with its fingerprint, tags, incoming causal edges and, when `embeddings` is true, its
    /// embedding. Reads one consistent snapshot. Returns how many memories were visited; stops
    /// at the first error of `visit`, which is returned unchanged.
    pub fn export_memories<E: From<StoreError>>(
        &self,
        wing: Option<&str>,
        embeddings: bool,
        mut visit: impl FnMut(FullMemory) -> std::result::Result<(), E>,
    ) -> std::result::Result<u64, E> {
        self.read_with(|conn| {
            conn.execute_batch("BEGIN").map_err(StoreError::from)?;
            let result = (|| {
                let mut stmt = conn
                    .prepare(&format!(
                        "SELECT {FULL_COLUMNS} FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id
                     WHERE ?1 IS NULL OR v.wing = ?1 ORDER BY v.created_at, v.seq"
                    ))
                    .map_err(StoreError::from)?;
                let mut rows = stmt.query([wing]).map_err(StoreError::from)?;
                let mut n = 0u64;
                while let Some(row) = rows.next().map_err(StoreError::from)? {
                    visit(read_full(conn, row, embeddings)?)?;
                    n += 1;
                }
                Ok(n)
            })();
            // A read transaction: ending it cannot lose anything.
            let _ = conn.execute_batch("COMMIT");
            result
        })
    }

    /// Whether a memory with this id exists.
    pub fn contains(&self, id: MemoryId) -> Result<bool> {
        self.read(|conn| exists(conn, &id.to_string()))
    }

    /// In one transaction: writes `memories` with their own ids, timestamps, archive state,
    /// fingerprint, embedding and tags (`superseded_by` left empty), then applies each of
    /// `relations` whose two ends exist. Nothing is written if any part fails (a duplicate id,
    /// for one). Callers index the written memories after it returns.
    pub fn restore_batch(
        &self,
        memories: &[RestoreMemory],
        relations: &[Relation],
    ) -> Result<RestoreOutcome> {
        self.write(|tx| {
            let seqs = memories
                .iter()
                .map(|m| insert_record(tx, &m.record, None, &m.embedding))
                .collect::<Result<Vec<_>>>()?;
            let resolved = relations
                .iter()
                .map(|r| apply_relation(tx, r))
                .collect::<Result<Vec<_>>>()?;
            Ok(RestoreOutcome { seqs, resolved })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqliteOptions;

    fn memory(id: MemoryId, created_at: i64, content: &str) -> RestoreMemory {
        RestoreMemory {
            record: MemoryRecord {
                id,
                wing: "w".into(),
                room: "facts".into(),
                memory_type: MemoryType::Fact,
                content: content.into(),
                content_hash: format!("hash-{content}"),
                token_count: 3,
                created_at,
                stored_at: created_at + 5,
                session_id: Some("s".into()),
                metadata: "{}".into(),
                archived_at: None,
                fingerprint: r#"{"type":"fact","subjects":["x"],"entities":[]}"#.into(),
                fact_count: 0,
                costs: None,
                pinned: false,
                fingerprint_tokens: 4,
                tags: vec![
                    NewTag {
                        tag: "zeta".into(),
                        kind: "keyword".into(),
                    },
                    NewTag {
                        tag: "alpha".into(),
                        kind: "entity".into(),
                    },
                ],
            },
            embedding: StoredEmbedding {
                model: "m".into(),
                vector: vec![0.6, 0.8, f32::from_bits(0x3f80_0001)],
            },
        }
    }

    fn all(store: &Store, embeddings: bool) -> Vec<FullMemory> {
        let mut out = Vec::new();
        store
            .export_memories(None, embeddings, |m| {
                out.push(m);
                Ok::<_, StoreError>(())
            })
            .unwrap();
        out
    }

    #[test]
    fn relations_wait_for_both_ends_and_restore_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("m.db"), &SqliteOptions::default()).unwrap();
        let (a, b) = (MemoryId::new_v4(), MemoryId::new_v4());
        let edge = Relation::Edge {
            to: b,
            edge: StoredEdge {
                from: a,
                relation: RelationType::Updates,
                confidence: 0.1 + 0.2,
                detected_at: 42,
            },
        };
        let sup = Relation::Supersession { memory: a, by: b };
        // b first: neither relation can be applied yet.
        let out = store
            .restore_batch(&[memory(b, 200, "newer")], &[edge.clone(), sup.clone()])
            .unwrap();
        assert_eq!(out.resolved, vec![false, false]);
        let out = store
            .restore_batch(&[memory(a, 100, "older")], &[edge, sup])
            .unwrap();
        assert_eq!(out.resolved, vec![true, true]);
        let rows = all(&store, true);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].record.id, rows[1].record.id),
            (a, b),
            "ordered by created_at"
        );
        assert_eq!(rows[0].superseded_by, Some(b));
        assert_eq!(rows[1].causes.len(), 1);
        assert_eq!(rows[1].causes[0].confidence, 0.1 + 0.2);
        assert_eq!(rows[1].causes[0].detected_at, 42);
        assert_eq!(
            rows[0].record.tags[0].tag, "zeta",
            "tags keep their stored order"
        );
        let v = &rows[0].embedding.as_ref().unwrap().vector;
        assert_eq!(v[2].to_bits(), 0x3f80_0001, "vectors are bit-exact");
        assert_eq!(rows[0].record.stored_at, 105);
        assert!(all(&store, false).iter().all(|m| m.embedding.is_none()));
        assert!(store.contains(a).unwrap());
        assert!(!store.contains(MemoryId::new_v4()).unwrap());
        // A duplicate id fails the whole batch.
        let c = MemoryId::new_v4();
        assert!(store
            .restore_batch(&[memory(c, 300, "c"), memory(a, 1, "dup")], &[])
            .is_err());
        assert!(!store.contains(c).unwrap());
    }

    #[test]
    fn existing_supersession_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("m.db"), &SqliteOptions::default()).unwrap();
        let (a, b, c) = (MemoryId::new_v4(), MemoryId::new_v4(), MemoryId::new_v4());
        let mems = [memory(a, 1, "a"), memory(b, 2, "b"), memory(c, 3, "c")];
        let first = Relation::Supersession { memory: a, by: b };
        let second = Relation::Supersession { memory: a, by: c };
        let out = store.restore_batch(&mems, &[first, second]).unwrap();
        assert_eq!(out.resolved, vec![true, true]);
        assert_eq!(all(&store, false)[0].superseded_by, Some(b));
    }
}
