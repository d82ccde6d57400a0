//! Applying the PostgreSQL migrations ([`crate::PG_MIGRATIONS`]) in order, under an advisory
//! lock so that servers starting together migrate once.

use crate::migrations::{latest, PG_MIGRATIONS};
use crate::{Result, StoreError};
use postgres::Client;

/// The schema version this build writes.
pub(super) const LATEST_VERSION: i64 = latest(PG_MIGRATIONS);

/// The advisory lock key of migrations (any constant: "mira" in ASCII).
const MIGRATION_LOCK: i64 = 0x6d69_7261;

/// The version applied (0 for a new database).
pub(super) fn current_version(c: &mut Client) -> Result<i64> {
    let exists: bool = c
        .query_one("SELECT to_regclass('schema_version') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(
        c.query_one("SELECT COALESCE(max(version), 0) FROM schema_version", &[])?
            .get(0),
    )
}

/// Applies every pending migration, each in its own transaction; returns the versions applied.
pub(super) fn migrate(c: &mut Client) -> Result<Vec<i64>> {
    c.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
    let out = apply(c);
    c.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])?;
    out
}

fn apply(c: &mut Client) -> Result<Vec<i64>> {
    c.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_version (
            version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    )?;
    let found = current_version(c)?;
    if found > LATEST_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: LATEST_VERSION,
        });
    }
    let done: Vec<i64> = c
        .query("SELECT version FROM schema_version", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut applied = Vec::new();
    // Every version not recorded yet, gaps included (see `crate::migrations`).
    for m in PG_MIGRATIONS.iter().filter(|m| !done.contains(&m.version)) {
        let mut tx = c.transaction()?;
        tx.batch_execute(m.sql).map_err(|e| explain(m.name, e))?;
        tx.execute(
            "INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, $3)",
            &[&m.version, &m.name, &chrono::Utc::now().timestamp_millis()],
        )?;
        tx.commit()?;
        applied.push(m.version);
    }
    Ok(applied)
}

/// A failed migration, with what to do when pgvector is missing.
fn explain(name: &str, e: postgres::Error) -> StoreError {
    let text = e
        .as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_else(|| e.to_string());
    if text.contains("vector") && (text.contains("extension") || text.contains("control file")) {
        return StoreError::Config(format!(
            "migration '{name}' needs the pgvector extension ({text}): install pgvector (>= 0.8) on the server, or have a superuser run CREATE EXTENSION vector in this database"
        ));
    }
    StoreError::Postgres(e)
}
