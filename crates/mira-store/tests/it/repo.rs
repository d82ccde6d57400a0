//! The SQLite store: migrations, one transaction per memory, FTS5 in sync, foreign keys.

use mira_core::fingerprint::extract;
use mira_core::memory::{Memory, MemoryType, RelationType};
use mira_store::{NewEdge, NewMemory, NewTag, Scope, SqliteOptions, Store, StoreError};

fn memory(content: &str, wing: &str) -> NewMemory {
    let ty = MemoryType::Fact;
    let m = Memory {
        id: uuid::Uuid::new_v4(),
        wing: wing.into(),
        room: "facts".into(),
        memory_type: ty,
        content: content.into(),
        fingerprint: extract(content, ty, 2),
        token_count: 7,
        created_at: chrono::Utc::now(),
        session_id: None,
        archived: false,
        superseded_by: None,
    };
    NewMemory {
        memory: m,
        content_hash: format!("h-{content}"),
        fingerprint_tokens: 3,
        stored_at: 0,
        metadata: "{}".into(),
        embedding: vec![0.5; 4],
        model: "test".into(),
        tags: vec![NewTag {
            tag: "alpha".into(),
            kind: "keyword".into(),
        }],
        edges: vec![],
        supersedes: vec![],
        retracts: vec![],
        costs: Default::default(),
        pinned: false,
    }
}

fn open(dir: &std::path::Path) -> Store {
    Store::open(&dir.join("mira.db"), &SqliteOptions::default()).unwrap()
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
fn a_memory_and_everything_derived_is_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let first = memory("The pool size is 10.", "w");
    store.insert_memory(&first).unwrap();
    // An edge to a memory that does not exist violates a foreign key: nothing of it is written.
    let mut broken = memory("The pool size is now 20.", "w");
    broken.edges.push(NewEdge {
        from: uuid::Uuid::new_v4(),
        relation: RelationType::Updates,
        confidence: 0.9,
    });
    assert!(matches!(
        store.insert_memory(&broken),
        Err(StoreError::Sqlite(_))
    ));
    let s = store.stats().unwrap();
    assert_eq!((s.memories, s.embeddings, s.tags, s.edges), (1, 1, 1, 0));
    assert!(store.load(broken.memory.id).unwrap().is_none());
    assert!(store
        .lexical_search("now 20", 10, &Scope::default())
        .unwrap()
        .is_empty());
    // A valid edge and supersession.
    let mut update = memory("The pool size is now 20.", "w");
    update.edges.push(NewEdge {
        from: first.memory.id,
        relation: RelationType::Updates,
        confidence: 0.9,
    });
    update.supersedes.push(first.memory.id);
    store.insert_memory(&update).unwrap();
    let old = store.load(first.memory.id).unwrap().unwrap();
    assert_eq!(old.memory.superseded_by, Some(update.memory.id));
    assert_eq!(old.consequences[0].other, update.memory.id);
    assert_eq!(old.memory.fingerprint, first.memory.fingerprint);
}

#[test]
fn fts_follows_inserts_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let a = memory("Kubernetes runs the staging cluster.", "w");
    let b = memory("Postgres holds the billing data.", "v");
    store.insert_memories(&[a.clone(), b.clone()]).unwrap();
    let hits = store
        .lexical_search(
            "where does kubernetes run? (staging)",
            10,
            &Scope::default(),
        )
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].0, a.memory.id);
    let scoped = store
        .lexical_search(
            "kubernetes postgres",
            10,
            &Scope {
                wing: Some("v".into()),
                room: None,
            },
        )
        .unwrap();
    assert_eq!(
        scoped.iter().map(|h| h.0).collect::<Vec<_>>(),
        vec![b.memory.id]
    );
    // Operators and quotes in user text are inert.
    assert!(store
        .lexical_search("\"AND OR NOT *", 10, &Scope::default())
        .is_ok());
    store
        .write(|tx| {
            Ok(tx.execute(
                "DELETE FROM verbatims WHERE id = ?1",
                [a.memory.id.to_string()],
            )?)
        })
        .unwrap();
    assert!(store
        .lexical_search("kubernetes", 10, &Scope::default())
        .unwrap()
        .is_empty());
    let s = store.stats().unwrap();
    assert_eq!((s.memories, s.embeddings, s.tags), (1, 1, 1));
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
    let err = Store::open(&path, &SqliteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a mira database"), "{err}");
    let err = Store::open(dir.path(), &SqliteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("directory"), "{err}");
}

#[test]
fn fts_also_indexes_the_day_a_memory_happened() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let day = |y, m, d| {
        chrono::NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(13, 56, 0)
            .unwrap()
            .and_utc()
    };
    let mut may = memory("Caroline went to a support group.", "w");
    may.memory.created_at = day(2023, 5, 8);
    let mut june = memory("Melanie ran a charity race.", "w");
    june.memory.created_at = day(2023, 6, 8);
    store.insert_memories(&[may.clone(), june.clone()]).unwrap();
    let ids = |q: &str| -> Vec<uuid::Uuid> {
        store
            .lexical_search(q, 10, &Scope::default())
            .unwrap()
            .into_iter()
            .map(|h| h.0)
            .collect()
    };
    assert_eq!(ids("what happened on 8 May 2023?")[0], may.memory.id);
    assert_eq!(ids("June")[..], [june.memory.id]);
    assert_eq!(
        ids("charity")[..],
        [june.memory.id],
        "the text is still indexed"
    );
    store
        .delete(&mira_store::DeleteScope::Memory(june.memory.id))
        .unwrap();
    assert!(ids("June").is_empty(), "deletes leave the index");
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
fn a_memory_without_an_embedding_is_listed_until_one_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(open(dir.path()));
    let with = memory("The pool size is 10.", "w");
    let mut without = memory("Deploys happen on Tuesdays.", "w");
    without.embedding.clear();
    let mut gone = memory("The old cache was Redis.", "w");
    gone.embedding.clear();
    store
        .insert_memories(&[with, without.clone(), gone.clone()])
        .unwrap();
    assert_eq!(store.stats().unwrap().embeddings, 1);
    assert_eq!(store.count_without_embedding().unwrap(), 2);
    let listed = store.without_embedding(10).unwrap();
    assert_eq!(
        listed.iter().map(|u| u.id).collect::<Vec<_>>(),
        vec![without.memory.id, gone.memory.id],
        "oldest first"
    );
    assert_eq!(listed[0].content, "Deploys happen on Tuesdays.");
    assert_eq!(store.without_embedding(1).unwrap().len(), 1);
    // The catalog knows the memory without a vector; the vector index gets it once it is set.
    let index = mira_store::index::VectorIndexManager::open(
        store.clone(),
        &dir.path().join("index"),
        Default::default(),
    )
    .unwrap();
    assert_eq!(index.view(|v| v.catalog().len()), 3);
    assert_eq!(index.len(), 1);

    store
        .delete(&mira_store::DeleteScope::Memory(gone.memory.id))
        .unwrap();
    let vectors = vec![
        (without.memory.id, vec![0.25; 4]),
        (gone.memory.id, vec![0.25; 4]),
    ];
    assert_eq!(
        store.set_embeddings("m2", &vectors).unwrap(),
        1,
        "not the deleted one"
    );
    assert_eq!(store.set_embeddings("m2", &vectors).unwrap(), 0, "once");
    assert_eq!(store.count_without_embedding().unwrap(), 0);
    index.sync_from_store().unwrap();
    assert_eq!(index.len(), 2);
    let model: String = store
        .read(|c| {
            Ok(c.query_row(
                "SELECT model FROM embeddings WHERE memory_id = ?1",
                [without.memory.id.to_string()],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(model, "m2");
}
