//! SQLite's own search: FTS5's BM25 over the text and the day.

use crate::model::{parse_id, Scope};
use crate::Result;
use mira_core::memory::MemoryId;
use rusqlite::{params, Connection};
use std::collections::HashSet;

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
