//! Changing where a memory is filed (wing, room, type) with what is derived from its type, and
//! the row facts a memory page shows beside [`crate::LoadedMemory`].

use crate::repo::NewTag;
use crate::{Result, Store, StoreError};
use mira_core::allocate::ModeCosts;
use mira_core::fingerprint::Fingerprint;
use mira_core::memory::{MemoryId, MemoryType};
use rusqlite::{params, OptionalExtension};

/// A memory's new placement and everything derived from its type, written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEdit {
    /// The wing.
    pub wing: String,
    /// The room.
    pub room: String,
    /// The type.
    pub memory_type: MemoryType,
    /// The fingerprint extracted for that type.
    pub fingerprint: Fingerprint,
    /// cl100k tokens of the rendered fingerprint.
    pub fingerprint_tokens: u32,
    /// The tags derived from the content and that fingerprint (they replace the old ones).
    pub tags: Vec<NewTag>,
    /// Section costs of the edited memory, for render format `cost_version`.
    pub costs: ModeCosts,
    /// The render format the costs were computed for.
    pub cost_version: u32,
}

/// Facts about a memory's row that [`crate::LoadedMemory`] leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryMeta {
    /// When it was written to the store (unix ms).
    pub stored_at: i64,
    /// Whether it is pinned.
    pub pinned: bool,
    /// The memories it superseded (their `superseded_by` is this memory), oldest first.
    pub supersedes: Vec<MemoryId>,
}

impl Store {
    /// Files memory `id` under `edit`'s wing, room and type, replacing its fingerprint, tags and
    /// section costs; false when no memory has that id. The change log (migration 003) tells
    /// every process's catalog.
    pub fn edit_memory(&self, id: MemoryId, edit: &MemoryEdit) -> Result<bool> {
        let key = id.to_string();
        self.write(|tx| {
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
            let mut insert = tx.prepare_cached(
                "INSERT OR IGNORE INTO tags (memory_id, tag, kind) VALUES (?1, ?2, ?3)",
            )?;
            for t in &edit.tags {
                insert.execute(params![key, t.tag, t.kind])?;
            }
            Ok(true)
        })
    }

    /// When memory `id` was stored, whether it is pinned and what it superseded; `None` when
    /// no memory has that id.
    pub fn memory_meta(&self, id: MemoryId) -> Result<Option<MemoryMeta>> {
        let key = id.to_string();
        self.read(|conn| {
            let Some((stored_at, pinned)) = conn
                .prepare_cached("SELECT stored_at, pinned FROM verbatims WHERE id = ?1")?
                .query_row([&key], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?
            else {
                return Ok(None);
            };
            let mut stmt = conn.prepare_cached(
                "SELECT id FROM verbatims WHERE superseded_by = ?1 ORDER BY created_at, seq",
            )?;
            let supersedes = stmt
                .query_map([&key], |r| r.get::<_, String>(0))?
                .map(|r| {
                    let s = r?;
                    MemoryId::parse_str(&s)
                        .map_err(|_| StoreError::Corrupt(format!("bad id '{s}'")))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Some(MemoryMeta {
                stored_at,
                pinned,
                supersedes,
            }))
        })
    }
}
