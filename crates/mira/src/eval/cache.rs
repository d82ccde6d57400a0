//! The embedding cache of `mira eval`: every vector computed once, kept in a file between runs.

use anyhow::{Context, Result};
use mira_embed::{EmbedError, Embedder};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// An embedder that remembers every vector it computed, in memory and in a file, so that a
/// second evaluation of the same conversations embeds nothing. Keys are SHA-256 digests of the
/// model name and the text; [`EmbeddingCache::save`] rewrites the file.
pub struct EmbeddingCache {
    inner: Arc<dyn Embedder>,
    path: Option<PathBuf>,
    vectors: Mutex<HashMap<[u8; 32], Vec<f32>>>,
}

impl EmbeddingCache {
    /// Wraps `inner`, loading the vectors saved in `path` (if it exists and is readable).
    pub fn open(inner: Arc<dyn Embedder>, path: Option<PathBuf>) -> Self {
        let dim = inner.dimension();
        let mut vectors = HashMap::new();
        if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
            for chunk in bytes.chunks_exact(32 + 4 * dim) {
                let mut key = [0u8; 32];
                key.copy_from_slice(&chunk[..32]);
                let v = chunk[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                vectors.insert(key, v);
            }
        }
        EmbeddingCache {
            inner,
            path,
            vectors: Mutex::new(vectors),
        }
    }

    /// The default file: `~/.cache/mira/eval/<model>.vectors`.
    pub fn default_path(model: &str) -> Option<PathBuf> {
        let home = std::env::var_os("HOME")?;
        Some(
            PathBuf::from(home)
                .join(".cache/mira/eval")
                .join(format!("{model}.vectors")),
        )
    }

    fn key(&self, text: &str) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.inner.model_name().as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.finalize().into()
    }

    /// Writes every vector to the file (a temporary file renamed over it).
    pub fn save(&self) -> Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let vectors = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        let mut bytes = Vec::with_capacity(vectors.len() * (32 + 4 * self.inner.dimension()));
        for (k, v) in vectors.iter() {
            bytes.extend_from_slice(k);
            bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

impl Embedder for EmbeddingCache {
    fn embed_batch(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| self.key(t)).collect();
        let missing: Vec<usize> = {
            let v = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
            (0..texts.len())
                .filter(|&i| !v.contains_key(&keys[i]))
                .collect()
        };
        if !missing.is_empty() {
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let computed = self.inner.embed_batch(&batch)?;
            let mut v = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
            for (i, vec) in missing.into_iter().zip(computed) {
                v.insert(keys[i], vec);
            }
        }
        let v = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        Ok(keys.iter().map(|k| v[k].clone()).collect())
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn model_name(&self) -> &str {
        self.inner.model_name()
    }
}
