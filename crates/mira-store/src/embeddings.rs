//! Memories stored without an embedding (no model was installed: recall ranks them by BM25
//! alone) and the vectors filled in for them later.

use crate::repo::encode_vector;
use crate::{Result, Store};
use mira_core::memory::MemoryId;
use rusqlite::params;

/// A memory that has no embedding yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unembedded {
    /// Its id.
    pub id: MemoryId,
    /// Its text (what the embedding is computed from).
    pub content: String,
}

impl Store {
    /// Up to `limit` memories without an embedding, oldest first.
    pub fn without_embedding(&self, limit: usize) -> Result<Vec<Unembedded>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT v.id, v.content FROM verbatims v
                 WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = v.id)
                 ORDER BY v.seq LIMIT ?1",
            )?;
            let rows = stmt.query_map(params![limit as i64], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, content) = row?;
                out.push(Unembedded {
                    id: crate::repo::parse_id(&id)?,
                    content,
                });
            }
            Ok(out)
        })
    }

    /// How many memories have no embedding.
    pub fn count_without_embedding(&self) -> Result<u64> {
        self.read(|conn| {
            let n: i64 = conn.query_row(
                "SELECT count(*) FROM verbatims v
                 WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = v.id)",
                [],
                |r| r.get(0),
            )?;
            Ok(n.max(0) as u64)
        })
    }

    /// Stores the embeddings `model` computed for memories that had none, in one transaction.
    /// A memory deleted meanwhile, or embedded meanwhile by another process, is skipped.
    /// Returns how many were written.
    pub fn set_embeddings(&self, model: &str, vectors: &[(MemoryId, Vec<f32>)]) -> Result<usize> {
        self.write(|tx| {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO embeddings (memory_id, model, dim, vector)
                 SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM verbatims WHERE id = ?1)
                 ON CONFLICT (memory_id) DO NOTHING",
            )?;
            let mut written = 0;
            for (id, v) in vectors.iter().filter(|(_, v)| !v.is_empty()) {
                written += stmt.execute(params![
                    id.to_string(),
                    model,
                    v.len() as i64,
                    encode_vector(v)
                ])?;
            }
            Ok(written)
        })
    }
}
