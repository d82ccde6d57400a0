//! Configuration: the YAML file, its defaults (those of the reference), validation and the
//! `MIRA_*` environment overrides.
//!
//! Resolution of the file: `--config FILE`, else `$MIRA_CONFIG`, else `<project>/.mira/config.yaml`,
//! else `~/.config/mira/config.yaml`; when none exists the defaults apply. Unknown keys and
//! out-of-range values are errors that name the key.

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the database and the index live.
    pub storage: StorageConfig,
    /// The embedding model.
    pub embeddings: EmbeddingsConfig,
    /// The Context Budget Allocator.
    pub allocator: AllocatorConfig,
    /// Age in days after which `mira archive` archives a type.
    pub archive_thresholds: ArchiveThresholds,
    /// Store-time extraction.
    pub extraction: ExtractionConfig,
    /// The HNSW index.
    pub hnsw: HnswConfig,
    /// The recall pipeline.
    pub recall: RecallConfig,
    /// The identity extension.
    pub soul: SoulConfig,
    /// The MCP server.
    pub mcp: McpConfig,
    /// Health and Prometheus metrics endpoint.
    pub metrics: MetricsConfig,
    /// Outgoing webhooks.
    pub webhooks: WebhooksConfig,
    /// The client hooks (`mira hook`): the briefing at session start, capture.
    pub hooks: HooksConfig,
    /// Keys of the file that mira accepts and ignores (see [`RETIRED_KEYS`]), warned about
    /// when the application opens.
    #[serde(skip)]
    pub retired_keys: Vec<String>,
    /// The environment variable that set `storage.path`, if one did.
    #[serde(skip)]
    pub storage_path_env: Option<&'static str>,
}

/// Why the storage directory is the one it is (`mira status` says it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageChoice {
    /// An environment variable (`MIRA_STORAGE_PATH`, or the reference's `MIRA_DATA_PATH`).
    Env(&'static str),
    /// `storage.path` in the config file.
    ConfigFile,
    /// The project holding the working directory: the nearest folder at or above it with
    /// `marker` (`.mira`, else `.git`).
    Project {
        /// The project's folder.
        root: PathBuf,
        /// What makes it a project.
        marker: &'static str,
    },
    /// No project: the user's data folder, shared by every folder outside a project.
    User,
}

impl StorageChoice {
    /// Why, in a sentence's words: "MIRA_STORAGE_PATH", "the project /src/app (it has .git)".
    pub fn describe(&self) -> String {
        match self {
            StorageChoice::Env(name) => format!("{name} (set in the environment)"),
            StorageChoice::ConfigFile => "storage.path in the config file".into(),
            StorageChoice::Project { root, marker } => format!(
                "the project {}: the nearest folder at or above this one with {marker}",
                root.display()
            ),
            StorageChoice::User => {
                "the user's data folder: this folder is in no project (no .git or .mira above it)"
                    .into()
            }
        }
    }
}

/// Keys that the reference or earlier versions used and that mira accepts but ignores, with
/// why: recall ranks by relevance and the allocator walks down that ranking (README, "Recall
/// quality"), so the reference's scoring stages have no setting left, and a few informational
/// keys of the reference's file have no use here. Each one found is warned about once, when
/// the application opens.
pub const RETIRED_KEYS: &[(&str, &str)] = &[
    ("system", "informational in the reference; mira reports its own version"),
    ("embeddings.model_hash", "each embedding records the model that computed it"),
    ("overlap_cache", "recall ranks by relevance and reads no pairwise similarities: the overlap cache is gone"),
    ("hnsw.Ml", "the HNSW library derives the level multiplier from hnsw.M"),
    ("recall.query_expansion.temperature", "query variants are cleaned forms of the query, not sampled"),
    ("metrics.report_interval_seconds", "/metrics is read when scraped, nothing is reported on a timer"),
    ("decay_rates", "recall no longer weighs memories by age"),
    ("allocator.recency_floor", "recall no longer weighs memories by age"),
    ("allocator.density_sigmoid", "recall no longer weighs memories by fact density"),
    ("allocator.session_window_seconds", "the session boost is replaced by session-neighbour propagation (recall.ranking.propagation)"),
    ("allocator.session_boost_beta", "the session boost is replaced by session-neighbour propagation (recall.ranking.propagation)"),
    ("allocator.session_boost_max", "the session boost is replaced by session-neighbour propagation (recall.ranking.propagation)"),
    ("allocator.causal_penalty_alpha", "the causal penalty is gone: relevance decides"),
    ("allocator.early_pruning_threshold", "unused by the reference too; see allocator.relevance_floor"),
    ("recall.adaptive_threshold_method", "replaced by allocator.relevance_floor"),
    ("recall.adaptive_threshold_floor", "replaced by allocator.relevance_floor"),
    ("recall.adaptive_threshold_ceiling", "replaced by allocator.relevance_floor"),
    ("recall.enable_fts5", "recall keeps its own BM25 index (recall.ranking)"),
    ("recall.fts5_limit", "recall keeps its own BM25 index (recall.ranking)"),
    ("recall.rrf_k", "lexical and dense scores are fused by z-scores (recall.ranking.lexical_weight)"),
    ("recall.fusion_weight", "replaced by recall.ranking.lexical_weight"),
    ("recall.search_time_clustering", "near duplicates are shown as headers (allocator.redundancy_threshold)"),
    ("recall.reranker", "the heuristic reranker is gone: the ranking is recall.ranking"),
    ("embeddings.current_model", "mira runs all-MiniLM-L6-v2 from embeddings.model_dir, and each embedding records the model that computed it"),
];

/// A closed set of configuration words: parsed by serde, so that a wrong value is refused
/// when the file is read, with the key and the accepted words.
macro_rules! config_words {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $word:literal $(| $alias:literal)?),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $word $(, alias = $alias)?)] $variant,)+
        }
        impl $name {
            /// The word as written in the configuration.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }
        }
    };
}

config_words! {
    /// `storage.sqlite.journal_mode`: SQLite's `PRAGMA journal_mode`.
    JournalMode {
        /// Write-ahead log: readers run beside the writer (the default).
        Wal = "WAL" | "wal",
        /// Rollback journal, deleted after each transaction.
        Delete = "DELETE" | "delete",
        /// Rollback journal, truncated after each transaction.
        Truncate = "TRUNCATE" | "truncate",
        /// Rollback journal, its header zeroed after each transaction.
        Persist = "PERSIST" | "persist",
        /// Rollback journal in memory.
        Memory = "MEMORY" | "memory",
        /// No journal: a crash can corrupt the database.
        Off = "OFF" | "off",
    }
}

config_words! {
    /// `storage.sqlite.synchronous`: SQLite's `PRAGMA synchronous`.
    Synchronous {
        /// No syncing: fast, and a power loss can corrupt the database.
        Off = "OFF" | "off",
        /// Durable across process crashes in WAL mode (the default).
        Normal = "NORMAL" | "normal",
        /// Synced at every commit.
        Full = "FULL" | "full",
        /// As FULL, and the journal's directory too.
        Extra = "EXTRA" | "extra",
    }
}

config_words! {
    /// `storage.sqlite.temp_store`: SQLite's `PRAGMA temp_store`.
    TempStore {
        /// SQLite's compile-time default.
        Default = "DEFAULT" | "default",
        /// Temporary tables in files.
        File = "FILE" | "file",
        /// Temporary tables in memory (the default).
        Memory = "MEMORY" | "memory",
    }
}

config_words! {
    /// `recall.superseded`: what recall does with a memory another one superseded.
    SupersededPolicy {
        /// Shown as a header only, right after its successor (the default).
        Header = "header",
        /// Left out.
        Exclude = "exclude",
    }
}

config_words! {
    /// `mcp.transport`: how `mira serve` talks to its clients when no `--http` is given.
    McpTransport {
        /// Newline-delimited JSON-RPC on stdin/stdout (the default).
        Stdio = "stdio",
        /// Streamable HTTP on `mcp.http.addr`.
        Http = "http",
    }
}

/// `storage:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageConfig {
    /// Which database holds the memories: `sqlite` (one file in `path`, the default) or
    /// `postgres` (a server several mira servers share, `storage.postgres`).
    pub backend: StorageBackend,
    /// Directory holding `mira.db` and `index/`. Unset: `<project>/.mira` inside a project
    /// (a directory with `.git` or `.mira` at or above the working directory), else
    /// `~/.local/share/mira`. With PostgreSQL, it holds the index files only.
    pub path: Option<PathBuf>,
    /// The PostgreSQL database (`backend: postgres`).
    pub postgres: PostgresConfig,
    /// SQLite pragmas.
    pub sqlite: SqliteConfig,
    /// Replace obvious secrets (API keys, private keys, `password=` values) by
    /// `[REDACTED:<kind>]` before a memory is stored (on by default).
    pub redact_secrets: bool,
}
impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            backend: StorageBackend::default(),
            path: None,
            postgres: PostgresConfig::default(),
            sqlite: SqliteConfig::default(),
            redact_secrets: true,
        }
    }
}

/// `storage.backend:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageBackend {
    /// One SQLite file (embedded, one machine).
    #[default]
    Sqlite,
    /// PostgreSQL (>= 15) with pgvector, shared by several servers.
    Postgres,
}

/// `storage.postgres:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PostgresConfig {
    /// `postgres://user:password@host:5432/database` (also `$MIRA_DATABASE_URL`).
    pub url: Option<String>,
    /// Connections this process keeps open.
    pub pool_size: u32,
    /// `disable`, `prefer` (encrypted when the server offers it), `require` (encrypted),
    /// `verify-ca` (and the certificate chain checked) or `verify-full` (and the host name
    /// too). Unset: the URL's `sslmode`, else `prefer`; both set, they must agree.
    pub tls: Option<mira_store::TlsMode>,
    /// PEM file of the certificates trusted to sign the server's (instead of the system's);
    /// the URL's `sslrootcert` says the same and must agree.
    pub tls_root_cert: Option<PathBuf>,
    /// Seconds to wait for the server or for a free connection.
    pub connect_timeout_secs: u64,
}
impl Default for PostgresConfig {
    fn default() -> Self {
        PostgresConfig {
            url: None,
            pool_size: 8,
            tls: None,
            tls_root_cert: None,
            connect_timeout_secs: 10,
        }
    }
}

/// `storage.sqlite:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SqliteConfig {
    /// Journal mode (WAL).
    pub journal_mode: JournalMode,
    /// Synchronous level (NORMAL).
    pub synchronous: Synchronous,
    /// Page cache size (negative: KiB).
    pub cache_size: i64,
    /// Memory-mapped I/O size in bytes.
    pub mmap_size: i64,
    /// Temp store (MEMORY).
    pub temp_store: TempStore,
    /// Busy timeout in milliseconds (waiting for another writer).
    pub busy_timeout_ms: u64,
}
impl Default for SqliteConfig {
    fn default() -> Self {
        SqliteConfig {
            journal_mode: JournalMode::Wal,
            synchronous: Synchronous::Normal,
            cache_size: -64000,
            mmap_size: 268_435_456,
            temp_store: TempStore::Memory,
            busy_timeout_ms: 10_000,
        }
    }
}

/// `embeddings:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingsConfig {
    /// Folder holding the model files; unset: `$MIRA_MODEL_DIR`, else
    /// `~/.cache/mira/models/all-MiniLM-L6-v2`.
    pub model_dir: Option<PathBuf>,
    /// Embedding dimension (384 for all-MiniLM-L6-v2; other values are rejected).
    pub dimension: usize,
    /// Most texts per forward pass of the model (stores, imports and concurrent requests are
    /// batched up to it).
    pub batch_size: usize,
    /// Capacity of the LRU cache of query embeddings.
    pub cache_size: usize,
    /// The graph the model runs: `int8` (quantised, the default: ~2.5× less CPU, the same
    /// recall on the dev set) or `f32` (the reference vectors).
    pub precision: mira_embed::Precision,
    /// Model threads (each runs its own forward passes); 0: one per core.
    pub threads: usize,
}
impl Default for EmbeddingsConfig {
    fn default() -> Self {
        EmbeddingsConfig {
            model_dir: None,
            dimension: 384,
            batch_size: mira_embed::DEFAULT_BATCH_SIZE,
            cache_size: 1000,
            precision: mira_embed::Precision::Int8,
            threads: 0,
        }
    }
}
impl EmbeddingsConfig {
    /// How the model is run.
    pub fn model_options(&self) -> mira_embed::ModelOptions {
        mira_embed::ModelOptions {
            precision: self.precision,
            threads: self.threads,
            batch_size: self.batch_size,
        }
    }
}

/// `allocator:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AllocatorConfig {
    /// Budget used when a recall gives none.
    pub default_budget: u32,
    /// Candidates taken from each search.
    pub max_candidates: usize,
    /// Memories less relevant than this, relative to the most relevant one, are not shown
    /// (in [0, 1]; the most relevant is always shown).
    pub relevance_floor: f32,
    /// Cosine similarity in [0, 1] at which a memory is redundant with one already shown: it is
    /// shown as a header only.
    pub redundancy_threshold: f32,
    /// Share of the budget in [0, 1] that pinned memories may take.
    pub pinned_share: f32,
}
impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig {
            default_budget: 4000,
            max_candidates: 100,
            relevance_floor: 0.45,
            redundancy_threshold: 0.95,
            pinned_share: 0.2,
        }
    }
}

/// `archive_thresholds:` (days; absent types never auto-archive). Only session notes and debug
/// logs age out: decisions, facts and preferences must stay null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchiveThresholds {
    /// session_note
    pub session_note: Option<u32>,
    /// debug_log
    pub debug_log: Option<u32>,
    /// decision: must be null (never by age)
    pub decision: Option<u32>,
    /// fact: must be null (never by age)
    pub fact: Option<u32>,
    /// preference: must be null (never by age)
    pub preference: Option<u32>,
}
impl Default for ArchiveThresholds {
    fn default() -> Self {
        ArchiveThresholds {
            session_note: Some(30),
            debug_log: Some(7),
            decision: None,
            fact: None,
            preference: None,
        }
    }
}

/// `extraction:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtractionConfig {
    /// Shortest entity kept, in characters.
    pub min_entity_length: usize,
    /// How many earlier memories of the wing causal detection looks at.
    pub causal_lookback: usize,
    /// How old (days) an earlier memory may be to be linked.
    pub causal_max_days: u32,
    /// Cosine similarity a causal link needs to its target.
    pub causal_min_similarity: f32,
    /// Cosine similarity above which a new memory is linked to an existing one as a near duplicate.
    pub near_duplicate_threshold: f32,
}
impl Default for ExtractionConfig {
    fn default() -> Self {
        ExtractionConfig {
            min_entity_length: 2,
            causal_lookback: 50,
            causal_max_days: 30,
            causal_min_similarity: 0.45,
            near_duplicate_threshold: 0.95,
        }
    }
}

/// `hnsw:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HnswConfig {
    /// Graph degree M.
    #[serde(rename = "M")]
    pub m: usize,
    /// Candidate list size while building (0: the library's default).
    pub ef_construction: usize,
    /// Candidate list size while searching.
    pub ef_search: usize,
    /// Below this many memories the exact scan is used.
    pub exact_threshold: usize,
}
impl Default for HnswConfig {
    fn default() -> Self {
        HnswConfig {
            m: 32,
            ef_construction: 0,
            ef_search: 100,
            exact_threshold: 20_000,
        }
    }
}

/// `recall.query_expansion:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueryExpansion {
    /// Average the embeddings of cleaned variants of the query (off by default: it helped
    /// recall on two of the five dev conversations only, and quadruples a fresh query's cost).
    pub enabled: bool,
    /// Variants besides the original.
    pub num_variants: usize,
}
impl Default for QueryExpansion {
    fn default() -> Self {
        QueryExpansion {
            enabled: false,
            num_variants: 3,
        }
    }
}

/// `recall:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecallConfig {
    /// Query expansion.
    pub query_expansion: QueryExpansion,
    /// Close the context block with one line that says how to read it (budgets from 500).
    pub instructions: bool,
    /// What recall does with a superseded memory (its successor is always brought in).
    pub superseded: SupersededPolicy,
    /// Of two memories of the block about the same thing, show the newer first and mark the
    /// older one as an earlier statement (off by default: it costs LoCoMo evidence, see the
    /// README).
    pub newer_first: bool,
    /// The relevance ranking.
    pub ranking: RankingConfig,
    /// When a recall says that nothing in memory closely matches its query.
    pub nothing_relevant: NothingRelevantConfig,
}

/// `recall.nothing_relevant:` when no memory stands out from the rest of the scope, the block
/// shows only the nearest few and says so (README, "Nothing relevant").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NothingRelevantConfig {
    /// Something stands out when the best cosine reaches this share, in [0, 1], of the way
    /// from the scope's mean cosine with the query to a perfect match.
    pub dense: f32,
    /// ... or when one memory holds this share, in [0, 1], of the query's information (the
    /// IDF of its words).
    pub lexical: f32,
    /// Memories shown when nothing stands out (at most).
    pub memories: usize,
}
impl Default for NothingRelevantConfig {
    fn default() -> Self {
        NothingRelevantConfig {
            dense: 0.3,
            lexical: 0.4,
            memories: 3,
        }
    }
}
impl NothingRelevantConfig {
    /// The levels as the ranking states them.
    pub fn levels(&self) -> mira_core::rank::StandoutLevels {
        mira_core::rank::StandoutLevels {
            dense: self.dense,
            lexical: self.lexical,
        }
    }
}

/// `recall.ranking:` how memories are ranked by relevance (docs/benchmarks.md, "Recall quality").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingConfig {
    /// Weight in [0, 1] of the BM25 z-score in the fused score (the cosine has the rest).
    pub lexical_weight: f32,
    /// Weight (≥ 0) of the best-matching neighbours in the same session (0: off).
    pub propagation: f32,
    /// Decay in [0, 1] of a neighbour's weight per step away.
    pub propagation_decay: f32,
    /// Neighbours counted on each side (0..=10).
    pub propagation_reach: usize,
    /// A memory longer than this many tokens receives proportionally less from its neighbours
    /// (0: no limit): a short turn of a chat needs the turns around it, a long one stands alone.
    pub propagation_tokens: u32,
    /// In [0, 1]: how much a memory's own score limits what its neighbours add (0: not at
    /// all; 1: a perfect match gains nothing).
    pub propagation_saturation: f32,
    /// What (≥ 0) each further memory of a session already ranked higher loses, so that the
    /// best candidates reach more sessions (0: off).
    pub session_diversity: f32,
    /// Added (≥ 0) to memories by or about the one person a query names.
    pub entity_boost: f32,
    /// BM25 term-frequency saturation k1 (0..=5).
    pub bm25_k1: f32,
    /// BM25 length normalisation b in [0, 1].
    pub bm25_b: f32,
    /// Scopes of at most this many memories are scored whole; larger ones from the best
    /// `allocator.max_candidates` of each search and their session neighbours.
    pub exhaustive_below: usize,
}
impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            lexical_weight: 0.4,
            propagation: 0.5,
            propagation_decay: 0.5,
            propagation_reach: 3,
            propagation_tokens: 128,
            propagation_saturation: 0.0,
            session_diversity: 0.05,
            entity_boost: 0.2,
            bm25_k1: 0.9,
            bm25_b: 0.0,
            exhaustive_below: 20_000,
        }
    }
}
impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            query_expansion: QueryExpansion::default(),
            instructions: true,
            superseded: SupersededPolicy::Header,
            newer_first: false,
            ranking: RankingConfig::default(),
            nothing_relevant: NothingRelevantConfig::default(),
        }
    }
}

/// `soul.extraction:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulExtraction {
    /// Traits below this confidence are not stored.
    pub min_trait_confidence: f64,
    /// Observations before a trait is considered established.
    pub min_observations_for_trait: u32,
}
impl Default for SoulExtraction {
    fn default() -> Self {
        SoulExtraction {
            min_trait_confidence: 0.3,
            min_observations_for_trait: 5,
        }
    }
}

/// `soul.recall:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulRecall {
    /// Default token budget of `soul_recall`.
    pub default_budget_tokens: u32,
}
impl Default for SoulRecall {
    fn default() -> Self {
        SoulRecall {
            default_budget_tokens: 1000,
        }
    }
}

/// `soul.drift_detection:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulDrift {
    /// Drift above this is reported as significant.
    pub threshold: f64,
    /// Versions compared by default.
    pub window_size: u32,
    /// Check drift after each capture.
    pub auto_check_after_capture: bool,
}
impl Default for SoulDrift {
    fn default() -> Self {
        SoulDrift {
            threshold: 0.3,
            window_size: 10,
            auto_check_after_capture: true,
        }
    }
}

/// `soul.model_swap:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulModelSwap {
    /// Produce a reinforcement prompt on model swap.
    pub auto_reinforce: bool,
}
impl Default for SoulModelSwap {
    fn default() -> Self {
        SoulModelSwap {
            auto_reinforce: true,
        }
    }
}

/// `soul.evolution:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulEvolution {
    /// Keep a history of identity versions.
    pub enabled: bool,
    /// Versions kept per agent.
    pub max_history_versions: u32,
}
impl Default for SoulEvolution {
    fn default() -> Self {
        SoulEvolution {
            enabled: true,
            max_history_versions: 100,
        }
    }
}

/// `soul:`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoulConfig {
    /// Serve the `soul_*` tools.
    pub enabled: bool,
    /// Capture.
    pub extraction: SoulExtraction,
    /// Identity prompt.
    pub recall: SoulRecall,
    /// Drift detection.
    pub drift_detection: SoulDrift,
    /// Model swap.
    pub model_swap: SoulModelSwap,
    /// History.
    pub evolution: SoulEvolution,
}

/// `hooks:`, what `mira hook` does for a coding agent's client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// Keep what sessions leave (`pre-compact`, `session-end`, `stop`); `false` in a project's
    /// `.mira/config.yaml` turns capture off for that project.
    pub capture: bool,
    /// Wings never captured (a per-project switch in a configuration shared by every project).
    pub capture_skip_wings: Vec<String>,
    /// The wing of the hooks' sessions; unset: `$MIRA_WING`, else the git repository's name,
    /// else the working directory's name.
    pub wing: Option<String>,
    /// Tokens of the briefing `session-start` puts before the agent.
    pub session_start_budget: u32,
    /// Tokens of what `user-prompt` adds for a prompt (when something stands out).
    pub user_prompt_budget: u32,
}
impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            capture: true,
            capture_skip_wings: Vec::new(),
            wing: None,
            session_start_budget: 1500,
            user_prompt_budget: 600,
        }
    }
}

/// `mcp.http:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpHttpConfig {
    /// Address of `mira serve --http` when no address is given.
    pub addr: String,
    /// A bearer token with every right (every wing, destructive calls included).
    pub auth_token: Option<String>,
    /// Scoped bearer tokens, each with its wings and rights, kept as SHA-256 digests.
    pub tokens: Vec<ScopedToken>,
}
impl McpHttpConfig {
    /// Whether the HTTP transport and the memory browser require a bearer token (`auth_token`
    /// or any of `tokens`).
    pub fn requires_token(&self) -> bool {
        self.auth_token.as_deref().is_some_and(|t| !t.is_empty()) || !self.tokens.is_empty()
    }
}

impl Default for McpHttpConfig {
    fn default() -> Self {
        McpHttpConfig {
            addr: "127.0.0.1:8765".into(),
            auth_token: None,
            tokens: Vec::new(),
        }
    }
}

/// One scoped token of `mcp.http.tokens` (`mira token new` writes one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopedToken {
    /// Its name: in refusals and in the log of destructive calls.
    pub name: String,
    /// The SHA-256 of the token, 64 hex digits (`mira token hash` computes it); the token
    /// itself is not kept.
    pub sha256: String,
    /// The wings it may read (recall, load, timeline, status, export); `*`: every wing.
    #[serde(default)]
    pub read: Vec<String>,
    /// The wings it may write to (store, pin, edit); `*`: every wing.
    #[serde(default)]
    pub write: Vec<String>,
    /// Whether it may archive, clear and forget memories of the wings it writes.
    #[serde(default)]
    pub destructive: bool,
}

/// `mcp:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Server name announced to clients.
    pub name: String,
    /// Server version announced to clients.
    pub version: String,
    /// How `mira serve` talks to its clients when no `--http` is given.
    pub transport: McpTransport,
    /// Per-request timeout in seconds.
    pub timeout_seconds: u64,
    /// Streamable HTTP transport.
    pub http: McpHttpConfig,
}
impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            name: "mira".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            transport: McpTransport::Stdio,
            timeout_seconds: 30,
            http: McpHttpConfig::default(),
        }
    }
}

/// `metrics:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Unset: `mira serve --http` serves `/health` and `/metrics` on its own port, a stdio
    /// server nowhere (every MCP client starts its own). `true`: also on a listener of their own
    /// at `prometheus_addr`, for either transport; `false`: nowhere.
    pub enabled: Option<bool>,
    /// The address of that listener of their own (loopback by default).
    pub prometheus_addr: String,
    /// When set, `/metrics` and `/health` require `Authorization: Bearer <token>`
    /// (`/health/live` and `/health/ready` stay open for probes).
    pub auth_token: Option<String>,
}
impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: None,
            prometheus_addr: "127.0.0.1:9090".into(),
            auth_token: None,
        }
    }
}

/// One webhook endpoint: a URL, or an object with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WebhookEndpoint {
    /// Just the URL (all events, no secret).
    Url(String),
    /// URL with options.
    Detailed(WebhookEndpointDetail),
}

/// A webhook endpoint with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookEndpointDetail {
    /// http(s) URL.
    pub url: String,
    /// HMAC-SHA256 secret for the signature header.
    #[serde(default)]
    pub secret: Option<String>,
    /// Events delivered (`*` or names); all when empty.
    #[serde(default)]
    pub events: Vec<String>,
    /// Include the memory content in payloads.
    #[serde(default)]
    pub include_content: bool,
    /// Per-request timeout in seconds for this endpoint (default `webhooks.timeout_seconds`).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// `webhooks:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhooksConfig {
    /// Deliver events.
    pub enabled: bool,
    /// Delivery workers.
    pub workers: usize,
    /// Queue capacity; a full queue dead-letters the event.
    pub queue_size: usize,
    /// Per-request timeout in seconds.
    pub timeout_seconds: u64,
    /// Retries after a failed attempt before the event is dead-lettered.
    pub max_retries: u32,
    /// Delay before the first retry (doubled each retry, with jitter), in milliseconds.
    pub backoff_initial_ms: u64,
    /// Longest delay between retries, in milliseconds.
    pub backoff_max_ms: u64,
    /// Consecutive failed attempts that open an endpoint's circuit breaker.
    pub circuit_failures: u32,
    /// How long an open circuit refuses deliveries before one trial, in milliseconds.
    pub circuit_cooldown_ms: u64,
    /// Endpoints.
    pub endpoints: Vec<WebhookEndpoint>,
}
impl Default for WebhooksConfig {
    fn default() -> Self {
        WebhooksConfig {
            enabled: false,
            workers: 3,
            queue_size: 1000,
            timeout_seconds: 30,
            max_retries: 3,
            backoff_initial_ms: 500,
            backoff_max_ms: 30_000,
            circuit_failures: 5,
            circuit_cooldown_ms: 30_000,
            endpoints: vec![],
        }
    }
}

/// Where the configuration came from, for `mira status`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigSource {
    /// A file.
    File(PathBuf),
    /// No file: built-in defaults.
    Defaults,
}

/// Removes the [`RETIRED_KEYS`] present in a parsed file; returns those it found.
fn remove_retired(value: &mut serde_norway::Value) -> Vec<String> {
    let mut found = Vec::new();
    for (key, _) in RETIRED_KEYS {
        let mut path: Vec<&str> = key.split('.').collect();
        let leaf = path.pop().unwrap_or(key);
        let mut map = value.as_mapping_mut();
        for part in path {
            map = map
                .and_then(|m| m.get_mut(part))
                .and_then(serde_norway::Value::as_mapping_mut);
        }
        if map.and_then(|m| m.remove(leaf)).is_some() {
            found.push((*key).to_string());
        }
    }
    found
}

impl Config {
    /// Parses YAML text. Errors name the offending key (`recall.rrf_k: invalid type…`).
    pub fn from_yaml(text: &str) -> Result<Config> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let mut value: serde_norway::Value =
            serde_norway::from_str(text).map_err(|e| anyhow!("{e}"))?;
        let retired_keys = remove_retired(&mut value);
        let mut cfg: Config = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path == "." || path.is_empty() {
                anyhow!("{inner}")
            } else {
                anyhow!("{path}: {inner}")
            }
        })?;
        cfg.retired_keys = retired_keys;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The warnings about [`RETIRED_KEYS`] found in the file, one per key.
    pub fn retired_key_warnings(&self) -> Vec<String> {
        self.retired_keys
            .iter()
            .filter_map(|k| RETIRED_KEYS.iter().find(|(name, _)| name == k))
            .map(|(k, why)| {
                format!("config: `{k}` is no longer used and is ignored ({why}); remove it")
            })
            .collect()
    }

    /// Loads the config file (see the module docs for the search order), applies the
    /// environment overrides and validates the result.
    pub fn load(explicit: Option<&Path>) -> Result<(Config, ConfigSource)> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => std::env::var_os("MIRA_CONFIG")
                .map(PathBuf::from)
                .or_else(default_config_file),
        };
        let (mut cfg, source) = match path {
            Some(p) => {
                if p.is_dir() {
                    bail!(
                        "config file {} is a directory: pass the path of a YAML file",
                        p.display()
                    );
                }
                let text = std::fs::read_to_string(&p)
                    .with_context(|| format!("cannot read config file {}", p.display()))?;
                let cfg = Config::from_yaml(&text)
                    .with_context(|| format!("invalid config file {}", p.display()))?;
                (cfg, ConfigSource::File(p))
            }
            None => (Config::default(), ConfigSource::Defaults),
        };
        cfg.apply_env(|k| std::env::var(k).ok())?;
        cfg.validate()?;
        Ok((cfg, source))
    }

    /// Applies the `MIRA_*` overrides read through `var`.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<()> {
        let nonempty = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        for name in ["MIRA_STORAGE_PATH", "MIRA_DATA_PATH"] {
            if let Some(p) = nonempty(name) {
                self.storage.path = Some(PathBuf::from(p));
                self.storage_path_env = Some(name);
                break;
            }
        }
        if let Some(b) = nonempty("MIRA_STORAGE_BACKEND") {
            self.storage.backend = match b.trim().to_ascii_lowercase().as_str() {
                "sqlite" => StorageBackend::Sqlite,
                "postgres" => StorageBackend::Postgres,
                other => bail!("MIRA_STORAGE_BACKEND={other}: expected sqlite or postgres"),
            };
        }
        if let Some(url) = nonempty("MIRA_DATABASE_URL") {
            self.storage.postgres.url = Some(url);
        }
        if let Some(p) = nonempty("MIRA_MODEL_DIR") {
            self.embeddings.model_dir = Some(PathBuf::from(p));
        }
        if let Some(p) = nonempty("MIRA_EMBEDDINGS_PRECISION") {
            self.embeddings.precision = p
                .parse()
                .map_err(|e| anyhow!("MIRA_EMBEDDINGS_PRECISION: {e}"))?;
        }
        let flag = |k: &str| -> Result<Option<bool>> {
            match nonempty(k)
                .as_deref()
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                None => Ok(None),
                Some("1" | "true" | "yes" | "on") => Ok(Some(true)),
                Some("0" | "false" | "no" | "off") => Ok(Some(false)),
                Some(other) => bail!("{k}={other}: expected true or false"),
            }
        };
        if let Some(b) = flag("MIRA_SOUL_ENABLED")? {
            self.soul.enabled = b;
        }
        if let Some(b) = flag("MIRA_METRICS_ENABLED")? {
            self.metrics.enabled = Some(b);
        }
        if let Some(a) = nonempty("MIRA_METRICS_ADDR") {
            self.metrics.prometheus_addr = a;
        }
        if let Some(b) = flag("MIRA_WEBHOOKS_ENABLED")? {
            self.webhooks.enabled = b;
        }
        if let Some(a) = nonempty("MIRA_HTTP_ADDR") {
            self.mcp.http.addr = a;
        }
        Ok(())
    }

    /// Checks every value's range; the error names the key and the accepted range.
    pub fn validate(&self) -> Result<()> {
        fn check(ok: bool, key: &str, what: &str) -> Result<()> {
            if ok {
                Ok(())
            } else {
                bail!("{key}: {what}")
            }
        }
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        let a = &self.allocator;
        let pg = &self.storage.postgres;
        check(
            self.storage.backend == StorageBackend::Sqlite || pg.url.is_some(),
            "storage.postgres.url",
            "must be set with storage.backend: postgres (or $MIRA_DATABASE_URL), as postgres://user:password@host:5432/mira",
        )?;
        check(
            (1..=1000).contains(&pg.pool_size),
            "storage.postgres.pool_size",
            "must be in 1..=1000",
        )?;
        check(
            (1..=3600).contains(&pg.connect_timeout_secs),
            "storage.postgres.connect_timeout_secs",
            "must be in 1..=3600",
        )?;
        check(
            self.embeddings.dimension == 384,
            "embeddings.dimension",
            "must be 384 (all-MiniLM-L6-v2)",
        )?;
        check(
            (1..=1024).contains(&self.embeddings.batch_size),
            "embeddings.batch_size",
            "must be in 1..=1024",
        )?;
        check(
            self.embeddings.cache_size >= 1,
            "embeddings.cache_size",
            "must be at least 1",
        )?;
        check(
            self.embeddings.threads <= 256,
            "embeddings.threads",
            "must be in 0..=256 (0: every core)",
        )?;
        check(
            (1..=100_000).contains(&a.default_budget),
            "allocator.default_budget",
            "must be in 1..=100000",
        )?;
        check(
            (1..=10_000).contains(&a.max_candidates),
            "allocator.max_candidates",
            "must be in 1..=10000",
        )?;
        check(
            unit(a.relevance_floor as f64),
            "allocator.relevance_floor",
            "must be in [0, 1]",
        )?;
        check(
            unit(a.redundancy_threshold as f64),
            "allocator.redundancy_threshold",
            "must be in [0, 1]",
        )?;
        check(
            unit(a.pinned_share as f64),
            "allocator.pinned_share",
            "must be in [0, 1]",
        )?;
        let t = &self.archive_thresholds;
        for (k, v) in [("session_note", t.session_note), ("debug_log", t.debug_log)] {
            check(
                v != Some(0),
                &format!("archive_thresholds.{k}"),
                "must be at least 1 day (omit it to never archive)",
            )?;
        }
        for (k, v) in [
            ("decision", t.decision),
            ("fact", t.fact),
            ("preference", t.preference),
        ] {
            check(
                v.is_none(),
                &format!("archive_thresholds.{k}"),
                "must be null: decisions, facts and preferences never age out of recall (archive one by id: mira archive --id ID)",
            )?;
        }
        let x = &self.extraction;
        check(
            (1..=64).contains(&x.min_entity_length),
            "extraction.min_entity_length",
            "must be in 1..=64",
        )?;
        check(
            (1..=1000).contains(&x.causal_lookback),
            "extraction.causal_lookback",
            "must be in 1..=1000",
        )?;
        check(
            x.causal_max_days >= 1,
            "extraction.causal_max_days",
            "must be at least 1",
        )?;
        check(
            unit(x.causal_min_similarity as f64),
            "extraction.causal_min_similarity",
            "must be in [0, 1]",
        )?;
        check(
            unit(x.near_duplicate_threshold as f64),
            "extraction.near_duplicate_threshold",
            "must be in [0, 1]",
        )?;
        let h = &self.hnsw;
        check((2..=128).contains(&h.m), "hnsw.M", "must be in 2..=128")?;
        check(
            h.ef_construction <= 4096,
            "hnsw.ef_construction",
            "must be in 0..=4096",
        )?;
        check(
            (1..=4096).contains(&h.ef_search),
            "hnsw.ef_search",
            "must be in 1..=4096",
        )?;
        let r = &self.recall;
        check(
            r.query_expansion.num_variants <= 10,
            "recall.query_expansion.num_variants",
            "must be in 0..=10",
        )?;
        let k = &r.ranking;
        check(
            unit(k.lexical_weight as f64),
            "recall.ranking.lexical_weight",
            "must be in [0, 1]",
        )?;
        check(
            (0.0..=10.0).contains(&k.propagation),
            "recall.ranking.propagation",
            "must be in [0, 10]",
        )?;
        check(
            unit(k.propagation_decay as f64),
            "recall.ranking.propagation_decay",
            "must be in [0, 1]",
        )?;
        check(
            k.propagation_reach <= 10,
            "recall.ranking.propagation_reach",
            "must be in 0..=10",
        )?;
        check(
            k.propagation_tokens <= 100_000,
            "recall.ranking.propagation_tokens",
            "must be in 0..=100000 (0: no limit)",
        )?;
        check(
            unit(k.propagation_saturation as f64),
            "recall.ranking.propagation_saturation",
            "must be in [0, 1]",
        )?;
        check(
            (0.0..=1.0).contains(&k.session_diversity),
            "recall.ranking.session_diversity",
            "must be in [0, 1]",
        )?;
        check(
            (0.0..=10.0).contains(&k.entity_boost),
            "recall.ranking.entity_boost",
            "must be in [0, 10]",
        )?;
        let n = &r.nothing_relevant;
        check(
            unit(n.dense as f64),
            "recall.nothing_relevant.dense",
            "must be in [0, 1]",
        )?;
        check(
            unit(n.lexical as f64),
            "recall.nothing_relevant.lexical",
            "must be in [0, 1]",
        )?;
        check(
            n.memories <= 100,
            "recall.nothing_relevant.memories",
            "must be in 0..=100",
        )?;
        check(
            (0.0..=5.0).contains(&k.bm25_k1),
            "recall.ranking.bm25_k1",
            "must be in [0, 5]",
        )?;
        check(
            unit(k.bm25_b as f64),
            "recall.ranking.bm25_b",
            "must be in [0, 1]",
        )?;
        let s = &self.soul;
        check(
            unit(s.extraction.min_trait_confidence),
            "soul.extraction.min_trait_confidence",
            "must be in [0, 1]",
        )?;
        check(
            unit(s.drift_detection.threshold),
            "soul.drift_detection.threshold",
            "must be in [0, 1]",
        )?;
        check(
            s.recall.default_budget_tokens >= 1,
            "soul.recall.default_budget_tokens",
            "must be at least 1",
        )?;
        check(
            self.mcp.timeout_seconds >= 1,
            "mcp.timeout_seconds",
            "must be at least 1",
        )?;
        check(
            self.mcp.http.addr.parse::<std::net::SocketAddr>().is_ok(),
            "mcp.http.addr",
            "must be an IP:port address such as 127.0.0.1:8765",
        )?;
        if self.metrics.enabled != Some(false) {
            check(
                self.metrics
                    .prometheus_addr
                    .parse::<std::net::SocketAddr>()
                    .is_ok(),
                "metrics.prometheus_addr",
                "must be an IP:port address such as 127.0.0.1:9090",
            )?;
        }
        let h = &self.hooks;
        check(
            (100..=100_000).contains(&h.session_start_budget),
            "hooks.session_start_budget",
            "must be in 100..=100000",
        )?;
        check(
            (100..=100_000).contains(&h.user_prompt_budget),
            "hooks.user_prompt_budget",
            "must be in 100..=100000",
        )?;
        for (key, name) in h
            .capture_skip_wings
            .iter()
            .map(|w| ("hooks.capture_skip_wings", w))
            .chain(h.wing.iter().map(|w| ("hooks.wing", w)))
        {
            check(
                crate::usecases::validate::name("wing", name).is_ok(),
                key,
                "must be wing names: 1-64 ASCII letters, digits, '-', '_' or '.'",
            )?;
        }
        let w = &self.webhooks;
        check(w.workers >= 1, "webhooks.workers", "must be at least 1")?;
        check(
            w.queue_size >= 1,
            "webhooks.queue_size",
            "must be at least 1",
        )?;
        check(
            w.timeout_seconds >= 1,
            "webhooks.timeout_seconds",
            "must be at least 1",
        )?;
        check(
            w.max_retries <= 20,
            "webhooks.max_retries",
            "must be in 0..=20",
        )?;
        check(
            w.backoff_initial_ms >= 1 && w.backoff_max_ms >= w.backoff_initial_ms,
            "webhooks.backoff_initial_ms",
            "must be at least 1 and at most webhooks.backoff_max_ms",
        )?;
        check(
            w.circuit_failures >= 1,
            "webhooks.circuit_failures",
            "must be at least 1",
        )?;
        check(
            w.circuit_cooldown_ms >= 1,
            "webhooks.circuit_cooldown_ms",
            "must be at least 1",
        )?;
        self.validate_tokens()?;
        for (i, e) in w.endpoints.iter().enumerate() {
            let url = match e {
                WebhookEndpoint::Url(u) => u,
                WebhookEndpoint::Detailed(d) => &d.url,
            };
            check(
                url.starts_with("http://") || url.starts_with("https://"),
                &format!("webhooks.endpoints[{i}]"),
                "must be an http:// or https:// URL",
            )?;
        }
        Ok(())
    }

    /// Checks `mcp.http.tokens`: names and digests unique and well formed, wings valid names
    /// or `*`.
    fn validate_tokens(&self) -> Result<()> {
        let mut names = std::collections::HashSet::new();
        let mut digests = std::collections::HashSet::new();
        for (i, t) in self.mcp.http.tokens.iter().enumerate() {
            let key = format!("mcp.http.tokens[{i}]");
            if crate::usecases::validate::name("name", &t.name).is_err() {
                bail!("{key}.name: give 1-64 ASCII letters, digits, '-', '_' or '.' (e.g. ci-bot)");
            }
            if !names.insert(t.name.as_str()) {
                bail!(
                    "{key}.name: '{}' names two tokens; give each its own name",
                    t.name
                );
            }
            let digest = t.sha256.trim();
            if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
                bail!("{key}.sha256: give the token's SHA-256 as 64 hex digits (`mira token hash` prints it; `mira token new` makes a token and its entry)");
            }
            if !digests.insert(t.sha256.to_ascii_lowercase()) {
                bail!("{key}.sha256: two tokens have the same digest; give each its own token");
            }
            for (list, wings) in [("read", &t.read), ("write", &t.write)] {
                for w in wings {
                    if w.trim() != "*" && crate::usecases::validate::name("wing", w.trim()).is_err()
                    {
                        bail!("{key}.{list}: '{w}' is neither a wing name (1-64 ASCII letters, digits, '-', '_', '.') nor * (every wing)");
                    }
                }
            }
        }
        Ok(())
    }

    /// The storage directory (config, env, or the project/user default).
    pub fn storage_dir(&self) -> PathBuf {
        self.storage
            .path
            .clone()
            .unwrap_or_else(default_storage_dir)
    }

    /// Why [`Config::storage_dir`] is what it is.
    pub fn storage_choice(&self) -> StorageChoice {
        match (&self.storage.path, self.storage_path_env) {
            (Some(_), Some(name)) => StorageChoice::Env(name),
            (Some(_), None) => StorageChoice::ConfigFile,
            (None, _) => match project_root() {
                Some(root) => {
                    let marker = if root.join(".mira").is_dir() {
                        ".mira"
                    } else {
                        ".git"
                    };
                    StorageChoice::Project { root, marker }
                }
                None => StorageChoice::User,
            },
        }
    }

    /// Whether the store exists: always for PostgreSQL (the server holds it), for SQLite when
    /// its file does. Commands that only read (or change what is stored) open only a store
    /// that exists, so that they create nothing.
    pub fn store_exists(&self) -> bool {
        match self.storage.backend {
            StorageBackend::Postgres => true,
            StorageBackend::Sqlite => self.db_path().is_file(),
        }
    }

    /// The user's storage directory: the one of every folder outside a project.
    pub fn user_storage_dir() -> PathBuf {
        user_data_dir()
    }

    /// The database file inside the storage directory.
    pub fn db_path(&self) -> PathBuf {
        self.storage_dir().join("mira.db")
    }

    /// The PostgreSQL options for the store (`storage.postgres`).
    pub fn postgres_options(&self) -> mira_store::PgOptions {
        let p = &self.storage.postgres;
        mira_store::PgOptions {
            url: p.url.clone().unwrap_or_default(),
            pool_size: p.pool_size,
            tls: p.tls,
            root_cert: p.tls_root_cert.clone(),
            connect_timeout: std::time::Duration::from_secs(p.connect_timeout_secs),
        }
    }

    /// The SQLite options for the store.
    pub fn sqlite_options(&self) -> mira_store::SqliteOptions {
        let s = &self.storage.sqlite;
        mira_store::SqliteOptions {
            journal_mode: s.journal_mode.as_str().into(),
            synchronous: s.synchronous.as_str().into(),
            cache_size: s.cache_size,
            mmap_size: s.mmap_size,
            temp_store: s.temp_store.as_str().into(),
            busy_timeout: std::time::Duration::from_millis(s.busy_timeout_ms),
            ..mira_store::SqliteOptions::default()
        }
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The project root: the nearest directory at or above the working directory holding `.mira` or `.git`.
fn project_root() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let home = home();
    cwd.ancestors()
        .take_while(|d| Some(d.to_path_buf()) != home || d.join(".mira").is_dir())
        .find(|d| d.join(".mira").is_dir() || d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn default_storage_dir() -> PathBuf {
    match project_root() {
        Some(root) => root.join(".mira"),
        None => user_data_dir(),
    }
}

fn user_data_dir() -> PathBuf {
    match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x).join("mira"),
        None => home()
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".local/share/mira"),
    }
}

fn default_config_file() -> Option<PathBuf> {
    let project = project_root().map(|r| r.join(".mira/config.yaml"));
    let user = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".config")))
        .map(|c| c.join("mira/config.yaml"));
    [project, user].into_iter().flatten().find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_file_parses_to_the_defaults() {
        let text = include_str!("../../../config.example.yaml");
        let cfg = Config::from_yaml(text).unwrap();
        assert_eq!(cfg, Config::default());
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = Config::from_yaml("recall:\n  rrf_kk: 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("recall") && err.contains("rrf_kk"), "{err}");
        let err = Config::from_yaml("bogus: 1\n").unwrap_err().to_string();
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn wrong_types_are_named() {
        let err = Config::from_yaml("allocator:\n  default_budget: lots\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("allocator.default_budget"), "{err}");
    }

    #[test]
    fn retired_keys_are_accepted_and_warned_about() {
        let cfg = Config::from_yaml("allocator:\n  session_boost_max: 3\nrecall:\n  rrf_k: 60\n")
            .unwrap();
        assert_eq!(cfg.allocator, AllocatorConfig::default());
        let warnings = cfg.retired_key_warnings().join("\n");
        assert!(
            warnings.contains("allocator.session_boost_max") && warnings.contains("recall.rrf_k"),
            "{warnings}"
        );
    }

    #[test]
    fn the_overlap_cache_section_of_earlier_files_is_accepted_and_warned_about() {
        let cfg =
            Config::from_yaml("overlap_cache:\n  ttl_days: 30\n  max_entries: 1000000\n").unwrap();
        let warnings = cfg.retired_key_warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("`overlap_cache` is no longer used"),
            "{warnings:?}"
        );
    }

    #[test]
    fn the_postgres_backend_is_read_and_checked() {
        let cfg = Config::from_yaml(
            "storage:\n  backend: postgres\n  postgres:\n    url: postgres://m@db/mira\n    tls: verify-full\n",
        )
        .unwrap();
        assert_eq!(cfg.storage.backend, StorageBackend::Postgres);
        let opts = cfg.postgres_options();
        assert_eq!(
            (opts.url.as_str(), opts.tls),
            (
                "postgres://m@db/mira",
                Some(mira_store::TlsMode::VerifyFull)
            )
        );
        let err = Config::from_yaml("storage:\n  backend: postgres\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("storage.postgres.url"), "{err}");
        let err = Config::from_yaml("storage:\n  postgres:\n    tls: maybe\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("storage.postgres.tls"), "{err}");
        let mut cfg = Config::default();
        cfg.apply_env(|k| match k {
            "MIRA_STORAGE_BACKEND" => Some("postgres".into()),
            "MIRA_DATABASE_URL" => Some("postgres://m@h/x".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(cfg.storage.backend, StorageBackend::Postgres);
        assert_eq!(
            cfg.storage.postgres.url.as_deref(),
            Some("postgres://m@h/x")
        );
        let err = Config::default()
            .apply_env(|k| (k == "MIRA_STORAGE_BACKEND").then(|| "mysql".into()))
            .unwrap_err();
        assert!(err.to_string().contains("MIRA_STORAGE_BACKEND"), "{err}");
    }

    #[test]
    fn reference_keys_without_use_are_accepted_and_warned_about() {
        let text = "system:\n  version: \"1.0\"\nhnsw:\n  M: 16\n  Ml: 0.25\nrecall:\n  query_expansion:\n    temperature: 0.3\n    num_variants: 2\n";
        let cfg = Config::from_yaml(text).unwrap();
        assert_eq!(
            (cfg.hnsw.m, cfg.recall.query_expansion.num_variants),
            (16, 2)
        );
        let warnings = cfg.retired_key_warnings();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        for key in [
            "`system`",
            "`hnsw.Ml`",
            "`recall.query_expansion.temperature`",
        ] {
            assert!(
                warnings.iter().any(|w| w.contains(key)),
                "{key}: {warnings:?}"
            );
        }
    }

    #[test]
    fn closed_words_are_checked_when_the_file_is_read() {
        let cfg = Config::from_yaml(
            "storage:\n  sqlite:\n    journal_mode: delete\n    synchronous: FULL\nrecall:\n  superseded: exclude\nmcp:\n  transport: http\n",
        )
        .unwrap();
        assert_eq!(cfg.storage.sqlite.journal_mode, JournalMode::Delete);
        assert_eq!(cfg.sqlite_options().journal_mode, "DELETE");
        assert_eq!(cfg.sqlite_options().synchronous, "FULL");
        assert_eq!(cfg.recall.superseded, SupersededPolicy::Exclude);
        assert_eq!(cfg.mcp.transport, McpTransport::Http);
        for (text, key, words) in [
            (
                "recall:\n  superseded: hide\n",
                "recall.superseded",
                "`header` or `exclude`",
            ),
            (
                "mcp:\n  transport: sse\n",
                "mcp.transport",
                "`stdio` or `http`",
            ),
            (
                "storage:\n  sqlite:\n    synchronous: SOMETIMES\n",
                "storage.sqlite.synchronous",
                "`NORMAL`",
            ),
        ] {
            let err = Config::from_yaml(text).unwrap_err().to_string();
            assert!(err.contains(key) && err.contains(words), "{err}");
        }
    }

    #[test]
    fn embedding_precision_is_read_and_checked() {
        assert_eq!(
            Config::default().embeddings.precision,
            mira_embed::Precision::Int8
        );
        let cfg = Config::from_yaml("embeddings:\n  precision: f32\n  threads: 1\n").unwrap();
        assert_eq!(cfg.embeddings.precision, mira_embed::Precision::F32);
        assert_eq!(cfg.embeddings.model_options().threads, 1);
        let err = Config::from_yaml("embeddings:\n  precision: fp16\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("embeddings.precision"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_named() {
        let err = Config::from_yaml("allocator:\n  pinned_share: 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("allocator.pinned_share") && err.contains("[0, 1]"),
            "{err}"
        );
        let err = Config::from_yaml("webhooks:\n  endpoints: [ftp://x]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("webhooks.endpoints[0]"), "{err}");
    }

    #[test]
    fn env_overrides_apply() {
        let mut cfg = Config::default();
        cfg.apply_env(|k| match k {
            "MIRA_STORAGE_PATH" => Some("/tmp/x".into()),
            "MIRA_MODEL_DIR" => Some("/tmp/m".into()),
            "MIRA_SOUL_ENABLED" => Some("true".into()),
            "MIRA_EMBEDDINGS_PRECISION" => Some("f32".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(cfg.embeddings.precision, mira_embed::Precision::F32);
        let err = cfg
            .apply_env(|k| (k == "MIRA_EMBEDDINGS_PRECISION").then(|| "fp16".into()))
            .unwrap_err();
        assert!(err.to_string().contains("f32 or int8"), "{err}");
        assert_eq!(cfg.storage_dir(), PathBuf::from("/tmp/x"));
        assert_eq!(cfg.db_path(), PathBuf::from("/tmp/x/mira.db"));
        assert_eq!(cfg.embeddings.model_dir, Some(PathBuf::from("/tmp/m")));
        assert!(cfg.soul.enabled);
        let err = cfg
            .apply_env(|k| (k == "MIRA_SOUL_ENABLED").then(|| "maybe".into()))
            .unwrap_err();
        assert!(err.to_string().contains("MIRA_SOUL_ENABLED"));
    }
}
