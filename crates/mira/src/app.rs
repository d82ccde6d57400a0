//! The application: configuration, the store, the index and the embedder (the last two read or
//! loaded on first use: opening waits for neither, and commands that need neither never pay for
//! them).

use crate::config::{Config, ConfigSource, StorageBackend};
use crate::ops::{Metrics, TimedEmbedder};
use crate::webhooks::{Dispatcher, MemoryEvent};
use anyhow::{Context, Result};
use mira_embed::Embedder;
use mira_store::index::{IndexParams, VectorIndexManager};
use mira_store::{MemoryStore, PgStore, SqliteStore, Store};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// How the embedder is obtained the first time it is needed.
type EmbedderFactory = Box<dyn Fn() -> Result<Arc<dyn Embedder>> + Send + Sync>;

/// Everything a use case needs.
pub struct App {
    /// The validated configuration.
    pub config: Config,
    /// Where it came from.
    pub config_source: ConfigSource,
    /// The database.
    pub store: Arc<dyn Store>,
    /// The vector index over the stored embeddings, read on first use (see [`App::index`]).
    index: OnceLock<Arc<VectorIndexManager>>,
    /// Held while the index is read, so that callers arriving meanwhile wait for that read.
    index_opening: Mutex<()>,
    /// Where the index keeps its files.
    index_dir: PathBuf,
    /// The index's parameters (`hnsw` in the configuration).
    index_params: IndexParams,
    /// Identifies this process's session (memories stored through it carry it).
    pub session_id: String,
    /// When the application started.
    pub started: Instant,
    /// The Prometheus series (served on `/metrics` when `metrics.enabled`).
    pub metrics: Arc<Metrics>,
    webhooks: Option<Dispatcher>,
    embedder: OnceLock<Arc<dyn Embedder>>,
    /// Held while the model loads, so that callers arriving meanwhile wait for that load
    /// instead of starting their own.
    loading: Mutex<()>,
    factory: EmbedderFactory,
    /// The name of the model `factory` loads, recorded with every embedding.
    model_name: String,
    /// Whether the missing model was already logged (once per process).
    warned_missing_model: AtomicBool,
    query_cache: Mutex<lru::LruCache<String, Vec<f32>>>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl App {
    /// Opens the store described by `config` (creating the storage directory and applying
    /// migrations). The embedding model is loaded on first use.
    pub fn open(config: Config, config_source: ConfigSource) -> Result<App> {
        let embeddings = config.embeddings.clone();
        let model_name = embeddings.precision.model_name();
        let factory: EmbedderFactory = Box::new(move || {
            let model = load_model(&embeddings)?;
            Ok(Arc::new(model) as Arc<dyn Embedder>)
        });
        Self::open_with(config, config_source, factory, model_name)
    }

    /// Opens the store with a given embedder (tests use the deterministic one).
    pub fn open_with_embedder(config: Config, embedder: Arc<dyn Embedder>) -> Result<App> {
        let name = embedder.model_name().to_owned();
        Self::open_with(
            config,
            ConfigSource::Defaults,
            Box::new(move || Ok(embedder.clone())),
            name,
        )
    }

    fn open_with(
        config: Config,
        config_source: ConfigSource,
        factory: EmbedderFactory,
        model_name: String,
    ) -> Result<App> {
        let dir = config.storage_dir();
        ensure_writable_dir(&dir)?;
        // Detached: it only fills process-wide caches, and ends in well under a second.
        let _ = std::thread::Builder::new()
            .name("mira-warm-up".into())
            .spawn(mira_core::warm_up);
        let store = open_store(&config)?;
        tracing::info!(
            "mira {}: database {} (config: {})",
            env!("CARGO_PKG_VERSION"),
            store.location(),
            match &config_source {
                ConfigSource::File(p) => p.display().to_string(),
                ConfigSource::Defaults => "defaults".into(),
            }
        );
        for w in config.retired_key_warnings() {
            tracing::warn!("{w}");
        }
        let h = &config.hnsw;
        let params = IndexParams {
            m: h.m,
            ef_construction: if h.ef_construction == 0 {
                IndexParams::default().ef_construction
            } else {
                h.ef_construction
            },
            ef_search: h.ef_search,
            exact_threshold: h.exact_threshold,
        };
        if !store.is_read_only() {
            spawn_cost_filler(store.clone());
        }
        let metrics = Arc::new(Metrics::new()?);
        let webhooks = if config.webhooks.enabled {
            Some(
                Dispatcher::start(&config.webhooks, store.clone(), metrics.clone())
                    .context("webhooks")?,
            )
        } else {
            None
        };
        let cache_size = std::num::NonZeroUsize::new(config.embeddings.cache_size.max(1))
            .unwrap_or(std::num::NonZeroUsize::MIN);
        Ok(App {
            query_cache: Mutex::new(lru::LruCache::new(cache_size)),
            config,
            config_source,
            store,
            index: OnceLock::new(),
            index_opening: Mutex::new(()),
            index_dir: dir.join("index"),
            index_params: params,
            session_id: uuid::Uuid::new_v4().to_string(),
            started: Instant::now(),
            metrics,
            webhooks,
            embedder: OnceLock::new(),
            loading: Mutex::new(()),
            factory,
            model_name,
            warned_missing_model: AtomicBool::new(false),
        })
    }

    /// The embedder, loading the model the first time (once, however many threads ask).
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>> {
        if let Some(e) = self.embedder.get() {
            return Ok(e.clone());
        }
        let _loading = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = self.embedder.get() {
            return Ok(e.clone());
        }
        let loaded: Arc<dyn Embedder> =
            Arc::new(TimedEmbedder::new((self.factory)()?, self.metrics.clone()));
        Ok(self.embedder.get_or_init(|| loaded).clone())
    }

    /// The embedder, or `None` when the model files are not installed: memories are then stored
    /// without a vector and recall ranks by BM25 alone (logged once per process). Other load
    /// failures (a corrupt model) are errors.
    pub fn embedder_if_installed(&self) -> Result<Option<Arc<dyn Embedder>>> {
        match self.embedder() {
            Ok(e) => Ok(Some(e)),
            Err(e) if is_model_missing(&e) => {
                if !self.warned_missing_model.swap(true, Ordering::Relaxed) {
                    tracing::info!(
                        "no embedding model in {}: memories are stored without a vector and recall is lexical only; install it with scripts/fetch-model.sh, then run `mira index embed-missing`",
                        self.model_dir().display()
                    );
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The name of the embedding model, recorded with each embedding it computes.
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// Whether an embedding recorded as made by `model` comes from the model in use (the
    /// Hugging Face spelling `sentence-transformers/<name>` of earlier versions included).
    pub fn is_current_model(&self, model: &str) -> bool {
        model == self.model_name
            || model.strip_prefix("sentence-transformers/") == Some(self.model_name.as_str())
    }

    /// Whether the model has been loaded yet.
    pub fn embedder_loaded(&self) -> bool {
        self.embedder.get().is_some()
    }

    /// A cached query embedding.
    pub fn query_cache_get(&self, query: &str) -> Option<Vec<f32>> {
        self.query_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(query)
            .cloned()
    }

    /// Caches a query embedding (least recently used entries are evicted).
    pub fn query_cache_put(&self, query: &str, vector: Vec<f32>) {
        self.query_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .put(query.to_owned(), vector);
    }

    /// The in-memory index (catalog, BM25 terms, exact vectors, HNSW graph), read from the
    /// database the first time it is needed (once, however many threads ask): every live
    /// memory, ~2 s at 100,000, which commands that never search (timeline, load, pin,
    /// export …) do not pay. Servers read it at start.
    pub fn index(&self) -> Result<&Arc<VectorIndexManager>> {
        if let Some(index) = self.index.get() {
            return Ok(index);
        }
        let _opening = self.index_opening.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = self.index.get() {
            return Ok(index);
        }
        let index =
            VectorIndexManager::open(self.store.clone(), &self.index_dir, self.index_params)
                .context("cannot open the vector index")?;
        Ok(self.index.get_or_init(|| index))
    }

    /// The index if this process has read it.
    pub fn index_if_open(&self) -> Option<&Arc<VectorIndexManager>> {
        self.index.get()
    }

    /// The index in step with the database: read now, or brought up to date.
    pub fn synced_index(&self) -> Result<&Arc<VectorIndexManager>> {
        self.sync_index();
        self.index()
    }

    /// Brings the in-memory index, if read, in step with the database: what this process just
    /// wrote and what other processes committed (an index not read yet will read the database
    /// as it is then; its saved graph is reconciled with it, vector by vector). A failure only
    /// delays the visibility of those rows to recall (the next call retries), so it is logged.
    pub fn sync_index(&self) {
        let Some(index) = self.index.get() else {
            return;
        };
        match index.sync_from_store() {
            Ok(r) if r.reloaded => tracing::info!(
                "index: reloaded from the database ({} memories)",
                index.view(|v| v.catalog().len())
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!("index not synchronised with the database: {e}"),
        }
    }

    /// Sends webhook events (built by `events` only when webhooks are enabled). Never blocks
    /// nor fails: what cannot be queued is dead-lettered.
    pub fn notify_webhooks(&self, events: impl FnOnce() -> Vec<MemoryEvent>) {
        if let Some(w) = &self.webhooks {
            for e in events() {
                w.enqueue(&e);
            }
        }
    }

    /// The model directory in use.
    pub fn model_dir(&self) -> PathBuf {
        model_dir(&self.config)
    }

    /// Whether the model's files are in [`App::model_dir`] (or it is loaded already).
    pub fn model_installed(&self) -> bool {
        self.embedder_loaded()
            || mira_embed::missing_file(&self.model_dir(), self.config.embeddings.precision)
                .is_none()
    }
}

/// The database of `storage.backend`, its migrations applied.
fn open_store(config: &Config) -> Result<Arc<dyn Store>> {
    Ok(match config.storage.backend {
        StorageBackend::Sqlite => {
            let db = config.db_path();
            Arc::new(
                SqliteStore::open(&db, &config.sqlite_options())
                    .with_context(|| format!("cannot open the database {}", db.display()))?,
            )
        }
        StorageBackend::Postgres => Arc::new(
            PgStore::open(&config.postgres_options())
                .context("cannot open the PostgreSQL database (storage.postgres)")?,
        ),
    })
}

/// Computes, in the background, the section costs of memories stored before the current render
/// format (an upgraded store, or an import without them); recall computes missing ones itself
/// meanwhile. Each chunk is one transaction, so an interrupted pass resumes at the next start.
fn spawn_cost_filler(store: Arc<dyn MemoryStore>) {
    let fill = move || -> mira_store::Result<usize> {
        let version = mira_core::render::RENDER_VERSION;
        let mut done = 0;
        loop {
            let memories = store.uncosted(version, 256)?;
            if memories.is_empty() {
                return Ok(done);
            }
            let costs: Vec<_> = memories
                .iter()
                .map(|m| (m.id, mira_core::render::mode_costs(m)))
                .collect();
            store.set_costs(&costs, version)?;
            done += costs.len();
        }
    };
    let spawned = std::thread::Builder::new()
        .name("mira-costs".into())
        .spawn(move || match fill() {
            Ok(0) => {}
            Ok(n) => tracing::info!("section costs computed for {n} memories"),
            Err(e) => tracing::warn!("section costs not computed: {e}"),
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the section-cost pass: {e}");
    }
}

/// Whether `e` says that the model files are not installed.
fn is_model_missing(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<mira_embed::EmbedError>(),
            Some(mira_embed::EmbedError::ModelMissing { .. })
        )
    })
}

fn model_dir(config: &Config) -> PathBuf {
    mira_embed::resolve_model_dir(config.embeddings.model_dir.as_deref())
}

/// Loads the embedding model as `embeddings:` configures it (directory, precision, threads,
/// batch size).
pub fn load_model(embeddings: &crate::config::EmbeddingsConfig) -> Result<mira_embed::MiniLm> {
    let dir = mira_embed::resolve_model_dir(embeddings.model_dir.as_deref());
    Ok(mira_embed::MiniLm::load_with(
        &dir,
        &embeddings.model_options(),
    )?)
}

/// Creates `dir` if needed and checks that files can be written in it.
fn ensure_writable_dir(dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create the storage directory {} (storage.path / MIRA_STORAGE_PATH)",
            dir.display()
        )
    })?;
    let probe = dir.join(format!(".mira-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| {
        format!(
            "the storage directory {} is not writable (storage.path / MIRA_STORAGE_PATH)",
            dir.display()
        )
    })?;
    let _ = std::fs::remove_file(probe);
    ignore_in_git(dir);
    Ok(())
}

/// A project-local store (`<project>/.mira`) gets a `.gitignore` of `*`, so that `git add -A`
/// never commits memories. An existing `.gitignore` is left as it is.
fn ignore_in_git(dir: &std::path::Path) {
    let gitignore = dir.join(".gitignore");
    if dir.file_name().is_some_and(|n| n == ".mira") && !gitignore.exists() {
        let text = "# mira's memory store: kept out of git\n*\n";
        if let Err(e) = std::fs::write(&gitignore, text) {
            tracing::warn!("cannot write {}: {e}", gitignore.display());
        }
    }
}
