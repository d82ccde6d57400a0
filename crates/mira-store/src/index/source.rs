//! The queries the index needs: the live rows with embeddings, and cheap summaries of them.

use super::IndexEntry;
use crate::{repo::decode_vector, Result, Store, StoreError};
use mira_core::memory::MemoryId;
use rusqlite::{params, Connection, OptionalExtension, Row};

/// Rows the index covers: live (not archived) memories with an embedding of dimension `?1`.
const LIVE: &str = "FROM verbatims v JOIN embeddings e ON e.memory_id = v.id \
                    WHERE v.archived_at IS NULL AND e.dim = ?1";

/// Summary of a set of keys: compared between SQLite and memory to detect changes cheaply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct KeyCensus {
    pub count: i64,
    pub sum: i64,
    pub hashed: i64,
    pub max: i64,
}

/// The per-key term of [`KeyCensus::hashed`] (the same expression runs in SQL).
fn hash_term(seq: i64) -> i64 {
    ((seq & 0x7FFF_FFFF) * 1_640_531_527) & 0x7FFF_FFFF
}

impl KeyCensus {
    /// The census of in-memory keys.
    pub fn of(keys: impl Iterator<Item = u64>) -> Self {
        keys.fold(KeyCensus::default(), |c, k| {
            let k = k as i64;
            KeyCensus {
                count: c.count + 1,
                sum: c.sum.wrapping_add(k),
                hashed: c.hashed.wrapping_add(hash_term(k)),
                max: c.max.max(k),
            }
        })
    }
}

fn parse_id(s: &str) -> rusqlite::Result<MemoryId> {
    MemoryId::parse_str(s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, e.into())
    })
}

fn entry_from_row(r: &Row<'_>) -> rusqlite::Result<(i64, String, String, String, Vec<u8>)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

fn collect_entries(
    rows: impl Iterator<Item = rusqlite::Result<(i64, String, String, String, Vec<u8>)>>,
) -> Result<Vec<IndexEntry>> {
    let mut out = Vec::new();
    for row in rows {
        let (seq, id, wing, room, blob) = row?;
        let id =
            MemoryId::parse_str(&id).map_err(|_| StoreError::Corrupt(format!("bad id '{id}'")))?;
        out.push(IndexEntry {
            key: seq as u64,
            id,
            wing,
            room,
            vector: decode_vector(&blob)?,
        });
    }
    Ok(out)
}

fn dimension(conn: &Connection) -> Result<Option<usize>> {
    let dim: Option<i64> = conn
        .query_row(
            "SELECT e.dim FROM verbatims v JOIN embeddings e ON e.memory_id = v.id \
             WHERE v.archived_at IS NULL GROUP BY e.dim ORDER BY count(*) DESC, e.dim DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(dim.filter(|d| *d > 0).map(|d| d as usize))
}

impl Store {
    /// Dimension of the index: the most common embedding dimension among live rows (`None` if
    /// there is no live embedding).
    pub fn index_dimension(&self) -> Result<Option<usize>> {
        self.read(dimension)
    }

    /// Every live memory with an embedding of the index's dimension ([`Store::index_dimension`]),
    /// ordered by `seq`: what the vector index is built from.
    pub fn index_entries(&self) -> Result<Vec<IndexEntry>> {
        self.read(|conn| {
            let Some(dim) = dimension(conn)? else {
                return Ok(Vec::new());
            };
            let mut stmt = conn.prepare(&format!(
                "SELECT v.seq, v.id, v.wing, v.room, e.vector {LIVE} ORDER BY v.seq"
            ))?;
            let rows = stmt.query_map(params![dim as i64], entry_from_row)?;
            collect_entries(rows)
        })
    }

    /// Live entries of dimension `dim` with `seq > after`, ordered by `seq`.
    pub(crate) fn index_entries_after(&self, dim: usize, after: u64) -> Result<Vec<IndexEntry>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT v.seq, v.id, v.wing, v.room, e.vector {LIVE} AND v.seq > ?2 ORDER BY v.seq"
            ))?;
            let rows = stmt.query_map(params![dim as i64, after as i64], entry_from_row)?;
            collect_entries(rows)
        })
    }

    /// Live entries of dimension `dim` among `keys`.
    pub(crate) fn index_entries_for(&self, dim: usize, keys: &[u64]) -> Result<Vec<IndexEntry>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT v.seq, v.id, v.wing, v.room, e.vector {LIVE} AND v.seq = ?2"
            ))?;
            let mut out = Vec::new();
            for &k in keys {
                let rows = stmt.query_map(params![dim as i64, k as i64], entry_from_row)?;
                out.extend(collect_entries(rows)?);
            }
            Ok(out)
        })
    }

    /// `(seq, id)` of every live entry of dimension `dim`.
    pub(crate) fn index_keys(&self, dim: usize) -> Result<Vec<(u64, MemoryId)>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!("SELECT v.seq, v.id {LIVE}"))?;
            let rows = stmt.query_map(params![dim as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)? as u64,
                    parse_id(&r.get::<_, String>(1)?)?,
                ))
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// The [`KeyCensus`] of the live entries of dimension `dim`.
    pub(crate) fn index_census(&self, dim: usize) -> Result<KeyCensus> {
        self.read(|conn| {
            let sql = format!(
                "SELECT count(*), COALESCE(sum(v.seq), 0), \
                 COALESCE(sum(((v.seq & 2147483647) * 1640531527) & 2147483647), 0), COALESCE(max(v.seq), 0) {LIVE}"
            );
            Ok(conn.query_row(&sql, params![dim as i64], |r| {
                Ok(KeyCensus { count: r.get(0)?, sum: r.get(1)?, hashed: r.get(2)?, max: r.get(3)? })
            })?)
        })
    }

    /// The id of the row with this `seq`, archived or not (`None` if there is no such row).
    pub(crate) fn id_at_seq(&self, seq: u64) -> Result<Option<MemoryId>> {
        self.read(|conn| {
            let id: Option<String> = conn
                .query_row(
                    "SELECT id FROM verbatims WHERE seq = ?1",
                    [seq as i64],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(id.map(|s| parse_id(&s)).transpose()?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn census_of_keys_matches_the_sql_expression_domain() {
        let c = KeyCensus::of([1u64, 2, 3_000_000_000].into_iter());
        assert_eq!(c.count, 3);
        assert_eq!(c.sum, 3_000_000_003);
        assert_eq!(c.max, 3_000_000_000);
        assert!(c.hashed >= 0);
    }
}
