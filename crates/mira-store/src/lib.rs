//! Storage of mira: one model of a stored memory ([`NewMemory`] written, [`StoredMemory`]
//! read), one interface to a database ([`MemoryStore`]) with two implementations, SQLite
//! ([`SqliteStore`], the embedded default) and PostgreSQL with pgvector ([`PgStore`], shared by
//! several servers), and the in-memory catalog and vector index recall ranks from ([`index`]),
//! kept in step with either database through its change feed ([`feed`]).
//!
//! The database is the source of truth. The index is derived data: it can always be rebuilt
//! from the stored embeddings.

mod backend;
mod dead_letters;
mod edit;
mod error;
mod lifecycle;
mod migrations;
mod model;
mod postgres;
mod sqlite;

pub mod feed;
pub mod index;

pub use backend::{
    Backend, ChangeFeed, Database, DeadLetterStore, MemoryReads, MemoryStore, Store, StoreTx, Visit,
};
pub use dead_letters::DeadLetter;
pub use edit::MemoryEdit;
pub use error::StoreError;
pub use lifecycle::{
    ArchiveMatch, ArchivePlan, ArchiveReport, ArchiveRule, DeleteCounts, DeleteScope, TimelineQuery,
};
pub use migrations::{Migration, MIGRATIONS, PG_MIGRATIONS};
pub use model::{
    Bookkeeping, Card, CatalogRow, Edge, Embedding, Link, NewMemory, Parts, Relation,
    RestoreOutcome, Scope, Source, StoreStats, StoredMemory, Unembedded,
};
pub use postgres::{PgOptions, PgStore, TextRank, TlsMode};
pub use sqlite::migrations::LATEST_VERSION;
pub use sqlite::{decode_vector, encode_vector, fts_query, SqliteOptions, SqliteStore};

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, StoreError>;
