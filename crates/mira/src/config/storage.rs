//! `storage:`: the backend, its directory, PostgreSQL and SQLite options.

use super::checks::{check, in_range};
use super::Config;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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

impl Config {
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

impl StorageConfig {
    /// Checks `storage:`.
    pub(super) fn validate(&self) -> Result<()> {
        let pg = &self.postgres;
        check(
            self.backend == StorageBackend::Sqlite || pg.url.is_some(),
            "storage.postgres.url",
            "must be set with storage.backend: postgres (or $MIRA_DATABASE_URL), as postgres://user:password@host:5432/mira",
        )?;
        in_range(pg.pool_size, 1..=1000, "storage.postgres.pool_size")?;
        in_range(
            pg.connect_timeout_secs,
            1..=3600,
            "storage.postgres.connect_timeout_secs",
        )
    }
}
