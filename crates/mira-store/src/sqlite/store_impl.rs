//! [`MemoryStore`] on SQLite: reads from the reader pool, writes in IMMEDIATE transactions on
//! the writer connection. A [`StoreTx`] holds the writer (SQLite has one writer at a time, in
//! every process), so its wings are locked with everything else.

use super::{dead_letters, lifecycle, migrations, read, search, write, SqliteStore};
use crate::backend::{
    ChangeFeed, Database, DeadLetterStore, MemoryReads, MemoryStore, StoreTx, Visit,
};
use crate::feed::{ChangeCursor, Changes, LiveRow};
use crate::lifecycle::{ArchivePlan, ArchiveReport, DeleteCounts, DeleteScope, TimelineQuery};
use crate::model::{
    Link, NewMemory, Parts, Relation, RestoreOutcome, Scope, StoreStats, StoredMemory, Unembedded,
};
use crate::{DeadLetter, MemoryEdit, Result, StoreError};
use mira_core::memory::{Memory, MemoryId, RelationType};
use mira_core::render::ModeCosts;
use mira_core::slots::Slot;
use rusqlite::Connection;
use std::collections::HashMap;
use std::sync::MutexGuard;

impl MemoryReads for SqliteStore {
    fn find_by_hash(&self, wing: &str, content_hash: &str) -> Result<Option<MemoryId>> {
        self.read(|c| read::find_by_hash(c, wing, content_hash))
    }

    fn get_many(&self, ids: &[MemoryId], parts: Parts) -> Result<HashMap<MemoryId, StoredMemory>> {
        self.read(|c| read::get_many(c, ids, parts))
    }

    fn recent_in_wing(&self, wing: &str, since_ms: i64, limit: usize) -> Result<Vec<StoredMemory>> {
        self.read(|c| read::recent_in_wing(c, wing, since_ms, limit))
    }

    fn slot_holders(
        &self,
        wing: &str,
        attributes: &[String],
        until_ms: i64,
    ) -> Result<Vec<(MemoryId, Slot)>> {
        if attributes.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|c| read::slot_holders(c, wing, attributes, until_ms))
    }
}

/// A store's transaction: the writer connection, in an IMMEDIATE transaction until committed
/// (rolled back when dropped before).
struct SqliteTx<'a> {
    conn: MutexGuard<'a, Connection>,
    store: &'a SqliteStore,
    open: bool,
}

impl Drop for SqliteTx<'_> {
    fn drop(&mut self) {
        if self.open {
            // Nothing of it is acknowledged: a failed rollback only leaves it to SQLite.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

impl MemoryReads for SqliteTx<'_> {
    fn find_by_hash(&self, wing: &str, content_hash: &str) -> Result<Option<MemoryId>> {
        read::find_by_hash(&self.conn, wing, content_hash)
    }

    fn get_many(&self, ids: &[MemoryId], parts: Parts) -> Result<HashMap<MemoryId, StoredMemory>> {
        read::get_many(&self.conn, ids, parts)
    }

    fn recent_in_wing(&self, wing: &str, since_ms: i64, limit: usize) -> Result<Vec<StoredMemory>> {
        read::recent_in_wing(&self.conn, wing, since_ms, limit)
    }

    fn slot_holders(
        &self,
        wing: &str,
        attributes: &[String],
        until_ms: i64,
    ) -> Result<Vec<(MemoryId, Slot)>> {
        read::slot_holders(&self.conn, wing, attributes, until_ms)
    }
}

impl StoreTx for SqliteTx<'_> {
    fn insert(&mut self, batch: &[NewMemory]) -> Result<Vec<i64>> {
        write::insert(&self.conn, batch).map_err(|e| self.store.read_only_error(e))
    }

    fn commit(mut self: Box<Self>) -> Result<()> {
        self.conn
            .execute_batch("COMMIT")
            .map_err(|e| self.store.read_only_error(e.into()))?;
        self.open = false;
        Ok(())
    }
}

impl MemoryStore for SqliteStore {
    fn database(&self) -> Database<'_> {
        Database::Sqlite(self)
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn schema_version(&self) -> Result<i64> {
        self.read(migrations::current_version_readonly)
    }

    fn size_bytes(&self) -> Result<u64> {
        Ok(self.file_bytes())
    }

    fn begin_store(&self, _wings: &[&str]) -> Result<Box<dyn StoreTx + '_>> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                path: self.path.clone(),
            });
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.read_only_error(e.into()))?;
        Ok(Box::new(SqliteTx {
            conn,
            store: self,
            open: true,
        }))
    }

    fn restore_batch(
        &self,
        memories: &[NewMemory],
        relations: &[Relation],
    ) -> Result<RestoreOutcome> {
        self.write(|tx| write::restore(tx, memories, relations))
    }

    fn contains(&self, id: MemoryId) -> Result<bool> {
        self.read(|c| read::exists(c, &id.to_string()))
    }

    fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<MemoryId>> {
        self.read(|c| read::ids_with_prefix(c, prefix, limit))
    }

    fn set_pinned(&self, id: MemoryId, pinned: bool) -> Result<bool> {
        self.write(|tx| write::set_pinned(tx, id, pinned))
    }

    fn set_superseded_by(&self, id: MemoryId, by: Option<MemoryId>) -> Result<bool> {
        self.write(|tx| write::set_superseded_by(tx, id, by))
    }

    fn add_link(&self, link: &Link, at_ms: i64) -> Result<Option<bool>> {
        self.write(|tx| write::insert_edge(tx, &link.edge(at_ms), link.to))
    }

    fn remove_links(
        &self,
        a: MemoryId,
        b: MemoryId,
        relation: Option<RelationType>,
    ) -> Result<Vec<Link>> {
        self.write(|tx| write::remove_links(tx, a, b, relation))
    }

    fn edit_memory(&self, id: MemoryId, edit: &MemoryEdit) -> Result<bool> {
        self.write(|tx| write::edit(tx, id, edit))
    }

    fn uncosted(&self, version: u32, limit: usize) -> Result<Vec<Memory>> {
        self.read(|c| read::uncosted(c, version, limit))
    }

    fn set_costs(&self, costs: &[(MemoryId, ModeCosts)], version: u32) -> Result<()> {
        self.write(|tx| write::set_costs(tx, costs, version))
    }

    fn without_embedding(&self, model: &str, limit: usize) -> Result<Vec<Unembedded>> {
        self.read(|c| read::without_embedding(c, model, limit))
    }

    fn count_without_embedding(&self, model: &str, wings: Option<&[String]>) -> Result<u64> {
        self.read(|c| read::count_without_embedding(c, model, wings))
    }

    fn set_embeddings(&self, model: &str, vectors: &[(MemoryId, Vec<f32>)]) -> Result<usize> {
        self.write(|tx| write::set_embeddings(tx, model, vectors))
    }

    fn stats_in(&self, wings: Option<&[String]>) -> Result<StoreStats> {
        self.read(|c| read::stats(c, wings))
    }

    fn wings(&self) -> Result<Vec<String>> {
        self.read(read::wings)
    }

    fn timeline(&self, q: &TimelineQuery) -> Result<Vec<StoredMemory>> {
        self.read(|c| lifecycle::timeline(c, q))
    }

    fn archive(&self, plan: &ArchivePlan, dry_run: bool) -> Result<ArchiveReport> {
        if dry_run {
            self.read(|c| lifecycle::archive_preview(c, plan))
        } else {
            self.write(|tx| lifecycle::archive(tx, plan))
        }
    }

    fn unarchive(&self, ids: &[MemoryId]) -> Result<Vec<StoredMemory>> {
        self.write(|tx| lifecycle::unarchive(tx, ids))
    }

    fn delete_preview(&self, scope: &DeleteScope) -> Result<DeleteCounts> {
        self.read(|c| lifecycle::count_scope(c, scope))
    }

    fn delete(&self, scope: &DeleteScope) -> Result<DeleteCounts> {
        self.write(|tx| lifecycle::delete(tx, scope))
    }

    fn export_each(
        &self,
        wing: Option<&str>,
        parts: Parts,
        visit: &mut dyn FnMut(StoredMemory) -> Visit,
    ) -> Result<u64> {
        self.read(|conn| {
            conn.execute_batch("BEGIN")?;
            let result = lifecycle::export_each(conn, wing, parts, visit);
            // A read transaction: ending it cannot lose anything.
            let _ = conn.execute_batch("COMMIT");
            result
        })
    }

    fn lexical_search(
        &self,
        text: &str,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<(MemoryId, f64)>> {
        self.read(|c| search::lexical_search(c, text, limit, scope))
    }

    fn dense_search(
        &self,
        _query: &[f32],
        _limit: usize,
        _scope: &Scope,
    ) -> Result<Option<Vec<(MemoryId, f32)>>> {
        Ok(None)
    }
}

impl DeadLetterStore for SqliteStore {
    fn add_dead_letter(&self, d: &DeadLetter) -> Result<()> {
        dead_letters::add(self, d)
    }

    fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>> {
        dead_letters::list(self, limit)
    }

    fn dead_letter(&self, id: &str) -> Result<Option<DeadLetter>> {
        dead_letters::get(self, id)
    }

    fn dead_letter_count(&self) -> Result<u64> {
        dead_letters::count(self)
    }

    fn remove_dead_letter(&self, id: &str) -> Result<bool> {
        dead_letters::remove(self, id)
    }

    fn dead_letter_failed_again(
        &self,
        id: &str,
        attempts: u32,
        error: &str,
        at_ms: i64,
    ) -> Result<()> {
        dead_letters::failed_again(self, id, attempts, error, at_ms)
    }
}

impl ChangeFeed for SqliteStore {
    fn change_cursor(&self) -> Result<ChangeCursor> {
        self.cursor_now()
    }

    fn changes_since(&self, cursor: &ChangeCursor) -> Result<Option<Changes>> {
        self.changes(cursor)
    }

    fn live_rows(&self) -> Result<Vec<LiveRow>> {
        self.all_live_rows()
    }

    fn rows_at(&self, keys: &[u64]) -> Result<Vec<(u64, Option<LiveRow>)>> {
        self.live_rows_at(keys)
    }
}
