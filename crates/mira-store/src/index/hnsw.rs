//! The approximate index: usearch's HNSW graph.

use super::{
    prepare_query, prepare_vector, Census, Hit, IndexEntry, IndexError, IndexParams, Labels,
    Result, Scope, VectorIndex, VectorMeta,
};
use mira_core::memory::MemoryId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// usearch contexts reserved for concurrent operations; a search that finds none free fails and
/// the manager answers it with the exact scan instead.
const THREAD_CONTEXTS: usize = 64;
/// Vectors a build inserts on one thread before the others join in.
const SEQUENTIAL_SEED: usize = 2048;

/// HNSW over f32 vectors with inner-product distance (cosine on unit vectors), from usearch.
///
/// `M` is usearch's connectivity, `ef_construction` its `expansion_add` and `ef_search` its
/// `expansion_search`; a search for `k` candidates explores `max(ef_search, k)`. Removal marks the
/// node deleted (it stays a waypoint of the graph; its slot is reused by a later insert), so the
/// graph never returns it. Filtered searches pass a predicate on the key into the graph search.
pub struct HnswIndex {
    index: Index,
    dim: usize,
    params: IndexParams,
    slots: HashMap<u64, VectorMeta>,
    by_id: HashMap<MemoryId, u64>,
    labels: Labels,
    census: Census,
}

impl std::fmt::Debug for HnswIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HnswIndex")
            .field("dim", &self.dim)
            .field("params", &self.params)
            .field("len", &self.slots.len())
            .finish_non_exhaustive()
    }
}

fn err(e: impl std::fmt::Display) -> IndexError {
    IndexError::Hnsw(e.to_string())
}

fn options(dim: usize, params: &IndexParams) -> IndexOptions {
    IndexOptions {
        dimensions: dim,
        metric: MetricKind::IP,
        quantization: ScalarKind::F32,
        connectivity: params.m,
        expansion_add: params.ef_construction,
        expansion_search: params.ef_search,
        multi: false,
    }
}

impl HnswIndex {
    /// An empty graph for vectors of `dim` dimensions.
    pub fn new(dim: usize, params: IndexParams) -> Result<Self> {
        if dim == 0 {
            return Err(IndexError::InvalidVector("zero dimensions"));
        }
        let params = params.sanitised();
        let index = Index::new(&options(dim, &params)).map_err(err)?;
        let threads = THREAD_CONTEXTS.max(build_threads());
        index
            .reserve_capacity_and_threads(1024, threads)
            .map_err(err)?;
        Ok(HnswIndex {
            index,
            dim,
            params,
            slots: HashMap::new(),
            by_id: HashMap::new(),
            labels: Labels::default(),
            census: Census::default(),
        })
    }

    /// Builds a graph over `entries`: the first 2,048 on one thread, the rest with `threads`
    /// parallel inserters (0 = one per core).
    /// Returns `Ok(None)` if `cancel` became true on the way.
    pub fn build(
        dim: usize,
        params: IndexParams,
        entries: &[IndexEntry],
        threads: usize,
        cancel: &AtomicBool,
    ) -> Result<Option<Self>> {
        Self::build_counting(dim, params, entries, threads, cancel, &AtomicUsize::new(0))
    }

    /// [`HnswIndex::build`], adding one to `done` for each vector inserted (a progress count).
    pub fn build_counting(
        dim: usize,
        params: IndexParams,
        entries: &[IndexEntry],
        threads: usize,
        cancel: &AtomicBool,
        done: &AtomicUsize,
    ) -> Result<Option<Self>> {
        let mut idx = HnswIndex::new(dim, params)?;
        let threads = if threads == 0 {
            build_threads()
        } else {
            threads
        }
        .clamp(1, THREAD_CONTEXTS);
        idx.reserve(entries.len())?;
        // Validate and register every entry first; the graph insertions then run in parallel.
        let mut prepared = Vec::with_capacity(entries.len());
        for e in entries {
            let (vector, digest) = prepare_vector(&e.vector, dim)?;
            if idx.slots.contains_key(&e.key) || idx.by_id.contains_key(&e.id) {
                continue;
            }
            idx.register(e, digest);
            prepared.push((e.key, vector));
        }
        // The first vectors go in one by one: concurrent inserts into a graph of a few nodes
        // leave it poorly connected (recall@10 fell to 0.97 on a loaded machine), while a seeded
        // graph takes the rest in parallel as well as one thread would.
        let (seed, rest) = prepared.split_at(prepared.len().min(SEQUENTIAL_SEED));
        for (key, v) in seed {
            if cancel.load(Ordering::Relaxed) {
                return Ok(None);
            }
            idx.index.add(*key, v).map_err(err)?;
            done.fetch_add(1, Ordering::Relaxed);
        }
        let failure = std::sync::Mutex::new(None);
        let failed = AtomicBool::new(false);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (index, rest, failure, failed) = (&idx.index, rest, &failure, &failed);
                s.spawn(move || {
                    for (key, v) in rest.iter().skip(t).step_by(threads) {
                        if cancel.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                            return;
                        }
                        if let Err(e) = index.add(*key, v) {
                            *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(err(e));
                            failed.store(true, Ordering::Relaxed);
                            return;
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        Ok(Some(idx))
    }

    /// Restores a graph serialised by [`HnswIndex::to_bytes`], with the metadata of its entries.
    /// Fails if the bytes are not a usearch index of this dimension or do not hold exactly the
    /// keys given.
    pub(crate) fn restore(
        bytes: &[u8],
        dim: usize,
        params: IndexParams,
        entries: impl IntoIterator<Item = (u64, MemoryId, String, String, u64)>,
    ) -> Result<Self> {
        let mut idx = HnswIndex::new(dim, params)?;
        idx.index.load_from_buffer(bytes).map_err(err)?;
        if idx.index.dimensions() != dim || idx.index.connectivity() != idx.params.m {
            return Err(IndexError::Hnsw(
                "persisted graph has other dimensions or M".into(),
            ));
        }
        idx.index.change_expansion_add(idx.params.ef_construction);
        idx.index.change_expansion_search(idx.params.ef_search);
        for (key, id, wing, room, digest) in entries {
            if !idx.index.contains(key) {
                return Err(IndexError::Hnsw(format!("persisted graph lacks key {key}")));
            }
            let e = IndexEntry {
                key,
                id,
                wing,
                room,
                vector: Vec::new(),
            };
            idx.register(&e, digest);
        }
        if idx.index.size() != idx.slots.len() {
            return Err(IndexError::Hnsw(format!(
                "persisted graph holds {} vectors, its key list {}",
                idx.index.size(),
                idx.slots.len()
            )));
        }
        // Loading replaces usearch's limits: reserve growth room and the thread contexts again.
        let cap = idx.index.capacity().max(idx.slots.len() + 1).max(1024);
        idx.index
            .reserve_capacity_and_threads(cap, THREAD_CONTEXTS.max(build_threads()))
            .map_err(err)?;
        Ok(idx)
    }

    /// The graph serialised (usearch's own format).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; self.index.serialized_length()];
        self.index.save_to_buffer(&mut buf).map_err(err)?;
        Ok(buf)
    }

    /// The parameters the graph was built with.
    pub fn params(&self) -> IndexParams {
        self.params
    }

    /// Dimension of the vectors.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Bytes of memory usearch reports for the graph and its vectors.
    pub fn memory_usage(&self) -> usize {
        self.index.memory_usage()
    }

    /// `(id, digest)` stored under `key`.
    pub(crate) fn identity(&self, key: u64) -> Option<(MemoryId, u64)> {
        self.slots.get(&key).map(|s| (s.id, s.digest))
    }

    /// The keys held, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.keys().copied()
    }

    /// Removes the entry stored under `key`; false if there was none.
    pub fn remove_key(&mut self, key: u64) -> bool {
        let Some(slot) = self.slots.remove(&key) else {
            return false;
        };
        self.by_id.remove(&slot.id);
        self.census.sub(&slot);
        // usearch only fails here on a key it does not hold, which the map rules out.
        let _ = self.index.remove(key);
        true
    }

    fn register(&mut self, e: &IndexEntry, digest: u64) {
        let wing = self.labels.intern(&e.wing);
        let room = self.labels.intern(&e.room);
        let slot = VectorMeta {
            key: e.key,
            id: e.id,
            wing,
            room,
            digest,
        };
        self.census.add(&slot);
        self.slots.insert(e.key, slot);
        self.by_id.insert(e.id, e.key);
    }

    fn reserve(&self, n: usize) -> Result<()> {
        if n > self.index.capacity() {
            let cap = n.max(self.index.capacity().saturating_mul(2)).max(1024);
            self.index
                .reserve_capacity_and_threads(cap, THREAD_CONTEXTS.max(build_threads()))
                .map_err(err)?;
        }
        Ok(())
    }

    /// The candidate keys for `query` with their similarities, best first; a filter is applied
    /// inside the graph search. Errors come from usearch (e.g. no free thread context).
    pub fn try_search(&self, query: &[f32], k: usize, filter: &Scope) -> Result<Vec<(u64, f32)>> {
        let Some(q) = prepare_query(query, self.dim) else {
            return Ok(Vec::new());
        };
        let Some(m) = self.labels.matcher(filter) else {
            return Ok(Vec::new());
        };
        if k == 0 || self.slots.is_empty() {
            return Ok(Vec::new());
        }
        let matches = if m.is_all() {
            self.index.search(&q, k).map_err(err)?
        } else {
            if self.census.count(&m, self.slots.len()) == 0 {
                return Ok(Vec::new());
            }
            // usearch applies the predicate to results, not to traversal: it walks through
            // non-matching nodes until `max(ef_search, k)` matching ones are found.
            let pred = |key: u64| self.slots.get(&key).is_some_and(|s| m.matches(s));
            self.index.filtered_search(&q, k, pred).map_err(err)?
        };
        Ok(matches
            .keys
            .into_iter()
            .zip(matches.distances)
            .map(|(key, d)| (key, 1.0 - d))
            .take(k)
            .collect())
    }
}

/// Parallel inserters for a build: one per core.
pub(crate) fn build_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl VectorIndex for HnswIndex {
    fn insert(&mut self, e: IndexEntry) -> Result<()> {
        let (vector, digest) = prepare_vector(&e.vector, self.dim)?;
        self.remove_key(e.key);
        if let Some(old) = self.by_id.get(&e.id).copied() {
            self.remove_key(old);
        }
        self.reserve(self.index.size() + 1)?;
        self.index.add(e.key, &vector).map_err(err)?;
        self.register(&e, digest);
        Ok(())
    }

    fn remove(&mut self, id: MemoryId) -> bool {
        match self.by_id.get(&id).copied() {
            Some(key) => self.remove_key(key),
            None => false,
        }
    }

    /// Approximate search; empty if usearch fails (the manager falls back to exact instead).
    fn search(&self, query: &[f32], k: usize, filter: &Scope) -> Vec<Hit> {
        let mut hits: Vec<(u64, f32)> = match self.try_search(query, k, filter) {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("HNSW search failed: {e}");
                return Vec::new();
            }
        };
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.into_iter()
            .filter_map(|(key, sim)| {
                self.slots.get(&key).map(|s| Hit {
                    id: s.id,
                    similarity: sim,
                })
            })
            .collect()
    }

    fn len(&self) -> usize {
        self.slots.len()
    }
}
