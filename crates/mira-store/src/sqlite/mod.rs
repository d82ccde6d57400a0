//! The SQLite backend: one file, one writer connection and a small pool of readers.
//!
//! Opening: directory, pragmas, migrations. The queries live in the submodules, each a set of
//! functions over a connection, so that a [`MemoryReads`](crate::MemoryReads) answers the same
//! from the pool and inside a store's transaction.

mod dead_letters;
mod feed;
mod lifecycle;
pub(crate) mod migrations;
mod read;
mod search;
mod store_impl;
mod vector;
mod write;

pub use search::fts_query;
pub use vector::{decode_vector, encode_vector};

use crate::{Result, StoreError};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// SQLite connection settings (the `storage.sqlite` section of the config).
#[derive(Debug, Clone, PartialEq)]
pub struct SqliteOptions {
    /// `PRAGMA journal_mode` (WAL by default).
    pub journal_mode: String,
    /// `PRAGMA synchronous` (NORMAL by default: durable in WAL mode across process crashes).
    pub synchronous: String,
    /// `PRAGMA cache_size` (negative = KiB).
    pub cache_size: i64,
    /// `PRAGMA mmap_size` in bytes.
    pub mmap_size: i64,
    /// `PRAGMA temp_store`.
    pub temp_store: String,
    /// How long a connection waits for a lock held by another connection or process.
    pub busy_timeout: Duration,
    /// Number of read connections.
    pub readers: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            journal_mode: "WAL".into(),
            synchronous: "NORMAL".into(),
            cache_size: -64000,
            mmap_size: 268_435_456,
            temp_store: "MEMORY".into(),
            busy_timeout: Duration::from_secs(10),
            readers: 4,
        }
    }
}

/// A mira database in one SQLite file: one writer connection and a pool of readers.
pub struct SqliteStore {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    /// A connection of its own for `PRAGMA data_version` (per connection: it changes when
    /// another connection commits).
    watcher: Mutex<Option<Connection>>,
    read_only: bool,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn check_pragma_word(name: &str, value: &str) -> Result<()> {
    if value.is_empty() || !value.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(StoreError::Corrupt(format!(
            "invalid value '{value}' for storage.sqlite.{name}: use a plain SQLite keyword such as WAL or NORMAL"
        )));
    }
    Ok(())
}

/// Turns on SQLite's query planner stability guarantee: plans never depend on bound values, so a
/// cached statement is not re-prepared each time it is bound anew (without it, a `LIMIT ?` or a
/// text compared with a parameter made every call of such a statement compile it again).
fn stable_plans(conn: &Connection) -> Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

fn configure(conn: &Connection, opts: &SqliteOptions, path: &Path) -> Result<()> {
    conn.busy_timeout(opts.busy_timeout)?;
    stable_plans(conn)?;
    check_pragma_word("journal_mode", &opts.journal_mode)?;
    check_pragma_word("synchronous", &opts.synchronous)?;
    check_pragma_word("temp_store", &opts.temp_store)?;
    let not_db = |e: rusqlite::Error| {
        if is_busy(&e) {
            return StoreError::Sqlite(e);
        }
        StoreError::NotADatabase {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    };
    // The first statement that reads the file tells us whether it is a database at all.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(not_db)?;
    conn.pragma_update(None, "journal_mode", &opts.journal_mode)?;
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {}; PRAGMA foreign_keys = ON; PRAGMA cache_size = {}; \
         PRAGMA mmap_size = {}; PRAGMA temp_store = {};",
        opts.synchronous, opts.cache_size, opts.mmap_size, opts.temp_store
    ))?;
    Ok(())
}

/// A read-only database can be used only when it needs no migration.
fn check_read_only_schema(conn: &Connection, path: &Path) -> Result<()> {
    let found = migrations::current_version_readonly(conn).map_err(|_| StoreError::ReadOnly {
        path: path.to_path_buf(),
    })?;
    if found > migrations::LATEST_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: migrations::LATEST_VERSION,
        });
    }
    let pending = migrations::needs_migration(conn).map_err(|_| StoreError::ReadOnly {
        path: path.to_path_buf(),
    })?;
    if pending {
        return Err(StoreError::ReadOnly {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Configures the writer connection and brings the schema up to date. Another process opening
/// the same new file at the same moment can make a step fail with `SQLITE_BUSY` without SQLite
/// calling the busy handler (switching the journal to WAL, or the first read of a WAL being
/// initialised), so the whole preparation is retried until `opts.busy_timeout` has passed.
fn prepare(
    conn: &mut Connection,
    opts: &SqliteOptions,
    path: &Path,
    read_only: bool,
) -> Result<()> {
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        let attempt = configure(conn, opts, path).and_then(|()| {
            if read_only {
                check_read_only_schema(conn, path)
            } else {
                migrations::migrate(conn).map(drop)
            }
        });
        match attempt {
            Err(StoreError::Sqlite(e)) if is_busy(&e) && started.elapsed() < opts.busy_timeout => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

/// Whether `e` is SQLite's "database is locked" (or busy).
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// One IMMEDIATE transaction on `conn` around `f`, committed when `f` returns `Ok`.
fn write_in<T, E: From<StoreError>>(
    conn: &mut Connection,
    f: impl FnOnce(&Transaction<'_>) -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(StoreError::from)?;
    let out = f(&tx)?;
    tx.commit().map_err(StoreError::from)?;
    Ok(out)
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, applies pending migrations and returns it.
    pub fn open(path: &Path, opts: &SqliteOptions) -> Result<SqliteStore> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Directory {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        if path.is_dir() {
            return Err(StoreError::NotADatabase {
                path: path.to_path_buf(),
                message: "it is a directory".into(),
            });
        }
        // A file without write permission is opened read-only even by root (who could write
        // it anyway): recall keeps working and every write fails with `ReadOnly`.
        let read_only = std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly());
        let mut writer = if read_only {
            Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )?
        } else {
            Connection::open(path)?
        };
        prepare(&mut writer, opts, path, read_only)?;
        let mut readers = Vec::with_capacity(opts.readers.max(1));
        for _ in 0..opts.readers.max(1) {
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )?;
            conn.busy_timeout(opts.busy_timeout)?;
            stable_plans(&conn)?;
            conn.execute_batch(&format!(
                "PRAGMA foreign_keys = ON; PRAGMA cache_size = {}; PRAGMA mmap_size = {};",
                opts.cache_size, opts.mmap_size
            ))?;
            readers.push(Mutex::new(conn));
        }
        let watcher = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .ok();
        Ok(SqliteStore {
            path: path.to_path_buf(),
            writer: Mutex::new(writer),
            readers,
            watcher: Mutex::new(watcher),
            read_only,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` inside one IMMEDIATE write transaction, committed when `f` returns `Ok`.
    pub fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        self.write_with(f).map_err(|e| self.read_only_error(e))
    }

    /// A write refused by a read-only file as [`StoreError::ReadOnly`], naming it.
    fn read_only_error(&self, e: StoreError) -> StoreError {
        match e {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(ref f, _))
                if f.code == rusqlite::ErrorCode::ReadOnly =>
            {
                StoreError::ReadOnly {
                    path: self.path.clone(),
                }
            }
            other => other,
        }
    }

    /// [`SqliteStore::write`] for callers with their own error type: an error of `f` rolls the
    /// transaction back and is returned unchanged.
    pub fn write_with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let mut conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        write_in(&mut conn, f)
    }

    /// Runs `f` with a read connection from the pool (sees every committed write).
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.read_with(f)
    }

    /// [`SqliteStore::read`] for callers with their own error type.
    pub fn read_with<T, E>(
        &self,
        f: impl FnOnce(&Connection) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        // Try each reader without blocking, then wait on one chosen by thread id.
        for r in &self.readers {
            if let Ok(conn) = r.try_lock() {
                return f(&conn);
            }
        }
        let conn = self.readers[0].lock().unwrap_or_else(|p| p.into_inner());
        f(&conn)
    }

    /// Size of the database file plus its WAL, in bytes.
    fn file_bytes(&self) -> u64 {
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        [&self.path, &wal]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }
}
