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

/// The real `mira` binary with its storage (and HOME) in `storage` and the installed model.
pub fn mira(storage: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("mira").unwrap();
    cmd.env("MIRA_STORAGE_PATH", storage)
        .env_remove("MIRA_CONFIG")
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

/// The LoCoMo development conversations: `$MIRA_SHARED_DIR/data/locomo-dev`, by default the
/// `shared` folder beside the repository.
pub fn locomo_dev_dir() -> std::path::PathBuf {
    std::env::var_os("MIRA_SHARED_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"))
        })
        .join("data/locomo-dev")
}
