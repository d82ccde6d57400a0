//! Reciprocal Rank Fusion of the dense and lexical candidate lists.
//!
//! `score(id) = Σ over lists containing id of 1/(k + rank)`, ranks from 1, as in the
//! reference.
//! Deliberate differences from the reference:
//! - **Total, deterministic order.** The reference sorted by score only and left ties to map
//!   iteration order. Here ties go to the id present in more lists, then to the best single
//!   rank, then to the smaller id, so the same inputs always give the same output.
//! - An id repeated inside one list counts once, at its best (first) rank, so a back-end
//!   returning duplicates cannot inflate a candidate.
//! - `k` that is not a positive finite number falls back to [`DEFAULT_K`] (the reference did
//!   this for `k ≤ 0` in its config loader).

use crate::memory::MemoryId;
use std::collections::HashMap;

/// The reference's RRF constant `k`.
pub const DEFAULT_K: f64 = 60.0;

#[derive(Clone, Copy)]
struct Acc {
    score: f64,
    lists: usize,
    best_rank: usize,
    /// The last list that contributed, to skip repeats of an id within one list.
    last_list: usize,
}

/// `k` when it is a positive finite number, else [`DEFAULT_K`].
fn effective_k(k: f64) -> f64 {
    if k.is_finite() && k > 0.0 {
        k
    } else {
        DEFAULT_K
    }
}

/// An RRF score as a relevance in (0, 1]: the score over the best score possible with `lists`
/// lists (rank 1 in every one). Non-finite or negative inputs give 0.
pub fn rrf_relevance(score: f64, lists: usize, k: f64) -> f32 {
    let k = effective_k(k);
    let best = lists.max(1) as f64 / (k + 1.0);
    let r = score / best;
    if r.is_finite() {
        r.clamp(0.0, 1.0) as f32
    } else {
        0.0
    }
}

/// Fuses ranked lists of ids with RRF; returns every id once with its fused score, best first
/// (ties: more lists, then better best rank, then smaller id).
pub fn rrf(lists: &[&[MemoryId]], k: f64) -> Vec<(MemoryId, f64)> {
    let k = effective_k(k);
    let mut acc: HashMap<MemoryId, Acc> = HashMap::new();
    for (list_no, list) in lists.iter().enumerate() {
        for (pos, id) in list.iter().enumerate() {
            let rank = pos + 1;
            let e = acc.entry(*id).or_insert(Acc {
                score: 0.0,
                lists: 0,
                best_rank: usize::MAX,
                last_list: usize::MAX,
            });
            if e.last_list == list_no {
                continue;
            }
            e.score += 1.0 / (k + rank as f64);
            e.lists += 1;
            e.best_rank = e.best_rank.min(rank);
            e.last_list = list_no;
        }
    }
    let mut out: Vec<(MemoryId, Acc)> = acc.into_iter().collect();
    out.sort_by(|(ia, a), (ib, b)| {
        b.score
            .total_cmp(&a.score)
            .then(b.lists.cmp(&a.lists))
            .then(a.best_rank.cmp(&b.best_rank))
            .then(ia.cmp(ib))
    });
    out.into_iter().map(|(id, a)| (id, a.score)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn rrf_relevance_is_one_for_first_everywhere_and_falls_with_rank() {
        let k = DEFAULT_K;
        assert!((rrf_relevance(2.0 / (k + 1.0), 2, k) - 1.0).abs() < 1e-6);
        assert!((rrf_relevance(1.0 / (k + 1.0), 2, k) - 0.5).abs() < 1e-6);
        assert!(rrf_relevance(1.0 / (k + 10.0), 2, k) < rrf_relevance(1.0 / (k + 2.0), 2, k));
        assert_eq!(rrf_relevance(f64::NAN, 2, k), 0.0);
        assert_eq!(rrf_relevance(-1.0, 2, k), 0.0);
        assert_eq!(rrf_relevance(9.0, 2, k), 1.0);
    }

    fn ids(n: u128) -> Vec<MemoryId> {
        (1..=n).map(Uuid::from_u128).collect()
    }

    #[test]
    fn fixture_dense_and_lexical() {
        let v = ids(4);
        let dense = [v[0], v[1], v[2]];
        let lexical = [v[1], v[3], v[0]];
        let fused = rrf(&[&dense, &lexical], DEFAULT_K);
        assert_eq!(fused.len(), 4);
        let top: Vec<MemoryId> = fused[..2].iter().map(|(id, _)| *id).collect();
        assert!(top.contains(&v[0]) && top.contains(&v[1]), "{fused:?}");
        // v2: 1/62 + 1/61 beats v1: 1/61 + 1/63.
        assert_eq!(fused[0].0, v[1]);
        assert!((fused[0].1 - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
    }

    #[test]
    fn ties_are_deterministic() {
        let v = ids(4);
        // v1 and v3 both rank 1 in one list; v2 and v4 both rank 2.
        let a = [v[2], v[3]];
        let b = [v[0], v[1]];
        let fused = rrf(&[&a, &b], 60.0);
        let order: Vec<MemoryId> = fused.iter().map(|(id, _)| *id).collect();
        assert_eq!(order, vec![v[0], v[2], v[1], v[3]]);
        assert_eq!(rrf(&[&b, &a], 60.0), fused);
    }

    #[test]
    fn repeats_and_bad_k() {
        let v = ids(2);
        let a = [v[0], v[0], v[1]];
        let fused = rrf(&[&a], f64::NAN);
        assert_eq!(fused.len(), 2);
        assert!((fused[0].1 - 1.0 / 61.0).abs() < 1e-12);
        assert!((fused[1].1 - 1.0 / 63.0).abs() < 1e-12);
        assert!(rrf(&[], 60.0).is_empty());
        assert_eq!(rrf(&[&a], -1.0), fused);
    }
}
