//! Helpers shared by the integration tests.
#![allow(dead_code)]

use mira::config::Config;
use mira::App;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// A config whose storage lives in `dir`.
pub fn config_in(dir: &Path) -> Config {
    let mut cfg = Config::default();
    cfg.storage.path = Some(dir.to_path_buf());
    cfg
}

/// The real model at the default precision (as the `mira` binary runs it), loaded once per
/// test binary.
pub fn model() -> Arc<dyn mira_embed::Embedder> {
    static MODEL: OnceLock<Arc<dyn mira_embed::Embedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = mira_embed::resolve_model_dir(None);
            let options = Config::default().embeddings.model_options();
            Arc::new(
                mira_embed::MiniLm::load_with(&dir, &options).unwrap_or_else(|e| panic!("{e}")),
            )
        })
        .clone()
}

/// The name the default model records with each embedding.
pub fn default_model_name() -> String {
    Config::default().embeddings.precision.model_name()
}

/// An app on a fresh store in `dir` with the real model.
pub fn app(dir: &Path) -> App {
    App::open_with_embedder(config_in(dir), model()).expect("open app")
}

/// An app on a fresh store in `dir` with the deterministic hash embedder.
pub fn hash_app(dir: &Path) -> App {
    App::open_with_embedder(config_in(dir), Arc::new(mira_embed::HashEmbedder::new(384)))
        .expect("open app")
}

/// The seed's decision example.
pub const SEED: &str = "We decided to migrate to PostgreSQL for v2. Rejected: MySQL (not ACID), MongoDB (not relational). Reason: ACID and team expertise. Approved by CTO. Assigned to Jean.";

/// The real `mira` binary with its storage (and HOME) in `storage` and the installed model.
pub fn mira(storage: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("mira").unwrap();
    cmd.env("MIRA_STORAGE_PATH", storage)
        .env_remove("MIRA_CONFIG")
        .env_remove("MIRA_STORAGE_BACKEND")
        .env_remove("MIRA_DATABASE_URL")
        .env("MIRA_MODEL_DIR", mira_embed::resolve_model_dir(None))
        .env("MIRA_METRICS_ENABLED", "false")
        .env("HOME", storage);
    cmd
}

/// Runs `cmd`, asserts success and returns its stdout.
pub fn stdout(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The LoCoMo development conversations, `data/locomo-dev` of the project's data folder
/// (`mira_testkit::shared_path`).
pub fn locomo_dev_dir() -> std::path::PathBuf {
    mira_testkit::shared_path("data/locomo-dev")
}

/// The stored embedding of memory `id` (it must exist and have one).
pub fn embedding(app: &App, id: mira_core::memory::MemoryId) -> Vec<f32> {
    let parts = mira_store::Parts {
        embedding: true,
        ..mira_store::Parts::NONE
    };
    app.store
        .get(id, parts)
        .unwrap()
        .and_then(|m| m.embedding)
        .map(|e| e.vector)
        .unwrap()
}

/// Stores `content` in `wing` through the store use case (type and room inferred); returns
/// its id.
pub fn put(app: &App, content: &str, wing: &str) -> mira_core::memory::MemoryId {
    mira::usecases::store::store(
        app,
        &mira::usecases::access::Access::local(),
        mira::usecases::store::StoreRequest {
            content: content.into(),
            wing: wing.into(),
            ..Default::default()
        },
    )
    .unwrap()
    .id
}

/// Runs raw SQL on the app's SQLite store in one write transaction (as another process or a
/// bug could); returns the rows `sql` changed.
pub fn sql(app: &App, sql: &str, params: impl rusqlite::Params) -> usize {
    let mira_store::Database::Sqlite(db) = app.store.database() else {
        panic!("a SQLite store")
    };
    db.write(|tx| Ok(tx.execute(sql, params)?)).unwrap()
}

/// Inserts a causal edge `from → to` with SQL (as another process or a bug could).
pub fn edge(app: &App, from: mira_core::memory::MemoryId, to: mira_core::memory::MemoryId) {
    sql(
        app,
        "INSERT INTO causal_edges (from_id, to_id, relation, confidence, detected_at) VALUES (?1, ?2, 'because', 0.5, 0)",
        (from.to_string(), to.to_string()),
    );
}

/// A check of both backends as one test per backend named after it (`<name>::sqlite`,
/// `<name>::postgres`); `$db` is the [`Db`] (see `mira_testkit::backend_test!`).
macro_rules! backend_test {
    ($($test:tt)*) => {
        mira_testkit::backend_test!(
            crate::common::Db::sqlite, crate::common::Db::postgres; $($test)*
        );
    };
}

/// A fresh database for one test, on either backend: SQLite in a temporary directory, or a
/// PostgreSQL database of its own on the test server (`mira_testkit::pg`), its index files in the
/// temporary directory.
pub struct Db {
    /// The storage directory (the SQLite file and the index files).
    pub dir: tempfile::TempDir,
    /// The PostgreSQL database, when on that backend (dropped with it).
    pub pg: Option<mira_testkit::pg::TestDatabase>,
}

impl Db {
    /// A fresh SQLite store.
    pub fn sqlite() -> Db {
        Db {
            dir: tempfile::tempdir().unwrap(),
            pg: None,
        }
    }

    /// A fresh PostgreSQL database, or `None` (the reason printed) without a test server.
    pub fn postgres() -> Option<Db> {
        Some(Db {
            dir: tempfile::tempdir().unwrap(),
            pg: Some(mira_testkit::pg::TestDatabase::create()?),
        })
    }

    /// A fresh database on the same backend as this one.
    pub fn another(&self) -> Db {
        match self.pg {
            None => Db::sqlite(),
            Some(_) => Db::postgres().expect("the test server went away"),
        }
    }

    /// `sqlite` or `postgres`.
    pub fn name(&self) -> &'static str {
        if self.pg.is_some() {
            "postgres"
        } else {
            "sqlite"
        }
    }

    /// The environment that points `mira` at this database.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = vec![("MIRA_STORAGE_PATH", self.dir.path().display().to_string())];
        if let Some(pg) = &self.pg {
            env.push(("MIRA_STORAGE_BACKEND", "postgres".into()));
            env.push(("MIRA_DATABASE_URL", pg.url.clone()));
        }
        env
    }

    /// A config on this database.
    pub fn config(&self) -> Config {
        let mut cfg = config_in(self.dir.path());
        if let Some(pg) = &self.pg {
            cfg.storage.backend = mira::config::StorageBackend::Postgres;
            cfg.storage.postgres.url = Some(pg.url.clone());
        }
        cfg
    }

    /// An app on this database with the real model.
    pub fn app(&self) -> App {
        App::open_with_embedder(self.config(), model()).expect("open app")
    }

    /// An app on this database with the deterministic hash embedder.
    pub fn hash_app(&self) -> App {
        App::open_with_embedder(self.config(), Arc::new(mira_embed::HashEmbedder::new(384)))
            .expect("open app")
    }

    /// Runs `sql` (statements without parameters) on this database directly, as another
    /// program could.
    pub fn execute(&self, sql: &str) {
        match &self.pg {
            None => rusqlite::Connection::open(self.dir.path().join("mira.db"))
                .and_then(|c| c.execute_batch(sql))
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
            Some(pg) => postgres::Client::connect(&pg.url, postgres::NoTls)
                .and_then(|mut c| c.batch_execute(sql))
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
        }
    }

    /// The real `mira` binary on this database.
    pub fn mira(&self) -> assert_cmd::Command {
        let mut cmd = mira(self.dir.path());
        cmd.envs(self.env());
        cmd
    }
}
