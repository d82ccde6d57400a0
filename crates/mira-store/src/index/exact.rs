//! The exact index: a flat scan over a contiguous `f32` matrix.

use super::{
    prepare_query, prepare_vector, Census, Hit, IndexEntry, IndexError, Labels, Scope, VectorIndex,
    VectorMeta,
};
use mira_core::memory::MemoryId;
use simsimd::SpatialSimilarity;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Exact nearest-neighbour search over every live vector: one dot product per row.
///
/// Vectors live in one contiguous row-major `Vec<f32>` (`len × dim`), with parallel metadata;
/// removal swaps the last row into the hole, so the matrix never has gaps. Dot products use
/// `simsimd` (AVX2 / AVX-512 / NEON picked at run time); the top k are kept in a bounded heap.
/// Also the in-memory mirror of the live rows of SQLite that the manager reconciles against.
#[derive(Debug, Default, Clone)]
pub struct ExactIndex {
    dim: usize,
    data: Vec<f32>,
    slots: Vec<VectorMeta>,
    by_key: HashMap<u64, usize>,
    by_id: HashMap<MemoryId, u64>,
    labels: Labels,
    census: Census,
}

/// A candidate of a top-k selection, ordered so that the *worst* one is the greatest.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cand {
    sim: f32,
    key: u64,
    pos: usize,
}

impl Eq for Cand {}

impl Ord for Cand {
    fn cmp(&self, other: &Self) -> Ordering {
        // Lower similarity is worse; at equal similarity the higher key is worse.
        other
            .sim
            .total_cmp(&self.sim)
            .then(self.key.cmp(&other.key))
    }
}

impl PartialOrd for Cand {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Cosine similarity of two unit vectors (their dot product); 0 when their lengths differ or
/// the product is not finite.
pub fn unit_cosine(a: &[f32], b: &[f32]) -> f32 {
    match dot(a, b) {
        d if d.is_finite() => d,
        _ => 0.0,
    }
}

/// Dot product of two equally long slices (−∞ on a length mismatch, which callers rule out).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    match f32::dot(a, b) {
        Some(d) if d.is_finite() => d as f32,
        _ => f32::NEG_INFINITY,
    }
}

impl ExactIndex {
    /// An empty index; its dimension is taken from the first vector inserted.
    pub fn new() -> Self {
        ExactIndex::default()
    }

    /// Builds the index from entries (later duplicates of a key replace earlier ones).
    pub fn from_entries(entries: Vec<IndexEntry>) -> Result<Self, IndexError> {
        let mut idx =
            ExactIndex::with_capacity(entries.first().map_or(0, |e| e.vector.len()), entries.len());
        for e in entries {
            idx.insert(e)?;
        }
        Ok(idx)
    }

    /// An empty index for `n` vectors of `dim` dimensions (0 = take it from the first insert).
    pub fn with_capacity(dim: usize, n: usize) -> Self {
        ExactIndex {
            dim,
            data: Vec::with_capacity(dim * n),
            slots: Vec::with_capacity(n),
            by_key: HashMap::with_capacity(n),
            by_id: HashMap::with_capacity(n),
            ..ExactIndex::default()
        }
    }

    /// Dimension of the vectors (0 while empty and never filled).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether `key` is indexed.
    pub fn contains_key(&self, key: u64) -> bool {
        self.by_key.contains_key(&key)
    }

    /// The key of memory `id`, if indexed.
    pub fn key_of(&self, id: MemoryId) -> Option<u64> {
        self.by_id.get(&id).copied()
    }

    /// The entry stored under `key`, if any.
    pub fn entry(&self, key: u64) -> Option<IndexEntry> {
        let pos = *self.by_key.get(&key)?;
        Some(self.entry_at(pos))
    }

    /// `(wing, room)` of the entry stored under `key`.
    pub(crate) fn entry_labels(&self, key: u64) -> Option<(String, String)> {
        let s = &self.slots[*self.by_key.get(&key)?];
        Some((
            self.labels.name(s.wing).to_owned(),
            self.labels.name(s.room).to_owned(),
        ))
    }

    fn entry_at(&self, pos: usize) -> IndexEntry {
        let s = &self.slots[pos];
        IndexEntry {
            key: s.key,
            id: s.id,
            wing: self.labels.name(s.wing).to_owned(),
            room: self.labels.name(s.room).to_owned(),
            vector: self.row(pos).to_vec(),
        }
    }

    /// The stored (unit) vector under `key`.
    pub fn vector(&self, key: u64) -> Option<&[f32]> {
        self.by_key.get(&key).map(|&pos| self.row(pos))
    }

    fn row(&self, pos: usize) -> &[f32] {
        &self.data[pos * self.dim..(pos + 1) * self.dim]
    }

    /// Every entry, in storage order (for building another index from this one).
    pub fn entries(&self) -> Vec<IndexEntry> {
        (0..self.slots.len()).map(|p| self.entry_at(p)).collect()
    }

    /// `(key, id, vector digest)` of every entry, sorted by key: what the persisted files cover.
    pub fn fingerprint(&self) -> Vec<(u64, MemoryId, u64)> {
        let mut v: Vec<_> = self.slots.iter().map(|s| (s.key, s.id, s.digest)).collect();
        v.sort_unstable_by_key(|e| e.0);
        v
    }

    /// `(id, digest)` stored under `key`, to compare with another structure.
    pub(crate) fn identity(&self, key: u64) -> Option<(MemoryId, u64)> {
        self.by_key
            .get(&key)
            .map(|&p| (self.slots[p].id, self.slots[p].digest))
    }

    /// The keys, in storage order.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().map(|s| s.key)
    }

    /// Highest key indexed.
    pub fn max_key(&self) -> Option<u64> {
        self.slots.iter().map(|s| s.key).max()
    }

    /// How many entries match `filter` (all entries without a filter).
    pub fn count_matching(&self, filter: &Scope) -> usize {
        self.labels
            .matcher(filter)
            .map_or(0, |m| self.census.count(&m, self.slots.len()))
    }

    /// Re-scores candidate keys against the stored vectors with the same dot product as the scan;
    /// keys not indexed here are dropped. Sorted by similarity desc, ties by key, at most `k`.
    pub(crate) fn rescore(
        &self,
        query: &[f32],
        keys: impl IntoIterator<Item = u64>,
        k: usize,
    ) -> Vec<Hit> {
        let Some(q) = prepare_query(query, self.dim) else {
            return Vec::new();
        };
        let mut cands: Vec<Cand> = keys
            .into_iter()
            .filter_map(|key| {
                self.by_key.get(&key).map(|&pos| Cand {
                    sim: dot(self.row(pos), &q),
                    key,
                    pos,
                })
            })
            .collect();
        cands.sort_unstable();
        cands.dedup_by_key(|c| c.key);
        cands.truncate(k);
        cands
            .into_iter()
            .map(|c| Hit {
                id: self.slots[c.pos].id,
                similarity: c.sim,
            })
            .collect()
    }

    fn remove_at(&mut self, pos: usize) {
        let last = self.slots.len() - 1;
        let old = self.slots.swap_remove(pos);
        if pos != last {
            let (head, tail) = self.data.split_at_mut(last * self.dim);
            head[pos * self.dim..(pos + 1) * self.dim].copy_from_slice(&tail[..self.dim]);
            self.by_key.insert(self.slots[pos].key, pos);
        }
        self.data.truncate(last * self.dim);
        self.by_key.remove(&old.key);
        self.by_id.remove(&old.id);
        self.census.sub(&old);
    }

    /// Removes the entry stored under `key`; false if there was none.
    pub fn remove_key(&mut self, key: u64) -> bool {
        match self.by_key.get(&key) {
            Some(&pos) => {
                self.remove_at(pos);
                true
            }
            None => false,
        }
    }
}

impl VectorIndex for ExactIndex {
    fn insert(&mut self, e: IndexEntry) -> Result<(), IndexError> {
        if self.dim == 0 {
            self.dim = e.vector.len();
        }
        let (vector, digest) = prepare_vector(&e.vector, self.dim)?;
        // One key and one id each map to one entry: drop whatever either pointed to.
        self.remove_key(e.key);
        if let Some(old) = self.by_id.get(&e.id).copied() {
            self.remove_key(old);
        }
        let wing = self.labels.intern(&e.wing);
        let room = self.labels.intern(&e.room);
        let pos = self.slots.len();
        self.data.extend_from_slice(&vector);
        let slot = VectorMeta {
            key: e.key,
            id: e.id,
            wing,
            room,
            digest,
        };
        self.census.add(&slot);
        self.slots.push(slot);
        self.by_key.insert(e.key, pos);
        self.by_id.insert(e.id, e.key);
        Ok(())
    }

    fn remove(&mut self, id: MemoryId) -> bool {
        match self.by_id.get(&id).copied() {
            Some(key) => self.remove_key(key),
            None => false,
        }
    }

    fn search(&self, query: &[f32], k: usize, filter: &Scope) -> Vec<Hit> {
        let Some(q) = prepare_query(query, self.dim) else {
            return Vec::new();
        };
        let Some(matcher) = self.labels.matcher(filter) else {
            return Vec::new();
        };
        if k == 0 {
            return Vec::new();
        }
        let mut heap: BinaryHeap<Cand> = BinaryHeap::with_capacity(k + 1);
        let mut consider = |pos: usize, row: &[f32]| {
            let sim = dot(row, &q);
            let cand = Cand {
                sim,
                key: self.slots[pos].key,
                pos,
            };
            if heap.len() < k {
                heap.push(cand);
            } else if heap.peek().is_some_and(|worst| cand < *worst) {
                heap.pop();
                heap.push(cand);
            }
        };
        if matcher.is_all() {
            for (pos, row) in self.data.chunks_exact(self.dim).enumerate() {
                consider(pos, row);
            }
        } else {
            for (pos, s) in self.slots.iter().enumerate() {
                if matcher.matches(s) {
                    consider(pos, self.row(pos));
                }
            }
        }
        heap.into_sorted_vec()
            .into_iter()
            .map(|c| Hit {
                id: self.slots[c.pos].id,
                similarity: c.sim,
            })
            .collect()
    }

    fn len(&self) -> usize {
        self.slots.len()
    }
}
