//! The PostgreSQL backend: one database shared by several mira servers, with pgvector.
//!
//! A pool of connections (r2d2); each store is one transaction that first takes the advisory
//! lock of its wings (so two servers relating new memories of one wing take turns, see
//! [`crate::StoreTx`]); the queries live in the submodules as functions over a client, so that a
//! [`MemoryReads`](crate::MemoryReads) answers the same from the pool and inside a transaction.
//! The schema is [`crate::PG_MIGRATIONS`], applied at open under an advisory lock (several
//! servers may start at once).

mod databases;
mod dead_letters;
mod feed;
mod lifecycle;
mod migrations;
mod read;
mod search;
mod store_impl;
mod tls;
mod url;
mod write;

pub use search::TextRank;
pub use tls::TlsMode;

use crate::{Result, StoreError};
use r2d2_postgres::PostgresConnectionManager;
use std::path::PathBuf;
use std::time::Duration;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How to reach the database (the `storage.postgres` section of the config).
#[derive(Debug, Clone, PartialEq)]
pub struct PgOptions {
    /// `postgres://user:password@host:port/database` (or the key=value form); its `sslmode`
    /// and `sslrootcert` are honoured.
    pub url: String,
    /// Connections kept by this process.
    pub pool_size: u32,
    /// Whether the connection is encrypted, and how the server is checked; `None`: as the
    /// URL's `sslmode` says, else `prefer`. Given with a different `sslmode`, an error.
    pub tls: Option<TlsMode>,
    /// PEM file of the certificates that may sign the server's (instead of the system's
    /// trusted roots); as the URL's `sslrootcert`, which must agree when both are given.
    pub root_cert: Option<PathBuf>,
    /// How long to wait for a connection (to the server, or from the pool).
    pub connect_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            url: String::new(),
            pool_size: 8,
            tls: None,
            root_cert: None,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

type Manager = PostgresConnectionManager<MakeRustlsConnect>;
/// A pooled connection: derefs to a [`postgres::Client`].
type Conn = r2d2::PooledConnection<Manager>;

/// A mira database on PostgreSQL.
pub struct PgStore {
    pool: r2d2::Pool<Manager>,
    location: String,
    /// Why the pool's latest connection attempt failed (the pool's own error says only that
    /// it timed out).
    last_failure: LastFailure,
}

/// The reason of the pool's latest failed connection.
#[derive(Debug, Clone, Default)]
struct LastFailure(std::sync::Arc<std::sync::Mutex<Option<String>>>);

impl LastFailure {
    /// The pool's error `e` with the reason of the latest failed attempt.
    fn explain(&self, e: &r2d2::Error) -> String {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).as_deref() {
            Some(reason) => format!("{e} ({reason})"),
            None => e.to_string(),
        }
    }
}

impl r2d2::HandleError<postgres::Error> for LastFailure {
    fn handle_error(&self, e: postgres::Error) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(crate::error::reason(&e));
    }
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// Settings of every connection: pgvector's iterative index scans, so that a dense search
/// filtered by wing, room and archive state keeps walking the graph until it has enough rows.
#[derive(Debug)]
struct Session;

impl r2d2::CustomizeConnection<postgres::Client, postgres::Error> for Session {
    fn on_acquire(&self, c: &mut postgres::Client) -> std::result::Result<(), postgres::Error> {
        c.batch_execute(
            "SET application_name = 'mira'; SET hnsw.iterative_scan = relaxed_order; \
             SET hnsw.ef_search = 100",
        )
    }
}

/// The client configuration of `opts` (its URL parsed, with the connect timeout) and the TLS
/// it connects with (the URL's `sslmode` and `sslrootcert` and the options', which must agree).
fn client_config(opts: &PgOptions) -> Result<(postgres::Config, tls::Tls)> {
    let (url, url_tls) = url::split_tls(&opts.url)?;
    let tls = tls::resolve(opts.tls, opts.root_cert.as_deref(), url_tls)?;
    let mut config: postgres::Config = url.parse().map_err(|e| {
        StoreError::Config(format!(
            "storage.postgres.url is not a PostgreSQL URL ({}): write it like postgres://user:password@host:5432/mira",
            crate::error::reason(&e)
        ))
    })?;
    config.ssl_mode(tls.mode.ssl_mode());
    config.connect_timeout(opts.connect_timeout);
    Ok((config, tls))
}

/// Connects once to the server of `config`: the error, if any, quotes the server's or the
/// system's reason (a wrong database, password or port fails at once, not after the pool's
/// retries), and says when the server refused the TLS the URL or config requires.
fn connect_once(
    config: &postgres::Config,
    tls: &tls::Tls,
    location: &str,
) -> Result<postgres::Client> {
    config
        .connect(tls::connector(tls)?)
        .map_err(|e| unreachable(location, tls, &e))
}

/// [`StoreError::Unreachable`] for a failed connection to `location`.
fn unreachable(location: &str, tls: &tls::Tls, e: &postgres::Error) -> StoreError {
    let mut message = crate::error::reason(e);
    if tls.mode.required() && message.contains("does not support TLS") {
        message = format!(
            "the server does not accept TLS connections, and sslmode={} requires TLS (nothing was sent in plain text): turn TLS on in the server, or use sslmode=disable only for a server on a network you trust",
            tls.mode.as_str()
        );
    }
    StoreError::Unreachable {
        location: location.to_owned(),
        message,
    }
}

/// `url` without its password, for messages and `mira status`.
fn public_location(config: &postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{}:{port}/{}",
        config.get_user().unwrap_or(""),
        hosts.join(","),
        config.get_dbname().unwrap_or("")
    )
}

impl PgStore {
    /// Connects to the database of `opts` and applies pending migrations.
    pub fn open(opts: &PgOptions) -> Result<PgStore> {
        let (config, tls) = client_config(opts)?;
        let location = public_location(&config);
        // One connection first: it applies the migrations, and a server that cannot be used
        // is reported at once with its reason.
        let mut first = connect_once(&config, &tls, &location)?;
        migrations::migrate(&mut first)?;
        drop(first);
        let manager = PostgresConnectionManager::new(config, tls::connector(&tls)?);
        let last_failure = LastFailure::default();
        let pool = r2d2::Pool::builder()
            .max_size(opts.pool_size.max(1))
            .min_idle(Some(1))
            .connection_timeout(opts.connect_timeout)
            .test_on_check_out(false)
            .connection_customizer(Box::new(Session))
            // Each failed attempt is not logged: the error that ends the wait names the cause.
            .error_handler(Box::new(last_failure.clone()))
            .build(manager)
            .map_err(|e| StoreError::Unreachable {
                location: location.clone(),
                message: last_failure.explain(&e),
            })?;
        Ok(PgStore {
            pool,
            location,
            last_failure,
        })
    }

    /// A connection from the pool (waiting up to the connect timeout).
    fn conn(&self) -> Result<Conn> {
        self.pool.get().map_err(|e| StoreError::Unreachable {
            location: self.location.clone(),
            message: self.last_failure.explain(&e),
        })
    }

    /// Runs `f` in one transaction on a pooled connection, committed when it returns `Ok`.
    fn write<T>(&self, f: impl FnOnce(&mut postgres::Client) -> Result<T>) -> Result<T> {
        self.write_with(f)
    }

    /// Runs `f`, with its own SQL and error type (SOUL's tables), in one transaction on a pooled
    /// connection (its advisory locks last until it ends), committed when it returns `Ok`; an
    /// error of `f` rolls it back and is returned unchanged.
    pub fn write_with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let mut conn = self.conn()?;
        conn.batch_execute("BEGIN").map_err(StoreError::from)?;
        match f(&mut conn) {
            Ok(out) => {
                conn.batch_execute("COMMIT").map_err(StoreError::from)?;
                Ok(out)
            }
            Err(e) => {
                // A connection that cannot roll back is closed: the pool drops it.
                let _ = conn.batch_execute("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Runs `f` on a pooled connection (each statement sees every commit before it).
    fn read<T>(&self, f: impl FnOnce(&mut postgres::Client) -> Result<T>) -> Result<T> {
        self.read_with(f)
    }

    /// Runs `f`, with its own SQL and error type (SOUL's tables), on a pooled connection (each
    /// statement sees every commit before it).
    pub fn read_with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let mut conn = self.conn()?;
        f(&mut conn)
    }

    /// [`crate::MemoryStore::lexical_search`] ranked by `rank` instead of [`TextRank::DEFAULT`]
    /// (what `mira eval locomo --text-ranks` compares).
    pub fn text_search(
        &self,
        text: &str,
        limit: usize,
        scope: &crate::Scope,
        rank: TextRank,
    ) -> Result<Vec<(mira_core::memory::MemoryId, f64)>> {
        self.read(|c| search::lexical_search(c, text, limit, scope, rank))
    }

    /// The URL without its password.
    pub fn location(&self) -> &str {
        &self.location
    }
}
