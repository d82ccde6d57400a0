//! LRU cache of embeddings keyed by text.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use lru::LruCache;

use crate::{EmbedError, Embedder};

/// Counters of a [`CachedEmbedder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Texts answered from the cache.
    pub hits: u64,
    /// Texts that had to be embedded.
    pub misses: u64,
    /// Entries currently cached.
    pub len: usize,
    /// Maximum number of entries (0: caching disabled).
    pub capacity: usize,
}

/// An [`Embedder`] that remembers the embeddings of the last `capacity` distinct
/// texts (least recently used evicted first).
///
/// Both [`embed`](Embedder::embed) (alias [`embed_cached`](Self::embed_cached)) and
/// [`embed_batch`](Embedder::embed_batch) consult and fill the cache; keys are the
/// exact texts. Wrap only the embedder used for queries (mira's recall, sized by
/// `embeddings.cache_size`) if bulk ingestion should not evict them. Thread-safe:
/// the LRU sits behind a `Mutex` that is never held while the inner embedder runs,
/// so two threads missing the same text may both compute it (same result).
pub struct CachedEmbedder<E> {
    inner: E,
    cache: Option<Mutex<LruCache<String, Vec<f32>>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<E: Embedder> CachedEmbedder<E> {
    /// Wraps `inner` with a cache of `capacity` texts; 0 disables caching (every
    /// call is a miss).
    pub fn new(inner: E, capacity: usize) -> Self {
        Self {
            inner,
            cache: NonZeroUsize::new(capacity).map(|c| Mutex::new(LruCache::new(c))),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The wrapped embedder.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// Embeds `text`, from the cache when it was embedded recently.
    pub fn embed_cached(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        if let Some(v) = self.lookup(text) {
            return Ok(v);
        }
        let v = self.inner.embed(text)?;
        self.insert(text, &v);
        Ok(v)
    }

    /// Hit and miss counts since creation, and the current size.
    pub fn stats(&self) -> CacheStats {
        let (len, capacity) = match &self.cache {
            Some(cache) => {
                let cache = lock(cache);
                (cache.len(), cache.cap().get())
            }
            None => (0, 0),
        };
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            len,
            capacity,
        }
    }

    /// Drops every cached embedding (counters are kept).
    pub fn clear(&self) {
        if let Some(cache) = &self.cache {
            lock(cache).clear();
        }
    }

    /// Returns the cached vector of `text`, counting a hit or a miss.
    fn lookup(&self, text: &str) -> Option<Vec<f32>> {
        let found = self
            .cache
            .as_ref()
            .and_then(|cache| lock(cache).get(text).cloned());
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    fn insert(&self, text: &str, vector: &[f32]) {
        if let Some(cache) = &self.cache {
            lock(cache).put(text.to_owned(), vector.to_vec());
        }
    }
}

/// Locks the cache, recovering from a poisoned mutex (the LRU stays consistent:
/// no user code runs while it is held).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<E: Embedder> Embedder for CachedEmbedder<E> {
    /// Embeds the texts not in the cache in one inner batch (each distinct text
    /// once), caches them, and returns all vectors in input order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Option<Vec<f32>>> = texts.iter().map(|t| self.lookup(t)).collect();
        let mut missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| *t)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let vectors = self.inner.embed_batch(&missing)?;
            if vectors.len() != missing.len() {
                return Err(EmbedError::Inference(format!(
                    "inner embedder returned {} vectors for {} texts",
                    vectors.len(),
                    missing.len()
                )));
            }
            for (text, v) in missing.iter().zip(&vectors) {
                self.insert(text, v);
            }
            for (slot, text) in out.iter_mut().zip(texts) {
                if slot.is_none() {
                    // `missing` is sorted and holds every text without a vector.
                    *slot = missing.binary_search(text).ok().map(|i| vectors[i].clone());
                }
            }
        }
        out.into_iter()
            .map(|v| v.ok_or_else(|| EmbedError::Inference("missing cached vector".into())))
            .collect()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_cached(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashEmbedder;
    use std::sync::Arc;

    /// Counts the texts that reach the inner embedder.
    struct Counting {
        inner: HashEmbedder,
        calls: AtomicU64,
    }

    impl Embedder for Counting {
        fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.calls.fetch_add(texts.len() as u64, Ordering::Relaxed);
            self.inner.embed_batch(texts)
        }
        fn dimension(&self) -> usize {
            self.inner.dimension()
        }
        fn model_name(&self) -> &str {
            self.inner.model_name()
        }
    }

    fn counting() -> Counting {
        Counting {
            inner: HashEmbedder::default(),
            calls: AtomicU64::new(0),
        }
    }

    #[test]
    fn hits_and_misses() {
        let c = CachedEmbedder::new(counting(), 10);
        let a = c.embed_cached("hello world").unwrap();
        let b = c.embed_cached("hello world").unwrap();
        assert_eq!(a, b);
        assert_eq!(a, HashEmbedder::default().embed_text("hello world"));
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.len, s.capacity), (1, 1, 1, 10));
        assert_eq!(c.inner().calls.load(Ordering::Relaxed), 1);
        assert_eq!(c.embed("hello world").unwrap(), a);
        assert_eq!(c.stats().hits, 2);
    }

    #[test]
    fn evicts_least_recently_used() {
        let c = CachedEmbedder::new(counting(), 2);
        c.embed_cached("a").unwrap();
        c.embed_cached("b").unwrap();
        c.embed_cached("a").unwrap(); // a is now the most recent
        c.embed_cached("c").unwrap(); // evicts b
        assert_eq!(c.stats().len, 2);
        let before = c.inner().calls.load(Ordering::Relaxed);
        c.embed_cached("a").unwrap();
        assert_eq!(c.inner().calls.load(Ordering::Relaxed), before, "a cached");
        c.embed_cached("b").unwrap();
        assert_eq!(
            c.inner().calls.load(Ordering::Relaxed),
            before + 1,
            "b evicted"
        );
        let s = c.stats();
        assert_eq!((s.hits, s.misses), (2, 4));
    }

    #[test]
    fn batch_uses_cache_and_keeps_order() {
        let c = CachedEmbedder::new(counting(), 10);
        c.embed_cached("x").unwrap();
        let texts = ["y", "x", "z", "y"];
        let got = c.embed_batch(&texts).unwrap();
        let h = HashEmbedder::default();
        for (t, v) in texts.iter().zip(&got) {
            assert_eq!(v, &h.embed_text(t));
        }
        // "x" was cached, "y" embedded once despite appearing twice.
        assert_eq!(c.inner().calls.load(Ordering::Relaxed), 3);
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.len), (1, 4, 3));
        c.clear();
        assert_eq!(c.stats().len, 0);
    }

    #[test]
    fn zero_capacity_disables_caching() {
        let c = CachedEmbedder::new(counting(), 0);
        c.embed_cached("a").unwrap();
        c.embed_cached("a").unwrap();
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.len, s.capacity), (0, 2, 0, 0));
        assert_eq!(c.inner().calls.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn shared_between_threads() {
        let c = Arc::new(CachedEmbedder::new(HashEmbedder::default(), 100));
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    for j in 0..50 {
                        c.embed_cached(&format!("text {}", (i + j) % 20)).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let s = c.stats();
        assert_eq!(s.hits + s.misses, 200);
        assert_eq!(s.len, 20);
    }
}
