//! The queries that keep the in-memory catalog and vectors in step with SQLite: every live row,
//! the rows of given keys, and the change log (migration 003) that says which keys changed.

use super::{Card, CatalogRow};
use crate::{repo::decode_vector, Result, Store, StoreError};
use mira_core::allocate::ModeCosts;
use mira_core::memory::{MemoryId, MemoryType};
use rusqlite::{params_from_iter, Row};

/// A live memory as read for the catalog, with its embedding when it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRow {
    /// The catalog's part.
    pub row: CatalogRow,
    /// The embedding, if stored.
    pub vector: Option<Vec<f32>>,
}

/// Keys changed since a position of the change log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Changes {
    /// Distinct keys (`verbatims.seq`) that changed, in no particular order.
    pub keys: Vec<u64>,
    /// The position to ask from next time.
    pub last: i64,
    /// False when entries after the position asked for were trimmed: reload everything.
    pub complete: bool,
}

const COLUMNS: &str =
    "SELECT v.seq, v.id, v.wing, v.room, v.memory_type, v.content, v.token_count, \
     v.created_at, v.session_id, v.archived_at, v.superseded_by, v.cost_header, \
     v.cost_fingerprint, v.cost_verbatim, v.cost_version, f.fact_count, e.vector, v.pinned \
     FROM verbatims v LEFT JOIN fingerprints f ON f.memory_id = v.id \
     LEFT JOIN embeddings e ON e.memory_id = v.id";

/// A row of [`COLUMNS`]: its key, and the live row unless it is archived.
fn live_row(r: &Row<'_>) -> Result<(u64, Option<LiveRow>)> {
    let key = r.get::<_, i64>(0)? as u64;
    if r.get::<_, Option<i64>>(9)?.is_some() {
        return Ok((key, None));
    }
    let id: String = r.get(1)?;
    let id = parse_id(&id)?;
    let kind: String = r.get(4)?;
    let memory_type = kind
        .parse::<MemoryType>()
        .map_err(|e| StoreError::Corrupt(format!("memory {id}: {e}")))?;
    let superseded_by = r
        .get::<_, Option<String>>(10)?
        .map(|s| parse_id(&s))
        .transpose()?;
    let costs = match (
        r.get::<_, Option<i64>>(11)?,
        r.get::<_, Option<i64>>(12)?,
        r.get::<_, Option<i64>>(13)?,
        r.get::<_, Option<i64>>(14)?,
    ) {
        (Some(h), Some(f), Some(v), Some(version))
            if version == mira_core::render::RENDER_VERSION as i64 =>
        {
            Some(ModeCosts {
                header: h.max(0) as u32,
                fingerprint: f.max(0) as u32,
                verbatim: v.max(0) as u32,
            })
        }
        _ => None,
    };
    let vector = r
        .get::<_, Option<Vec<u8>>>(16)?
        .map(|b| decode_vector(&b))
        .transpose()?;
    let session: Option<String> = r.get(8)?;
    let wing: String = r.get(2)?;
    let room: String = r.get(3)?;
    let card = Card {
        key,
        id,
        wing: wing.into(),
        room: room.into(),
        memory_type,
        created_at_ms: r.get(7)?,
        session: session.map(Into::into),
        token_count: r.get::<_, i64>(6)?.max(0) as u32,
        fact_count: r.get::<_, Option<i64>>(15)?.unwrap_or(0).max(0) as u32,
        costs,
        superseded_by,
        speaker: None,
        pinned: r.get::<_, i64>(17)? != 0,
    };
    Ok((
        key,
        Some(LiveRow {
            row: CatalogRow {
                card,
                content: r.get(5)?,
            },
            vector,
        }),
    ))
}

fn parse_id(s: &str) -> Result<MemoryId> {
    MemoryId::parse_str(s).map_err(|_| StoreError::Corrupt(format!("bad id '{s}'")))
}

impl Store {
    /// The current end of the change log (0 when it is empty).
    pub fn last_change(&self) -> Result<i64> {
        self.read(|conn| {
            Ok(
                conn.query_row("SELECT COALESCE(max(id), 0) FROM change_log", [], |r| {
                    r.get(0)
                })?,
            )
        })
    }

    /// The keys changed after position `after` of the change log.
    pub fn changes_after(&self, after: i64) -> Result<Changes> {
        self.read(|conn| {
            let first: Option<i64> =
                conn.query_row("SELECT min(id) FROM change_log", [], |r| r.get(0))?;
            let mut stmt =
                conn.prepare_cached("SELECT id, seq FROM change_log WHERE id > ?1 ORDER BY id")?;
            let mut keys = Vec::new();
            let mut last = after;
            for row in
                stmt.query_map([after], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?
            {
                let (id, seq) = row?;
                last = id;
                keys.push(seq as u64);
            }
            keys.sort_unstable();
            keys.dedup();
            Ok(Changes {
                keys,
                last,
                complete: first.is_none_or(|f| f <= after + 1),
            })
        })
    }

    /// Every live (not archived) memory, ordered by key.
    pub fn live_rows(&self) -> Result<Vec<LiveRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                "{COLUMNS} WHERE v.archived_at IS NULL ORDER BY v.seq"
            ))?;
            let mut rows = stmt.query([])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                out.extend(live_row(r)?.1);
            }
            Ok(out)
        })
    }

    /// The rows of `keys`: `(key, None)` for a key whose memory is archived or gone.
    pub fn rows_at(&self, keys: &[u64]) -> Result<Vec<(u64, Option<LiveRow>)>> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(500) {
            self.read(|conn| {
                let sql = format!(
                    "{COLUMNS} WHERE v.seq IN ({})",
                    vec!["?"; chunk.len()].join(",")
                );
                let mut stmt = conn.prepare_cached(&sql)?;
                let mut rows = stmt.query(params_from_iter(chunk.iter().map(|k| *k as i64)))?;
                let mut found = std::collections::HashSet::new();
                while let Some(r) = rows.next()? {
                    let (key, row) = live_row(r)?;
                    found.insert(key);
                    out.push((key, row));
                }
                out.extend(
                    chunk
                        .iter()
                        .filter(|k| !found.contains(k))
                        .map(|&k| (k, None)),
                );
                Ok(())
            })?;
        }
        Ok(out)
    }
}
