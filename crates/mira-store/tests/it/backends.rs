//! Stores of both backends for the tests that hold for any [`Store`], and a maker of
//! memories to write in them.
#![allow(dead_code)]

use mira_core::fingerprint::extract;
use mira_core::memory::{Memory, MemoryId, MemoryType};
use mira_core::tags::{Tag, TagKind};
use mira_store::{
    Bookkeeping, Embedding, NewMemory, PgOptions, PgStore, SqliteOptions, SqliteStore, Store,
};
use mira_testkit::pg::TestDatabase;
use std::sync::Arc;

/// The dimension of the embeddings written (PostgreSQL's column is `vector(384)`).
pub const DIM: usize = 384;

/// A store under test and what keeps it alive.
pub struct Backend {
    /// `sqlite` or `postgres`.
    pub name: &'static str,
    /// The store.
    pub store: Arc<dyn Store>,
    /// Opens another handle on the same database (another process, as far as it can tell).
    pub reopen: Box<dyn Fn() -> Arc<dyn Store>>,
    _dir: tempfile::TempDir,
    _db: Option<TestDatabase>,
}

/// A fresh SQLite store.
pub fn sqlite() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mira.db");
    let open = move || -> Arc<dyn Store> {
        Arc::new(SqliteStore::open(&path, &SqliteOptions::default()).unwrap())
    };
    Backend {
        name: "sqlite",
        store: open(),
        reopen: Box::new(open),
        _dir: dir,
        _db: None,
    }
}

/// A fresh PostgreSQL store (in a database of its own), or `None` without a server.
pub fn postgres() -> Option<Backend> {
    let db = TestDatabase::create()?;
    let opts = PgOptions {
        url: db.url.clone(),
        pool_size: 4,
        ..PgOptions::default()
    };
    let open = move || -> Arc<dyn Store> { Arc::new(PgStore::open(&opts).unwrap()) };
    Some(Backend {
        name: "postgres",
        store: open(),
        reopen: Box::new(open),
        _dir: tempfile::tempdir().unwrap(),
        _db: Some(db),
    })
}

/// A check of every store, as one test per backend named after it (`<name>::sqlite`,
/// `<name>::postgres`); `$b` is the [`Backend`] (see `mira_testkit::backend_test!`).
macro_rules! backend_test {
    ($($test:tt)*) => {
        mira_testkit::backend_test!(crate::backends::sqlite, crate::backends::postgres; $($test)*);
    };
}

/// A unit vector of [`DIM`] floats, different for each seed.
pub fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f32> = (0..DIM)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.into_iter().map(|a| a / n).collect()
}

/// A new fact of `wing` with its derived parts, an embedding from `seed`, stored at `at` (ms).
pub fn memory(content: &str, wing: &str, at: i64, seed: u64) -> NewMemory {
    let ty = MemoryType::Fact;
    NewMemory {
        memory: Memory {
            id: MemoryId::new_v4(),
            wing: wing.into(),
            room: "facts".into(),
            memory_type: ty,
            content: content.into(),
            fingerprint: extract(content, ty, 2),
            token_count: 7,
            created_at: chrono::DateTime::from_timestamp_millis(at).unwrap(),
            session_id: Some("s".into()),
            archived: false,
            superseded_by: None,
        },
        bookkeeping: Bookkeeping {
            content_hash: format!("h-{content}"),
            stored_at: at + 5,
            archived_at: None,
            metadata: "{}".into(),
            fingerprint_tokens: 3,
            pinned: false,
            source: mira_store::Source::Stored,
            costs: None,
        },
        tags: vec![
            Tag {
                tag: "zeta".into(),
                kind: TagKind::Keyword,
            },
            Tag {
                tag: "alpha".into(),
                kind: TagKind::Entity,
            },
        ],
        embedding: Some(Embedding {
            model: "test".into(),
            vector: vector(seed),
        }),
        causes: vec![],
        supersedes: vec![],
        retracts: vec![],
    }
}
