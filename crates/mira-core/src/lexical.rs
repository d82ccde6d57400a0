//! Lexical retrieval: the analyzer (words, English stop words, Porter2 stemming) and an in-memory
//! BM25 inverted index whose IDF is computed over the searched scope.
//!
//! Measured on the LoCoMo dev conversations (see docs/benchmarks.md, "Recall quality"):
//! stemming and stop words dropped from queries helped; length normalisation did not (evidence
//! turns tend to be long), so [`Bm25Params::default`] has `b = 0`. SQLite's FTS5 `bm25()` has no
//! `b` parameter and joins every match to its row to filter a scope, which is why recall keeps
//! its own index.

use crate::text;
use rust_stemmers::{Algorithm, Stemmer};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::LazyLock;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Words whose term a thread remembers at most (then it starts afresh).
const REMEMBERED_WORDS: usize = 1 << 16;

thread_local! {
    /// The term of each word this thread has met (`None`: a stop word). Words repeat, and
    /// stemming them was most of the time indexing a store's texts took (~0.4 s of 2.3 s when
    /// 100,000 memories are read at open).
    static TERMS: RefCell<HashMap<String, Option<String>>> = RefCell::new(HashMap::new());
}

/// The term of one cleaned word: its Porter2 stem, `None` for a stop word.
fn term(word: &str) -> Option<String> {
    TERMS.with_borrow_mut(|known| {
        if let Some(t) = known.get(word) {
            return t.clone();
        }
        let t = (!text::is_english_stop_word(word)).then(|| STEMMER.stem(word).into_owned());
        if known.len() >= REMEMBERED_WORDS {
            known.clear();
        }
        known.insert(word.to_owned(), t.clone());
        t
    })
}

/// The indexed terms of `text`: lower-cased words (letters and digits), English stop words
/// dropped, each reduced to its Porter2 stem. Repeats are kept (they are term frequencies).
pub fn terms(text: &str) -> Vec<String> {
    text::clean(text)
        .split(' ')
        .filter(|w| !w.is_empty())
        .filter_map(term)
        .collect()
}

/// The terms of a query: [`terms`] without repeats, in order of first appearance.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    terms(text)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// The BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation (≥ 0).
    pub k1: f32,
    /// Length normalisation in [0, 1] (0: none).
    pub b: f32,
}

impl Default for Bm25Params {
    /// `k1 = 0.9`, `b = 0` (recall@10 was flat for k1 in 0.6–1.2; b = 0.75 lost 0.02–0.03).
    fn default() -> Self {
        Bm25Params { k1: 0.9, b: 0.0 }
    }
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    tf: u32,
}

/// A document of the index: its distinct term ids and its length in terms.
#[derive(Debug, Clone)]
struct Doc {
    terms: Vec<u32>,
    len: u32,
}

/// An inverted index of documents identified by small integer slots (the caller's row numbers).
#[derive(Debug, Default, Clone)]
pub struct LexicalIndex {
    vocab: HashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    /// Per slot: the document, `None` when the slot is free.
    docs: Vec<Option<Doc>>,
    live: usize,
    total_len: u64,
}

impl LexicalIndex {
    /// An empty index.
    pub fn new() -> Self {
        LexicalIndex::default()
    }

    /// Number of documents indexed.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Whether `slot` holds a document.
    pub fn contains(&self, slot: u32) -> bool {
        self.docs.get(slot as usize).is_some_and(Option::is_some)
    }

    /// The slots of the documents containing `term` (an analysed term, see [`terms`]).
    pub fn slots_with(&self, term: &str) -> Vec<u32> {
        self.vocab
            .get(term)
            .and_then(|&id| self.postings.get(id as usize))
            .map(|p| p.iter().map(|p| p.slot).collect())
            .unwrap_or_default()
    }

    /// Indexes the document at `slot` with its [`terms`], replacing what the slot held.
    pub fn insert(&mut self, slot: u32, terms: &[String]) {
        self.remove(slot);
        let mut tf: HashMap<u32, u32> = HashMap::new();
        for t in terms {
            let next = self.postings.len() as u32;
            let id = *self.vocab.entry(t.as_str().into()).or_insert(next);
            if id == next {
                self.postings.push(Vec::new());
            }
            *tf.entry(id).or_default() += 1;
        }
        let s = slot as usize;
        if self.docs.len() <= s {
            self.docs.resize(s + 1, None);
        }
        let mut ids: Vec<u32> = tf.keys().copied().collect();
        ids.sort_unstable();
        for &id in &ids {
            self.postings[id as usize].push(Posting { slot, tf: tf[&id] });
        }
        self.docs[s] = Some(Doc {
            terms: ids,
            len: terms.len() as u32,
        });
        self.total_len += terms.len() as u64;
        self.live += 1;
    }

    /// Removes the document at `slot` (nothing if the slot is free).
    pub fn remove(&mut self, slot: u32) {
        let Some(doc) = self.docs.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        for id in doc.terms {
            let list = &mut self.postings[id as usize];
            if let Some(pos) = list.iter().position(|p| p.slot == slot) {
                list.swap_remove(pos);
            }
        }
        self.total_len -= doc.len as u64;
        self.live -= 1;
    }

    /// The documents that `in_scope` accepts and that share a term with `query` (from
    /// [`query_terms`]), with their BM25 scores (unsorted), and how much of the query the best
    /// of them covers. IDF counts documents within the scope, whose size is `scope_size`; the
    /// average length is that of the whole index (it only matters when `b > 0`).
    pub fn score(
        &self,
        query: &[String],
        params: Bm25Params,
        scope_size: usize,
        in_scope: impl Fn(u32) -> bool,
    ) -> LexicalScores {
        // Per slot: (BM25, IDF of the query terms it holds), NaN until matched; the matched
        // slots in order of first match. A dense table, not a map, as common terms match a
        // large share of the store.
        let mut acc: Vec<(f32, f32)> = vec![(f32::NAN, 0.0); self.docs.len()];
        let mut matched: Vec<u32> = Vec::new();
        let n = scope_size as f32;
        let avg_len = if self.live == 0 {
            1.0
        } else {
            (self.total_len as f32 / self.live as f32).max(1.0)
        };
        let k1 = params.k1.max(0.0);
        let b = params.b.clamp(0.0, 1.0);
        let idf = |df: f32| (1.0 + (n - df + 0.5).max(0.0) / (df + 0.5)).ln();
        // The query's information: every term's IDF, a term the scope lacks counting as rarest.
        let mut information = 0.0;
        let mut matching: Vec<Posting> = Vec::new();
        for term in query {
            matching.clear();
            if let Some(&id) = self.vocab.get(term.as_str()) {
                matching.extend(
                    self.postings[id as usize]
                        .iter()
                        .filter(|p| in_scope(p.slot)),
                );
            }
            let idf = idf(matching.len() as f32);
            information += idf;
            for p in &matching {
                let tf = p.tf as f32;
                let len = self.docs[p.slot as usize].as_ref().map_or(0, |d| d.len) as f32;
                let norm = k1 * (1.0 - b + b * len / avg_len);
                let gain = idf * tf * (k1 + 1.0) / (tf + norm);
                let (score, held) = &mut acc[p.slot as usize];
                if score.is_nan() {
                    *score = gain;
                    matched.push(p.slot);
                } else {
                    *score += gain;
                }
                *held += idf;
            }
        }
        let best = matched
            .iter()
            .map(|&s| acc[s as usize].1)
            .fold(0.0, f32::max);
        LexicalScores {
            hits: matched
                .into_iter()
                .map(|s| (s, acc[s as usize].0))
                .collect(),
            coverage: if information > 0.0 {
                (best / information).clamp(0.0, 1.0)
            } else {
                0.0
            },
        }
    }
}

/// What [`LexicalIndex::score`] finds for a query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalScores {
    /// `(slot, BM25)` of every document in scope sharing a term with the query, unsorted.
    pub hits: Vec<(u32, f32)>,
    /// The largest share of the query's information (the sum of its terms' IDF, a term the
    /// scope lacks counting as the rarest) that one document holds, in [0, 1]: 1 when one
    /// document holds every term of the query, 0 when none holds any. An absolute measure of
    /// how well the words of the query are matched, whatever the size of the scope.
    pub coverage: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(docs: &[&str]) -> LexicalIndex {
        let mut idx = LexicalIndex::new();
        for (i, d) in docs.iter().enumerate() {
            idx.insert(i as u32, &terms(d));
        }
        idx
    }

    fn ranked(idx: &LexicalIndex, q: &str, scope: usize) -> Vec<u32> {
        let mut s = idx
            .score(&query_terms(q), Bm25Params::default(), scope, |_| true)
            .hits;
        s.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        s.into_iter().map(|(slot, _)| slot).collect()
    }

    #[test]
    fn analyzer_stems_and_drops_stop_words() {
        assert_eq!(terms("The runners were running!"), vec!["runner", "run"]);
        assert_eq!(query_terms("running runs run"), vec!["run"]);
        assert!(terms("the and of").is_empty());
        assert_eq!(terms("8 May 2023"), vec!["8", "may", "2023"]);
    }

    #[test]
    fn remembered_terms_are_the_terms() {
        let text = "The runners were running to the Running club";
        let first = terms(text);
        assert_eq!(first, vec!["runner", "run", "run", "club"]);
        assert_eq!(terms(text), first);
        // More distinct words than a thread remembers: it starts afresh, and stays right.
        for i in 0..REMEMBERED_WORDS + 10 {
            assert_eq!(
                term(&format!("w{i}")).as_deref(),
                Some(format!("w{i}").as_str())
            );
        }
        assert_eq!(terms(text), first);
        assert_eq!(term("the"), None);
    }

    #[test]
    fn rarer_terms_weigh_more_and_stems_match() {
        let idx = index(&[
            "Caroline went hiking in the mountains",
            "Caroline painted a sunset",
            "Melanie painted her kitchen",
        ]);
        assert_eq!(ranked(&idx, "who paints sunsets?", 3), vec![1, 2]);
        assert_eq!(ranked(&idx, "Caroline hiking", 3)[0], 0);
        assert!(ranked(&idx, "unrelated words", 3).is_empty());
    }

    #[test]
    fn scope_filters_and_sets_idf() {
        let idx = index(&["apple pie", "apple tart", "banana bread"]);
        let only = |s: u32| s != 1;
        let hits = idx
            .score(&query_terms("apple"), Bm25Params::default(), 2, only)
            .hits;
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 0);
    }

    #[test]
    fn removal_and_replacement_keep_postings_consistent() {
        let mut idx = index(&["red fox", "blue fox"]);
        idx.remove(0);
        assert_eq!(idx.len(), 1);
        assert!(!idx.contains(0));
        assert_eq!(ranked(&idx, "fox", 1), vec![1]);
        idx.insert(1, &terms("green frog"));
        assert_eq!(idx.len(), 1);
        assert!(ranked(&idx, "fox", 1).is_empty());
        assert_eq!(ranked(&idx, "frog", 1), vec![1]);
        idx.remove(7);
        assert_eq!(idx.len(), 1);
        assert!(idx.slots_with("frog").contains(&1));
        assert!(!idx.slots_with("fox").contains(&1));
        assert!(!idx.slots_with("fox").contains(&0));
    }

    #[test]
    fn length_normalisation_is_a_parameter() {
        let idx = index(&["cat", "cat dog bird fish tree"]);
        let q = query_terms("cat");
        let flat = idx
            .score(&q, Bm25Params { k1: 1.2, b: 0.0 }, 2, |_| true)
            .hits;
        let a = flat.iter().find(|h| h.0 == 0).unwrap().1;
        let b = flat.iter().find(|h| h.0 == 1).unwrap().1;
        assert!((a - b).abs() < 1e-6, "b = 0 ignores length");
        let norm = idx
            .score(&q, Bm25Params { k1: 1.2, b: 0.75 }, 2, |_| true)
            .hits;
        let a = norm.iter().find(|h| h.0 == 0).unwrap().1;
        let b = norm.iter().find(|h| h.0 == 1).unwrap().1;
        assert!(a > b, "b > 0 favours the short document");
    }

    #[test]
    fn coverage_is_the_best_share_of_the_query_information() {
        let idx = index(&[
            "Caroline went hiking in the mountains",
            "Caroline painted a sunset",
            "Melanie painted her kitchen",
            "the weather was fine",
        ]);
        let cover = |q: &str| {
            idx.score(&query_terms(q), Bm25Params::default(), 4, |_| true)
                .coverage
        };
        assert!((cover("Caroline painted a sunset") - 1.0).abs() < 1e-6);
        assert!((cover("sunset, Caroline") - 1.0).abs() < 1e-6);
        // Half the words in one memory: about half, the rarer word weighing more.
        let half = cover("Caroline kayaking");
        assert!((0.2..0.5).contains(&half), "{half}");
        assert_eq!(cover("quantum chromodynamics"), 0.0);
        assert_eq!(cover("the and of"), 0.0);
        // Out of scope, a document covers nothing.
        let scoped = idx.score(&query_terms("sunset"), Bm25Params::default(), 2, |s| s != 1);
        assert_eq!(scoped.coverage, 0.0);
        assert!(scoped.hits.is_empty());
    }
}
