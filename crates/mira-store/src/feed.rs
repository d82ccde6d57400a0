//! The change feed: what keeps every process's in-memory catalog and vectors in step with the
//! database. Every insert, update and delete of a memory, its embedding or its fingerprint
//! appends the row's key to a change log in the same transaction; a process remembers how far
//! it read ([`ChangeCursor`]) and, before each recall, reads only what was committed since.

use crate::model::{current_costs, Card, CatalogRow};
use crate::{Result, StoreError};
use mira_core::memory::{MemoryId, MemoryType};

/// How far a process has read the change log.
///
/// SQLite: the last change-log id read, and `PRAGMA data_version` of the store's watcher
/// connection then (unchanged = nothing was committed since, with no query). PostgreSQL: a
/// transaction-id watermark (every transaction below it had ended when it was read: change-log
/// ids are taken before commit, so they do not arrive in id order) and the entries at or above
/// it already read (not offered again).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangeCursor {
    pub(crate) position: i64,
    pub(crate) probe: Option<i64>,
    pub(crate) seen: Vec<i64>,
}

/// Keys changed since a [`ChangeCursor`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Changes {
    /// Distinct keys (`seq`) that changed, in no particular order.
    pub keys: Vec<u64>,
    /// The cursor to ask from next time.
    pub cursor: ChangeCursor,
    /// False when entries after the cursor were trimmed from the log: reload everything.
    pub complete: bool,
}

/// A live memory as read for the catalog, with its embedding when it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRow {
    /// The catalog's part.
    pub row: CatalogRow,
    /// The embedding, if stored.
    pub vector: Option<Vec<f32>>,
}

/// The columns the catalog reads of one row, before decoding (both backends fill it).
#[derive(Debug, Clone)]
pub(crate) struct RawCard {
    pub seq: i64,
    pub id: MemoryId,
    pub wing: String,
    pub room: String,
    pub memory_type: String,
    pub content: String,
    pub token_count: i64,
    pub created_at: i64,
    pub session_id: Option<String>,
    pub archived: bool,
    pub superseded_by: Option<MemoryId>,
    pub costs: [Option<i64>; 4],
    pub fact_count: Option<i64>,
    pub vector: Option<Vec<f32>>,
    pub pinned: bool,
}

impl RawCard {
    /// The key, and the live row unless the memory is archived.
    pub fn decode(self) -> Result<(u64, Option<LiveRow>)> {
        let key = self.seq as u64;
        if self.archived {
            return Ok((key, None));
        }
        let memory_type = self
            .memory_type
            .parse::<MemoryType>()
            .map_err(|e| StoreError::Corrupt(format!("memory {}: {e}", self.id)))?;
        let [h, f, v, version] = self.costs;
        let card = Card {
            key,
            id: self.id,
            wing: self.wing.into(),
            room: self.room.into(),
            memory_type,
            created_at_ms: self.created_at,
            session: self.session_id.map(Into::into),
            token_count: u32::try_from(self.token_count.max(0)).unwrap_or(u32::MAX),
            fact_count: u32::try_from(self.fact_count.unwrap_or(0).max(0)).unwrap_or(u32::MAX),
            costs: current_costs(h, f, v, version),
            superseded_by: self.superseded_by,
            speaker: None,
            pinned: self.pinned,
        };
        Ok((
            key,
            Some(LiveRow {
                row: CatalogRow {
                    card,
                    content: self.content,
                },
                vector: self.vector,
            }),
        ))
    }
}
