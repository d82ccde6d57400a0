//! The store interface: what the use cases and the index ask of a database, implemented by
//! SQLite ([`crate::SqliteStore`]) and PostgreSQL ([`crate::PgStore`]).
//!
//! A store that relates a new memory to earlier ones (causal links, supersession, duplicates)
//! reads them and writes the new memory in one [`StoreTx`]: a transaction that holds the write
//! lock of its wings, so two stores into one wing, from any process or machine, are related in
//! one order or the other and never both against the same older state.

use crate::feed::{ChangeCursor, Changes, LiveRow};
use crate::lifecycle::{ArchivePlan, ArchiveReport, DeleteCounts, DeleteScope, TimelineQuery};
use crate::model::{
    Link, NewMemory, Parts, Relation, RestoreOutcome, Scope, StoreStats, StoredMemory, Unembedded,
};
use crate::{DeadLetter, MemoryEdit, Result, StoreError};
use mira_core::memory::{Memory, MemoryId, RelationType};
use mira_core::render::ModeCosts;
use mira_core::slots::Slot;
use std::collections::HashMap;

/// The database behind a store, for what keeps tables of its own in it (SOUL) and runs its
/// own SQL there ([`SqliteStore::write_with`](crate::SqliteStore::write_with),
/// [`PgStore::write_with`](crate::PgStore::write_with) and their `read_with`).
#[derive(Debug, Clone, Copy)]
pub enum Database<'a> {
    /// One SQLite file.
    Sqlite(&'a crate::SqliteStore),
    /// A PostgreSQL database.
    Postgres(&'a crate::PgStore),
}

/// Which database a store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// One SQLite file.
    Sqlite,
    /// A PostgreSQL database with pgvector.
    Postgres,
}

impl Backend {
    /// `sqlite` or `postgres`, as `storage.backend` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The reads a store relates a new memory with; answered by the store itself (committed data)
/// or inside a [`StoreTx`].
pub trait MemoryReads {
    /// The id of a memory of `wing` with exactly this content hash, if any.
    fn find_by_hash(&self, wing: &str, content_hash: &str) -> Result<Option<MemoryId>>;

    /// The memories with these ids, with `parts`; missing ids are absent from the map.
    fn get_many(&self, ids: &[MemoryId], parts: Parts) -> Result<HashMap<MemoryId, StoredMemory>>;

    /// One memory with `parts`, or `None` when no memory has that id.
    fn get(&self, id: MemoryId, parts: Parts) -> Result<Option<StoredMemory>> {
        Ok(self.get_many(&[id], parts)?.remove(&id))
    }

    /// The most recent non-archived memories of `wing` created at or after `since_ms`, newest
    /// first (ties: last written first), at most `limit`, with their embeddings and tags.
    fn recent_in_wing(&self, wing: &str, since_ms: i64, limit: usize) -> Result<Vec<StoredMemory>>;

    /// The slots asserted for `attributes` by the live, current (not archived, not superseded)
    /// memories of `wing` created at or before `until_ms`, with their memory ids.
    fn slot_holders(
        &self,
        wing: &str,
        attributes: &[String],
        until_ms: i64,
    ) -> Result<Vec<(MemoryId, Slot)>>;
}

/// A write transaction that holds the write lock of some wings (see the module docs). Its reads
/// see everything committed before it began plus its own writes. Dropped without
/// [`StoreTx::commit`], it rolls back.
pub trait StoreTx: MemoryReads {
    /// Writes memories with their tags, embeddings, causal edges, supersessions and retractions;
    /// returns their `seq`s in order. A relation whose other memory no longer exists is left out.
    fn insert(&mut self, batch: &[NewMemory]) -> Result<Vec<i64>>;

    /// Commits everything written.
    fn commit(self: Box<Self>) -> Result<()>;
}

/// Whether a visitor wants the next item.
pub type Visit = std::result::Result<bool, StoreError>;

/// The memories of a mira database. Object safe: the application holds it as part of an
/// `Arc<dyn Store>` ([`Store`]).
pub trait MemoryStore: MemoryReads + Send + Sync + std::fmt::Debug {
    /// The database behind this store.
    fn database(&self) -> Database<'_>;

    /// Which database this is.
    fn backend(&self) -> Backend {
        match self.database() {
            Database::Sqlite(_) => Backend::Sqlite,
            Database::Postgres(_) => Backend::Postgres,
        }
    }

    /// Where it is, for people: the file, or the URL without its password.
    fn location(&self) -> String;

    /// Whether writes are refused (a read-only SQLite file).
    fn is_read_only(&self) -> bool;

    /// The schema version applied.
    fn schema_version(&self) -> Result<i64>;

    /// Bytes the database takes (the file and its WAL, or the tables and indexes).
    fn size_bytes(&self) -> Result<u64>;

    /// Begins a write transaction holding the write lock of `wings` (waiting for it).
    fn begin_store(&self, wings: &[&str]) -> Result<Box<dyn StoreTx + '_>>;

    /// In one transaction: writes `memories` with their own ids, timestamps, archive state,
    /// fingerprint, embedding and tags (their relations too), then applies each of `relations`
    /// whose two ends exist. Nothing is written if any part fails (a duplicate id, for one).
    fn restore_batch(
        &self,
        memories: &[NewMemory],
        relations: &[Relation],
    ) -> Result<RestoreOutcome>;

    /// Whether a memory with this id exists.
    fn contains(&self, id: MemoryId) -> Result<bool>;

    /// Up to `limit` ids, in order, of the memories whose id (lower-case, hyphenated) starts
    /// with `prefix`.
    fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<MemoryId>>;

    /// Pins or unpins memory `id`; false when no memory has that id.
    fn set_pinned(&self, id: MemoryId, pinned: bool) -> Result<bool>;

    /// Marks memory `id` as superseded by `by`, or as current again (`None`); false when no
    /// memory has that id.
    fn set_superseded_by(&self, id: MemoryId, by: Option<MemoryId>) -> Result<bool>;

    /// Adds the causal edge `link.from → link.to`, detected at `at_ms`, in one transaction:
    /// `None` when either memory does not exist (or both are one), else whether it was added
    /// (`false`: that edge was there already, and is left as it was).
    fn add_link(&self, link: &Link, at_ms: i64) -> Result<Option<bool>>;

    /// Removes the causal edges between `a` and `b`, either way (only those of `relation` when
    /// given), in one transaction; returns those removed.
    fn remove_links(
        &self,
        a: MemoryId,
        b: MemoryId,
        relation: Option<RelationType>,
    ) -> Result<Vec<Link>>;

    /// Files memory `id` under `edit`'s wing, room and type, replacing its fingerprint, tags and
    /// section costs, in one transaction; false when no memory has that id.
    fn edit_memory(&self, id: MemoryId, edit: &MemoryEdit) -> Result<bool>;

    /// Up to `limit` memories whose stored section costs are missing or were computed for
    /// another render format than `version`.
    fn uncosted(&self, version: u32, limit: usize) -> Result<Vec<Memory>>;

    /// Stores section costs computed for render format `version`.
    fn set_costs(&self, costs: &[(MemoryId, ModeCosts)], version: u32) -> Result<()>;

    /// Up to `limit` memories without an embedding of `model` (none, or one another model
    /// made; `sentence-transformers/<model>`, the spelling of earlier versions, counts as
    /// `model`), oldest first.
    fn without_embedding(&self, model: &str, limit: usize) -> Result<Vec<Unembedded>>;

    /// How many memories (of `wings`, or of every wing) have no embedding of `model` (none,
    /// or one another model made).
    fn count_without_embedding(&self, model: &str, wings: Option<&[String]>) -> Result<u64>;

    /// Stores the embeddings `model` computed for memories that had none of it, in one
    /// transaction, replacing those of another model. A memory deleted meanwhile, or embedded
    /// with `model` meanwhile by another process, is skipped. Returns how many were written.
    fn set_embeddings(&self, model: &str, vectors: &[(MemoryId, Vec<f32>)]) -> Result<usize>;

    /// Counts for `mira status`.
    fn stats(&self) -> Result<StoreStats> {
        self.stats_in(None)
    }

    /// Counts for `mira status` over the memories of `wings` (every wing when `None`): edges
    /// and tags are those of these memories.
    fn stats_in(&self, wings: Option<&[String]>) -> Result<StoreStats>;

    /// The distinct wings, sorted.
    fn wings(&self) -> Result<Vec<String>>;

    /// One page of the timeline, ordered by `(created_at, seq)`.
    fn timeline(&self, q: &TimelineQuery) -> Result<Vec<StoredMemory>>;

    /// Archives what `plan` selects, in one transaction; with `dry_run`, reports the same
    /// without writing anything.
    fn archive(&self, plan: &ArchivePlan, dry_run: bool) -> Result<ArchiveReport>;

    /// Un-archives these memories (those absent or not archived are skipped) in one
    /// transaction; returns the ones restored, with their embeddings.
    fn unarchive(&self, ids: &[MemoryId]) -> Result<Vec<StoredMemory>>;

    /// What deleting `scope` would remove (nothing is changed).
    fn delete_preview(&self, scope: &DeleteScope) -> Result<DeleteCounts>;

    /// Deletes every memory of `scope` with everything derived from it, in one transaction;
    /// returns what was removed.
    fn delete(&self, scope: &DeleteScope) -> Result<DeleteCounts>;

    /// Calls `visit` with every memory (of `wing`, or all) ordered by `created_at` then `seq`,
    /// with `parts`, from one consistent snapshot, until it returns `Ok(false)` or an error.
    /// Returns how many were visited.
    fn export_each(
        &self,
        wing: Option<&str>,
        parts: Parts,
        visit: &mut dyn FnMut(StoredMemory) -> Visit,
    ) -> Result<u64>;

    /// The database's own lexical search (FTS5's BM25, or PostgreSQL full text) over the text
    /// and the day of the memories of `scope`: ids with their score (higher is better), best first.
    fn lexical_search(
        &self,
        text: &str,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<(MemoryId, f64)>>;

    /// The database's own dense search over the memories of `scope`: ids with their cosine
    /// similarity, best first. `None` when the database has none (SQLite: the in-memory index
    /// answers).
    fn dense_search(
        &self,
        query: &[f32],
        limit: usize,
        scope: &Scope,
    ) -> Result<Option<Vec<(MemoryId, f32)>>>;

    /// One memory with its tags and causal edges both ways (what `mira_load` shows).
    fn load(&self, id: MemoryId) -> Result<Option<StoredMemory>> {
        self.get(id, Parts::LINKED)
    }

    /// The memories with these ids (the rows alone); missing ids are absent from the map.
    fn memories(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Memory>> {
        Ok(self
            .get_many(ids, Parts::NONE)?
            .into_iter()
            .map(|(id, m)| (id, m.memory))
            .collect())
    }

    /// Writes memories (with their relations) in one transaction holding their wings' lock;
    /// returns their `seq`s. For a store that relates first, use [`MemoryStore::begin_store`].
    fn insert_memories(&self, batch: &[NewMemory]) -> Result<Vec<i64>> {
        let mut wings: Vec<&str> = batch.iter().map(|n| n.memory.wing.as_str()).collect();
        wings.sort_unstable();
        wings.dedup();
        let mut tx = self.begin_store(&wings)?;
        let seqs = tx.insert(batch)?;
        tx.commit()?;
        Ok(seqs)
    }

    /// Writes one memory (see `insert_memories`); returns its `seq`.
    fn insert_memory(&self, new: &NewMemory) -> Result<i64> {
        Ok(self.insert_memories(std::slice::from_ref(new))?[0])
    }
}

/// The webhook dead letters a database keeps: deliveries that could not be made, until they
/// are replayed ([`DeadLetter`]).
pub trait DeadLetterStore: Send + Sync + std::fmt::Debug {
    /// Adds a webhook dead letter; one with the same id is replaced (its attempts add up).
    fn add_dead_letter(&self, d: &DeadLetter) -> Result<()>;

    /// Dead letters, oldest first, at most `limit`.
    fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>>;

    /// One dead letter by id.
    fn dead_letter(&self, id: &str) -> Result<Option<DeadLetter>>;

    /// How many dead letters there are.
    fn dead_letter_count(&self) -> Result<u64>;

    /// Removes a dead letter (after a successful replay); false when it did not exist.
    fn remove_dead_letter(&self, id: &str) -> Result<bool>;

    /// Records a failed replay: `attempts` more attempts, the error and the time.
    fn dead_letter_failed_again(
        &self,
        id: &str,
        attempts: u32,
        error: &str,
        at_ms: i64,
    ) -> Result<()>;
}

/// The change feed of a database: what keeps every process's catalog and vectors in step with
/// it (see [`crate::feed`]).
pub trait ChangeFeed: Send + Sync + std::fmt::Debug {
    /// The position of the change feed now: read it before [`ChangeFeed::live_rows`], so a
    /// change committed in between is replayed by the next [`ChangeFeed::changes_since`].
    fn change_cursor(&self) -> Result<ChangeCursor>;

    /// The keys changed since `cursor`; `None` (cheaply) when nothing was committed since.
    fn changes_since(&self, cursor: &ChangeCursor) -> Result<Option<Changes>>;

    /// Every live (not archived) memory as the catalog holds it, ordered by key.
    fn live_rows(&self) -> Result<Vec<LiveRow>>;

    /// The rows of `keys`: `(key, None)` for a key whose memory is archived or gone.
    fn rows_at(&self, keys: &[u64]) -> Result<Vec<(u64, Option<LiveRow>)>>;
}

/// A whole mira database, what the application opens and holds: its memories
/// ([`MemoryStore`]), the change feed the index follows ([`ChangeFeed`]) and the webhook dead
/// letters ([`DeadLetterStore`]). Both backends are one; a caller takes the narrowest it needs.
pub trait Store: MemoryStore + ChangeFeed + DeadLetterStore {}

impl<T: MemoryStore + ChangeFeed + DeadLetterStore + ?Sized> Store for T {}

impl dyn MemoryStore + '_ {
    /// [`MemoryStore::export_each`] for a visitor with its own error type, returned unchanged.
    pub fn export_memories<E: From<StoreError>>(
        &self,
        wing: Option<&str>,
        parts: Parts,
        mut visit: impl FnMut(StoredMemory) -> std::result::Result<(), E>,
    ) -> std::result::Result<u64, E> {
        let mut failure = None;
        let n = self.export_each(wing, parts, &mut |m| match visit(m) {
            Ok(()) => Ok(true),
            Err(e) => {
                failure = Some(e);
                Ok(false)
            }
        })?;
        match failure {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }
}
