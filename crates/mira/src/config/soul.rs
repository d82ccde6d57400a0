//! `soul:`: the identity extension.

use super::checks::{at_least, in_range};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// `soul.extraction:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulExtraction {
    /// Traits below this confidence are not stored.
    pub min_trait_confidence: f64,
    /// Observations before a trait is considered established.
    pub min_observations_for_trait: u32,
}
impl Default for SoulExtraction {
    fn default() -> Self {
        SoulExtraction {
            min_trait_confidence: 0.3,
            min_observations_for_trait: 5,
        }
    }
}

/// `soul.recall:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulRecall {
    /// Default token budget of `soul_recall`.
    pub default_budget_tokens: u32,
}
impl Default for SoulRecall {
    fn default() -> Self {
        SoulRecall {
            default_budget_tokens: 1000,
        }
    }
}

/// `soul.drift_detection:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulDrift {
    /// Drift above this is reported as significant.
    pub threshold: f64,
    /// Versions compared by default.
    pub window_size: u32,
    /// Check drift after each capture.
    pub auto_check_after_capture: bool,
}
impl Default for SoulDrift {
    fn default() -> Self {
        SoulDrift {
            threshold: 0.3,
            window_size: 10,
            auto_check_after_capture: true,
        }
    }
}

/// `soul.model_swap:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulModelSwap {
    /// Produce a reinforcement prompt on model swap.
    pub auto_reinforce: bool,
}
impl Default for SoulModelSwap {
    fn default() -> Self {
        SoulModelSwap {
            auto_reinforce: true,
        }
    }
}

/// `soul.evolution:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulEvolution {
    /// Keep a history of identity versions.
    pub enabled: bool,
    /// Versions kept per agent.
    pub max_history_versions: u32,
}
impl Default for SoulEvolution {
    fn default() -> Self {
        SoulEvolution {
            enabled: true,
            max_history_versions: 100,
        }
    }
}

/// `soul:`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulConfig {
    /// Serve the `soul_*` tools.
    pub enabled: bool,
    /// Capture.
    pub extraction: SoulExtraction,
    /// Identity prompt.
    pub recall: SoulRecall,
    /// Drift detection.
    pub drift_detection: SoulDrift,
    /// Model swap.
    pub model_swap: SoulModelSwap,
    /// History.
    pub evolution: SoulEvolution,
}

impl SoulConfig {
    /// Checks `soul:`.
    pub(super) fn validate(&self) -> Result<()> {
        in_range(
            self.extraction.min_trait_confidence,
            0.0..=1.0,
            "soul.extraction.min_trait_confidence",
        )?;
        in_range(
            self.drift_detection.threshold,
            0.0..=1.0,
            "soul.drift_detection.threshold",
        )?;
        at_least(
            self.recall.default_budget_tokens,
            1,
            "soul.recall.default_budget_tokens",
        )
    }
}
