//! `embeddings:`: the embedding model.

use super::checks::{at_least, check, in_range, in_range_noted};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `embeddings:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingsConfig {
    /// Folder holding the model files; unset: `$MIRA_MODEL_DIR`, else
    /// `~/.cache/mira/models/all-MiniLM-L6-v2`.
    pub model_dir: Option<PathBuf>,
    /// Embedding dimension (384 for all-MiniLM-L6-v2; other values are rejected).
    pub dimension: usize,
    /// Most texts per forward pass of the model (stores, imports and concurrent requests are
    /// batched up to it).
    pub batch_size: usize,
    /// Capacity of the LRU cache of query embeddings.
    pub cache_size: usize,
    /// The graph the model runs: `int8` (quantised, the default: ~2.5× less CPU, the same
    /// recall on the dev set) or `f32` (the reference vectors).
    pub precision: mira_embed::Precision,
    /// Model threads (each runs its own forward passes); 0: one per core.
    pub threads: usize,
}
impl Default for EmbeddingsConfig {
    fn default() -> Self {
        EmbeddingsConfig {
            model_dir: None,
            dimension: 384,
            batch_size: mira_embed::DEFAULT_BATCH_SIZE,
            cache_size: 1000,
            precision: mira_embed::Precision::Int8,
            threads: 0,
        }
    }
}
impl EmbeddingsConfig {
    /// How the model is run.
    pub fn model_options(&self) -> mira_embed::ModelOptions {
        mira_embed::ModelOptions {
            precision: self.precision,
            threads: self.threads,
            batch_size: self.batch_size,
        }
    }
}

impl EmbeddingsConfig {
    /// Checks `embeddings:`.
    pub(super) fn validate(&self) -> Result<()> {
        check(
            self.dimension == 384,
            "embeddings.dimension",
            "must be 384 (all-MiniLM-L6-v2)",
        )?;
        in_range(self.batch_size, 1..=1024, "embeddings.batch_size")?;
        at_least(self.cache_size, 1, "embeddings.cache_size")?;
        in_range_noted(
            self.threads,
            0..=256,
            "embeddings.threads",
            "(0: every core)",
        )
    }
}
