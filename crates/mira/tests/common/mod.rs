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

/// The real model, loaded once per test binary.
pub fn model() -> Arc<dyn mira_embed::Embedder> {
    static MODEL: OnceLock<Arc<dyn mira_embed::Embedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = mira_embed::resolve_model_dir(None);
            Arc::new(mira_embed::MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}")))
        })
        .clone()
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
