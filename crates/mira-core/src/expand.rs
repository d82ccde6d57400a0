//! Query expansion: the textual variants of a recall query, whose embeddings are averaged.
//!
//! The variants are, in order (as the reference builds them): the trimmed query; its cleaned form when it
//! differs; the cleaned words without stop words when that removes some but not all; the 3
//! longest words when there are more than 3; the list is cut to `num_variants + 1`.
//! Deliberate differences from the reference:
//! - Cleaning is [`text::clean`], Unicode-aware: "règles de langue" keeps "règles" (the
//!   reference's ASCII-only `[^\w\s]` produced "r gles de langue", and accented stop words
//!   could never match).
//! - The longest words are ranked by character count, ties in query order (the reference used
//!   byte length with an unstable sort, which favoured accented words and was not stable).
//! - A variant equal to any earlier one is not added again (it would weigh twice in the mean).
//! - [`average`] re-normalises the mean to unit length. The reference's mean was not
//!   normalised, so the scale of every cosine depended on how far apart the variants were.

use crate::text;

/// The reference's number of extra variants (`recall.query_expansion.num_variants`).
pub const DEFAULT_NUM_VARIANTS: usize = 3;

/// How many of the longest words make up the keyword variant.
const LONGEST_WORDS: usize = 3;

/// The variants of `query`: the trimmed original first, then at most `num_variants` more.
pub fn expand_query(query: &str, num_variants: usize) -> Vec<String> {
    let original = query.trim();
    let mut variants = vec![original.to_string()];
    if original.is_empty() {
        return variants;
    }
    let mut add = |v: String| {
        if !v.is_empty() && !variants.contains(&v) {
            variants.push(v);
        }
    };
    let cleaned = text::clean(original);
    let words: Vec<&str> = cleaned.split(' ').filter(|w| !w.is_empty()).collect();
    add(cleaned.clone());
    if words.len() > 1 {
        let content: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| !text::is_stop_word(w))
            .collect();
        if !content.is_empty() && content.len() < words.len() {
            add(content.join(" "));
        }
    }
    if words.len() > LONGEST_WORDS {
        let mut by_length = words.clone();
        by_length.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
        add(by_length[..LONGEST_WORDS].join(" "));
    }
    variants.truncate(num_variants.saturating_add(1));
    variants
}

/// The mean of `vectors`, re-normalised to unit length. The dimension is that of the first
/// non-empty all-finite vector; vectors of another length or with NaN/infinite components are
/// skipped. No usable vector gives an empty vector; a zero mean gives a zero vector.
pub fn average(vectors: &[Vec<f32>]) -> Vec<f32> {
    let usable = |v: &&Vec<f32>| !v.is_empty() && v.iter().all(|x| x.is_finite());
    let Some(dim) = vectors.iter().find(usable).map(Vec::len) else {
        return Vec::new();
    };
    let mut sum = vec![0f64; dim];
    for v in vectors.iter().filter(usable).filter(|v| v.len() == dim) {
        for (s, &x) in sum.iter_mut().zip(v) {
            *s += f64::from(x);
        }
    }
    let norm = sum.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        sum.iter().map(|x| (x / norm) as f32).collect()
    } else {
        vec![0.0; dim]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_fixtures() {
        assert_eq!(expand_query("hello world", 2), vec!["hello world"]);
        assert_eq!(
            expand_query("The system is running", 3),
            vec![
                "The system is running",
                "the system is running",
                "system running",
                "running system the"
            ]
        );
        assert_eq!(expand_query("", 3), vec![""]);
        assert_eq!(expand_query("   ", 3), vec![""]);
        assert_eq!(expand_query("short", 0), vec!["short"]);
        assert_eq!(
            expand_query("The system is running", 1),
            vec!["The system is running", "the system is running"]
        );
    }

    #[test]
    fn cleaning_is_unicode_aware() {
        // Already clean, so the first extra variant is the one without "de".
        assert_eq!(
            expand_query("règles de langue", 3),
            vec!["règles de langue", "règles langue"]
        );
        let v = expand_query("Où est la Base de Données ?", 3);
        assert_eq!(v[1], "où est la base de données");
        assert!(v.contains(&"base données".to_string()), "{v:?}");
    }

    #[test]
    fn only_stop_words_or_punctuation() {
        assert_eq!(expand_query("the is a", 3), vec!["the is a"]);
        assert_eq!(expand_query("?!", 3), vec!["?!"]);
    }

    #[test]
    fn average_is_unit_length() {
        let avg = average(&[vec![1.0, 0.0], vec![0.0, 1.0]]);
        let s = std::f32::consts::FRAC_1_SQRT_2;
        assert!(
            (avg[0] - s).abs() < 1e-6 && (avg[1] - s).abs() < 1e-6,
            "{avg:?}"
        );
        let single = average(&[vec![3.0, 4.0]]);
        assert!((single[0] - 0.6).abs() < 1e-6 && (single[1] - 0.8).abs() < 1e-6);
    }

    #[test]
    fn average_skips_bad_vectors() {
        assert!(average(&[]).is_empty());
        assert!(average(&[vec![], vec![f32::NAN]]).is_empty());
        assert_eq!(
            average(&[vec![f32::NAN, 1.0], vec![0.0, 2.0], vec![1.0]]),
            vec![0.0, 1.0]
        );
        assert_eq!(average(&[vec![1.0, 0.0], vec![-1.0, 0.0]]), vec![0.0, 0.0]);
    }
}
