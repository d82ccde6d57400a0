//! Where one benchmark store lives: a folder under the cache directory (the SQLite file and the
//! index files) and, with `storage.backend: postgres`, a database of its own on the configured
//! server, `mira_bench_<name>_<h>` (`h`: a digest of the configured database's name, so that
//! benchmarks configured on two databases of one server do not meet), its folder named alike:
//! two sizes never share a table, a catalog or an index.

use crate::config::{Config, StorageBackend};
use anyhow::{Context, Result};
use mira_store::{PgOptions, PgStore};
use std::path::{Path, PathBuf};

/// Marker written once a store is complete.
const COMPLETE: &str = "complete";

/// A benchmark store's folder, and its database on PostgreSQL.
pub struct Place {
    /// The configuration that opens it.
    pub config: Config,
    dir: PathBuf,
    /// The configured server and the database's name, on PostgreSQL.
    database: Option<(PgOptions, String)>,
}

impl Place {
    /// The store `name` (lower-case letters, digits and dashes) under `cache_dir` on the
    /// backend of `base`.
    pub fn new(base: &Config, cache_dir: &Path, name: &str) -> Result<Place> {
        let mut config = base.clone();
        let (dir, database) = match base.storage.backend {
            StorageBackend::Sqlite => (cache_dir.join(name), None),
            StorageBackend::Postgres => {
                let server = base.postgres_options();
                let database = format!(
                    "mira_bench_{}_{}",
                    name.replace('-', "_"),
                    short_digest(&server.database()?)
                );
                config.storage.postgres.url = Some(server.on_database(&database)?.url);
                (cache_dir.join(&database), Some((server, database)))
            }
        };
        config.storage.path = Some(dir.clone());
        Ok(Place {
            config,
            dir,
            database,
        })
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its database on PostgreSQL.
    pub fn database(&self) -> Option<&str> {
        self.database.as_ref().map(|(_, name)| name.as_str())
    }

    /// Where it is, for messages: the folder, and the database on PostgreSQL.
    pub fn describe(&self) -> String {
        match &self.database {
            None => self.dir.display().to_string(),
            Some((_, name)) => format!("the database {name} ({})", self.dir.display()),
        }
    }

    /// Whether a store was completed here ([`Place::mark_complete`]).
    pub fn is_complete(&self) -> bool {
        self.dir.join(COMPLETE).exists()
    }

    /// Records that the store is complete.
    pub fn mark_complete(&self) -> Result<()> {
        std::fs::write(self.dir.join(COMPLETE), b"")
            .with_context(|| format!("cannot write {}", self.dir.display()))
    }

    /// Empties it: the folder removed, the database dropped and created empty.
    pub fn reset(&self) -> Result<()> {
        self.remove_dir()?;
        if let Some((server, name)) = &self.database {
            PgStore::recreate_database(server, name).with_context(|| {
                format!("mira bench on PostgreSQL keeps each store in a database of its own: cannot create {name}")
            })?;
        }
        Ok(())
    }

    /// Removes it: the folder and the database.
    pub fn remove(&self) -> Result<()> {
        self.remove_dir()?;
        if let Some((server, name)) = &self.database {
            PgStore::drop_database(server, name)
                .with_context(|| format!("cannot drop the database {name}"))?;
        }
        Ok(())
    }

    fn remove_dir(&self) -> Result<()> {
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir)
                .with_context(|| format!("cannot reset {}", self.dir.display()))?;
        }
        Ok(())
    }
}

/// Eight hex digits of SHA-256 of `text`.
fn short_digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
