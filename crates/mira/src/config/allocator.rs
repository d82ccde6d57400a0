//! `allocator:`: the Context Budget Allocator.

use super::checks::in_range;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// `allocator:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AllocatorConfig {
    /// Budget used when a recall gives none.
    pub default_budget: u32,
    /// Candidates taken from each search.
    pub max_candidates: usize,
    /// Memories less relevant than this, relative to the most relevant one, are not shown
    /// (in [0, 1]; the most relevant is always shown).
    pub relevance_floor: f32,
    /// Cosine similarity in [0, 1] at which a memory is redundant with one already shown: it is
    /// shown as a header only.
    pub redundancy_threshold: f32,
    /// Share of the budget in [0, 1] that pinned memories may take.
    pub pinned_share: f32,
}
impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig {
            default_budget: 4000,
            max_candidates: 100,
            relevance_floor: 0.45,
            redundancy_threshold: 0.95,
            pinned_share: 0.2,
        }
    }
}

impl AllocatorConfig {
    /// Checks `allocator:`.
    pub(super) fn validate(&self) -> Result<()> {
        in_range(self.default_budget, 1..=100_000, "allocator.default_budget")?;
        in_range(self.max_candidates, 1..=10_000, "allocator.max_candidates")?;
        in_range(self.relevance_floor, 0.0..=1.0, "allocator.relevance_floor")?;
        in_range(
            self.redundancy_threshold,
            0.0..=1.0,
            "allocator.redundancy_threshold",
        )?;
        in_range(self.pinned_share, 0.0..=1.0, "allocator.pinned_share")
    }
}
