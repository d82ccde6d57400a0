//! `recall:`: the recall pipeline, its ranking and its "nothing relevant" rule.

use super::checks::{in_range, in_range_noted};
use anyhow::Result;
use serde::{Deserialize, Serialize};

config_words! {
    /// `recall.superseded`: what recall does with a memory another one superseded.
    SupersededPolicy {
        /// Shown as a header only, right after its successor (the default).
        Header = "header",
        /// Left out.
        Exclude = "exclude",
    }
}

/// `recall.query_expansion:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueryExpansion {
    /// Average the embeddings of cleaned variants of the query (off by default: it helped
    /// recall on two of the five dev conversations only, and quadruples a fresh query's cost).
    pub enabled: bool,
    /// Variants besides the original.
    pub num_variants: usize,
}
impl Default for QueryExpansion {
    fn default() -> Self {
        QueryExpansion {
            enabled: false,
            num_variants: 3,
        }
    }
}

/// `recall:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecallConfig {
    /// Query expansion.
    pub query_expansion: QueryExpansion,
    /// Close the context block with one line that says how to read it (budgets from 500).
    pub instructions: bool,
    /// What recall does with a superseded memory (its successor is always brought in).
    pub superseded: SupersededPolicy,
    /// Of two memories of the block about the same thing, show the newer first and mark the
    /// older one as an earlier statement (off by default: not adopted yet, see the README).
    pub newer_first: bool,
    /// The relevance ranking.
    pub ranking: RankingConfig,
    /// When a recall says that nothing in memory closely matches its query.
    pub nothing_relevant: NothingRelevantConfig,
}

/// `recall.nothing_relevant:` when no memory stands out from the rest of the scope, the block
/// shows only the nearest few and says so (README, "Nothing relevant").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NothingRelevantConfig {
    /// Something stands out when the best cosine reaches this share, in [0, 1], of the way
    /// from the scope's mean cosine with the query to a perfect match.
    pub dense: f32,
    /// ... or when one memory holds this share, in [0, 1], of the query's information (the
    /// IDF of its words).
    pub lexical: f32,
    /// Memories shown when nothing stands out (at most).
    pub memories: usize,
}
impl Default for NothingRelevantConfig {
    fn default() -> Self {
        NothingRelevantConfig {
            dense: 0.3,
            lexical: 0.4,
            memories: 3,
        }
    }
}
impl NothingRelevantConfig {
    /// The levels as the ranking states them.
    pub fn levels(&self) -> mira_core::rank::StandoutLevels {
        mira_core::rank::StandoutLevels {
            dense: self.dense,
            lexical: self.lexical,
        }
    }
}

/// `recall.ranking:` how memories are ranked by relevance (docs/benchmarks.md, "Recall quality").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingConfig {
    /// Weight in [0, 1] of the BM25 z-score in the fused score (the cosine has the rest).
    pub lexical_weight: f32,
    /// Weight (≥ 0) of the best-matching neighbours in the same session (0: off).
    pub propagation: f32,
    /// Decay in [0, 1] of a neighbour's weight per step away.
    pub propagation_decay: f32,
    /// Neighbours counted on each side (0..=10).
    pub propagation_reach: usize,
    /// A memory longer than this many tokens receives proportionally less from its neighbours
    /// (0: no limit): a short turn of a chat needs the turns around it, a long one stands alone.
    pub propagation_tokens: u32,
    /// What (≥ 0) each further memory of a session already ranked higher loses at most in the
    /// first places, in the share its exchange (it and its neighbours) is longer than
    /// `propagation_tokens` (1 − propagation_tokens / tokens; short chat loses nothing), so
    /// that the best candidates reach more sessions (0: off).
    pub session_diversity: f32,
    /// Added (≥ 0) to memories by or about the one person a query names.
    pub entity_boost: f32,
    /// BM25 term-frequency saturation k1 (0..=5).
    pub bm25_k1: f32,
    /// BM25 length normalisation b in [0, 1].
    pub bm25_b: f32,
    /// Scopes of at most this many memories are scored whole; larger ones from the best
    /// `allocator.max_candidates` of each search and their session neighbours.
    pub exhaustive_below: usize,
}
impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            lexical_weight: 0.4,
            propagation: 0.5,
            propagation_decay: 0.5,
            propagation_reach: 3,
            propagation_tokens: 128,
            session_diversity: 0.05,
            entity_boost: 0.2,
            bm25_k1: 0.9,
            bm25_b: 0.0,
            exhaustive_below: 20_000,
        }
    }
}
impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            query_expansion: QueryExpansion::default(),
            instructions: true,
            superseded: SupersededPolicy::Header,
            newer_first: false,
            ranking: RankingConfig::default(),
            nothing_relevant: NothingRelevantConfig::default(),
        }
    }
}

impl RecallConfig {
    /// Checks `recall:`.
    pub(super) fn validate(&self) -> Result<()> {
        in_range(
            self.query_expansion.num_variants,
            0..=10,
            "recall.query_expansion.num_variants",
        )?;
        self.ranking.validate()?;
        self.nothing_relevant.validate()
    }
}

impl RankingConfig {
    /// Checks `recall.ranking:`.
    fn validate(&self) -> Result<()> {
        in_range(
            self.lexical_weight,
            0.0..=1.0,
            "recall.ranking.lexical_weight",
        )?;
        in_range(self.propagation, 0.0..=10.0, "recall.ranking.propagation")?;
        in_range(
            self.propagation_decay,
            0.0..=1.0,
            "recall.ranking.propagation_decay",
        )?;
        in_range(
            self.propagation_reach,
            0..=10,
            "recall.ranking.propagation_reach",
        )?;
        in_range_noted(
            self.propagation_tokens,
            0..=100_000,
            "recall.ranking.propagation_tokens",
            "(0: no limit)",
        )?;
        in_range(
            self.session_diversity,
            0.0..=1.0,
            "recall.ranking.session_diversity",
        )?;
        in_range(self.entity_boost, 0.0..=10.0, "recall.ranking.entity_boost")?;
        in_range(self.bm25_k1, 0.0..=5.0, "recall.ranking.bm25_k1")?;
        in_range(self.bm25_b, 0.0..=1.0, "recall.ranking.bm25_b")
    }
}

impl NothingRelevantConfig {
    /// Checks `recall.nothing_relevant:`.
    fn validate(&self) -> Result<()> {
        in_range(self.dense, 0.0..=1.0, "recall.nothing_relevant.dense")?;
        in_range(self.lexical, 0.0..=1.0, "recall.nothing_relevant.lexical")?;
        in_range(self.memories, 0..=100, "recall.nothing_relevant.memories")
    }
}
