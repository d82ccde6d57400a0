//! Webhook dead letters on SQLite.

use super::SqliteStore;
use crate::{DeadLetter, Result};
use rusqlite::{params, OptionalExtension, Row};

const COLUMNS: &str = "id, endpoint, event_type, payload, attempts, last_error, failed_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<DeadLetter> {
    Ok(DeadLetter {
        id: r.get(0)?,
        endpoint: r.get(1)?,
        event_type: r.get(2)?,
        payload: r.get(3)?,
        attempts: u32::try_from(r.get::<_, i64>(4)?).unwrap_or(u32::MAX),
        last_error: r.get(5)?,
        failed_at: r.get(6)?,
    })
}

/// Adds a dead letter; one with the same id is replaced (its attempts add up).
pub(super) fn add(store: &SqliteStore, d: &DeadLetter) -> Result<()> {
    store.write(|tx| {
        tx.execute(
            "INSERT INTO webhook_dead_letters (id, endpoint, event_type, payload, attempts, last_error, failed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(id) DO UPDATE SET attempts = attempts + excluded.attempts,
                 last_error = excluded.last_error, failed_at = excluded.failed_at",
            params![
                d.id,
                d.endpoint,
                d.event_type,
                d.payload,
                i64::from(d.attempts),
                d.last_error,
                d.failed_at
            ],
        )?;
        Ok(())
    })
}

/// Dead letters, oldest first, at most `limit`.
pub(super) fn list(store: &SqliteStore, limit: usize) -> Result<Vec<DeadLetter>> {
    store.read(|conn| {
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM webhook_dead_letters ORDER BY failed_at, id LIMIT ?1"
        ))?;
        let rows = stmt
            .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// One dead letter by id.
pub(super) fn get(store: &SqliteStore, id: &str) -> Result<Option<DeadLetter>> {
    store.read(|conn| {
        Ok(conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM webhook_dead_letters WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()?)
    })
}

/// How many dead letters there are.
pub(super) fn count(store: &SqliteStore) -> Result<u64> {
    store.read(|conn| {
        let n: i64 = conn.query_row("SELECT count(*) FROM webhook_dead_letters", [], |r| {
            r.get(0)
        })?;
        Ok(u64::try_from(n).unwrap_or(0))
    })
}

/// Removes a dead letter (after a successful replay); false when it did not exist.
pub(super) fn remove(store: &SqliteStore, id: &str) -> Result<bool> {
    store.write(|tx| Ok(tx.execute("DELETE FROM webhook_dead_letters WHERE id = ?1", [id])? > 0))
}

/// Records a failed replay: `attempts` more attempts, the error and the time.
pub(super) fn failed_again(
    store: &SqliteStore,
    id: &str,
    attempts: u32,
    error: &str,
    at_ms: i64,
) -> Result<()> {
    store.write(|tx| {
        tx.execute(
            "UPDATE webhook_dead_letters SET attempts = attempts + ?2, last_error = ?3, failed_at = ?4 WHERE id = ?1",
            params![id, i64::from(attempts), error, at_ms],
        )?;
        Ok(())
    })
}
