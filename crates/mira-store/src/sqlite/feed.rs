//! The change feed on SQLite: `PRAGMA data_version` of a watcher connection tells whether
//! anything was committed, the `change_log` table (migration 003) which keys, and the catalog's
//! rows are read by key.

use super::vector::decode_vector;
use super::SqliteStore;
use crate::feed::{ChangeCursor, Changes, LiveRow, RawCard};
use crate::model::parse_id;
use crate::Result;
use rusqlite::{params_from_iter, Connection, Row};

/// The catalog's columns of `verbatims v` with its fingerprint and embedding.
const SELECT_CARDS: &str =
    "SELECT v.seq, v.id, v.wing, v.room, v.memory_type, v.content, v.token_count, \
     v.created_at, v.session_id, v.archived_at, v.superseded_by, v.cost_header, \
     v.cost_fingerprint, v.cost_verbatim, v.cost_version, f.fact_count, e.vector, v.pinned \
     FROM verbatims v LEFT JOIN fingerprints f ON f.memory_id = v.id \
     LEFT JOIN embeddings e ON e.memory_id = v.id";

fn raw_card(r: &Row<'_>) -> Result<RawCard> {
    let id: String = r.get(1)?;
    Ok(RawCard {
        seq: r.get(0)?,
        id: parse_id(&id)?,
        wing: r.get(2)?,
        room: r.get(3)?,
        memory_type: r.get(4)?,
        content: r.get(5)?,
        token_count: r.get(6)?,
        created_at: r.get(7)?,
        session_id: r.get(8)?,
        archived: r.get::<_, Option<i64>>(9)?.is_some(),
        superseded_by: r
            .get::<_, Option<String>>(10)?
            .map(|s| parse_id(&s))
            .transpose()?,
        costs: [r.get(11)?, r.get(12)?, r.get(13)?, r.get(14)?],
        fact_count: r.get(15)?,
        vector: r
            .get::<_, Option<Vec<u8>>>(16)?
            .map(|b| decode_vector(&b))
            .transpose()?,
        pinned: r.get::<_, i64>(17)? != 0,
    })
}

fn last_change(conn: &Connection) -> Result<i64> {
    Ok(
        conn.query_row("SELECT COALESCE(max(id), 0) FROM change_log", [], |r| {
            r.get(0)
        })?,
    )
}

impl SqliteStore {
    /// `PRAGMA data_version` of the watcher connection (`None` if it could not be opened).
    fn data_version(&self) -> Option<i64> {
        let w = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        w.as_ref()
            .and_then(|c| c.query_row("PRAGMA data_version", [], |r| r.get(0)).ok())
    }

    /// See [`crate::ChangeFeed::change_cursor`].
    pub(super) fn cursor_now(&self) -> Result<ChangeCursor> {
        let probe = self.data_version();
        Ok(ChangeCursor {
            position: self.read(last_change)?,
            probe,
            seen: Vec::new(),
        })
    }

    /// See [`crate::ChangeFeed::changes_since`].
    pub(super) fn changes(&self, cursor: &ChangeCursor) -> Result<Option<Changes>> {
        let probe = self.data_version();
        if probe.is_some() && probe == cursor.probe {
            return Ok(None);
        }
        let after = cursor.position;
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
            Ok(Some(Changes {
                keys,
                cursor: ChangeCursor {
                    position: last,
                    probe,
                    seen: Vec::new(),
                },
                complete: first.is_none_or(|f| f <= after + 1),
            }))
        })
    }

    /// See [`crate::ChangeFeed::live_rows`].
    pub(super) fn all_live_rows(&self) -> Result<Vec<LiveRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                "{SELECT_CARDS} WHERE v.archived_at IS NULL ORDER BY v.seq"
            ))?;
            let mut rows = stmt.query([])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                out.extend(raw_card(r)?.decode()?.1);
            }
            Ok(out)
        })
    }

    /// See [`crate::ChangeFeed::rows_at`].
    pub(super) fn live_rows_at(&self, keys: &[u64]) -> Result<Vec<(u64, Option<LiveRow>)>> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(500) {
            self.read(|conn| {
                let sql = format!(
                    "{SELECT_CARDS} WHERE v.seq IN ({})",
                    vec!["?"; chunk.len()].join(",")
                );
                let mut stmt = conn.prepare_cached(&sql)?;
                let mut rows = stmt.query(params_from_iter(chunk.iter().map(|k| *k as i64)))?;
                let mut found = std::collections::HashSet::new();
                while let Some(r) = rows.next()? {
                    let (key, row) = raw_card(r)?.decode()?;
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
