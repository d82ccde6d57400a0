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
//!   `G(i) = F(i) + α · r(i) · Σ_{d=1..reach} γ^{d−1} · max(F(i−d), F(i+d))`
//!   (a missing neighbour counts 0; F is propagated, never G). A short turn of a chat means
//!   little without the turns around it, a long memory stands on its own: `r(i) = min(1, L /
//!   tokens(i))` ([`RankParams::propagation_tokens`] = L).
//! - **Entity**: when the query names exactly one known person, memories by or about them gain a
//!   fixed amount.
//! - **Sessions**: the best candidates are taken in turn, each further memory of a session
//!   already taken counting up to [`RankParams::session_diversity`] less ([`diversify`]), so
//!   that the first places reach more sessions (a question about several conversations needs
//!   each of them); below them the order is the relevance's. A memory bears the penalty in the
//!   share its exchange (it and its neighbours) stands alone, `1 − r`: a long answer repeats
//!   what another long answer of its session above it already brought, and so does the short
//!   question beside it, while a turn of short chat is the context its neighbours need (a chat
//!   of short turns is not reordered).
//!
//! [`Standout`] is the other side: how far the best candidate stands above the scope's
//! background, in words and in meaning, so that a recall with nothing relevant can say so.

use crate::lexical::Bm25Params;
use crate::text;
use std::collections::HashMap;
use std::hash::Hash;

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
    /// A memory of more tokens than this receives proportionally less from its neighbours
    /// (0: no limit).
    pub propagation_tokens: u32,
    /// What each further memory of a session already ranked higher loses at most, so that the
    /// best candidates reach more sessions (0: off); a memory loses it in the share its session
    /// gives ([`diversify`]; recall gives `1 − r` ([`receptivity`]) of its exchange's longest).
    pub session_diversity: f32,
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
            propagation_tokens: 128,
            session_diversity: 0.05,
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

/// `G = own + α · r · (1 − κ·own) · Σ_d γ^{d−1} · max(before_d, after_d)` where `sides[d − 1]`
/// holds the fused scores of the memories `d` steps before and after in the same session
/// (`None`: no such memory, counted as 0) and `r` is the [`receptivity`] of a memory of
/// `tokens` tokens. Only the first `reach` entries of `sides` count.
pub fn propagate(
    own: f32,
    sides: &[(Option<f32>, Option<f32>)],
    tokens: u32,
    p: &RankParams,
) -> f32 {
    let mut gain = 0.0;
    let mut weight = 1.0;
    for &(before, after) in sides.iter().take(p.propagation_reach) {
        gain += weight * before.unwrap_or(0.0).max(after.unwrap_or(0.0));
        weight *= p.propagation_decay;
    }
    own + p.propagation * receptivity(tokens, p) * gain
}

/// The share of its neighbours' scores a memory of `tokens` tokens receives: 1 up to
/// [`RankParams::propagation_tokens`], then inversely to its length.
pub fn receptivity(tokens: u32, p: &RankParams) -> f32 {
    match p.propagation_tokens {
        0 => 1.0,
        limit if tokens <= limit => 1.0,
        limit => limit as f32 / tokens as f32,
    }
}

/// Reorders the first `places` of `ranked` (best first, `(item, score)`) so that they reach more
/// sessions: those places are taken greedily by score less `penalty × share` for each item of
/// the same session taken before, where `session` gives an item's session and its share in
/// [0, 1] of the penalty (items without a session are never penalised); the rest follow in
/// their order. Each keeps the score it was taken with, just below the one before it when it
/// was higher, so that a sort by score keeps this order. Returns at most `k`.
pub fn diversify<T: Copy, S: Eq + Hash>(
    ranked: &[(T, f32)],
    session: impl Fn(T) -> Option<(S, f32)>,
    penalty: f32,
    places: usize,
    k: usize,
) -> Vec<(T, f32)> {
    if penalty <= 0.0 || ranked.len() <= 1 {
        return ranked.iter().take(k).copied().collect();
    }
    // Each item's session as a small number, and the memories taken of each.
    let mut numbers: HashMap<S, usize> = HashMap::new();
    let sessions: Vec<Option<(usize, f32)>> = ranked
        .iter()
        .map(|&(t, _)| {
            let next = numbers.len();
            session(t).map(|(s, share)| (*numbers.entry(s).or_insert(next), share.clamp(0.0, 1.0)))
        })
        .collect();
    let mut taken = vec![0u32; numbers.len()];
    let mut left: Vec<usize> = (0..ranked.len()).collect();
    let mut picked: Vec<(usize, f32)> = Vec::with_capacity(places.min(k));
    while picked.len() < places.min(k) && !left.is_empty() {
        // The first of the best (ties keep the input order).
        let (at, score) = left
            .iter()
            .enumerate()
            .fold((0, f32::NEG_INFINITY), |best, (at, &i)| {
                let lost = sessions[i].map_or(0.0, |(s, share)| share * taken[s] as f32);
                match ranked[i].1 - penalty * lost {
                    s if s > best.1 => (at, s),
                    _ => best,
                }
            });
        let i = left.remove(at);
        if let Some((s, _)) = sessions[i] {
            taken[s] += 1;
        }
        picked.push((i, score));
    }
    // Below the places, the relevance's order.
    let rest = left.into_iter().map(|i| (i, ranked[i].1));
    let mut last = f32::INFINITY;
    picked
        .into_iter()
        .chain(rest)
        .take(k)
        .map(|(i, score)| {
            last = score.min(last.next_down());
            (ranked[i].0, last)
        })
        .collect()
}

/// How far the best candidate of a recall stands above the scope's background, in meaning and
/// in words: what tells a query with something relevant in memory from one with nothing.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Standout {
    /// The best cosine above the mean cosine of the query with the scope, as a share of what
    /// separates that mean from a perfect match: `(best − mean) / (1 − mean)` (`None`: ranked
    /// without the model).
    pub dense: Option<f32>,
    /// The largest share of the query's information (the IDF of its words) one memory holds
    /// ([`crate::lexical::LexicalScores::coverage`]).
    pub lexical: f32,
}

/// The levels at or above which a [`Standout`] counts as something relevant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandoutLevels {
    /// Least [`Standout::dense`].
    pub dense: f32,
    /// Least [`Standout::lexical`].
    pub lexical: f32,
}

impl Standout {
    /// The standout of a best cosine `best` over a scope whose mean cosine with the query is
    /// `mean` (`None` without a query vector), with the lexical coverage `lexical`.
    pub fn new(best_and_mean: Option<(f32, f32)>, lexical: f32) -> Standout {
        Standout {
            dense: best_and_mean.map(|(best, mean)| {
                let room = (1.0 - mean).max(1e-6);
                ((best - mean) / room).clamp(-1.0, 1.0)
            }),
            lexical: lexical.clamp(0.0, 1.0),
        }
    }

    /// Whether something stands out: the words or the meaning of the best candidates reach
    /// their level.
    pub fn stands_out(&self, levels: &StandoutLevels) -> bool {
        self.lexical >= levels.lexical || self.dense.is_some_and(|d| d >= levels.dense)
    }
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
        assert!((propagate(0.1, &sides, 40, &p) - 1.08).abs() < 1e-5);
        let off = RankParams {
            propagation: 0.0,
            ..p
        };
        assert_eq!(propagate(0.1, &sides, 40, &off), 0.1);
        let near = RankParams {
            propagation_reach: 1,
            ..p
        };
        assert!((propagate(0.0, &sides, 40, &near) - 0.7).abs() < 1e-6);
    }

    #[test]
    fn long_memories_and_strong_matches_gain_less_from_neighbours() {
        let p = RankParams {
            propagation: 0.5,
            propagation_reach: 1,
            propagation_tokens: 100,
            ..RankParams::default()
        };
        let sides = [(Some(1.0), None)];
        assert!((propagate(0.2, &sides, 100, &p) - 0.7).abs() < 1e-6);
        // Four times the length: a quarter of the gain.
        assert!((propagate(0.2, &sides, 400, &p) - 0.325).abs() < 1e-6);
        assert_eq!(
            receptivity(
                400,
                &RankParams {
                    propagation_tokens: 0,
                    ..p
                }
            ),
            1.0
        );
    }

    #[test]
    fn diversity_lets_other_sessions_in_without_reordering_much() {
        let ranked = [(0, 1.0), (1, 0.95), (2, 0.94), (3, 0.93), (4, 0.5)];
        let session = |i: i32| (i != 4).then_some((if i == 3 { "b" } else { "a" }, 1.0));
        let order = |v: Vec<(i32, f32)>| v.iter().map(|x| x.0).collect::<Vec<_>>();
        // Off: the same order, cut at k.
        assert_eq!(order(diversify(&ranked, session, 0.0, 5, 3)), vec![0, 1, 2]);
        // 0.05 per memory of a session taken: session b's best comes second.
        let d = diversify(&ranked, session, 0.05, 5, 5);
        assert_eq!(order(d.clone()), vec![0, 3, 1, 2, 4]);
        assert!(d.windows(2).all(|w| w[0].1 > w[1].1), "{d:?}");
        // Only the first two places are reordered: below them, the relevance's order, with
        // scores strictly falling so that a sort keeps it.
        let d = diversify(&ranked, session, 0.05, 2, 5);
        assert_eq!(order(d.clone()), vec![0, 3, 1, 2, 4]);
        assert!(d.windows(2).all(|w| w[0].1 > w[1].1), "{d:?}");
        let d = diversify(&ranked, session, 0.05, 1, 5);
        assert_eq!(order(d), vec![0, 1, 2, 3, 4]);
        // A memory without a session is never penalised, and a large gap stays.
        let far = [(0, 1.0), (1, 0.2), (2, 0.19)];
        let d = diversify(&far, |i: i32| (i < 2).then_some((0, 1.0)), 0.05, 3, 3);
        assert_eq!(order(d), vec![0, 2, 1]);
        // Items that bear no share of the penalty (short turns) keep their order.
        let d = diversify(
            &ranked,
            |i: i32| (i != 4).then_some((i == 3, 0.0)),
            0.05,
            5,
            5,
        );
        assert_eq!(order(d), vec![0, 1, 2, 3, 4]);
        // A fifth of it: 0.95 − 0.01 still beats 0.93, the third of session a (0.94 − 0.02)
        // does not.
        let d = diversify(
            &ranked,
            |i: i32| (i != 4).then_some((i == 3, 0.2)),
            0.05,
            5,
            5,
        );
        assert_eq!(order(d), vec![0, 1, 3, 2, 4]);
    }

    #[test]
    fn standout_measures_how_far_the_best_is_above_the_background() {
        let levels = StandoutLevels {
            dense: 0.3,
            lexical: 0.4,
        };
        let strong = Standout::new(Some((0.65, 0.2)), 0.1);
        assert!((strong.dense.unwrap() - 0.5625).abs() < 1e-6);
        assert!(strong.stands_out(&levels));
        let words = Standout::new(Some((0.3, 0.2)), 0.7);
        assert!(words.stands_out(&levels));
        let nothing = Standout::new(Some((0.3, 0.2)), 0.2);
        assert!(!nothing.stands_out(&levels));
        // Without the model, words alone decide.
        assert!(!Standout::new(None, 0.2).stands_out(&levels));
        assert!(Standout::new(None, 0.5).stands_out(&levels));
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
