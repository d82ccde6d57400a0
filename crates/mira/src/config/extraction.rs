//! `extraction:`: store-time extraction.

use super::checks::{at_least, in_range};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// `extraction:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtractionConfig {
    /// Shortest entity kept, in characters.
    pub min_entity_length: usize,
    /// How many earlier memories of the wing causal detection looks at.
    pub causal_lookback: usize,
    /// How old (days) an earlier memory may be to be linked.
    pub causal_max_days: u32,
    /// Cosine similarity a causal link needs to its target.
    pub causal_min_similarity: f32,
    /// Cosine similarity above which a new memory is linked to an existing one as a near duplicate.
    pub near_duplicate_threshold: f32,
}
impl Default for ExtractionConfig {
    fn default() -> Self {
        ExtractionConfig {
            min_entity_length: 2,
            causal_lookback: 50,
            causal_max_days: 30,
            causal_min_similarity: 0.45,
            near_duplicate_threshold: 0.95,
        }
    }
}

impl ExtractionConfig {
    /// Checks `extraction:`.
    pub(super) fn validate(&self) -> Result<()> {
        in_range(
            self.min_entity_length,
            1..=64,
            "extraction.min_entity_length",
        )?;
        in_range(self.causal_lookback, 1..=1000, "extraction.causal_lookback")?;
        at_least(self.causal_max_days, 1, "extraction.causal_max_days")?;
        in_range(
            self.causal_min_similarity,
            0.0..=1.0,
            "extraction.causal_min_similarity",
        )?;
        in_range(
            self.near_duplicate_threshold,
            0.0..=1.0,
            "extraction.near_duplicate_threshold",
        )
    }
}
