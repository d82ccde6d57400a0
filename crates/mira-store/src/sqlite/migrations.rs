//! Applying the SQLite migrations ([`crate::MIGRATIONS`]) in order at start.

use crate::migrations::MIGRATIONS;
use crate::{Result, StoreError};
use rusqlite::{params, Connection, TransactionBehavior};

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = crate::migrations::latest(MIGRATIONS);

/// The version currently applied (0 for a new database).
pub fn current_version(conn: &Connection) -> Result<i64> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_version (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;",
    )?;
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?)
}

/// The versions recorded in `schema_version`.
fn applied(conn: &Connection) -> Result<Vec<i64>> {
    let mut stmt = conn.prepare("SELECT version FROM schema_version ORDER BY version")?;
    let versions = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<i64>>>()?;
    Ok(versions)
}

/// Whether a migration of this build is not applied yet (read without creating anything).
pub fn needs_migration(conn: &Connection) -> Result<bool> {
    let done = applied(conn)?;
    Ok(MIGRATIONS.iter().any(|m| !done.contains(&m.version)))
}

/// Applies every pending migration (each version of [`MIGRATIONS`] not recorded yet, gaps
/// included), each in its own transaction. Returns the versions applied.
pub fn migrate(conn: &mut Connection) -> Result<Vec<i64>> {
    let found = current_version(conn)?;
    if found > LATEST_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: LATEST_VERSION,
        });
    }
    let done = applied(conn)?;
    let mut applied_now = Vec::new();
    for m in MIGRATIONS.iter().filter(|m| !done.contains(&m.version)) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the write lock.
        let there: i64 = tx.query_row(
            "SELECT count(*) FROM schema_version WHERE version = ?1",
            [m.version],
            |r| r.get(0),
        )?;
        if there > 0 {
            continue;
        }
        tx.execute_batch(m.sql)?;
        tx.execute(
            "INSERT INTO schema_version (version, name, applied_at) VALUES (?1, ?2, ?3)",
            params![m.version, m.name, chrono::Utc::now().timestamp_millis()],
        )?;
        tx.commit()?;
        applied_now.push(m.version);
    }
    Ok(applied_now)
}

/// The applied version, read without creating anything (for read-only connections).
pub fn current_version_readonly(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?)
}
