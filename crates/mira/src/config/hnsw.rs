//! `hnsw:`: the HNSW index.

use super::checks::in_range;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// `hnsw:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HnswConfig {
    /// Graph degree M.
    #[serde(rename = "M")]
    pub m: usize,
    /// Candidate list size while building (0: the library's default).
    pub ef_construction: usize,
    /// Candidate list size while searching.
    pub ef_search: usize,
    /// Below this many memories the exact scan is used.
    pub exact_threshold: usize,
}
impl Default for HnswConfig {
    fn default() -> Self {
        HnswConfig {
            m: 32,
            ef_construction: 0,
            ef_search: 100,
            exact_threshold: 20_000,
        }
    }
}

impl HnswConfig {
    /// Checks `hnsw:`.
    pub(super) fn validate(&self) -> Result<()> {
        in_range(self.m, 2..=128, "hnsw.M")?;
        in_range(self.ef_construction, 0..=4096, "hnsw.ef_construction")?;
        in_range(self.ef_search, 1..=4096, "hnsw.ef_search")
    }
}
