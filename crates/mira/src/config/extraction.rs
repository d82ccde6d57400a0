//! `extraction:`: store-time extraction.

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
