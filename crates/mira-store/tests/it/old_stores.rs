//! A store written by an earlier version, with the overlap cache (dropped by SQLite's
//! migration 8 and PostgreSQL's 4), is migrated on open: the table is gone, the memories stay.

use mira_store::{Migration, PgOptions, PgStore, SqliteOptions, SqliteStore};
use mira_testkit::pg::TestDatabase;

/// The migrations of `list` before the one that drops the overlap cache.
fn before_the_drop(list: &'static [Migration]) -> impl Iterator<Item = &'static Migration> {
    list.iter().take_while(|m| m.name != "drop_overlap_cache")
}

const MEMORY_A: &str = "7f0c1d52-3a59-4d1e-9c43-0e2b3f0f6a11";
const MEMORY_B: &str = "0b6a1e55-2f3c-4c8e-8d0a-5e9f1c2d3b44";

/// Two memories and the cached similarity of the pair; `id` writes an id literal, `extra` is
/// a column the backend requires with its value for both rows (`None` for SQLite).
fn old_rows(id: fn(&str) -> String, extra: Option<(&str, &str)>) -> String {
    let (a, b) = (id(MEMORY_A), id(MEMORY_B));
    let (col, val) = extra.map_or((String::new(), String::new()), |(c, v)| {
        (format!(", {c}"), format!(", {v}"))
    });
    format!(
        "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count, created_at, stored_at{col})
         VALUES ({a}, 'w', 'facts', 'fact', 'Kubernetes runs staging.', 'ha', 4, 1683554160000, 1683554160000{val}),
                ({b}, 'w', 'facts', 'fact', 'Nomad runs production.', 'hb', 4, 1683554170000, 1683554170000{val});
         INSERT INTO overlap_cache (id_a, id_b, similarity, computed_at) VALUES ({a}, {b}, 0.5, 1683554170000);"
    )
}

#[test]
fn an_old_sqlite_store_loses_the_overlap_cache_and_keeps_its_memories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mira.db");
    crate::repo::migrated_by(&path, before_the_drop(mira_store::MIGRATIONS))
        .execute_batch(&old_rows(|id| format!("'{id}'"), None))
        .unwrap();
    let store = SqliteStore::open(&path, &SqliteOptions::default()).unwrap();
    let (tables, memories): (i64, i64) = store
        .read(|c| {
            Ok(c.query_row(
                "SELECT (SELECT count(*) FROM sqlite_master WHERE name LIKE '%overlap%'),
                        (SELECT count(*) FROM verbatims)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
        .unwrap();
    assert_eq!(
        (tables, memories),
        (0, 2),
        "(overlap tables and indexes, memories)"
    );
}

#[test]
fn an_old_postgres_store_loses_the_overlap_cache_and_keeps_its_memories() {
    let Some(db) = TestDatabase::create() else {
        return;
    };
    {
        let mut c = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
        c.batch_execute(
            "CREATE TABLE schema_version (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
        )
        .unwrap();
        for m in before_the_drop(mira_store::PG_MIGRATIONS) {
            c.batch_execute(m.sql).unwrap();
            c.execute(
                "INSERT INTO schema_version VALUES ($1, $2, 0)",
                &[&m.version, &m.name],
            )
            .unwrap();
        }
        let search = ("search", "to_tsvector('simple', 'runs')");
        c.batch_execute(&old_rows(|id| format!("'{id}'::uuid"), Some(search)))
            .unwrap();
    }
    let opts = PgOptions {
        url: db.url.clone(),
        ..PgOptions::default()
    };
    let store = PgStore::open(&opts).unwrap();
    let (tables, memories): (i64, i64) = store
        .read_with(|c| {
            let r = c.query_one(
                "SELECT (SELECT count(*) FROM pg_class WHERE relname LIKE '%overlap%'),
                        (SELECT count(*) FROM verbatims)",
                &[],
            )?;
            Ok::<_, mira_store::StoreError>((r.get(0), r.get(1)))
        })
        .unwrap();
    assert_eq!(
        (tables, memories),
        (0, 2),
        "(overlap tables and indexes, memories)"
    );
}
