//! [`MemoryStore`] on PostgreSQL: reads on a pooled connection, writes in one transaction each.
//! A [`StoreTx`] is a transaction holding the advisory locks of its wings: another server's
//! store into one of them waits for its commit, then reads what it wrote.

use super::{dead_letters, lifecycle, migrations, read, search, write, Conn, PgStore, TextRank};
use crate::backend::{
    ChangeFeed, Database, DeadLetterStore, MemoryReads, MemoryStore, StoreTx, Visit,
};
use crate::feed::{ChangeCursor, Changes, LiveRow};
use crate::lifecycle::{ArchivePlan, ArchiveReport, DeleteCounts, DeleteScope, TimelineQuery};
use crate::model::{
    Link, NewMemory, Parts, Relation, RestoreOutcome, Scope, StoreStats, StoredMemory, Unembedded,
};
use crate::{DeadLetter, MemoryEdit, Result};
use mira_core::memory::{Memory, MemoryId, RelationType};
use mira_core::render::ModeCosts;
use mira_core::slots::Slot;
use std::cell::RefCell;
use std::collections::HashMap;

impl MemoryReads for PgStore {
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
        self.read(|c| read::slot_holders(c, wing, attributes, until_ms))
    }
}

/// A store's transaction on one pooled connection (rolled back when dropped uncommitted).
struct PgTx {
    conn: RefCell<Conn>,
    open: bool,
}

impl Drop for PgTx {
    fn drop(&mut self) {
        if self.open {
            // A connection that cannot roll back is closed: the pool drops it.
            let _ = self.conn.get_mut().batch_execute("ROLLBACK");
        }
    }
}

impl MemoryReads for PgTx {
    fn find_by_hash(&self, wing: &str, content_hash: &str) -> Result<Option<MemoryId>> {
        read::find_by_hash(&mut **self.conn.borrow_mut(), wing, content_hash)
    }

    fn get_many(&self, ids: &[MemoryId], parts: Parts) -> Result<HashMap<MemoryId, StoredMemory>> {
        read::get_many(&mut **self.conn.borrow_mut(), ids, parts)
    }

    fn recent_in_wing(&self, wing: &str, since_ms: i64, limit: usize) -> Result<Vec<StoredMemory>> {
        read::recent_in_wing(&mut **self.conn.borrow_mut(), wing, since_ms, limit)
    }

    fn slot_holders(
        &self,
        wing: &str,
        attributes: &[String],
        until_ms: i64,
    ) -> Result<Vec<(MemoryId, Slot)>> {
        read::slot_holders(&mut **self.conn.borrow_mut(), wing, attributes, until_ms)
    }
}

impl StoreTx for PgTx {
    fn insert(&mut self, batch: &[NewMemory]) -> Result<Vec<i64>> {
        write::insert(self.conn.get_mut(), batch)
    }

    fn commit(mut self: Box<Self>) -> Result<()> {
        self.conn.get_mut().batch_execute("COMMIT")?;
        self.open = false;
        Ok(())
    }
}

impl MemoryStore for PgStore {
    fn database(&self) -> Database<'_> {
        Database::Postgres(self)
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    fn is_read_only(&self) -> bool {
        false
    }

    fn schema_version(&self) -> Result<i64> {
        self.read(migrations::current_version)
    }

    fn size_bytes(&self) -> Result<u64> {
        self.read(|c| {
            let n: i64 = c
                .query_one("SELECT pg_database_size(current_database())", &[])?
                .try_get(0)?;
            Ok(n.max(0) as u64)
        })
    }

    fn begin_store(&self, wings: &[&str]) -> Result<Box<dyn StoreTx + '_>> {
        let mut conn = self.conn()?;
        conn.batch_execute("BEGIN")?;
        let mut tx = PgTx {
            conn: RefCell::new(conn),
            open: true,
        };
        write::lock_wings(tx.conn.get_mut(), wings)?;
        Ok(Box::new(tx))
    }

    fn restore_batch(
        &self,
        memories: &[NewMemory],
        relations: &[Relation],
    ) -> Result<RestoreOutcome> {
        self.write(|c| write::restore(c, memories, relations))
    }

    fn contains(&self, id: MemoryId) -> Result<bool> {
        self.read(|c| read::exists(c, id))
    }

    fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<MemoryId>> {
        self.read(|c| read::ids_with_prefix(c, prefix, limit))
    }

    fn set_pinned(&self, id: MemoryId, pinned: bool) -> Result<bool> {
        self.write(|c| write::set_pinned(c, id, pinned))
    }

    fn set_superseded_by(&self, id: MemoryId, by: Option<MemoryId>) -> Result<bool> {
        self.write(|c| write::set_superseded_by(c, id, by))
    }

    fn add_link(&self, link: &Link, at_ms: i64) -> Result<Option<bool>> {
        self.write(|c| write::insert_edge(c, &link.edge(at_ms), link.to))
    }

    fn remove_links(
        &self,
        a: MemoryId,
        b: MemoryId,
        relation: Option<RelationType>,
    ) -> Result<Vec<Link>> {
        self.write(|c| write::remove_links(c, a, b, relation))
    }

    fn edit_memory(&self, id: MemoryId, edit: &MemoryEdit) -> Result<bool> {
        self.write(|c| write::edit(c, id, edit))
    }

    fn uncosted(&self, version: u32, limit: usize) -> Result<Vec<Memory>> {
        self.read(|c| read::uncosted(c, version, limit))
    }

    fn set_costs(&self, costs: &[(MemoryId, ModeCosts)], version: u32) -> Result<()> {
        self.write(|c| write::set_costs(c, costs, version))
    }

    fn without_embedding(&self, model: &str, limit: usize) -> Result<Vec<Unembedded>> {
        self.read(|c| read::without_embedding(c, model, limit))
    }

    fn count_without_embedding(&self, model: &str, wings: Option<&[String]>) -> Result<u64> {
        self.read(|c| read::count_without_embedding(c, model, wings))
    }

    fn set_embeddings(&self, model: &str, vectors: &[(MemoryId, Vec<f32>)]) -> Result<usize> {
        self.write(|c| write::set_embeddings(c, model, vectors))
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
            self.write(|c| lifecycle::archive(c, plan))
        }
    }

    fn unarchive(&self, ids: &[MemoryId]) -> Result<Vec<StoredMemory>> {
        self.write(|c| lifecycle::unarchive(c, ids))
    }

    fn delete_preview(&self, scope: &DeleteScope) -> Result<DeleteCounts> {
        self.read(|c| lifecycle::count_scope(c, scope))
    }

    fn delete(&self, scope: &DeleteScope) -> Result<DeleteCounts> {
        self.write(|c| lifecycle::delete(c, scope))
    }

    fn export_each(
        &self,
        wing: Option<&str>,
        parts: Parts,
        visit: &mut dyn FnMut(StoredMemory) -> Visit,
    ) -> Result<u64> {
        self.read(|c| lifecycle::export_each(c, wing, parts, visit))
    }

    fn lexical_search(
        &self,
        text: &str,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<(MemoryId, f64)>> {
        self.read(|c| search::lexical_search(c, text, limit, scope, TextRank::DEFAULT))
    }

    fn dense_search(
        &self,
        query: &[f32],
        limit: usize,
        scope: &Scope,
    ) -> Result<Option<Vec<(MemoryId, f32)>>> {
        self.read(|c| search::dense_search(c, query, limit, scope).map(Some))
    }
}

impl DeadLetterStore for PgStore {
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

impl ChangeFeed for PgStore {
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
