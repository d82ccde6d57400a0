//! SQLite storage of mira: schema and migrations, the memory repository, FTS5 lexical search,
//! tags, causal edges, the overlap cache, and the vector index derived from stored embeddings.
//!
//! SQLite is the source of truth. The vector index ([`index`]) is derived data: it can always be
//! rebuilt from the `embeddings` table.

mod db;
mod dead_letters;
mod edit;
mod embeddings;
mod error;
mod lifecycle;
mod migrations;
mod repo;
mod search;
mod transfer;

pub mod index;

pub use db::{SqliteOptions, Store};
pub use dead_letters::DeadLetter;
pub use edit::{MemoryEdit, MemoryMeta};
pub use embeddings::Unembedded;
pub use error::StoreError;
pub use lifecycle::{
    ArchiveMatch, ArchivePlan, ArchiveReport, ArchiveRule, DeleteCounts, DeleteScope, Restored,
    TimelineQuery, TimelineRow,
};
pub use migrations::{LATEST_VERSION, MIGRATIONS};
pub use repo::{
    decode_vector, encode_vector, EdgeRef, LoadedMemory, NewEdge, NewMemory, NewTag, RecentMemory,
    StoreStats,
};
pub use search::{fts_query, Scope};
pub use transfer::{
    FullMemory, MemoryRecord, Relation, RestoreMemory, RestoreOutcome, StoredEdge, StoredEmbedding,
};

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, StoreError>;
