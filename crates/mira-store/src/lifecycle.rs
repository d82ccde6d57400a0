//! Queries of the lifecycle use cases: the timeline, archiving and un-archiving, and deletion
//! (clear a scope, forget one memory).
//!
//! Deletion removes the `verbatims` rows only: every derived table cascades from it
//! (fingerprints, embeddings, tags, causal edges, overlap cache), the FTS rows go through the
//! delete trigger, and `superseded_by` pointing at a deleted memory is set to NULL by its foreign
//! key. Callers remove the deleted ids from the vector index after the transaction commits.

use crate::repo::{decode_vector, memory_from_row, MEMORY_COLUMNS};
use crate::{Result, Store, StoreError};
use mira_core::memory::{Memory, MemoryId, MemoryType};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashSet;

/// A page of the timeline: filters, order and position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineQuery {
    /// Only this wing (all wings when `None`).
    pub wing: Option<String>,
    /// Only this room.
    pub room: Option<String>,
    /// Only this type.
    pub memory_type: Option<MemoryType>,
    /// Only memories created at or after this time (unix ms).
    pub since_ms: Option<i64>,
    /// Only memories created at or before this time (unix ms).
    pub until_ms: Option<i64>,
    /// Include archived memories.
    pub include_archived: bool,
    /// Include superseded memories.
    pub include_superseded: bool,
    /// Newest first (`true`) or oldest first; ties on `created_at` are broken by `seq`.
    pub newest_first: bool,
    /// Start strictly after this `(created_at ms, seq)` position in the chosen order.
    pub after: Option<(i64, i64)>,
    /// At most this many rows.
    pub limit: usize,
}

/// One memory of the timeline with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRow {
    /// `verbatims.seq` (the tie-breaker of the order, part of the cursor).
    pub seq: i64,
    /// The memory.
    pub memory: Memory,
}

/// One rule of an archive run: live memories (of one type, or of any type) created strictly
/// before a cut-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveRule {
    /// The type it applies to (`None` = every type).
    pub memory_type: Option<MemoryType>,
    /// The cut-off (unix ms): memories created strictly before it are archived.
    pub before_ms: i64,
}

/// What an archive run selects.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArchivePlan {
    /// Age rules.
    pub rules: Vec<ArchiveRule>,
    /// Explicit ids (those already archived or absent are skipped).
    pub ids: Vec<MemoryId>,
    /// The `archived_at` written (unix ms).
    pub now_ms: i64,
    /// Overlap cache entries computed before this time (unix ms) are purged.
    pub overlap_expired_before_ms: i64,
}

/// Why a memory was selected by an archive run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveMatch {
    /// By the rule at this index of [`ArchivePlan::rules`] (the first one that matched).
    Rule(usize),
    /// By its id.
    Id,
}

/// The result of an archive run (or of its dry run: what it would do).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArchiveReport {
    /// The memories archived, oldest first, with the reason.
    pub archived: Vec<(Memory, ArchiveMatch)>,
    /// Expired overlap cache entries purged.
    pub overlap_purged: u64,
}

/// An un-archived memory, with what the vector index needs to take it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// `verbatims.seq` (the index key).
    pub seq: i64,
    /// The memory (no longer archived).
    pub memory: Memory,
    /// Its embedding, when it has one.
    pub embedding: Option<Vec<f32>>,
}

/// What a deletion covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteScope {
    /// Every memory.
    All,
    /// Every memory of a wing.
    Wing(String),
    /// Every memory of one room of a wing.
    Room {
        /// The wing.
        wing: String,
        /// The room.
        room: String,
    },
    /// One memory.
    Memory(MemoryId),
}

/// What a deletion removes (or would remove).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteCounts {
    /// The memories, in `seq` order.
    pub ids: Vec<MemoryId>,
    /// Causal edges touching them.
    pub edges: u64,
    /// Their tags.
    pub tags: u64,
    /// Overlap cache entries touching them.
    pub overlap_entries: u64,
    /// Sum of their T0 token counts.
    pub tokens: u64,
}

impl DeleteScope {
    /// The condition on `verbatims` (alias-free) and its parameters.
    fn condition(&self) -> (&'static str, Vec<String>) {
        match self {
            DeleteScope::All => ("1", vec![]),
            DeleteScope::Wing(w) => ("wing = ?1", vec![w.clone()]),
            DeleteScope::Room { wing, room } => {
                ("wing = ?1 AND room = ?2", vec![wing.clone(), room.clone()])
            }
            DeleteScope::Memory(id) => ("id = ?1", vec![id.to_string()]),
        }
    }
}

fn parse_id(s: &str) -> Result<MemoryId> {
    MemoryId::parse_str(s).map_err(|_| StoreError::Corrupt(format!("bad id '{s}'")))
}

fn count_scope(conn: &Connection, scope: &DeleteScope) -> Result<DeleteCounts> {
    let (cond, values) = scope.condition();
    let p = rusqlite::params_from_iter(values.iter());
    let mut stmt = conn.prepare(&format!(
        "SELECT id FROM verbatims WHERE {cond} ORDER BY seq"
    ))?;
    let ids = stmt
        .query_map(p, |r| r.get::<_, String>(0))?
        .map(|r| r.map_err(StoreError::from).and_then(|s| parse_id(&s)))
        .collect::<Result<Vec<_>>>()?;
    let count = |sql: String| -> Result<u64> {
        let n: i64 = conn.query_row(&sql, rusqlite::params_from_iter(values.iter()), |r| {
            r.get(0)
        })?;
        Ok(n.max(0) as u64)
    };
    let sub = format!("SELECT id FROM verbatims WHERE {cond}");
    Ok(DeleteCounts {
        ids,
        edges: count(format!(
            "SELECT count(*) FROM causal_edges WHERE from_id IN ({sub}) OR to_id IN ({sub})"
        ))?,
        tags: count(format!(
            "SELECT count(*) FROM tags WHERE memory_id IN ({sub})"
        ))?,
        overlap_entries: count(format!(
            "SELECT count(*) FROM overlap_cache WHERE id_a IN ({sub}) OR id_b IN ({sub})"
        ))?,
        tokens: count(format!(
            "SELECT COALESCE(sum(token_count), 0) FROM verbatims WHERE {cond}"
        ))?,
    })
}

/// Live memories selected by `plan`, oldest first, each with the first reason that matched.
fn archivable(conn: &Connection, plan: &ArchivePlan) -> Result<Vec<(i64, Memory, ArchiveMatch)>> {
    let base = format!(
        "SELECT {MEMORY_COLUMNS}, v.seq FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id \
         WHERE v.archived_at IS NULL"
    );
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let row = |r: &rusqlite::Row<'_>| Ok((memory_from_row(r)?.0, r.get::<_, i64>(13)?));
    for (i, rule) in plan.rules.iter().enumerate() {
        let mut stmt = conn.prepare_cached(&format!(
            "{base} AND v.created_at < ?1 AND (?2 IS NULL OR v.memory_type = ?2) ORDER BY v.created_at, v.seq"
        ))?;
        let rows = stmt.query_map(
            params![rule.before_ms, rule.memory_type.map(MemoryType::as_str)],
            row,
        )?;
        for r in rows {
            let (m, seq) = r?;
            if seen.insert(m.id) {
                out.push((seq, m, ArchiveMatch::Rule(i)));
            }
        }
    }
    let mut stmt = conn.prepare_cached(&format!("{base} AND v.id = ?1"))?;
    for id in &plan.ids {
        if let Some((m, seq)) = stmt.query_row([id.to_string()], row).optional()? {
            if seen.insert(m.id) {
                out.push((seq, m, ArchiveMatch::Id));
            }
        }
    }
    out.sort_by_key(|(seq, m, _)| (m.created_at, *seq));
    Ok(out)
}

impl Store {
    /// One page of the timeline (see [`TimelineQuery`]), ordered by `(created_at, seq)`.
    pub fn timeline(&self, q: &TimelineQuery) -> Result<Vec<TimelineRow>> {
        let (order, cmp) = if q.newest_first {
            ("DESC", "<")
        } else {
            ("ASC", ">")
        };
        let sql = format!(
            "SELECT {MEMORY_COLUMNS}, v.seq FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id
             WHERE (?1 IS NULL OR v.wing = ?1) AND (?2 IS NULL OR v.room = ?2)
               AND (?3 IS NULL OR v.memory_type = ?3)
               AND (?4 IS NULL OR v.created_at >= ?4) AND (?5 IS NULL OR v.created_at <= ?5)
               AND (?6 OR v.archived_at IS NULL) AND (?7 OR v.superseded_by IS NULL)
               AND (?8 IS NULL OR (v.created_at, v.seq) {cmp} (?8, ?9))
             ORDER BY v.created_at {order}, v.seq {order} LIMIT ?10"
        );
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(
                params![
                    q.wing,
                    q.room,
                    q.memory_type.map(MemoryType::as_str),
                    q.since_ms,
                    q.until_ms,
                    q.include_archived,
                    q.include_superseded,
                    q.after.map(|a| a.0),
                    q.after.map(|a| a.1),
                    i64::try_from(q.limit).unwrap_or(i64::MAX),
                ],
                |r| {
                    Ok(TimelineRow {
                        memory: memory_from_row(r)?.0,
                        seq: r.get(13)?,
                    })
                },
            )?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// Archives what `plan` selects (sets `archived_at`; nothing is deleted) and purges the
    /// expired overlap cache, in one transaction. With `dry_run`, reports the same without
    /// writing anything.
    pub fn archive(&self, plan: &ArchivePlan, dry_run: bool) -> Result<ArchiveReport> {
        let finish = |rows: Vec<(i64, Memory, ArchiveMatch)>, overlap_purged: u64| ArchiveReport {
            archived: rows.into_iter().map(|(_, m, why)| (m, why)).collect(),
            overlap_purged,
        };
        if dry_run {
            return self.read(|conn| {
                let rows = archivable(conn, plan)?;
                let n: i64 = conn.query_row(
                    "SELECT count(*) FROM overlap_cache WHERE computed_at < ?1",
                    [plan.overlap_expired_before_ms],
                    |r| r.get(0),
                )?;
                Ok(finish(rows, n.max(0) as u64))
            });
        }
        self.write(|tx| {
            let mut rows = archivable(tx, plan)?;
            let mut stmt = tx.prepare_cached(
                "UPDATE verbatims SET archived_at = ?1 WHERE seq = ?2 AND archived_at IS NULL",
            )?;
            for (seq, m, _) in &mut rows {
                stmt.execute(params![plan.now_ms, *seq])?;
                m.archived = true;
            }
            let purged = tx.execute(
                "DELETE FROM overlap_cache WHERE computed_at < ?1",
                [plan.overlap_expired_before_ms],
            )?;
            Ok(finish(rows, purged as u64))
        })
    }

    /// Un-archives these memories (those absent or not archived are skipped) in one
    /// transaction; returns the ones restored, with what the vector index needs.
    pub fn unarchive(&self, ids: &[MemoryId]) -> Result<Vec<Restored>> {
        self.write(|tx| {
            let mut update = tx.prepare_cached("UPDATE verbatims SET archived_at = NULL WHERE id = ?1 AND archived_at IS NOT NULL")?;
            let mut select = tx.prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS}, v.seq, e.vector FROM verbatims v JOIN fingerprints f ON f.memory_id = v.id
                 LEFT JOIN embeddings e ON e.memory_id = v.id WHERE v.id = ?1"
            ))?;
            let mut out = Vec::new();
            let mut seen = HashSet::new();
            for id in ids.iter().filter(|id| seen.insert(**id)) {
                let key = id.to_string();
                if update.execute([&key])? == 0 {
                    continue;
                }
                let (memory, seq, blob) = select.query_row([&key], |r| {
                    Ok((memory_from_row(r)?.0, r.get::<_, i64>(13)?, r.get::<_, Option<Vec<u8>>>(14)?))
                })?;
                let embedding = blob.map(|b| decode_vector(&b)).transpose()?;
                out.push(Restored { seq, memory, embedding });
            }
            Ok(out)
        })
    }

    /// What deleting `scope` would remove (nothing is changed).
    pub fn delete_preview(&self, scope: &DeleteScope) -> Result<DeleteCounts> {
        self.read(|conn| count_scope(conn, scope))
    }

    /// Deletes every memory of `scope` with everything derived from it (fingerprints,
    /// embeddings, tags, causal edges, overlap cache, FTS rows) in one transaction; returns
    /// what was removed.
    pub fn delete(&self, scope: &DeleteScope) -> Result<DeleteCounts> {
        self.write(|tx| {
            let counts = count_scope(tx, scope)?;
            let (cond, values) = scope.condition();
            tx.execute(
                &format!("DELETE FROM verbatims WHERE {cond}"),
                rusqlite::params_from_iter(values.iter()),
            )?;
            Ok(counts)
        })
    }
}
