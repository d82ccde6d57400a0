//! Search-time clustering: near-duplicate candidates collapse to one representative.
//!
//! Greedy single-link in input order (catalogue §4.4): each candidate not yet placed starts a
//! cluster, which absorbs every later unplaced candidate whose cosine with any member is at
//! least the threshold (reference 0.88). Deliberate differences from the reference:
//! - **The representative is chosen by score.** The reference clustered before scoring, so
//!   every score was still 0 and the representative was always the first member. Here the
//!   caller passes the scores (relevance, or relevance × density) and the member with the
//!   highest one wins, the first on ties.
//! - **Links are followed transitively.** The reference made one pass over later candidates,
//!   so a candidate similar only to a member added after it was missed and started its own
//!   cluster; here the cluster grows until no unplaced candidate links to any member.
//!
//! A missing or NaN score counts as 0; mismatched, empty or zero vectors are similar to
//! nothing (cosine 0), so they stay singletons unless the threshold is ≤ 0.

use crate::score::cosine;

/// One group of near-duplicate candidates (indices into the input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The member that stands for the cluster: the highest score, the first on ties.
    pub representative: usize,
    /// All members in ascending index order (the representative included).
    pub members: Vec<usize>,
}

/// The reference's clustering threshold (cosine).
pub const DEFAULT_THRESHOLD: f32 = 0.88;

/// Clusters `vectors` at cosine ≥ `threshold`; clusters come in the order of their first member.
/// A NaN threshold links nothing.
pub fn cluster(vectors: &[&[f32]], scores: &[f32], threshold: f32) -> Vec<Cluster> {
    let n = vectors.len();
    let score = |i: usize| {
        scores
            .get(i)
            .copied()
            .filter(|s| !s.is_nan())
            .unwrap_or(0.0)
    };
    let mut placed = vec![false; n];
    let mut out = Vec::new();
    for seed in 0..n {
        if placed[seed] {
            continue;
        }
        placed[seed] = true;
        let mut members = vec![seed];
        let mut next = 0;
        while next < members.len() {
            let m = members[next];
            next += 1;
            for j in seed + 1..n {
                if !placed[j] && cosine(vectors[m], vectors[j]) >= threshold {
                    placed[j] = true;
                    members.push(j);
                }
            }
        }
        members.sort_unstable();
        let representative =
            members.iter().copied().fold(
                seed,
                |best, i| if score(i) > score(best) { i } else { best },
            );
        out.push(Cluster {
            representative,
            members,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_three_clusters() {
        let v: [&[f32]; 4] = [
            &[1.0, 0.0, 0.0, 0.0],
            &[0.99, 0.01, 0.0, 0.0],
            &[0.0, 1.0, 0.0, 0.0],
            &[0.0, 0.0, 1.0, 0.0],
        ];
        let c = cluster(&v, &[0.5, 0.9, 0.4, 0.3], 0.95);
        assert_eq!(c.len(), 3);
        assert_eq!(
            c[0],
            Cluster {
                representative: 1,
                members: vec![0, 1]
            }
        );
        assert_eq!(
            c[1],
            Cluster {
                representative: 2,
                members: vec![2]
            }
        );
        assert_eq!(
            c[2],
            Cluster {
                representative: 3,
                members: vec![3]
            }
        );
    }

    #[test]
    fn representative_first_on_ties_and_nan() {
        let v: [&[f32]; 3] = [&[1.0, 0.0], &[1.0, 0.001], &[1.0, 0.002]];
        assert_eq!(cluster(&v, &[0.5, 0.5, 0.5], 0.9)[0].representative, 0);
        assert_eq!(cluster(&v, &[f32::NAN, 0.1], 0.9)[0].representative, 1);
        assert_eq!(
            cluster(&v, &[], 0.9)[0],
            Cluster {
                representative: 0,
                members: vec![0, 1, 2]
            }
        );
    }

    #[test]
    fn links_are_transitive() {
        // 0 ~ 2 and 2 ~ 1, but 0 !~ 1: one pass in order would leave 1 alone.
        let a = 0.0f32;
        let b = 0.5f32;
        let c = 0.25f32;
        let v: Vec<Vec<f32>> = [a, b, c].iter().map(|t| vec![t.cos(), t.sin()]).collect();
        let refs: Vec<&[f32]> = v.iter().map(Vec::as_slice).collect();
        let th = 0.25f32.cos() - 1e-4;
        assert!(cosine(refs[0], refs[1]) < th);
        let c = cluster(&refs, &[0.1, 0.2, 0.3], th);
        assert_eq!(
            c,
            vec![Cluster {
                representative: 2,
                members: vec![0, 1, 2]
            }]
        );
    }

    #[test]
    fn degenerate_inputs() {
        assert!(cluster(&[], &[], 0.88).is_empty());
        let v: [&[f32]; 3] = [&[0.0, 0.0], &[1.0], &[]];
        assert_eq!(cluster(&v, &[1.0], 0.88).len(), 3);
        let w: [&[f32]; 2] = [&[1.0, 0.0], &[1.0, 0.0]];
        assert_eq!(cluster(&w, &[1.0, 1.0], f32::NAN).len(), 2);
    }
}
