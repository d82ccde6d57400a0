//! Errors of the storage layer.

use std::path::PathBuf;

/// An error from a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database directory could not be created or is not writable.
    #[error("cannot use storage directory {path}: {source}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file exists but is not a SQLite database (or is corrupt).
    #[error("{path} is not a mira database (SQLite said: {message}); move it away or point storage.path elsewhere")]
    NotADatabase {
        /// The database file.
        path: PathBuf,
        /// SQLite's message.
        message: String,
    },
    /// The database was written by a newer mira.
    #[error("database schema version {found} is newer than this mira supports ({supported}); upgrade mira")]
    SchemaTooNew {
        /// Version found in the database.
        found: i64,
        /// Latest version this build knows.
        supported: i64,
    },
    /// Stored data could not be decoded.
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// A write was refused because the database file (or its directory, or the mount) is
    /// read-only; reads keep working.
    #[error("the database {path} is read-only (file permissions, an immutable file or a read-only mount): recall, load, timeline and status work, but storing or changing memories needs write access to it")]
    ReadOnly {
        /// The database file.
        path: PathBuf,
    },
    /// Any other SQLite error.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The store's settings cannot be used; the message says how to fix them.
    #[error("{0}")]
    Config(String),
    /// No connection to the PostgreSQL server could be made.
    #[error("cannot connect to PostgreSQL at {location}: {message}; check storage.postgres.url (or MIRA_DATABASE_URL), that the server runs and accepts this user, and its TLS (sslmode, storage.postgres.tls)")]
    Unreachable {
        /// The URL without its password.
        location: String,
        /// What the client said.
        message: String,
    },
    /// Any other PostgreSQL error.
    #[error("PostgreSQL error: {}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
}

/// A PostgreSQL error with the server's message and detail when there are some.
fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_owned(),
        },
        None => reason(e),
    }
}

/// An error with every cause under it (`error connecting to server: Connection refused (os
/// error 111)`): the client's own messages name the step, its causes say why.
pub(crate) fn reason(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}
