//! Health checks: the database, the vector index and the embedder, each `ok` or `degraded`
//! with a detail, and readiness (the application is open: migrations ran and the index is
//! loaded).

use crate::App;
use serde::Serialize;

/// One component's check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// `ok` or `degraded`.
    pub status: &'static str,
    /// What was found (and what to do when degraded).
    pub detail: String,
}

impl Check {
    fn ok(detail: impl Into<String>) -> Check {
        Check {
            status: "ok",
            detail: detail.into(),
        }
    }

    fn degraded(detail: impl Into<String>) -> Check {
        Check {
            status: "degraded",
            detail: detail.into(),
        }
    }

    /// Whether the component works fully.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// The `/health` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// `ok` when every check is ok, else `degraded`; `starting` before the store is open.
    pub status: &'static str,
    /// mira's version.
    pub version: &'static str,
    /// The database (schema version, counts).
    pub database: Check,
    /// The vector index.
    pub vector_index: Check,
    /// The embedding model.
    pub embedder: Check,
}

impl Health {
    /// Whether everything is ok (HTTP 200; otherwise 503).
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }

    /// The answer while the application is still opening.
    pub fn starting() -> Health {
        let wait = || Check::degraded("mira is still opening the store (migrations, vector index)");
        Health {
            status: "starting",
            version: env!("CARGO_PKG_VERSION"),
            database: wait(),
            vector_index: wait(),
            embedder: wait(),
        }
    }
}

fn database(app: &App) -> Check {
    match (app.store.schema_version(), app.store.stats()) {
        (Ok(v), Ok(s)) => Check::ok(format!("schema version {v}, {} memories", s.memories)),
        (Err(e), _) | (_, Err(e)) => Check::degraded(format!(
            "the database {} does not answer: {e}",
            app.store.location()
        )),
    }
}

fn vector_index(app: &App) -> Check {
    let st = match app.index() {
        Ok(index) => index.state(),
        Err(e) => return Check::degraded(format!("{e:#}: recall cannot search")),
    };
    if st.ready {
        Check::ok(format!("HNSW graph ready, {} vectors", st.size))
    } else if st.size < st.params.exact_threshold {
        Check::ok(format!(
            "{} vectors, searched exactly (below hnsw.exact_threshold {})",
            st.size, st.params.exact_threshold
        ))
    } else if st.building {
        Check::degraded(format!(
            "HNSW graph being built for {} vectors; searches scan exactly meanwhile (slower)",
            st.size
        ))
    } else {
        Check::degraded(format!(
            "no HNSW graph for {} vectors; searches scan exactly: run `mira index rebuild`",
            st.size
        ))
    }
}

fn embedder(app: &App) -> Check {
    if app.embedder_loaded() {
        Check::ok(format!("{} loaded", app.model_name()))
    } else if !app.model_installed() {
        Check::degraded(format!(
            "{} not installed in {}: memories are stored without a vector and recall is lexical only; run scripts/fetch-model.sh",
            app.model_name(),
            app.model_dir().display()
        ))
    } else {
        Check::degraded(format!(
            "{} not loaded yet: it loads in the background at start and on first use (model directory {})",
            app.model_name(),
            app.model_dir().display()
        ))
    }
}

/// Runs every check (blocking: reads SQLite).
pub fn check(app: &App) -> Health {
    let (database, vector_index, embedder) = (database(app), vector_index(app), embedder(app));
    let ok = database.is_ok() && vector_index.is_ok() && embedder.is_ok();
    Health {
        status: if ok { "ok" } else { "degraded" },
        version: env!("CARGO_PKG_VERSION"),
        database,
        vector_index,
        embedder,
    }
}

/// Whether the application can serve requests: the store is open (which applies the
/// migrations and loads the index) and the database answers.
pub fn ready(app: Option<&App>) -> Result<(), String> {
    let Some(app) = app else {
        return Err("mira is still opening the store (migrations, vector index)".into());
    };
    app.store
        .schema_version()
        .map(|_| ())
        .map_err(|e| format!("the database does not answer: {e}"))
}
