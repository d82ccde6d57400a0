//! Per-candidate scoring for recall: relevance, information density, recency, tag boost.
//!
//! The CBA's initial score is `relevance × density × recency` (catalogue §4.5). Deliberate
//! differences from the reference:
//! - **Density is a real logistic sigmoid** `1/(1+e^(−k(x−μ)))`, range (0, 1). The reference
//!   used `2/(1+e^(−k(x−μ)))−1` clamped to ≥ 0, which is exactly 0 whenever `x ≤ μ` (one fact
//!   in 12 tokens or more): most memories scored 0 and ranking collapsed to list order. With
//!   k = 2, μ = 0.3 density now spans roughly 0.35 (no facts) to 1 (very dense), a mild factor
//!   that can no longer erase relevance. A memory with 0 tokens gets the neutral 0.5.
//! - **Relevance is `max(cos, 0)`**, continuous over [−1, 1]. The reference mapped a negative
//!   cosine ρ to `(1+ρ)/2`, so −0.01 became 0.495 while +0.01 stayed 0.01 (a jump at 0, and an
//!   unrelated memory outranking a related one). Positive cosines are unchanged, so thresholds
//!   tuned on the reference keep their meaning.
//! - Age is measured in seconds / 86 400 (the reference used whole hours / 24), and a negative
//!   age (clock skew, imported future dates) counts as 0 so recency never exceeds 1.
//!
//! Every function returns a finite value for any input (NaN, infinities, empty or mismatched
//! vectors): the allocator and the sort orders downstream rely on it.

use crate::memory::MemoryType;
use serde::{Deserialize, Serialize};

/// Reference steepness `k` of the density sigmoid.
pub const DENSITY_K: f64 = 2.0;
/// Reference midpoint `μ` of the density sigmoid (facts per √token).
pub const DENSITY_MU: f64 = 0.3;
/// Additive relevance boost for a candidate whose tags match the query.
pub const TAG_BOOST: f32 = 0.05;
/// Seconds in a day, for [`age_days`].
const SECS_PER_DAY: f64 = 86_400.0;

/// Cosine similarity of two vectors, computed in full (both are normalised here).
/// Mismatched lengths, empty or zero vectors and non-finite results give 0.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let c = dot / (na.sqrt() * nb.sqrt());
    if c.is_finite() {
        c.clamp(-1.0, 1.0) as f32
    } else {
        0.0
    }
}

/// Maps a cosine in [−1, 1] to a relevance in [0, 1]: `max(cos, 0)` (NaN → 0).
/// Continuous, unlike the reference's `(1+ρ)/2` for negative ρ (see the module docs).
pub fn relevance_from_cosine(cos: f32) -> f32 {
    if cos.is_nan() {
        0.0
    } else {
        cos.clamp(0.0, 1.0)
    }
}

/// Adds [`TAG_BOOST`] to `relevance` when `matched`, capped at 1 (NaN relevance counts as 0).
pub fn tag_boost(relevance: f32, matched: bool) -> f32 {
    let r = relevance_from_cosine(relevance);
    if matched {
        (r + TAG_BOOST).min(1.0)
    } else {
        r
    }
}

/// Information density: the logistic sigmoid `1/(1+e^(−k(x−μ)))` with `x = facts/√tokens`
/// (`facts` from [`crate::fingerprint::Fingerprint::fact_count`], `tokens` the T0 count).
/// `tokens == 0` or a non-finite result (NaN `k` or `μ`) gives the neutral 0.5.
pub fn density(facts: u32, tokens: u32, k: f64, mu: f64) -> f64 {
    if tokens == 0 {
        return 0.5;
    }
    let x = f64::from(facts) / f64::from(tokens).sqrt();
    let d = 1.0 / (1.0 + (-k * (x - mu)).exp());
    if d.is_finite() {
        d
    } else {
        0.5
    }
}

/// The relevance of a hybrid candidate: `(1 − w)·semantic + w·fused`, where `semantic` is
/// the cosine relevance and `fused` the RRF relevance ([`crate::fusion::rrf_relevance`]), so
/// that a candidate both retrievers rank high beats one only the embedding likes. `w` is
/// clamped to [0, 1]; the result is in [0, 1].
pub fn hybrid_relevance(semantic: f32, fused: f32, w: f32) -> f32 {
    let w = if w.is_nan() { 0.0 } else { w.clamp(0.0, 1.0) };
    ((1.0 - w) * semantic.clamp(0.0, 1.0) + w * fused.clamp(0.0, 1.0)).clamp(0.0, 1.0)
}

/// Recency with a floor: `floor + (1 − floor)·e^(−λ·age)`, so that an old memory that is very
/// relevant can still win over a recent one that is barely so (floor clamped to [0, 1]).
pub fn recency_with_floor(age_days: f64, decay_rate: f64, floor: f64) -> f64 {
    let floor = if floor.is_nan() {
        0.0
    } else {
        floor.clamp(0.0, 1.0)
    };
    floor + (1.0 - floor) * recency(age_days, decay_rate)
}

/// Recency `e^(−λ·max(age, 0))`, in (0, 1]. A NaN age counts as 0; a negative or NaN rate as 0.
pub fn recency(age_days: f64, decay_rate: f64) -> f64 {
    let age = if age_days.is_nan() {
        0.0
    } else {
        age_days.max(0.0)
    };
    let rate = if decay_rate.is_nan() {
        0.0
    } else {
        decay_rate.max(0.0)
    };
    let r = (-rate * age).exp();
    if r.is_nan() {
        // 0 × ∞: an infinitely old memory with a zero rate does not decay.
        1.0
    } else {
        r
    }
}

/// Age in days of something created at `created_secs`, seen at `now_secs` (Unix seconds).
pub fn age_days(now_secs: i64, created_secs: i64) -> f64 {
    (now_secs as f64 - created_secs as f64) / SECS_PER_DAY
}

/// The CBA's initial score `relevance × density × recency`; non-finite or negative → 0.
pub fn initial_score(relevance: f32, density: f64, recency: f64) -> f64 {
    let s = f64::from(relevance) * density * recency;
    if s.is_finite() {
        s.max(0.0)
    } else {
        0.0
    }
}

/// Recency decay rate λ per day for each memory type (config `allocator.decay_rates`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecayRates {
    /// λ for decisions.
    pub decision: f64,
    /// λ for facts.
    pub fact: f64,
    /// λ for preferences.
    pub preference: f64,
    /// λ for session notes.
    pub session_note: f64,
    /// λ for debug logs.
    pub debug_log: f64,
}

impl Default for DecayRates {
    fn default() -> Self {
        Self {
            decision: MemoryType::Decision.default_decay_rate(),
            fact: MemoryType::Fact.default_decay_rate(),
            preference: MemoryType::Preference.default_decay_rate(),
            session_note: MemoryType::SessionNote.default_decay_rate(),
            debug_log: MemoryType::DebugLog.default_decay_rate(),
        }
    }
}

impl DecayRates {
    /// The configured λ of `t`. 0 means no decay (the reference replaced 0 by the built-in
    /// rate, so a user could not turn decay off); a negative or non-finite rate, which
    /// configuration validation rejects, falls back to the type's built-in rate.
    pub fn rate(&self, t: MemoryType) -> f64 {
        let r = match t {
            MemoryType::Decision => self.decision,
            MemoryType::Fact => self.fact,
            MemoryType::Preference => self.preference,
            MemoryType::SessionNote => self.session_note,
            MemoryType::DebugLog => self.debug_log,
        };
        if r.is_finite() && r >= 0.0 {
            r
        } else {
            t.default_decay_rate()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn density_is_a_real_sigmoid() {
        // x = 5/√20 = 1.118 → 1/(1+e^(−1.636)).
        assert!(
            close(density(5, 20, DENSITY_K, DENSITY_MU), 0.8370),
            "{}",
            density(5, 20, 2.0, 0.3)
        );
        // The reference clamped this one to 0; it is now just below the midpoint.
        let d = density(1, 20, DENSITY_K, DENSITY_MU);
        assert!(d > 0.45 && d < 0.5, "{d}");
        assert!(close(density(1, 3, DENSITY_K, DENSITY_MU), 0.6352));
        assert_eq!(density(3, 0, DENSITY_K, DENSITY_MU), 0.5);
        assert_eq!(density(3, 10, f64::NAN, DENSITY_MU), 0.5);
        // Monotone in facts, never 0 or 1 exactly at ordinary values.
        assert!(density(0, 100, 2.0, 0.3) > 0.3);
        assert!(density(2, 100, 2.0, 0.3) > density(1, 100, 2.0, 0.3));
        assert!(density(u32::MAX, 1, 2.0, 0.3) <= 1.0);
    }

    #[test]
    fn recency_decays_by_type() {
        let rates = DecayRates::default();
        assert!(close(
            recency(10.0, rates.rate(MemoryType::SessionNote)),
            (-1.0f64).exp()
        ));
        assert_eq!(recency(-5.0, 0.1), 1.0);
        assert_eq!(recency(f64::NAN, 0.1), 1.0);
        assert_eq!(recency(10.0, f64::NAN), 1.0);
        assert_eq!(recency(f64::INFINITY, 0.0), 1.0);
        assert_eq!(recency(f64::INFINITY, 0.1), 0.0);
        assert!(
            recency(1.0, rates.rate(MemoryType::Decision))
                > recency(1.0, rates.rate(MemoryType::DebugLog))
        );
        assert!(close(age_days(86_400 * 3, 0), 3.0));
    }

    #[test]
    fn decay_rates_zero_means_no_decay_and_invalid_falls_back() {
        let rates = DecayRates {
            fact: 0.0,
            preference: f64::NAN,
            decision: -1.0,
            ..DecayRates::default()
        };
        assert_eq!(rates.rate(MemoryType::Fact), 0.0);
        assert_eq!(recency(10_000.0, rates.rate(MemoryType::Fact)), 1.0);
        assert_eq!(rates.rate(MemoryType::Decision), 0.001);
        assert_eq!(rates.rate(MemoryType::Preference), 0.01);
        let parsed: DecayRates = serde_json::from_str(r#"{"debug_log": 0.9}"#).unwrap();
        assert_eq!(parsed.rate(MemoryType::DebugLog), 0.9);
        assert_eq!(parsed.rate(MemoryType::Decision), 0.001);
    }

    #[test]
    fn hybrid_relevance_blends_and_stays_in_range() {
        assert_eq!(hybrid_relevance(0.8, 0.2, 0.0), 0.8);
        assert_eq!(hybrid_relevance(0.8, 0.2, 1.0), 0.2);
        assert!((hybrid_relevance(0.8, 0.2, 0.5) - 0.5).abs() < 1e-6);
        assert_eq!(hybrid_relevance(2.0, 2.0, 0.5), 1.0);
        assert_eq!(hybrid_relevance(0.4, 0.9, f32::NAN), 0.4);
    }

    #[test]
    fn recency_floor_bounds_the_decay() {
        assert_eq!(recency_with_floor(0.0, 0.1, 0.3), 1.0);
        assert!((recency_with_floor(1e6, 0.1, 0.3) - 0.3).abs() < 1e-12);
        assert!(close(recency_with_floor(10.0, 0.1, 0.0), (-1.0f64).exp()));
        assert!(recency_with_floor(10.0, 0.1, 0.3) > recency_with_floor(20.0, 0.1, 0.3));
    }

    #[test]
    fn relevance_is_continuous() {
        assert_eq!(relevance_from_cosine(-0.4), 0.0);
        assert_eq!(relevance_from_cosine(-0.0001), 0.0);
        assert_eq!(relevance_from_cosine(0.0), 0.0);
        assert_eq!(relevance_from_cosine(0.42), 0.42);
        assert_eq!(relevance_from_cosine(1.5), 1.0);
        assert_eq!(relevance_from_cosine(f32::NAN), 0.0);
    }

    #[test]
    fn cosine_edge_cases() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]) + 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[1.0]), 0.0);
        assert_eq!(cosine(&[], &[]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[f32::NAN, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn boost_and_initial_score() {
        assert_eq!(tag_boost(0.5, false), 0.5);
        assert!((tag_boost(0.5, true) - 0.55).abs() < 1e-6);
        assert_eq!(tag_boost(0.98, true), 1.0);
        assert!(close(initial_score(0.5, 0.8, 0.5), 0.2));
        assert_eq!(initial_score(f32::NAN, 0.8, 0.5), 0.0);
        assert_eq!(initial_score(0.5, f64::INFINITY, 0.0), 0.0);
    }
}
