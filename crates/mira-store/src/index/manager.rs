//! [`VectorIndexManager`]: the catalog, the exact index and the HNSW graph kept in step with
//! the database.

use super::persist::{self, Expect, Meta};
use super::{
    Catalog, ExactIndex, Hit, HnswIndex, IndexEntry, IndexParams, Result, Scope, VectorIndex,
};
use crate::feed::{ChangeCursor, LiveRow};
use crate::Store;
use chrono::{DateTime, Utc};
use mira_core::memory::MemoryId;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::time::{Duration, Instant};

/// Graph builds insert from one thread. usearch's parallel insertion measured here left some
/// nodes unreachable from the entry point (about 4 builds in 10 lost a vector of a small store,
/// never with one thread); builds run in the background behind the exact scan, so determinism
/// is worth more than the shorter build.
const BUILD_THREADS: usize = 1;

/// What `mira status` shows about the index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexState {
    /// `"exact"` or `"hnsw"`: the path an unfiltered search takes now.
    pub kind: &'static str,
    /// Vectors indexed (live memories with an embedding).
    pub size: usize,
    /// Whether the HNSW graph is loaded or built and in step with the exact index.
    pub ready: bool,
    /// Whether a load or build of the graph is running.
    pub building: bool,
    /// When the graph was last built from scratch (kept across restarts by the meta file).
    pub last_rebuilt: Option<DateTime<Utc>>,
    /// Whether the files beside the database hold exactly the current graph.
    pub persisted: bool,
    /// Whether the graph came from the persisted files at open (rather than a build).
    pub loaded: bool,
    /// Entries added or removed to bring a loaded graph in step with the database.
    pub patched: usize,
    /// Graph builds from scratch run by this process.
    pub rebuilds: u64,
    /// Bytes of memory held: the exact matrix plus usearch's own figure for the graph.
    pub memory_bytes: usize,
    /// The parameters in force.
    pub params: IndexParams,
}

/// What one [`VectorIndexManager::sync_from_store`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncReport {
    /// Whether the database changed since the last sync (if not, nothing was queried).
    pub changed: bool,
    /// Live memories added or updated.
    pub added: usize,
    /// Memories removed (archived or deleted).
    pub removed: usize,
    /// Whether everything was reloaded (the change log no longer reached back far enough).
    pub reloaded: bool,
}

struct Inner {
    catalog: Catalog,
    exact: ExactIndex,
    hnsw: Option<HnswIndex>,
    last_rebuilt: Option<DateTime<Utc>>,
    persisted: bool,
    loaded: bool,
    patched: usize,
    /// Bumped by every change to the indexed set (tells `save` whether it saved the latest).
    generation: u64,
}

/// Marks that a graph build or load is running, and lets others wait for it.
#[derive(Default)]
struct Gate {
    busy: Mutex<bool>,
    idle: Condvar,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, bool> {
        self.busy.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn try_enter(&self) -> bool {
        let mut b = self.lock();
        !std::mem::replace(&mut *b, true)
    }

    fn enter(&self) {
        let mut b = self.lock();
        while *b {
            b = self.idle.wait(b).unwrap_or_else(|p| p.into_inner());
        }
        *b = true;
    }

    fn leave(&self) {
        *self.lock() = false;
        self.idle.notify_all();
    }

    fn is_busy(&self) -> bool {
        *self.lock()
    }

    /// Waits until no build runs; false on timeout.
    fn wait_idle(&self, timeout: Duration) -> bool {
        let b = self.lock();
        let (b, _) = self
            .idle
            .wait_timeout_while(b, timeout, |busy| *busy)
            .unwrap_or_else(|p| p.into_inner());
        !*b
    }
}

/// The vector index of one database: an always-present exact index, an HNSW graph when ready,
/// persistence beside the database and synchronisation with writes of other processes.
/// See the [module docs](super) for the design. `Send + Sync`; use it behind the `Arc` that
/// [`VectorIndexManager::open`] returns, from blocking threads.
pub struct VectorIndexManager {
    store: Arc<dyn Store>,
    dir: PathBuf,
    params: IndexParams,
    me: Weak<VectorIndexManager>,
    inner: RwLock<Inner>,
    /// Serialises mutations (insert, remove, sync, graph swap); always taken before `inner`.
    mutation: Mutex<()>,
    save_lock: Mutex<()>,
    gate: Arc<Gate>,
    cancel: Arc<AtomicBool>,
    rebuilds: AtomicU64,
    /// The graph build under way: vectors inserted so far, and how many it covers.
    progress: Arc<BuildProgress>,
    /// How far the change feed was read.
    cursor: Mutex<ChangeCursor>,
}

impl std::fmt::Debug for VectorIndexManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndexManager")
            .field("dir", &self.dir)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl Drop for VectorIndexManager {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn millis_to_time(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

/// Keys to drop from `graph` and entries to add to it so it covers exactly what `exact` holds.
fn plan(graph: &HnswIndex, exact: &ExactIndex) -> (Vec<u64>, Vec<IndexEntry>) {
    let removes = graph
        .keys()
        .filter(|&k| exact.identity(k) != graph.identity(k))
        .collect();
    let adds = exact
        .keys()
        .filter(|&k| graph.identity(k) != exact.identity(k))
        .filter_map(|k| exact.entry(k))
        .collect();
    (removes, adds)
}

fn apply(graph: &mut HnswIndex, removes: Vec<u64>, adds: Vec<IndexEntry>) -> Result<usize> {
    let n = removes.len() + adds.len();
    for k in removes {
        graph.remove_key(k);
    }
    for e in adds {
        graph.insert(e)?;
    }
    Ok(n)
}

/// How far the graph build under way is (see [`VectorIndexManager::build_progress`]).
#[derive(Debug, Default)]
struct BuildProgress {
    done: AtomicUsize,
    total: AtomicUsize,
}

impl BuildProgress {
    /// Builds a graph over `entries`, counting the vectors inserted.
    fn build(
        &self,
        dim: usize,
        params: IndexParams,
        entries: &[IndexEntry],
        cancel: &AtomicBool,
    ) -> Result<Option<HnswIndex>> {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(entries.len(), Ordering::Relaxed);
        let graph =
            HnswIndex::build_counting(dim, params, entries, BUILD_THREADS, cancel, &self.done);
        self.total.store(0, Ordering::Relaxed);
        graph
    }
}

/// How a graph came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Loaded { built_at: Option<DateTime<Utc>> },
    Built,
}

impl VectorIndexManager {
    /// Opens the index of `store` with its files in `dir` (e.g. `<db dir>/index`).
    ///
    /// Builds the exact index from the database (every live embedding; rows whose vector is invalid are
    /// skipped with a warning), then returns at once: a background thread loads the persisted
    /// graph if its files are intact and consistent with the database (patching small differences),
    /// or else builds it; searches scan exactly meanwhile.
    pub fn open(store: Arc<dyn Store>, dir: &Path, params: IndexParams) -> Result<Arc<Self>> {
        let started = Instant::now();
        // The feed's position is read before the rows: a change committed in between is
        // replayed by the first sync (replaying is idempotent).
        let cursor = store.change_cursor()?;
        let rows = store.live_rows()?;
        let mut catalog = Catalog::new();
        let mut exact = ExactIndex::with_capacity(
            rows.iter()
                .find_map(|r| r.vector.as_ref())
                .map_or(0, Vec::len),
            rows.len(),
        );
        let mut skipped = 0usize;
        for row in rows {
            if !add_row(&mut catalog, &mut exact, row) {
                skipped += 1;
            }
        }
        tracing::info!(
            "vector index: {} memories ({} vectors) read from the database in {:.0} ms{}",
            catalog.len(),
            exact.len(),
            started.elapsed().as_secs_f64() * 1e3,
            if skipped > 0 {
                format!(" ({skipped} vectors skipped)")
            } else {
                String::new()
            }
        );
        let mgr = Arc::new_cyclic(|me| VectorIndexManager {
            store,
            dir: dir.to_path_buf(),
            params: params.sanitised(),
            me: me.clone(),
            inner: RwLock::new(Inner {
                catalog,
                exact,
                hnsw: None,
                last_rebuilt: None,
                persisted: false,
                loaded: false,
                patched: 0,
                generation: 0,
            }),
            mutation: Mutex::new(()),
            save_lock: Mutex::new(()),
            gate: Arc::new(Gate::default()),
            cancel: Arc::new(AtomicBool::new(false)),
            rebuilds: AtomicU64::new(0),
            progress: Arc::default(),
            cursor: Mutex::new(cursor),
        });
        mgr.gate.enter();
        mgr.spawn_background(true);
        Ok(mgr)
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the background load-or-build; the caller has entered the gate.
    fn spawn_background(&self, try_load: bool) {
        let (me, gate, cancel) = (self.me.clone(), self.gate.clone(), self.cancel.clone());
        let spawned = std::thread::Builder::new()
            .name("mira-index".into())
            .spawn(move || {
                let outcome = background(&me, try_load, &cancel);
                gate.leave();
                match outcome {
                    // Vectors may have arrived while the gate was held: build them now.
                    Ok(true) => {
                        if let Some(mgr) = me.upgrade() {
                            let inner = mgr.read();
                            if inner.hnsw.is_none() && !inner.exact.is_empty() {
                                drop(inner);
                                mgr.start_rebuild();
                            }
                        }
                    }
                    Ok(false) => {}
                    Err(e) => tracing::warn!(
                        "vector index: background build failed, searches stay exact: {e}"
                    ),
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("vector index: cannot start the background build: {e}");
            self.gate.leave();
        }
    }

    /// The parameters in force.
    pub fn params(&self) -> IndexParams {
        self.params
    }

    /// The directory of the persisted files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn start_rebuild(&self) {
        if self.gate.try_enter() {
            self.spawn_background(false);
        }
    }

    /// The `k` live memories most similar to `query` among those matching `filter`, best first
    /// (ties by key). See [`IndexView::search`].
    pub fn search(&self, query: &[f32], k: usize, filter: &Scope) -> Vec<Hit> {
        self.view(|v| v.search(query, k, filter))
    }

    /// Runs `f` over a consistent view of the catalog and the vectors (a read lock is held
    /// meanwhile: keep `f` short and free of I/O).
    pub fn view<R>(&self, f: impl FnOnce(&IndexView<'_>) -> R) -> R {
        let inner = self.read();
        f(&IndexView {
            inner: &inner,
            params: self.params,
        })
    }

    /// Number of vectors indexed.
    pub fn len(&self) -> usize {
        self.read().exact.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The state for `mira status`.
    pub fn state(&self) -> IndexState {
        let inner = self.read();
        let n = inner.exact.len();
        let ready = inner.hnsw.is_some();
        IndexState {
            kind: if ready && n >= self.params.exact_threshold {
                "hnsw"
            } else {
                "exact"
            },
            size: n,
            ready,
            building: self.gate.is_busy(),
            last_rebuilt: inner.last_rebuilt,
            persisted: inner.persisted,
            loaded: inner.loaded,
            patched: inner.patched,
            rebuilds: self.rebuilds.load(Ordering::Relaxed),
            memory_bytes: n * inner.exact.dim() * 4
                + inner.hnsw.as_ref().map_or(0, HnswIndex::memory_usage),
            params: self.params,
        }
    }

    /// Waits until no background load or build runs (true) or `timeout` passes (false).
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        self.gate.wait_idle(timeout)
    }

    /// The graph build under way, if any: vectors inserted so far and how many it covers (for
    /// a progress bar).
    pub fn build_progress(&self) -> Option<(usize, usize)> {
        let total = self.progress.total.load(Ordering::Relaxed);
        (total > 0).then(|| (self.progress.done.load(Ordering::Relaxed).min(total), total))
    }

    /// Rebuilds the graph from the exact index now (for `mira index rebuild`), then saves it.
    /// A build already running is waited for and, when it built from the database, kept instead of
    /// building a second time. Searches keep being served meanwhile. Returns the number of
    /// vectors indexed.
    pub fn rebuild_blocking(&self) -> Result<usize> {
        let builds_before = self.rebuilds.load(Ordering::Relaxed);
        self.gate.enter();
        let fresh = {
            let inner = self.read();
            self.rebuilds.load(Ordering::Relaxed) > builds_before
                && !inner.loaded
                && inner.hnsw.as_ref().map(HnswIndex::len) == Some(inner.exact.len())
        };
        let out = if fresh {
            Ok(self.len())
        } else {
            self.rebuild_now(&AtomicBool::new(false))
        };
        self.gate.leave();
        let n = out?;
        if let Err(e) = self.save() {
            tracing::warn!("vector index: rebuilt but not saved: {e}");
        }
        Ok(n)
    }

    /// Builds a new graph from a snapshot of the exact index and swaps it in. The gate is held.
    fn rebuild_now(&self, cancel: &AtomicBool) -> Result<usize> {
        let (entries, dim) = {
            let inner = self.read();
            (inner.exact.entries(), inner.exact.dim())
        };
        if dim == 0 {
            return Ok(0);
        }
        let started = Instant::now();
        let Some(graph) = self.progress.build(dim, self.params, &entries, cancel)? else {
            return Ok(0);
        };
        drop(entries);
        self.rebuilds.fetch_add(1, Ordering::Relaxed);
        let n = self.install(graph, Origin::Built)?;
        tracing::info!(
            "vector index: HNSW built over {n} vectors in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        Ok(n)
    }

    /// Reconciles `graph` with the exact index (off the lock, then the remainder under it) and
    /// makes it the live graph. Returns its size.
    fn install(&self, mut graph: HnswIndex, origin: Origin) -> Result<usize> {
        let (removes, adds) = plan(&graph, &self.read().exact);
        let mut patched = apply(&mut graph, removes, adds)?;
        let _m = lock(&self.mutation);
        let mut inner = self.write();
        let (removes, adds) = plan(&graph, &inner.exact);
        patched += apply(&mut graph, removes, adds)?;
        let n = graph.len();
        inner.hnsw = Some(graph);
        inner.generation += 1;
        match origin {
            Origin::Loaded { built_at } => {
                inner.loaded = true;
                inner.patched = patched;
                inner.persisted = patched == 0;
                inner.last_rebuilt = built_at;
            }
            Origin::Built => {
                inner.loaded = false;
                inner.patched = 0;
                inner.persisted = false;
                inner.last_rebuilt = Some(Utc::now());
            }
        }
        Ok(n)
    }

    /// Loads the persisted graph if its files verify and differ from the database by at most 10 % of
    /// the entries; `Ok(false)` (with the reason logged) if it must be rebuilt instead.
    fn try_load(&self) -> Result<bool> {
        let (fingerprint, dim) = {
            let inner = self.read();
            (inner.exact.fingerprint(), inner.exact.dim())
        };
        if dim == 0 {
            return Ok(false);
        }
        let expect = Expect {
            schema_version: self.store.schema_version()?,
            dim,
            params: self.params,
        };
        let loaded = match persist::load(&self.dir, &expect) {
            Ok(l) => l,
            Err(reason) => {
                tracing::info!("vector index: persisted graph not used ({reason}); rebuilding");
                return Ok(false);
            }
        };
        let diff = sorted_diff(&loaded.keys, &fingerprint);
        let limit = (fingerprint.len() / 10).max(256);
        if diff > limit {
            tracing::info!(
                "vector index: persisted graph differs from the database by {diff} entries; rebuilding"
            );
            return Ok(false);
        }
        let labels: HashMap<u64, (String, String)> = {
            let inner = self.read();
            loaded
                .keys
                .iter()
                .filter_map(|(k, _, _)| inner.exact.entry_labels(*k).map(|l| (*k, l)))
                .collect()
        };
        let entries = loaded.keys.iter().map(|&(key, id, digest)| {
            let (wing, room) = labels.get(&key).cloned().unwrap_or_default();
            (key, id, wing, room, digest)
        });
        let graph = match HnswIndex::restore(&loaded.index, dim, self.params, entries) {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!("vector index: persisted graph unreadable ({e}); rebuilding");
                return Ok(false);
            }
        };
        let built_at = loaded.meta.built_at_ms.and_then(millis_to_time);
        let n = self.install(graph, Origin::Loaded { built_at })?;
        tracing::info!(
            "vector index: HNSW loaded from {} ({n} vectors, {diff} patched)",
            self.dir.display()
        );
        Ok(true)
    }

    /// Writes the graph beside the database (atomically; see the module docs). Returns false if
    /// there is no graph to save yet. Cheap when nothing changed since the last save.
    pub fn save(&self) -> Result<bool> {
        let _s = lock(&self.save_lock);
        let (meta, index, keys, generation) = {
            let inner = self.read();
            let Some(h) = inner.hnsw.as_ref() else {
                return Ok(false);
            };
            if inner.persisted {
                return Ok(true);
            }
            let mut fp: Vec<(u64, MemoryId, u64)> = h
                .keys()
                .filter_map(|k| h.identity(k).map(|(id, d)| (k, id, d)))
                .collect();
            fp.sort_unstable_by_key(|e| e.0);
            let p = h.params();
            let meta = Meta {
                format: persist::FORMAT_VERSION,
                schema_version: self.store.schema_version()?,
                dim: h.dim(),
                count: fp.len(),
                metric: "ip".into(),
                m: p.m,
                ef_construction: p.ef_construction,
                ef_search: p.ef_search,
                keys_sha256: String::new(),
                keys_bytes: 0,
                index_sha256: String::new(),
                index_bytes: 0,
                built_at_ms: inner.last_rebuilt.map(|t| t.timestamp_millis()),
                saved_at_ms: Utc::now().timestamp_millis(),
                usearch_version: usearch::version().to_string(),
            };
            (
                meta,
                h.to_bytes()?,
                persist::encode_keys(&fp),
                inner.generation,
            )
        };
        persist::save(&self.dir, meta, &index, &keys)?;
        let mut inner = self.write();
        if inner.generation == generation {
            inner.persisted = true;
        }
        Ok(true)
    }

    /// Brings the catalog, the exact index and the graph in step with the database: rows written,
    /// archived or deleted by this process or another one since the last call. Costs what the
    /// store's [`ChangeFeed::changes_since`](crate::ChangeFeed::changes_since) costs when nothing
    /// changed (no query on SQLite), else one read of the changed rows (everything is reloaded
    /// when the log no longer reaches back far enough).
    pub fn sync_from_store(&self) -> Result<SyncReport> {
        let _m = lock(&self.mutation);
        let cursor = lock(&self.cursor).clone();
        let Some(changes) = self.store.changes_since(&cursor)? else {
            return Ok(SyncReport::default());
        };
        if changes.complete && changes.keys.is_empty() {
            *lock(&self.cursor) = changes.cursor;
            return Ok(SyncReport::default());
        }
        let mut report = SyncReport {
            changed: true,
            ..SyncReport::default()
        };
        if changes.complete {
            let rows = self.store.rows_at(&changes.keys)?;
            let (added, removed) = self.apply_rows(rows);
            report.added = added;
            report.removed = removed;
        } else {
            report.reloaded = true;
            let (added, removed) = self.reload()?;
            report.added = added;
            report.removed = removed;
        }
        *lock(&self.cursor) = changes.cursor;
        Ok(report)
    }

    /// Applies rows read from the database (`None`: archived or gone); returns (added, removed). The
    /// mutation lock is held.
    fn apply_rows(&self, rows: Vec<(u64, Option<LiveRow>)>) -> (usize, usize) {
        if rows.is_empty() {
            return (0, 0);
        }
        let (mut added, mut removed) = (0, 0);
        let mut inner = self.write();
        let inner = &mut *inner;
        let mut graph_failed = false;
        for (key, row) in rows {
            match row {
                Some(row) => {
                    let vector = row.vector.clone().map(|v| IndexEntry {
                        key,
                        id: row.row.card.id,
                        wing: row.row.card.wing.to_string(),
                        room: row.row.card.room.to_string(),
                        vector: v,
                    });
                    add_row(&mut inner.catalog, &mut inner.exact, row);
                    added += 1;
                    match (vector, inner.hnsw.as_mut()) {
                        (Some(e), Some(h)) if inner.exact.contains_key(key) => {
                            graph_failed |= h.insert(e).is_err();
                        }
                        (_, Some(h)) => {
                            h.remove_key(key);
                        }
                        _ => {}
                    }
                }
                None => {
                    let was = inner.catalog.remove_key(key);
                    inner.exact.remove_key(key);
                    if let Some(h) = inner.hnsw.as_mut() {
                        h.remove_key(key);
                    }
                    removed += usize::from(was);
                }
            }
        }
        inner.generation += 1;
        inner.persisted = false;
        let needs_graph = inner.hnsw.is_none() && !inner.exact.is_empty();
        if graph_failed {
            inner.hnsw = None;
        }
        if graph_failed || (needs_graph && !self.gate.is_busy()) {
            self.start_rebuild();
        }
        (added, removed)
    }

    /// Reloads every live row and reconciles the graph with it; returns (added, removed).
    fn reload(&self) -> Result<(usize, usize)> {
        let rows = self.store.live_rows()?;
        let live: std::collections::HashSet<u64> = rows.iter().map(|r| r.row.card.key).collect();
        let gone: Vec<(u64, Option<LiveRow>)> = self
            .read()
            .catalog
            .keys()
            .filter(|k| !live.contains(k))
            .map(|k| (k, None))
            .collect();
        let (_, removed) = self.apply_rows(gone);
        let (added, _) = self.apply_rows(
            rows.into_iter()
                .map(|r| (r.row.card.key, Some(r)))
                .collect(),
        );
        Ok((added, removed))
    }
}

/// A consistent read-only view of the catalog and the vectors ([`VectorIndexManager::view`]).
pub struct IndexView<'a> {
    inner: &'a Inner,
    params: IndexParams,
}

impl IndexView<'_> {
    /// The catalog of live memories.
    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// The stored (unit) vector of the memory under `key`, if it has one.
    pub fn vector(&self, key: u64) -> Option<&[f32]> {
        self.inner.exact.vector(key)
    }

    /// The `k` live memories most similar to `query` among those matching `filter`, best first
    /// (ties by key). Exact below `exact_threshold` vectors or while the graph is not ready; see
    /// the module docs for the filtered case. Never returns a memory that is not indexed.
    pub fn search(&self, query: &[f32], k: usize, filter: &Scope) -> Vec<Hit> {
        let exact = &self.inner.exact;
        let n = exact.len();
        let Some(h) = self
            .inner
            .hnsw
            .as_ref()
            .filter(|_| n >= self.params.exact_threshold)
        else {
            return exact.search(query, k, filter);
        };
        let subset = exact.count_matching(filter);
        if subset == 0 || k == 0 {
            return Vec::new();
        }
        if subset < self.params.exact_threshold {
            return exact.search(query, k, filter);
        }
        match h.try_search(query, k, filter) {
            Ok(cands) => {
                let hits = exact.rescore(query, cands.into_iter().map(|c| c.0), k);
                if hits.len() < k.min(subset) {
                    return exact.search(query, k, filter);
                }
                hits
            }
            Err(e) => {
                tracing::debug!("vector index: HNSW search failed, scanning exactly: {e}");
                exact.search(query, k, filter)
            }
        }
    }
}

/// Adds a live row to the catalog and, when it has a vector the index accepts, to the exact
/// index (a vector it refuses is logged and dropped from the exact index). Returns whether the
/// vector, if any, was indexed.
fn add_row(catalog: &mut Catalog, exact: &mut ExactIndex, row: LiveRow) -> bool {
    let LiveRow { row, vector } = row;
    let key = row.card.key;
    let entry = vector.map(|v| IndexEntry {
        key,
        id: row.card.id,
        wing: row.card.wing.to_string(),
        room: row.card.room.to_string(),
        vector: v,
    });
    catalog.upsert(row);
    match entry {
        Some(e) => match exact.insert(e) {
            Ok(()) => true,
            Err(err) => {
                tracing::warn!("vector index: memory seq {key} has no usable vector: {err}");
                exact.remove_key(key);
                false
            }
        },
        None => {
            exact.remove_key(key);
            true
        }
    }
}

/// Number of records that differ between two key-sorted lists.
fn sorted_diff(a: &[(u64, MemoryId, u64)], b: &[(u64, MemoryId, u64)]) -> usize {
    let (mut i, mut j, mut diff) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                diff += 1;
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                diff += 1;
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                if a[i] != b[j] {
                    diff += 2;
                }
                i += 1;
                j += 1;
            }
        }
    }
    diff + (a.len() - i) + (b.len() - j)
}

/// The background job of `open` (load or build) and of a rebuild after a failure. `Ok(true)`
/// when there was nothing to build.
fn background(me: &Weak<VectorIndexManager>, try_load: bool, cancel: &AtomicBool) -> Result<bool> {
    {
        let Some(mgr) = me.upgrade() else {
            return Ok(false);
        };
        if try_load && mgr.try_load()? {
            return Ok(false);
        }
    }
    // Build without keeping the manager alive: dropping it cancels the build.
    let (entries, dim, params, progress) = {
        let Some(mgr) = me.upgrade() else {
            return Ok(false);
        };
        let inner = mgr.read();
        (
            inner.exact.entries(),
            inner.exact.dim(),
            mgr.params,
            mgr.progress.clone(),
        )
    };
    if dim == 0 || entries.is_empty() {
        return Ok(true);
    }
    let started = Instant::now();
    let Some(graph) = progress.build(dim, params, &entries, cancel)? else {
        return Ok(false);
    };
    drop(entries);
    let Some(mgr) = me.upgrade() else {
        return Ok(false);
    };
    mgr.rebuilds.fetch_add(1, Ordering::Relaxed);
    let n = mgr.install(graph, Origin::Built)?;
    tracing::info!(
        "vector index: HNSW built over {n} vectors in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if let Err(e) = mgr.save() {
        tracing::warn!("vector index: built but not saved: {e}");
    }
    Ok(false)
}
