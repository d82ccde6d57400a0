//! The vector index: the dense half of recall.
//!
//! # Design
//!
//! SQLite holds every embedding; the index is derived data that is never the only copy and never
//! returns a memory SQLite no longer has (live = row in `verbatims` with `archived_at IS NULL` and
//! an `embeddings` row of the index's dimension). Keys are `verbatims.seq` (stable rowids).
//!
//! Two implementations of [`VectorIndex`]:
//! - [`ExactIndex`]: a flat scan over a contiguous `f32` matrix with `simsimd` dot products and a
//!   bounded top-k heap. Always correct; ~1 ms at 10K and ~15-30 ms at 100K vectors of 384 floats.
//! - [`HnswIndex`]: usearch's HNSW graph (f32, inner product on L2-normalised vectors), with
//!   `M`, `ef_construction` and `ef_search` from [`IndexParams`], removal, filtered search and
//!   persistence.
//!
//! [`VectorIndexManager`] owns one of each behind one lock and keeps them in step:
//! - The **exact index is the authority**: it is built from SQLite at [`VectorIndexManager::open`]
//!   and every mutation goes to it first. HNSW hits are re-scored against it (same dot product as
//!   the scan, so similarities do not depend on the path) and any key it does not hold is dropped,
//!   so a removed memory can never come back from a stale graph.
//! - **Which path serves a search**: exact when the store holds fewer than
//!   [`IndexParams::exact_threshold`] vectors or while HNSW is not ready (loading or building);
//!   HNSW otherwise, falling back to exact on any usearch error.
//! - **Filtered search** (wing and/or room): the exact index keeps counts per wing, wing/room and
//!   room, so the size `s` of the filter's subset is known before searching. If
//!   `s < exact_threshold` the subset is scanned exactly (cost ≤ one unfiltered scan below the
//!   threshold, and exact). Otherwise usearch's predicate-filtered graph search runs (the
//!   predicate applies to results, not traversal, so it walks through other wings until it has
//!   `max(ef_search, k)` matching candidates); if it returns fewer than `min(k, s)` hits, the
//!   subset is scanned exactly instead. Archived rows are never in the index, so "excluding
//!   archived" is structural.
//! - **Persistence**: [`VectorIndexManager::save`] writes, beside the database,
//!   `hnsw.usearch` (the graph), `hnsw.keys` (the sorted `(seq, uuid, vector digest)` of every
//!   entry it covers) and `hnsw.meta.json` (format and schema version, dimension, count, M,
//!   ef_construction, sha256 of both files, build time), each atomically (temp file, fsync,
//!   rename, fsync of the directory), meta last. At open, after the exact index is built, a
//!   background thread verifies the meta, both sha256s (before usearch parses a byte) and
//!   compares the key file with the live rows: identical → loaded as is; a small difference
//!   (≤ 10 % of the entries, e.g. writes after the last save before a crash) → loaded and
//!   patched; otherwise, or if anything is missing, truncated, flipped, from another schema
//!   version or other graph parameters → rebuilt from the exact index. Searches use exact until
//!   then. Nothing is re-embedded: vectors come from SQLite.
//! - **Mutations during a build** are applied to the exact index (and the old graph, if any); when
//!   the new graph is swapped in it is reconciled with the exact index under the lock (stale
//!   entries removed, missing ones added).
//! - **Other processes**: [`VectorIndexManager::sync_from_store`] asks the store's change feed
//!   ([`crate::feed`]) what changed since it last looked, which costs no query on SQLite when
//!   nothing was committed. Otherwise it re-reads the rows of the keys the log names (an archived
//!   or deleted one is removed); when the log no longer reaches back that far, it reloads
//!   everything.
//!   Re-embedding a row in place is not detected by `sync_from_store`: call
//!   [`VectorIndexManager::rebuild_blocking`] after a re-embed (a restart detects it through the
//!   vector digests).
//!
//! All vectors are L2-normalised on the way in (those already of unit norm within 1e-4 are kept
//! bit for bit); a vector with a NaN or infinite component or of another dimension is refused with
//! an error, a query of another dimension returns no hits.

pub(crate) mod catalog;
mod exact;
mod hnsw;
mod manager;
mod persist;

pub use catalog::Catalog;
pub use exact::{unit_cosine, ExactIndex};
pub use hnsw::HnswIndex;
pub use manager::{IndexState, IndexView, SyncReport, VectorIndexManager};

use crate::Scope;
use mira_core::memory::MemoryId;
use std::collections::HashMap;
use std::path::PathBuf;

/// One vector to index: a live memory and its embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexEntry {
    /// `verbatims.seq` of the memory (its stable rowid), the index key.
    pub key: u64,
    /// The memory's id.
    pub id: MemoryId,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// Its embedding (L2-normalised by the index if it is not already).
    pub vector: Vec<f32>,
}

/// One search result. Results are sorted by similarity descending, ties by key ascending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The memory.
    pub id: MemoryId,
    /// Cosine similarity with the query (dot product of unit vectors), in [-1, 1].
    pub similarity: f32,
}

/// Graph and routing parameters (the `hnsw` section of the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexParams {
    /// `hnsw.M`: neighbours per node and layer (connectivity).
    pub m: usize,
    /// `hnsw.ef_construction`: candidate list size while inserting (usearch `expansion_add`).
    pub ef_construction: usize,
    /// `hnsw.ef_search`: candidate list size while searching (usearch `expansion_search`; a search
    /// for k > ef_search uses k).
    pub ef_search: usize,
    /// `hnsw.exact_threshold`: below this many vectors searches scan exactly.
    pub exact_threshold: usize,
}

impl Default for IndexParams {
    /// M 32 and ef_search 100 as the reference; ef_construction 128 and exact_threshold 20,000
    /// from the measurements in `docs/vector-index.md` (below 20K vectors the exact scan is as fast
    /// as the graph for k = 100, and exact).
    fn default() -> Self {
        IndexParams {
            m: 32,
            ef_construction: 128,
            ef_search: 100,
            exact_threshold: 20_000,
        }
    }
}

impl IndexParams {
    /// The parameters with zeros replaced by the defaults and values clamped to what usearch
    /// accepts (M in 2..=255, ef ≥ 1).
    pub fn sanitised(self) -> Self {
        let d = IndexParams::default();
        let or = |v: usize, def: usize| if v == 0 { def } else { v };
        IndexParams {
            m: or(self.m, d.m).clamp(2, 255),
            ef_construction: or(self.ef_construction, d.ef_construction),
            ef_search: or(self.ef_search, d.ef_search),
            exact_threshold: self.exact_threshold,
        }
    }
}

/// Errors of the vector index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A vector of the wrong length.
    #[error("embedding has {found} dimensions but the index holds {expected}-dimensional vectors")]
    Dimension {
        /// Dimension of the index.
        expected: usize,
        /// Dimension of the vector given.
        found: usize,
    },
    /// A vector that cannot be indexed (NaN, infinite or zero).
    #[error("invalid embedding: {0}")]
    InvalidVector(&'static str),
    /// The database could not be read.
    #[error(transparent)]
    Store(#[from] crate::StoreError),
    /// A file of the persisted index could not be written or read.
    #[error("vector index file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// usearch reported an error.
    #[error("HNSW index: {0}")]
    Hnsw(String),
}

/// Result type of the vector index.
pub type Result<T> = std::result::Result<T, IndexError>;

/// A vector index: insert, remove, filtered top-k search by cosine similarity.
///
/// A trait rather than an enum so that tests and benchmarks can drive both implementations
/// the same way; the server uses [`VectorIndexManager`], which holds one of each.
pub trait VectorIndex: Send + Sync {
    /// Adds `e`, replacing any entry with the same key or id.
    fn insert(&mut self, e: IndexEntry) -> Result<()>;
    /// Removes memory `id`; false if it was not indexed.
    fn remove(&mut self, id: MemoryId) -> bool;
    /// The `k` entries most similar to `query` that match `filter`, best first (ties by key).
    /// Empty on a query of the wrong dimension or with non-finite components.
    fn search(&self, query: &[f32], k: usize, filter: &Scope) -> Vec<Hit>;
    /// Number of entries.
    fn len(&self) -> usize;
    /// Whether the index holds no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Metadata of one indexed vector, kept at its position in the index (not `mira_core`'s
/// asserted `Slot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VectorMeta {
    pub key: u64,
    pub id: MemoryId,
    pub wing: u32,
    pub room: u32,
    /// Digest of the stored vector's bits (detects re-embedded rows across restarts).
    pub digest: u64,
}

/// Interned wing and room names (so filters compare integers).
#[derive(Debug, Default, Clone)]
pub(crate) struct Labels {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Labels {
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), i);
        i
    }

    pub fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    pub fn name(&self, i: u32) -> &str {
        self.names.get(i as usize).map(String::as_str).unwrap_or("")
    }

    /// The filter as interned ids; `None` when it names a wing or room never seen (no match).
    pub fn matcher(&self, f: &Scope) -> Option<Matcher> {
        let wing = match &f.wing {
            Some(w) => Some(self.get(w)?),
            None => None,
        };
        let room = match &f.room {
            Some(r) => Some(self.get(r)?),
            None => None,
        };
        Some(Matcher { wing, room })
    }
}

/// Entry counts per wing, wing/room and room, so a filter's selectivity is known up front.
#[derive(Debug, Default, Clone)]
pub(crate) struct Census {
    by_wing_room: HashMap<(u32, Option<u32>), usize>,
    by_room: HashMap<u32, usize>,
}

impl Census {
    pub fn add(&mut self, s: &VectorMeta) {
        for key in [(s.wing, None), (s.wing, Some(s.room))] {
            *self.by_wing_room.entry(key).or_default() += 1;
        }
        *self.by_room.entry(s.room).or_default() += 1;
    }

    pub fn sub(&mut self, s: &VectorMeta) {
        for key in [(s.wing, None), (s.wing, Some(s.room))] {
            if let Some(c) = self.by_wing_room.get_mut(&key) {
                *c = c.saturating_sub(1);
            }
        }
        if let Some(c) = self.by_room.get_mut(&s.room) {
            *c = c.saturating_sub(1);
        }
    }

    /// Entries matching `m`, given the total.
    pub fn count(&self, m: &Matcher, total: usize) -> usize {
        match (m.wing, m.room) {
            (None, None) => total,
            (Some(w), r) => self.by_wing_room.get(&(w, r)).copied().unwrap_or(0),
            (None, Some(r)) => self.by_room.get(&r).copied().unwrap_or(0),
        }
    }
}

/// A resolved [`Scope`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Matcher {
    wing: Option<u32>,
    room: Option<u32>,
}

impl Matcher {
    pub fn is_all(&self) -> bool {
        self.wing.is_none() && self.room.is_none()
    }

    pub fn matches(&self, s: &VectorMeta) -> bool {
        self.matches_labels(s.wing, s.room)
    }

    /// Whether a memory of these interned wing and room matches.
    pub fn matches_labels(&self, wing: u32, room: u32) -> bool {
        self.wing.is_none_or(|w| w == wing) && self.room.is_none_or(|r| r == room)
    }

    /// The interned wing and room it requires.
    pub fn labels(&self) -> (Option<u32>, Option<u32>) {
        (self.wing, self.room)
    }
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// Validates and normalises a vector for storage; returns it with the digest of its bits.
pub(crate) fn prepare_vector(v: &[f32], dim: usize) -> Result<(Vec<f32>, u64)> {
    if v.len() != dim {
        return Err(IndexError::Dimension {
            expected: dim,
            found: v.len(),
        });
    }
    if dim == 0 {
        return Err(IndexError::InvalidVector("empty vector"));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(IndexError::InvalidVector("NaN or infinite component"));
    }
    let n = norm(v);
    if n == 0.0 || !n.is_finite() {
        return Err(IndexError::InvalidVector("zero vector"));
    }
    let out = if (n - 1.0).abs() <= 1e-4 {
        v.to_vec()
    } else {
        v.iter().map(|x| x / n).collect()
    };
    let digest = digest(&out);
    Ok((out, digest))
}

/// Normalises a query; `None` if it cannot be compared with vectors of `dim`.
pub(crate) fn prepare_query(q: &[f32], dim: usize) -> Option<Vec<f32>> {
    if q.len() != dim || dim == 0 || q.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = norm(q);
    if n == 0.0 || !n.is_finite() {
        return None;
    }
    Some(if (n - 1.0).abs() <= 1e-4 {
        q.to_vec()
    } else {
        q.iter().map(|x| x / n).collect()
    })
}

/// A fast 64-bit digest of a vector's bits (four multiply-xor lanes; not cryptographic: it only
/// tells a re-embedded row from an unchanged one).
pub(crate) fn digest(v: &[f32]) -> u64 {
    const P: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut lanes = [
        0x243F_6A88_85A3_08D3u64,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    for chunk in v.chunks(4) {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane = (*lane ^ u64::from(x.to_bits())).wrapping_mul(P);
        }
    }
    let mut h = v.len() as u64;
    for lane in lanes {
        h = (h ^ lane).wrapping_mul(P).rotate_left(29);
    }
    h
}
