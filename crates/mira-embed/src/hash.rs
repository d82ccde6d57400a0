//! A deterministic stand-in embedder for tests.

use crate::{EmbedError, Embedder, DIMENSION};

/// Hashed bag-of-words embedder, for tests that need vectors but not their quality.
///
/// **It has no real semantics**: each lower-cased alphanumeric word is hashed
/// (FNV-1a, stable across runs and platforms) to one dimension and a sign, the
/// counts are summed and the vector is L2-normalised. Texts sharing words are
/// therefore similar, identical texts (up to case and punctuation) have cosine 1,
/// and texts with no common word are near-orthogonal. Synonyms, paraphrases and
/// word order are ignored. A text without any word embeds like a single sentinel
/// word, so every vector has unit length.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dimension: usize,
}

impl Default for HashEmbedder {
    /// A hash embedder with [`DIMENSION`] (384) dimensions, like the real model.
    fn default() -> Self {
        Self::new(DIMENSION)
    }
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl HashEmbedder {
    /// A hash embedder producing vectors of `dimension` (at least 1) entries.
    pub fn new(dimension: usize) -> Self {
        Self {
            dimension: dimension.max(1),
        }
    }

    /// Embeds one text (infallible).
    pub fn embed_text(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dimension];
        let mut add = |word: &str| {
            let h = fnv1a(word.as_bytes());
            // The bucket uses the low bits, the sign the top bit.
            let bucket = (h % self.dimension as u64) as usize;
            v[bucket] += if h >> 63 == 0 { 1.0 } else { -1.0 };
        };
        let mut any = false;
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            add(&word.to_lowercase());
            any = true;
        }
        if !any {
            add("\u{0}empty");
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        } else {
            // Every word cancelled out (e.g. equal counts of opposite signs in one bucket).
            v[0] = 1.0;
        }
        v
    }
}

impl Embedder for HashEmbedder {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_text(t)).collect())
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn model_name(&self) -> &str {
        "hash-bow"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosine;

    fn unit(v: &[f32]) -> bool {
        (v.iter().map(|x| x * x).sum::<f32>().sqrt() - 1.0).abs() < 1e-5
    }

    #[test]
    fn deterministic_and_unit_length() {
        let e = HashEmbedder::default();
        let a = e.embed("We migrated to PostgreSQL").unwrap();
        let b = HashEmbedder::default()
            .embed("We migrated to PostgreSQL")
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), DIMENSION);
        assert!(unit(&a));
        // Case and punctuation do not matter.
        let c = e.embed("we MIGRATED, to postgresql!").unwrap();
        assert!((cosine(&a, &c) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn stable_across_versions() {
        // Pin a few values so that a change of hashing is noticed (stored test
        // vectors would silently change otherwise).
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn shared_words_are_similar() {
        let e = HashEmbedder::default();
        let base = e.embed("the database migration to postgres").unwrap();
        let near = e.embed("postgres database migration plan").unwrap();
        let far = e.embed("lunch menu on friday").unwrap();
        assert!(cosine(&base, &near) > 0.5);
        assert!(cosine(&base, &near) > cosine(&base, &far));
    }

    #[test]
    fn empty_and_odd_inputs() {
        let e = HashEmbedder::new(0);
        assert_eq!(e.dimension(), 1);
        let e = HashEmbedder::new(16);
        for text in ["", "   ", "!!!", "\u{0}", "日本語 テキスト"] {
            let v = e.embed(text).unwrap();
            assert_eq!(v.len(), 16);
            assert!(unit(&v), "{text:?}");
        }
        assert_eq!(e.embed("").unwrap(), e.embed("?!").unwrap());
        assert_eq!(e.embed_batch(&[]).unwrap().len(), 0);
    }
}
