//! Ranking by relevance: lexical and dense evidence fused by calibrated scores, propagation to
//! the neighbouring memories of one session, and a boost for memories by or about the one person
//! the query names. Each stage is a small pure function; the recall use case strings them
//! together. Chosen on leave-one-conversation-out evaluation (docs/benchmarks.md, "Recall
//! quality"):
//! - **Scores, not ranks**: `F = w·z(BM25) + (1 − w)·z(cosine)`, z-scores over the searched scope
//!   (documents without a query term count as BM25 0), then min-max to [0, 1]. RRF threw away
//!   how far ahead the best matches are.
//! - **Neighbours**: a question usually matches several turns of one exchange, so each memory
//!   gains from the best-matching memories next to it in its session:
//!   `G(i) = F(i) + α · Σ_{d=1..reach} γ^{d−1} · max(F(i−d), F(i+d))` (a missing neighbour
//!   counts 0; F is propagated, never G).
//! - **Entity**: when the query names exactly one known person, memories by or about them gain a
//!   fixed amount.

use crate::lexical::Bm25Params;
use crate::text;

/// The parameters of the ranking stages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankParams {
    /// Weight `w` of the lexical z-score in the fused score (the dense one has `1 − w`).
    pub lexical_weight: f32,
    /// Weight `α` of the neighbours' scores (0 turns propagation off).
    pub propagation: f32,
    /// Decay `γ` per step away from the memory.
    pub propagation_decay: f32,
    /// How many memories on each side count.
    pub propagation_reach: usize,
    /// Added to the score of a memory by or about the one person the query names.
    pub entity_boost: f32,
    /// The lexical scoring.
    pub bm25: Bm25Params,
}

impl Default for RankParams {
    fn default() -> Self {
        RankParams {
            lexical_weight: 0.4,
            propagation: 0.5,
            propagation_decay: 0.5,
            propagation_reach: 3,
            entity_boost: 0.2,
            bm25: Bm25Params::default(),
        }
    }
}

/// Mean and standard deviation of a set of scores, to turn them into z-scores.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Moments {
    /// The mean.
    pub mean: f32,
    /// The (population) standard deviation.
    pub std: f32,
}

impl Moments {
    /// The moments of `values`.
    pub fn of(values: impl IntoIterator<Item = f32>) -> Moments {
        Self::accumulate(values, None)
    }

    /// The moments of `count` values of which only `nonzero` are listed (the others are 0).
    pub fn of_sparse(nonzero: impl IntoIterator<Item = f32>, count: usize) -> Moments {
        Self::accumulate(nonzero, Some(count))
    }

    fn accumulate(values: impl IntoIterator<Item = f32>, count: Option<usize>) -> Moments {
        let (mut n, mut sum, mut sq) = (0usize, 0f64, 0f64);
        for v in values {
            let v = v as f64;
            n += 1;
            sum += v;
            sq += v * v;
        }
        let n = count.unwrap_or(n).max(n);
        if n == 0 {
            return Moments::default();
        }
        let mean = sum / n as f64;
        let var = (sq / n as f64 - mean * mean).max(0.0);
        Moments {
            mean: mean as f32,
            std: var.sqrt() as f32,
        }
    }

    /// The z-score of `x` (0 when the scores do not vary).
    pub fn z(&self, x: f32) -> f32 {
        if self.std > 1e-9 {
            (x - self.mean) / self.std
        } else {
            0.0
        }
    }
}

/// The fused score of one memory from its lexical and dense z-scores.
pub fn fuse(lexical_z: f32, dense_z: f32, lexical_weight: f32) -> f32 {
    let w = lexical_weight.clamp(0.0, 1.0);
    w * lexical_z + (1.0 - w) * dense_z
}

/// Scales `values` linearly to [0, 1] (all 1 when they are all equal).
pub fn min_max(values: &mut [f32]) {
    let (lo, hi) = values
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let span = hi - lo;
    for v in values.iter_mut() {
        *v = if span > 1e-9 { (*v - lo) / span } else { 1.0 };
    }
}

/// `G = own + α · Σ_d γ^{d−1} · max(before_d, after_d)` where `sides[d − 1]` holds the fused
/// scores of the memories `d` steps before and after in the same session (`None`: no such
/// memory, counted as 0). Only the first `reach` entries of `sides` count.
pub fn propagate(own: f32, sides: &[(Option<f32>, Option<f32>)], p: &RankParams) -> f32 {
    let mut gain = 0.0;
    let mut weight = 1.0;
    for &(before, after) in sides.iter().take(p.propagation_reach) {
        gain += weight * before.unwrap_or(0.0).max(after.unwrap_or(0.0));
        weight *= p.propagation_decay;
    }
    own + p.propagation * gain
}

/// The names the query mentions among those `known` accepts (given in lower case): words written
/// with a capital initial, a possessive `'s` dropped, in order, without repeats.
pub fn named_entities(query: &str, known: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, word) in text::word_spans(query) {
        if !word.chars().next().is_some_and(char::is_uppercase) {
            continue;
        }
        let base = word
            .strip_suffix("'s")
            .or_else(|| word.strip_suffix("’s"))
            .unwrap_or(word);
        let name = base.to_lowercase();
        if known(&name) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The speaker of a memory written as `Name: text` (one to three capitalised words, at most 40
/// bytes, before the first colon), in lower case.
pub fn speaker(content: &str) -> Option<String> {
    let (head, _) = content.split_once(':')?;
    let head = head.trim();
    if head.is_empty() || head.len() > 40 {
        return None;
    }
    let words: Vec<&str> = head.split_whitespace().collect();
    let named = words.len() <= 3
        && words.iter().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars()
                    .all(|c| c.is_alphanumeric() || "'’.-_".contains(c))
        });
    named.then(|| head.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_and_z_scores() {
        let m = Moments::of([1.0, 2.0, 3.0]);
        assert!((m.mean - 2.0).abs() < 1e-6);
        assert!((m.z(3.0) - 1.2247).abs() < 1e-3);
        let s = Moments::of_sparse([3.0], 3);
        assert!((s.mean - 1.0).abs() < 1e-6);
        assert!(s.z(3.0) > s.z(0.0));
        assert_eq!(Moments::of([5.0, 5.0]).z(5.0), 0.0);
        assert_eq!(Moments::of([]).z(1.0), 0.0);
    }

    #[test]
    fn fusion_weights_and_min_max() {
        assert!((fuse(1.0, 0.0, 0.4) - 0.4).abs() < 1e-6);
        assert!((fuse(0.0, 1.0, 0.4) - 0.6).abs() < 1e-6);
        let mut v = [2.0, 4.0, 3.0];
        min_max(&mut v);
        assert_eq!(v, [0.0, 1.0, 0.5]);
        let mut same = [0.3, 0.3];
        min_max(&mut same);
        assert_eq!(same, [1.0, 1.0]);
    }

    #[test]
    fn propagation_takes_the_better_side_with_decay() {
        let p = RankParams {
            propagation: 0.7,
            ..RankParams::default()
        };
        let sides = [(Some(0.2), Some(1.0)), (None, Some(0.4)), (Some(0.8), None)];
        // 0.7 × (1.0 + 0.5 × 0.4 + 0.25 × 0.8) = 0.98
        assert!((propagate(0.1, &sides, &p) - 1.08).abs() < 1e-5);
        let off = RankParams {
            propagation: 0.0,
            ..p
        };
        assert_eq!(propagate(0.1, &sides, &off), 0.1);
        let near = RankParams {
            propagation_reach: 1,
            ..p
        };
        assert!((propagate(0.0, &sides, &near) - 0.7).abs() < 1e-6);
    }

    #[test]
    fn entities_named_by_the_query() {
        let known = |n: &str| n == "caroline" || n == "melanie";
        assert_eq!(
            named_entities("When did Caroline's friend meet Melanie?", known),
            vec!["caroline", "melanie"]
        );
        assert!(named_entities("when did caroline go", known).is_empty());
        assert_eq!(named_entities("Caroline and Caroline", known).len(), 1);
    }

    #[test]
    fn speakers_are_short_capitalised_prefixes() {
        assert_eq!(speaker("Caroline: hi there").as_deref(), Some("caroline"));
        assert_eq!(speaker("Dr. Who: yes").as_deref(), Some("dr. who"));
        assert_eq!(speaker("note: lowercase"), None);
        assert_eq!(speaker("We decided this: a thing"), None);
        assert_eq!(speaker("no colon at all"), None);
    }
}
