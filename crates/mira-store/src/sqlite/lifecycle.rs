//! The lifecycle queries on SQLite: timeline, archive and un-archive, deletion.

use super::read::{fill, get_many, raw_row, stored, wing_list, SELECT_ROWS};
use crate::lifecycle::{
    ArchiveMatch, ArchivePlan, ArchiveReport, DeleteCounts, DeleteScope, TimelineQuery,
};
use crate::model::{parse_id, Parts, StoredMemory};
use crate::{Result, StoreError};
use mira_core::memory::{MemoryId, MemoryType};
use rusqlite::{params, Connection};
use std::collections::HashSet;

/// The condition of a deletion scope on `verbatims` (alias-free) and its parameters.
fn condition(scope: &DeleteScope) -> (&'static str, Vec<String>) {
    match scope {
        DeleteScope::All => ("1", vec![]),
        DeleteScope::Wing(w) => ("wing = ?1", vec![w.clone()]),
        DeleteScope::Room { wing, room } => {
            ("wing = ?1 AND room = ?2", vec![wing.clone(), room.clone()])
        }
        DeleteScope::Memory(id) => ("id = ?1", vec![id.to_string()]),
    }
}

/// See [`crate::MemoryStore::delete_preview`].
pub(super) fn count_scope(conn: &Connection, scope: &DeleteScope) -> Result<DeleteCounts> {
    let (cond, values) = condition(scope);
    let p = rusqlite::params_from_iter(values.iter());
    let mut stmt = conn.prepare(&format!(
        "SELECT id FROM verbatims WHERE {cond} ORDER BY seq"
    ))?;
    let ids = stmt
        .query_map(p, |r| r.get::<_, String>(0))?
        .map(|r| r.map_err(StoreError::from).and_then(|s| parse_id(&s)))
        .collect::<Result<Vec<_>>>()?;
    let count = |sql: String| -> Result<u64> {
        let n: i64 = conn.query_row(&sql, rusqlite::params_from_iter(values.iter()), |r| {
            r.get(0)
        })?;
        Ok(n.max(0) as u64)
    };
    let sub = format!("SELECT id FROM verbatims WHERE {cond}");
    Ok(DeleteCounts {
        ids,
        edges: count(format!(
            "SELECT count(*) FROM causal_edges WHERE from_id IN ({sub}) OR to_id IN ({sub})"
        ))?,
        tags: count(format!(
            "SELECT count(*) FROM tags WHERE memory_id IN ({sub})"
        ))?,
        tokens: count(format!(
            "SELECT COALESCE(sum(token_count), 0) FROM verbatims WHERE {cond}"
        ))?,
    })
}

/// See [`crate::MemoryStore::delete`].
pub(super) fn delete(tx: &Connection, scope: &DeleteScope) -> Result<DeleteCounts> {
    let counts = count_scope(tx, scope)?;
    let (cond, values) = condition(scope);
    tx.execute(
        &format!("DELETE FROM verbatims WHERE {cond}"),
        rusqlite::params_from_iter(values.iter()),
    )?;
    Ok(counts)
}

/// Live memories selected by `plan`, oldest first, each with the first reason that matched.
fn archivable(conn: &Connection, plan: &ArchivePlan) -> Result<Vec<(StoredMemory, ArchiveMatch)>> {
    let mut by_rule = Vec::with_capacity(plan.rules.len());
    for rule in &plan.rules {
        let mut stmt = conn.prepare_cached(&format!(
            "{SELECT_ROWS} WHERE v.archived_at IS NULL AND v.created_at < ?1 \
             AND (?2 IS NULL OR v.memory_type = ?2) \
             AND (?3 IS NULL OR v.wing IN (SELECT value FROM json_each(?3))) \
             ORDER BY v.created_at, v.seq"
        ))?;
        let mut rows = stmt.query(params![
            rule.before_ms,
            rule.memory_type.map(MemoryType::as_str),
            wing_list(plan.wings.as_deref())
        ])?;
        let mut matched = Vec::new();
        while let Some(r) = rows.next()? {
            matched.push(raw_row(r)?.decode()?);
        }
        by_rule.push(matched);
    }
    let by_id = get_many(conn, &plan.ids, Parts::NONE)?;
    Ok(plan.selection(by_rule, &by_id))
}

/// See [`crate::MemoryStore::archive`] with `dry_run`.
pub(super) fn archive_preview(conn: &Connection, plan: &ArchivePlan) -> Result<ArchiveReport> {
    Ok(ArchiveReport::of(archivable(conn, plan)?))
}

/// See [`crate::MemoryStore::archive`].
pub(super) fn archive(tx: &Connection, plan: &ArchivePlan) -> Result<ArchiveReport> {
    let mut rows = archivable(tx, plan)?;
    let mut stmt = tx.prepare_cached(
        "UPDATE verbatims SET archived_at = ?1 WHERE seq = ?2 AND archived_at IS NULL",
    )?;
    for (m, _) in &mut rows {
        stmt.execute(params![plan.now_ms, m.seq])?;
        m.memory.archived = true;
    }
    Ok(ArchiveReport::of(rows))
}

/// See [`crate::MemoryStore::unarchive`].
pub(super) fn unarchive(tx: &Connection, ids: &[MemoryId]) -> Result<Vec<StoredMemory>> {
    let mut update = tx.prepare_cached(
        "UPDATE verbatims SET archived_at = NULL WHERE id = ?1 AND archived_at IS NOT NULL",
    )?;
    let mut select = tx.prepare_cached(&format!("{SELECT_ROWS} WHERE v.id = ?1"))?;
    let parts = Parts {
        embedding: true,
        ..Parts::NONE
    };
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for id in ids.iter().filter(|id| seen.insert(**id)) {
        let key = id.to_string();
        if update.execute([&key])? == 0 {
            continue;
        }
        let mut rows = select.query([&key])?;
        if let Some(r) = rows.next()? {
            out.push(stored(tx, r, parts)?);
        }
    }
    Ok(out)
}

/// See [`crate::MemoryStore::timeline`].
pub(super) fn timeline(conn: &Connection, q: &TimelineQuery) -> Result<Vec<StoredMemory>> {
    let (order, cmp) = if q.newest_first {
        ("DESC", "<")
    } else {
        ("ASC", ">")
    };
    let sql = format!(
        "{SELECT_ROWS}
         WHERE (?1 IS NULL OR v.wing = ?1) AND (?2 IS NULL OR v.room = ?2)
           AND (?3 IS NULL OR v.memory_type = ?3)
           AND (?4 IS NULL OR v.created_at >= ?4) AND (?5 IS NULL OR v.created_at <= ?5)
           AND (?6 OR v.archived_at IS NULL) AND (?7 OR v.superseded_by IS NULL)
           AND (?8 IS NULL OR (v.created_at, v.seq) {cmp} (?8, ?9))
           AND (?11 IS NULL OR v.source = ?11) AND (NOT ?12 OR v.pinned <> 0)
           AND (?13 IS NULL OR v.wing IN (SELECT value FROM json_each(?13)))
         ORDER BY v.created_at {order}, v.seq {order} LIMIT ?10"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params![
        q.wing,
        q.room,
        q.memory_type.map(MemoryType::as_str),
        q.since_ms,
        q.until_ms,
        q.include_archived,
        q.include_superseded,
        q.after.map(|a| a.0),
        q.after.map(|a| a.1),
        i64::try_from(q.limit).unwrap_or(i64::MAX),
        q.source.map(crate::Source::as_str),
        q.pinned_only,
        wing_list(q.wings.as_deref()),
    ])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(raw_row(r)?.decode()?);
    }
    Ok(out)
}

/// Calls `visit` with every memory of `wing` (or all), oldest first, with `parts`.
pub(super) fn export_each(
    conn: &Connection,
    wing: Option<&str>,
    parts: Parts,
    visit: &mut dyn FnMut(StoredMemory) -> crate::Visit,
) -> Result<u64> {
    let mut stmt = conn.prepare(&format!(
        "{SELECT_ROWS} WHERE ?1 IS NULL OR v.wing = ?1 ORDER BY v.created_at, v.seq"
    ))?;
    let mut rows = stmt.query([wing])?;
    let mut n = 0u64;
    while let Some(row) = rows.next()? {
        let mut m = raw_row(row)?.decode()?;
        fill(conn, &mut m, parts)?;
        n += 1;
        if !visit(m)? {
            break;
        }
    }
    Ok(n)
}
