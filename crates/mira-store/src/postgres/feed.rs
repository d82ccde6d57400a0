//! The change feed on PostgreSQL: `change_log` rows carry the id of the transaction that wrote
//! them, and a reader's cursor is a transaction-id watermark (the oldest transaction still
//! running when it last read). Each read takes the rows of transactions at or above it, so a
//! transaction that committed after a later one is still seen; the ids of the rows it read at or
//! above the new watermark are kept in the cursor, so that they are not offered again.

use super::PgStore;
use crate::feed::{ChangeCursor, Changes, LiveRow, RawCard};
use crate::Result;
use postgres::{GenericClient, Row};

/// The oldest transaction id still running (every one below it has ended).
const WATERMARK: &str = "pg_snapshot_xmin(pg_current_snapshot())::text::bigint";

/// The catalog's columns of `verbatims v` with its fingerprint and embedding.
const SELECT_CARDS: &str =
    "SELECT v.seq, v.id, v.wing, v.room, v.memory_type, v.content, v.token_count, \
     v.created_at, v.session_id, v.archived_at IS NOT NULL, v.superseded_by, v.cost_header, \
     v.cost_fingerprint, v.cost_verbatim, v.cost_version, f.fact_count, e.vector, v.pinned \
     FROM verbatims v LEFT JOIN fingerprints f ON f.memory_id = v.id \
     LEFT JOIN embeddings e ON e.memory_id = v.id";

fn raw_card(r: &Row) -> Result<RawCard> {
    Ok(RawCard {
        seq: r.try_get(0)?,
        id: r.try_get(1)?,
        wing: r.try_get(2)?,
        room: r.try_get(3)?,
        memory_type: r.try_get(4)?,
        content: r.try_get(5)?,
        token_count: r.try_get(6)?,
        created_at: r.try_get(7)?,
        session_id: r.try_get(8)?,
        archived: r.try_get(9)?,
        superseded_by: r.try_get(10)?,
        costs: [
            r.try_get(11)?,
            r.try_get(12)?,
            r.try_get(13)?,
            r.try_get(14)?,
        ],
        fact_count: r.try_get(15)?,
        vector: r
            .try_get::<_, Option<pgvector::Vector>>(16)?
            .map(|v| v.to_vec()),
        pinned: r.try_get(17)?,
    })
}

fn cards(
    c: &mut impl GenericClient,
    condition: &str,
    keys: &[i64],
) -> Result<Vec<(u64, Option<LiveRow>)>> {
    let rows = if keys.is_empty() {
        c.query(&format!("{SELECT_CARDS} {condition}"), &[])?
    } else {
        c.query(&format!("{SELECT_CARDS} {condition}"), &[&keys])?
    };
    rows.iter().map(|r| raw_card(r)?.decode()).collect()
}

impl PgStore {
    /// See [`crate::ChangeFeed::change_cursor`].
    pub(super) fn cursor_now(&self) -> Result<ChangeCursor> {
        let position = self.read(|c| {
            Ok(c.query_one(&format!("SELECT {WATERMARK}"), &[])?
                .try_get(0)?)
        })?;
        Ok(ChangeCursor {
            position,
            probe: None,
            seen: Vec::new(),
        })
    }

    /// See [`crate::ChangeFeed::changes_since`].
    pub(super) fn changes(&self, cursor: &ChangeCursor) -> Result<Option<Changes>> {
        let (watermark, trimmed, rows) = self.read(|c| {
            // One statement: one snapshot for the watermark and the rows.
            let rows = c.query(
                &format!(
                    "SELECT {WATERMARK}, (SELECT txid FROM change_log_trimmed), id, seq, txid
                     FROM (SELECT 1) one
                     LEFT JOIN change_log ON change_log.txid >= $1"
                ),
                &[&cursor.position],
            )?;
            let first = rows.first().ok_or_else(|| {
                crate::StoreError::Corrupt("the change feed query returned nothing".into())
            })?;
            let (watermark, trimmed): (i64, i64) = (first.try_get(0)?, first.try_get(1)?);
            let entries = rows
                .iter()
                .filter_map(|r| {
                    let id: Option<i64> = r.try_get(2).ok()?;
                    Some((
                        id?,
                        r.try_get::<_, i64>(3).ok()?,
                        r.try_get::<_, i64>(4).ok()?,
                    ))
                })
                .collect::<Vec<_>>();
            Ok((watermark, trimmed, entries))
        })?;
        let seen: std::collections::HashSet<i64> = cursor.seen.iter().copied().collect();
        let mut keys: Vec<u64> = rows
            .iter()
            .filter(|(id, _, _)| !seen.contains(id))
            .map(|&(_, seq, _)| seq as u64)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let next = ChangeCursor {
            position: watermark,
            probe: None,
            seen: rows
                .iter()
                .filter(|&&(_, _, txid)| txid >= watermark)
                .map(|&(id, _, _)| id)
                .collect(),
        };
        if keys.is_empty() && next == *cursor {
            return Ok(None);
        }
        Ok(Some(Changes {
            keys,
            cursor: next,
            complete: trimmed < cursor.position,
        }))
    }

    /// See [`crate::ChangeFeed::live_rows`].
    pub(super) fn all_live_rows(&self) -> Result<Vec<LiveRow>> {
        self.read(|c| {
            Ok(
                cards(&mut *c, "WHERE v.archived_at IS NULL ORDER BY v.seq", &[])?
                    .into_iter()
                    .filter_map(|(_, row)| row)
                    .collect(),
            )
        })
    }

    /// See [`crate::ChangeFeed::rows_at`].
    pub(super) fn live_rows_at(&self, keys: &[u64]) -> Result<Vec<(u64, Option<LiveRow>)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        let mut out = self.read(|c| cards(&mut *c, "WHERE v.seq = ANY($1)", &wanted))?;
        let found: std::collections::HashSet<u64> = out.iter().map(|(k, _)| *k).collect();
        out.extend(
            keys.iter()
                .filter(|k| !found.contains(k))
                .map(|&k| (k, None)),
        );
        Ok(out)
    }
}
