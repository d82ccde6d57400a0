//! Webhook dead letters on PostgreSQL.

use super::PgStore;
use crate::{DeadLetter, Result};
use postgres::Row;

const COLUMNS: &str = "id, endpoint, event_type, payload, attempts, last_error, failed_at";

fn from_row(r: &Row) -> Result<DeadLetter> {
    Ok(DeadLetter {
        id: r.try_get(0)?,
        endpoint: r.try_get(1)?,
        event_type: r.try_get(2)?,
        payload: r.try_get(3)?,
        attempts: u32::try_from(r.try_get::<_, i64>(4)?).unwrap_or(u32::MAX),
        last_error: r.try_get(5)?,
        failed_at: r.try_get(6)?,
    })
}

/// See [`crate::DeadLetterStore::add_dead_letter`].
pub(super) fn add(store: &PgStore, d: &DeadLetter) -> Result<()> {
    store.read(|c| {
        c.execute(
            "INSERT INTO webhook_dead_letters (id, endpoint, event_type, payload, attempts, last_error, failed_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (id) DO UPDATE SET attempts = webhook_dead_letters.attempts + excluded.attempts,
                 last_error = excluded.last_error, failed_at = excluded.failed_at",
            &[
                &d.id,
                &d.endpoint,
                &d.event_type,
                &d.payload,
                &i64::from(d.attempts),
                &d.last_error,
                &d.failed_at,
            ],
        )?;
        Ok(())
    })
}

/// See [`crate::DeadLetterStore::dead_letters`].
pub(super) fn list(store: &PgStore, limit: usize) -> Result<Vec<DeadLetter>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    store.read(|c| {
        c.query(
            &format!("SELECT {COLUMNS} FROM webhook_dead_letters ORDER BY failed_at, id LIMIT $1"),
            &[&limit],
        )?
        .iter()
        .map(from_row)
        .collect()
    })
}

/// See [`crate::DeadLetterStore::dead_letter`].
pub(super) fn get(store: &PgStore, id: &str) -> Result<Option<DeadLetter>> {
    store.read(|c| {
        c.query_opt(
            &format!("SELECT {COLUMNS} FROM webhook_dead_letters WHERE id = $1"),
            &[&id],
        )?
        .as_ref()
        .map(from_row)
        .transpose()
    })
}

/// See [`crate::DeadLetterStore::dead_letter_count`].
pub(super) fn count(store: &PgStore) -> Result<u64> {
    store.read(|c| {
        let n: i64 = c
            .query_one("SELECT count(*) FROM webhook_dead_letters", &[])?
            .try_get(0)?;
        Ok(u64::try_from(n).unwrap_or(0))
    })
}

/// See [`crate::DeadLetterStore::remove_dead_letter`].
pub(super) fn remove(store: &PgStore, id: &str) -> Result<bool> {
    store.read(|c| Ok(c.execute("DELETE FROM webhook_dead_letters WHERE id = $1", &[&id])? > 0))
}

/// See [`crate::DeadLetterStore::dead_letter_failed_again`].
pub(super) fn failed_again(
    store: &PgStore,
    id: &str,
    attempts: u32,
    error: &str,
    at_ms: i64,
) -> Result<()> {
    store.read(|c| {
        c.execute(
            "UPDATE webhook_dead_letters SET attempts = attempts + $2, last_error = $3, failed_at = $4 WHERE id = $1",
            &[&id, &i64::from(attempts), &error, &at_ms],
        )?;
        Ok(())
    })
}
