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
mod checks;
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

    /// Checks every value's range, section by section; the error names the key and the
    /// accepted range.
    pub fn validate(&self) -> Result<()> {
        self.storage.validate()?;
        self.embeddings.validate()?;
        self.allocator.validate()?;
        self.archive_thresholds.validate()?;
        self.extraction.validate()?;
        self.hnsw.validate()?;
        self.recall.validate()?;
        self.soul.validate()?;
        self.mcp.validate()?;
        self.metrics.validate()?;
        self.hooks.validate()?;
        self.webhooks.validate()
    }
}
