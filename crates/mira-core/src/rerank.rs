//! Optional heuristic reranker: lexical agreement between the query and a candidate.
//!
//! `score = 0.5 × Jaccard(token sets) + 0.3 × exact phrase + 0.2 × length balance`, capped at 1
//! (catalogue §4.8); the new relevance is [`blend`]ed 0.7 / 0.3 with the old one. Tokens are the
//! cleaned words of at least 2 characters that are not stop words. Deliberate differences from
//! the reference:
//! - Cleaning is [`text::clean`] (Unicode-aware): accented words are whole tokens.
//! - The phrase test compares the cleaned texts on word boundaries ("data base" does not match
//!   inside "database base"; punctuation and case in either text do not matter). The reference
//!   searched the raw lower-cased query inside the raw lower-cased candidate.
//! - Lengths are counted in characters of the trimmed texts, not bytes.
//!
//! Kept: a query without tokens scores 0.5 for every candidate; a candidate without tokens 0.

use crate::text;
use std::collections::HashSet;

/// The reference's number of candidates reranked (`recall.reranker.top_k`).
pub const DEFAULT_TOP_K: usize = 30;
/// Weight of the old relevance in [`blend`].
pub const RELEVANCE_WEIGHT: f32 = 0.7;
/// Weight of the rerank score in [`blend`].
pub const RERANK_WEIGHT: f32 = 0.3;

const JACCARD_WEIGHT: f32 = 0.5;
const PHRASE_BONUS: f32 = 0.3;
const LENGTH_WEIGHT: f32 = 0.2;
const MIN_TOKEN_CHARS: usize = 2;

fn tokens(cleaned: &str) -> HashSet<&str> {
    cleaned
        .split(' ')
        .filter(|w| w.chars().count() >= MIN_TOKEN_CHARS && !text::is_stop_word(w))
        .collect()
}

/// The heuristic agreement of `candidate` with `query`, in [0, 1].
pub fn rerank_score(query: &str, candidate: &str) -> f32 {
    let q_clean = text::clean(query);
    let q = tokens(&q_clean);
    if q.is_empty() {
        return 0.5;
    }
    let c_clean = text::clean(candidate);
    let c = tokens(&c_clean);
    if c.is_empty() {
        return 0.0;
    }
    let common = q.intersection(&c).count();
    let jaccard = common as f32 / (q.len() + c.len() - common) as f32;
    let phrase = if format!(" {c_clean} ").contains(&format!(" {q_clean} ")) {
        PHRASE_BONUS
    } else {
        0.0
    };
    let (lq, lc) = (
        query.trim().chars().count() as f32,
        candidate.trim().chars().count() as f32,
    );
    let length = (lq / lc).min(lc / lq);
    (JACCARD_WEIGHT * jaccard + phrase + LENGTH_WEIGHT * length).min(1.0)
}

/// The reranked relevance `0.7 × relevance + 0.3 × score`, in [0, 1] (NaN inputs count as 0).
pub fn blend(relevance: f32, score: f32) -> f32 {
    let clean = |x: f32| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    (RELEVANCE_WEIGHT * clean(relevance) + RERANK_WEIGHT * clean(score)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_fixture() {
        let q = "database connection";
        let a = rerank_score(q, "How to establish a database connection");
        let b = rerank_score(q, "Connection string for the database");
        let w = rerank_score(q, "The weather is sunny today");
        assert!(a > w && b > w, "{a} {b} {w}");
        assert!(a > b, "the exact phrase wins: {a} {b}");
        for s in [a, b, w] {
            assert!((0.0..=1.0).contains(&s));
        }
    }

    #[test]
    fn empty_query_and_candidate() {
        assert_eq!(rerank_score("", "anything at all"), 0.5);
        assert_eq!(rerank_score("the a", "anything at all"), 0.5);
        assert_eq!(rerank_score("database", ""), 0.0);
        assert_eq!(rerank_score("database", "?!"), 0.0);
    }

    #[test]
    fn identical_texts_score_one_and_phrase_respects_words() {
        assert_eq!(
            rerank_score("Database connection", "DATABASE CONNECTION"),
            1.0
        );
        // Jaccard 1/3 and length 9/13, but no phrase bonus: "data base" is not a word run here.
        let split = rerank_score("data base", "database base");
        assert!(
            (split - (0.5 / 3.0 + 0.2 * 9.0 / 13.0)).abs() < 1e-6,
            "{split}"
        );
        assert!(
            rerank_score("règles", "Les règles du jeu") > rerank_score("règles", "Les gles du jeu")
        );
    }

    #[test]
    fn blend_weights_and_caps() {
        assert!((blend(0.5, 1.0) - 0.65).abs() < 1e-6);
        assert_eq!(blend(1.0, 1.0), 1.0);
        assert_eq!(blend(2.0, 2.0), 1.0);
        assert!((blend(f32::NAN, 1.0) - 0.3).abs() < 1e-6);
    }
}
