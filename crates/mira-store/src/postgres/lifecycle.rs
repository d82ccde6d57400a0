//! The lifecycle queries on PostgreSQL: timeline, archive and un-archive, deletion, export.

use super::read::{fill, get_many, raw_row, select, SELECT_ROWS};
use crate::lifecycle::{
    ArchiveMatch, ArchivePlan, ArchiveReport, DeleteCounts, DeleteScope, TimelineQuery,
};
use crate::model::{Parts, StoredMemory};
use crate::Result;
use mira_core::memory::{MemoryId, MemoryType};
use postgres::types::ToSql;
use postgres::Client;
use std::collections::HashSet;

/// The condition of a deletion scope on `verbatims` (alias-free) and its parameters.
fn condition(scope: &DeleteScope) -> (&'static str, Vec<Box<dyn ToSql + Sync>>) {
    match scope {
        DeleteScope::All => ("true", vec![]),
        DeleteScope::Wing(w) => ("wing = $1", vec![Box::new(w.clone())]),
        DeleteScope::Room { wing, room } => (
            "wing = $1 AND room = $2",
            vec![Box::new(wing.clone()), Box::new(room.clone())],
        ),
        DeleteScope::Memory(id) => ("id = $1", vec![Box::new(*id)]),
    }
}

/// See [`crate::MemoryStore::delete_preview`].
pub(super) fn count_scope(c: &mut Client, scope: &DeleteScope) -> Result<DeleteCounts> {
    let (cond, values) = condition(scope);
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
    let ids = c
        .query(
            &format!("SELECT id FROM verbatims WHERE {cond} ORDER BY seq"),
            &params,
        )?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<Vec<MemoryId>, _>>()?;
    let sub = format!("SELECT id FROM verbatims WHERE {cond}");
    let r = c.query_one(
        &format!(
            "SELECT (SELECT count(*) FROM causal_edges WHERE from_id IN ({sub}) OR to_id IN ({sub})),
                    (SELECT count(*) FROM tags WHERE memory_id IN ({sub})),
                    (SELECT COALESCE(sum(token_count), 0)::bigint FROM verbatims WHERE {cond})"
        ),
        &params,
    )?;
    let n = |i: usize| -> Result<u64> { Ok(r.try_get::<_, i64>(i)?.max(0) as u64) };
    Ok(DeleteCounts {
        ids,
        edges: n(0)?,
        tags: n(1)?,
        tokens: n(2)?,
    })
}

/// See [`crate::MemoryStore::delete`].
pub(super) fn delete(c: &mut Client, scope: &DeleteScope) -> Result<DeleteCounts> {
    let counts = count_scope(c, scope)?;
    let (cond, values) = condition(scope);
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
    c.execute(&format!("DELETE FROM verbatims WHERE {cond}"), &params)?;
    Ok(counts)
}

/// Live memories selected by `plan`, oldest first, each with the first reason that matched.
fn archivable(c: &mut Client, plan: &ArchivePlan) -> Result<Vec<(StoredMemory, ArchiveMatch)>> {
    let mut by_rule = Vec::with_capacity(plan.rules.len());
    for rule in &plan.rules {
        let kind = rule.memory_type.map(MemoryType::as_str);
        by_rule.push(select(
            c,
            "WHERE v.archived_at IS NULL AND v.created_at < $1 \
             AND ($2::text IS NULL OR v.memory_type = $2) \
             AND ($3::text[] IS NULL OR v.wing = ANY($3)) ORDER BY v.created_at, v.seq",
            &[&rule.before_ms, &kind, &plan.wings],
            Parts::NONE,
        )?);
    }
    let by_id = get_many(c, &plan.ids, Parts::NONE)?;
    Ok(plan.selection(by_rule, &by_id))
}

/// See [`crate::MemoryStore::archive`] with `dry_run`.
pub(super) fn archive_preview(c: &mut Client, plan: &ArchivePlan) -> Result<ArchiveReport> {
    Ok(ArchiveReport::of(archivable(c, plan)?))
}

/// See [`crate::MemoryStore::archive`].
pub(super) fn archive(c: &mut Client, plan: &ArchivePlan) -> Result<ArchiveReport> {
    let mut rows = archivable(c, plan)?;
    let seqs: Vec<i64> = rows.iter().map(|(m, _)| m.seq).collect();
    c.execute(
        "UPDATE verbatims SET archived_at = $1 WHERE seq = ANY($2) AND archived_at IS NULL",
        &[&plan.now_ms, &seqs],
    )?;
    for (m, _) in &mut rows {
        m.memory.archived = true;
    }
    Ok(ArchiveReport::of(rows))
}

/// See [`crate::MemoryStore::unarchive`].
pub(super) fn unarchive(c: &mut Client, ids: &[MemoryId]) -> Result<Vec<StoredMemory>> {
    let mut seen = HashSet::new();
    let ids: Vec<MemoryId> = ids.iter().copied().filter(|id| seen.insert(*id)).collect();
    let restored: HashSet<MemoryId> = c
        .query(
            "UPDATE verbatims SET archived_at = NULL WHERE id = ANY($1) AND archived_at IS NOT NULL \
             RETURNING id",
            &[&ids],
        )?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, _>>()?;
    let order: Vec<MemoryId> = ids.into_iter().filter(|id| restored.contains(id)).collect();
    let parts = Parts {
        embedding: true,
        ..Parts::NONE
    };
    let mut found = get_many(c, &order, parts)?;
    Ok(order.iter().filter_map(|id| found.remove(id)).collect())
}

/// See [`crate::MemoryStore::timeline`].
pub(super) fn timeline(c: &mut Client, q: &TimelineQuery) -> Result<Vec<StoredMemory>> {
    let (order, cmp) = if q.newest_first {
        ("DESC", "<")
    } else {
        ("ASC", ">")
    };
    let condition = format!(
        "WHERE ($1::text IS NULL OR v.wing = $1) AND ($2::text IS NULL OR v.room = $2)
           AND ($3::text IS NULL OR v.memory_type = $3)
           AND ($4::bigint IS NULL OR v.created_at >= $4) AND ($5::bigint IS NULL OR v.created_at <= $5)
           AND ($6 OR v.archived_at IS NULL) AND ($7 OR v.superseded_by IS NULL)
           AND ($8::bigint IS NULL OR (v.created_at, v.seq) {cmp} ($8, $9::bigint))
           AND ($11::text IS NULL OR v.source = $11) AND (NOT $12 OR v.pinned)
           AND ($13::text[] IS NULL OR v.wing = ANY($13))
         ORDER BY v.created_at {order}, v.seq {order} LIMIT $10"
    );
    select(
        c,
        &condition,
        &[
            &q.wing,
            &q.room,
            &q.memory_type.map(MemoryType::as_str),
            &q.since_ms,
            &q.until_ms,
            &q.include_archived,
            &q.include_superseded,
            &q.after.map(|a| a.0),
            &q.after.map(|a| a.1),
            &i64::try_from(q.limit).unwrap_or(i64::MAX),
            &q.source.map(crate::Source::as_str),
            &q.pinned_only,
            &q.wings,
        ],
        Parts::NONE,
    )
}

/// Rows an export reads at a time (through a cursor, so memory stays flat).
const EXPORT_PAGE: i32 = 500;

/// Calls `visit` with every memory of `wing` (or all), oldest first, with `parts`, from one
/// snapshot (a read-only repeatable-read transaction).
pub(super) fn export_each(
    c: &mut Client,
    wing: Option<&str>,
    parts: Parts,
    visit: &mut dyn FnMut(StoredMemory) -> crate::Visit,
) -> Result<u64> {
    let mut tx = c
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let portal = tx.bind(
        &format!(
            "{SELECT_ROWS} WHERE $1::text IS NULL OR v.wing = $1 ORDER BY v.created_at, v.seq"
        ),
        &[&wing],
    )?;
    let mut n = 0u64;
    loop {
        let rows = tx.query_portal(&portal, EXPORT_PAGE)?;
        if rows.is_empty() {
            break;
        }
        let mut page = rows
            .iter()
            .map(|r| raw_row(r)?.decode())
            .collect::<Result<Vec<_>>>()?;
        fill(&mut tx, &mut page, parts)?;
        for m in page {
            n += 1;
            if !visit(m)? {
                return Ok(n);
            }
        }
    }
    Ok(n)
}
