//! Configuration: the YAML file, its defaults (those of the reference), validation and the
//! `MIRA_*` environment overrides.
//!
//! Resolution of the file: `--config FILE`, else `$MIRA_CONFIG`, else `<project>/.mira/config.yaml`,
//! else `~/.config/mira/config.yaml`; when none exists the defaults apply. Unknown keys and
//! out-of-range values are errors that name the key.

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

mod allocator;
mod archive;
mod embeddings;
mod extraction;
mod hnsw;
mod hooks;
mod mcp;
mod metrics;
mod paths;
mod recall;
mod retired;
mod soul;
mod storage;
#[cfg(test)]
mod tests;
mod webhooks;

pub use allocator::AllocatorConfig;
pub use archive::ArchiveThresholds;
pub use embeddings::EmbeddingsConfig;
pub use extraction::ExtractionConfig;
pub use hnsw::HnswConfig;
pub use hooks::HooksConfig;
pub use mcp::{McpConfig, McpHttpConfig, McpTransport, ScopedToken};
pub use metrics::MetricsConfig;
pub use paths::StorageChoice;
pub use recall::{
    NothingRelevantConfig, QueryExpansion, RankingConfig, RecallConfig, SupersededPolicy,
};
pub use retired::RETIRED_KEYS;
pub use soul::{SoulConfig, SoulDrift, SoulEvolution, SoulExtraction, SoulModelSwap, SoulRecall};
pub use storage::{
    JournalMode, PostgresConfig, SqliteConfig, StorageBackend, StorageConfig, Synchronous,
    TempStore,
};
pub use webhooks::{WebhookEndpoint, WebhookEndpointDetail, WebhooksConfig};

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

/// Where the configuration came from, for `mira status`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigSource {
    /// A file.
    File(PathBuf),
    /// No file: built-in defaults.
    Defaults,
}

impl Config {
    /// Parses YAML text. Errors name the offending key (`recall.rrf_k: invalid type…`).
    pub fn from_yaml(text: &str) -> Result<Config> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let mut value: serde_norway::Value =
            serde_norway::from_str(text).map_err(|e| anyhow!("{e}"))?;
        let retired_keys = retired::remove_retired(&mut value);
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
                .or_else(paths::default_config_file),
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
}
