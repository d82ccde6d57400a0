//! SQLite's own search (FTS5's BM25 over the text and the day) and the overlap cache.

use crate::model::{ordered, parse_id, Scope};
use crate::Result;
use mira_core::memory::MemoryId;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::{HashMap, HashSet};

/// Builds an FTS5 query from free text: each content word quoted (so punctuation and FTS
/// operators in user text are inert), joined by OR. `None` when the text has no content word.
pub fn fts_query(text: &str) -> Option<String> {
    let mut seen = HashSet::new();
    let words: Vec<String> = mira_core::text::words(text)
        .into_iter()
        .filter(|w| !mira_core::text::is_stop_word(w))
        .filter(|w| seen.insert(w.clone()))
        .take(32)
        .map(|w| format!("\"{}\"", w.replace('"', "")))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// See [`crate::MemoryStore::lexical_search`].
pub(super) fn lexical_search(
    conn: &Connection,
    text: &str,
    limit: usize,
    scope: &Scope,
) -> Result<Vec<(MemoryId, f64)>> {
    let Some(q) = fts_query(text) else {
        return Ok(vec![]);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT v.id, bm25(verbatims_fts) AS score
         FROM verbatims_fts JOIN verbatims v ON v.seq = verbatims_fts.rowid
         WHERE verbatims_fts MATCH ?1 AND v.archived_at IS NULL
           AND (?2 IS NULL OR v.wing = ?2) AND (?3 IS NULL OR v.room = ?3)
         ORDER BY score, v.seq LIMIT ?4",
    )?;
    let rows = stmt
        .query_map(params![q, scope.wing, scope.room, limit as i64], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(id, score)| Ok((parse_id(&id)?, -score)))
        .collect()
}

/// See [`crate::MemoryStore::overlap_get`].
pub(super) fn overlap_get(
    conn: &Connection,
    pairs: &[(MemoryId, MemoryId)],
    fresh_after_ms: i64,
) -> Result<HashMap<(MemoryId, MemoryId), f32>> {
    let mut out = HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT similarity FROM overlap_cache WHERE id_a = ?1 AND id_b = ?2 AND computed_at > ?3",
    )?;
    for &(a, b) in pairs {
        let (x, y) = ordered(a, b);
        let hit: Option<f64> = stmt
            .query_row(params![x.to_string(), y.to_string(), fresh_after_ms], |r| {
                r.get(0)
            })
            .optional()?;
        if let Some(s) = hit {
            out.insert((a, b), s as f32);
        }
    }
    Ok(out)
}

/// See [`crate::MemoryStore::overlap_put`].
pub(super) fn overlap_put(
    tx: &Connection,
    values: &[((MemoryId, MemoryId), f32)],
    now_ms: i64,
    max_entries: u64,
) -> Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT OR REPLACE INTO overlap_cache (id_a, id_b, similarity, computed_at) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for &((a, b), s) in values {
        let (x, y) = ordered(a, b);
        stmt.execute(params![x.to_string(), y.to_string(), f64::from(s), now_ms])?;
    }
    let n: i64 = tx.query_row("SELECT count(*) FROM overlap_cache", [], |r| r.get(0))?;
    if n as u64 > max_entries {
        tx.execute(
            "DELETE FROM overlap_cache WHERE rowid IN (SELECT rowid FROM overlap_cache ORDER BY computed_at LIMIT ?1)",
            [n - max_entries as i64],
        )?;
    }
    Ok(())
}
