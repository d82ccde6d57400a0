//! What only the SQLite store has: its migrations and pragmas, a file that is not a database,
//! an old schema upgraded (what every store does is in `conformance`).

use mira_store::{MemoryStore, Scope, SqliteOptions, SqliteStore};

/// A SQLite file at `path` with these migrations applied and recorded, as an earlier version
/// (or another branch) left it.
pub fn migrated_by<'a>(
    path: &std::path::Path,
    migrations: impl Iterator<Item = &'a mira_store::Migration>,
) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;",
    )
    .unwrap();
    for m in migrations {
        conn.execute_batch(m.sql).unwrap();
        conn.execute(
            "INSERT INTO schema_version VALUES (?1, ?2, 0)",
            rusqlite::params![m.version, m.name],
        )
        .unwrap();
    }
    conn
}

fn open(dir: &std::path::Path) -> SqliteStore {
    SqliteStore::open(&dir.join("mira.db"), &SqliteOptions::default()).unwrap()
}

#[test]
fn migrations_are_applied_once_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    assert_eq!(store.schema_version().unwrap(), mira_store::LATEST_VERSION);
    drop(store);
    let store = open(dir.path());
    assert_eq!(store.schema_version().unwrap(), mira_store::LATEST_VERSION);
    let journal: String = store
        .read(|c| Ok(c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(journal.to_lowercase(), "wal");
    let fk: i64 = store
        .write(|tx| Ok(tx.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(fk, 1);
}

#[test]
fn a_file_that_is_not_a_database_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mira.db");
    std::fs::write(
        &path,
        b"this is not sqlite at all, just text that is long enough to matter",
    )
    .unwrap();
    let err = SqliteStore::open(&path, &SqliteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a mira database"), "{err}");
    let err = SqliteStore::open(dir.path(), &SqliteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("directory"), "{err}");
}

#[test]
fn a_version_1_database_is_upgraded_with_its_rows_searchable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mira.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(mira_store::MIGRATIONS[0].sql).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;
             INSERT INTO schema_version VALUES (1, 'initial', 0);
             INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count, created_at, stored_at)
             VALUES ('7f0c1d52-3a59-4d1e-9c43-0e2b3f0f6a11', 'w', 'facts', 'fact', 'Kubernetes runs staging.', 'h', 4, 1683554160000, 1683554160000);",
        )
        .unwrap();
    }
    let store = open(dir.path());
    assert_eq!(store.schema_version().unwrap(), mira_store::LATEST_VERSION);
    for q in ["kubernetes", "May 2023"] {
        let hits = store.lexical_search(q, 10, &Scope::default()).unwrap();
        assert_eq!(hits.len(), 1, "{q}");
    }
}

#[test]
fn a_migration_missing_below_the_latest_applied_one_is_applied() {
    // Branches land in any order: a database may have recorded a later migration and not an
    // earlier one. Here every migration but the pins' (4) ran, with a memory written.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mira.db");
    {
        let conn = migrated_by(
            &path,
            mira_store::MIGRATIONS.iter().filter(|m| m.version != 4),
        );
        conn.execute_batch(
            "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count, created_at, stored_at)
             VALUES ('7f0c1d52-3a59-4d1e-9c43-0e2b3f0f6a11', 'w', 'facts', 'fact', 'Kubernetes runs staging.', 'h', 4, 1683554160000, 1683554160000);",
        )
        .unwrap();
    }
    let store = open(dir.path());
    let (versions, pinned, source): (i64, i64, String) = store
        .read(|c| {
            Ok(c.query_row(
                "SELECT (SELECT count(*) FROM schema_version), pinned, source FROM verbatims",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?)
        })
        .unwrap();
    assert_eq!(versions as usize, mira_store::MIGRATIONS.len());
    assert_eq!(
        (pinned, source.as_str()),
        (0, "stored"),
        "earlier memories were stored"
    );
}
