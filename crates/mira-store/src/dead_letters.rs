//! Webhook dead letters (`webhook_dead_letters`): deliveries that could not be made (retries
//! exhausted, queue full, circuit open, shutdown), kept until they are replayed.
//!
//! `endpoint` is the endpoint's URL as configured: replay looks the endpoint up by it (to use its
//! current secret and timeout). Callers show it redacted, never in logs.

use crate::{Result, Store};
use rusqlite::{params, OptionalExtension, Row};

/// One dead letter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The event id (unique per event and endpoint delivery; the primary key).
    pub id: String,
    /// The endpoint's URL.
    pub endpoint: String,
    /// The event name (`memory.stored`, …).
    pub event_type: String,
    /// The JSON body that was (or would have been) posted.
    pub payload: String,
    /// Delivery attempts made so far (0 when it never left the queue).
    pub attempts: u32,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it was dead-lettered (or last failed a replay), unix ms.
    pub failed_at: i64,
}

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

impl Store {
    /// Adds a dead letter; one with the same id is replaced (its attempts add up).
    pub fn add_dead_letter(&self, d: &DeadLetter) -> Result<()> {
        self.write(|tx| {
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
    pub fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>> {
        self.read(|conn| {
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
    pub fn dead_letter(&self, id: &str) -> Result<Option<DeadLetter>> {
        self.read(|conn| {
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
    pub fn dead_letter_count(&self) -> Result<u64> {
        self.read(|conn| {
            let n: i64 = conn.query_row("SELECT count(*) FROM webhook_dead_letters", [], |r| {
                r.get(0)
            })?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    /// Removes a dead letter (after a successful replay); false when it did not exist.
    pub fn remove_dead_letter(&self, id: &str) -> Result<bool> {
        self.write(|tx| Ok(tx.execute("DELETE FROM webhook_dead_letters WHERE id = ?1", [id])? > 0))
    }

    /// Records a failed replay: `attempts` more attempts, the error and the time.
    pub fn dead_letter_failed_again(
        &self,
        id: &str,
        attempts: u32,
        error: &str,
        at_ms: i64,
    ) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE webhook_dead_letters SET attempts = attempts + ?2, last_error = ?3, failed_at = ?4 WHERE id = ?1",
                params![id, i64::from(attempts), error, at_ms],
            )?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqliteOptions;

    fn letter(id: &str, at: i64) -> DeadLetter {
        DeadLetter {
            id: id.into(),
            endpoint: "http://127.0.0.1:1/hook".into(),
            event_type: "memory.stored".into(),
            payload: "{}".into(),
            attempts: 2,
            last_error: Some("webhook returned status 500".into()),
            failed_at: at,
        }
    }

    #[test]
    fn add_list_fail_again_remove() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("m.db"), &SqliteOptions::default()).expect("db");
        store.add_dead_letter(&letter("b", 20)).expect("add");
        store.add_dead_letter(&letter("a", 10)).expect("add");
        let all = store.dead_letters(10).expect("list");
        assert_eq!(
            all.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(store.dead_letters(1).expect("list").len(), 1);
        store.add_dead_letter(&letter("a", 30)).expect("again");
        assert_eq!(
            store.dead_letter("a").expect("get").map(|d| d.attempts),
            Some(4)
        );
        store
            .dead_letter_failed_again("b", 1, "connection refused", 40)
            .expect("fail");
        let b = store.dead_letter("b").expect("get").expect("b");
        assert_eq!(
            (b.attempts, b.last_error.as_deref(), b.failed_at),
            (3, Some("connection refused"), 40)
        );
        assert_eq!(store.dead_letter_count().expect("count"), 2);
        assert!(store.remove_dead_letter("a").expect("rm"));
        assert!(!store.remove_dead_letter("a").expect("rm"));
        assert_eq!(store.dead_letter_count().expect("count"), 1);
    }
}
