//! Queries used by recall: FTS5 lexical search, embeddings and tags of candidates, the overlap cache.

use crate::repo::decode_vector;
use crate::{Result, Store, StoreError};
use mira_core::memory::MemoryId;
use rusqlite::{params, params_from_iter};
use std::collections::{HashMap, HashSet};

/// Scope of a search: wing and room equality filters; archived memories are always excluded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Only this wing.
    pub wing: Option<String>,
    /// Only this room.
    pub room: Option<String>,
}

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

fn parse_id(s: &str) -> Result<MemoryId> {
    MemoryId::parse_str(s).map_err(|_| StoreError::Corrupt(format!("bad id '{s}'")))
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

impl Store {
    /// BM25 search over the verbatim text: ids with their BM25 score (higher is better), best first.
    pub fn lexical_search(
        &self,
        text: &str,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<(MemoryId, f64)>> {
        let Some(q) = fts_query(text) else {
            return Ok(vec![]);
        };
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT v.id, bm25(verbatims_fts) AS score
                 FROM verbatims_fts JOIN verbatims v ON v.seq = verbatims_fts.rowid
                 WHERE verbatims_fts MATCH ?1 AND v.archived_at IS NULL
                   AND (?2 IS NULL OR v.wing = ?2) AND (?3 IS NULL OR v.room = ?3)
                 ORDER BY score, v.seq LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![q, scope.wing, scope.room, limit as i64], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, score) = row?;
                out.push((parse_id(&id)?, -score));
            }
            Ok(out)
        })
    }

    /// The embeddings of these memories (missing ones are absent from the map).
    pub fn embeddings_by_ids(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>> {
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            self.read(|conn| {
                let sql = format!(
                    "SELECT memory_id, vector FROM embeddings WHERE memory_id IN ({})",
                    placeholders(chunk.len())
                );
                let mut stmt = conn.prepare(&sql)?;
                let keys: Vec<String> = chunk.iter().map(|i| i.to_string()).collect();
                let rows = stmt.query_map(params_from_iter(keys.iter()), |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
                })?;
                for row in rows {
                    let (id, blob) = row?;
                    out.insert(parse_id(&id)?, decode_vector(&blob)?);
                }
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Which of `ids` carry at least one of `tags` (lower-case), with the number of matching tags.
    pub fn tag_matches(
        &self,
        ids: &[MemoryId],
        tags: &[String],
    ) -> Result<HashMap<MemoryId, usize>> {
        let mut out = HashMap::new();
        if ids.is_empty() || tags.is_empty() {
            return Ok(out);
        }
        let tags: Vec<&String> = tags.iter().take(64).collect();
        for chunk in ids.chunks(400) {
            self.read(|conn| {
                let sql = format!(
                    "SELECT memory_id, count(*) FROM tags WHERE memory_id IN ({}) AND tag IN ({}) GROUP BY memory_id",
                    placeholders(chunk.len()),
                    placeholders(tags.len())
                );
                let mut stmt = conn.prepare(&sql)?;
                let mut values: Vec<String> = chunk.iter().map(|i| i.to_string()).collect();
                values.extend(tags.iter().map(|t| t.to_string()));
                let rows = stmt.query_map(params_from_iter(values.iter()), |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                })?;
                for row in rows {
                    let (id, n) = row?;
                    out.insert(parse_id(&id)?, n.max(0) as usize);
                }
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Causal edges among `ids` (pairs, both directions collapsed into `(from, to)` as stored).
    pub fn edges_among(&self, ids: &[MemoryId]) -> Result<Vec<(MemoryId, MemoryId)>> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let ids = &ids[..ids.len().min(400)];
        self.read(|conn| {
            let p = placeholders(ids.len());
            let sql = format!(
                "SELECT from_id, to_id FROM causal_edges WHERE from_id IN ({p}) AND to_id IN ({p})"
            );
            let mut stmt = conn.prepare(&sql)?;
            let mut values: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
            values.extend(ids.iter().map(|i| i.to_string()));
            let rows = stmt.query_map(params_from_iter(values.iter()), |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (a, b) = row?;
                out.push((parse_id(&a)?, parse_id(&b)?));
            }
            Ok(out)
        })
    }

    /// Cached similarities for pairs, valid when computed after `fresh_after_ms`.
    pub fn overlap_get(
        &self,
        pairs: &[(MemoryId, MemoryId)],
        fresh_after_ms: i64,
    ) -> Result<HashMap<(MemoryId, MemoryId), f32>> {
        let mut out = HashMap::new();
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT similarity FROM overlap_cache WHERE id_a = ?1 AND id_b = ?2 AND computed_at > ?3",
            )?;
            for &(a, b) in pairs {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                let hit: Option<f64> = stmt
                    .query_row(params![x.to_string(), y.to_string(), fresh_after_ms], |r| r.get(0))
                    .map(Some)
                    .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(None) } else { Err(e) })?;
                if let Some(s) = hit {
                    out.insert((a, b), s as f32);
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Stores similarities in the overlap cache, then trims it to `max_entries` (oldest first).
    pub fn overlap_put(
        &self,
        values: &[((MemoryId, MemoryId), f32)],
        now_ms: i64,
        max_entries: u64,
    ) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO overlap_cache (id_a, id_b, similarity, computed_at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for &((a, b), s) in values {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                stmt.execute(params![x.to_string(), y.to_string(), s as f64, now_ms])?;
            }
            let n: i64 = tx.query_row("SELECT count(*) FROM overlap_cache", [], |r| r.get(0))?;
            if n as u64 > max_entries {
                tx.execute(
                    "DELETE FROM overlap_cache WHERE rowid IN (SELECT rowid FROM overlap_cache ORDER BY computed_at LIMIT ?1)",
                    [n - max_entries as i64],
                )?;
            }
            Ok(())
        })
    }
}
