//! `mira bench` through its crate API (the hash embedder stands in for the model): each store
//! size is a store of its own on either backend, on PostgreSQL a database of its own on the
//! configured server, and a second run measures the stores the first one built.

use mira::bench::{run, BenchOptions};
use mira::App;
use std::sync::Arc;

/// Drops the benchmark's databases when the test ends, passed or not.
struct DropDatabases(mira_store::PgOptions, Vec<String>);

impl Drop for DropDatabases {
    fn drop(&mut self) {
        for name in &self.1 {
            let _ = mira_store::PgStore::drop_database(&self.0, name);
        }
    }
}

backend_test! {
    fn bench_keeps_each_size_in_a_store_of_its_own(db) {
        let hash: Arc<dyn mira_embed::Embedder> = Arc::new(mira_embed::HashEmbedder::new(384));
        let base = db.config();
        let cache = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            sizes: vec![40, 90],
            data: None,
            queries: 4,
            budget: 1000,
            cache_dir: cache.path().to_path_buf(),
            hook_binary: Some(assert_cmd::cargo::cargo_bin("mira")),
        };
        let first = run(&base, hash.clone(), &opts).unwrap();
        let _cleanup = DropDatabases(
            base.postgres_options(),
            first
                .sizes
                .iter()
                .filter_map(|s| s.database.clone())
                .collect(),
        );
        assert_eq!(first.backend, db.name());
        assert!(
            first.ingest.memories > 0 && first.ingest.per_s > 0.0,
            "{:?}",
            first.ingest
        );
        let second = run(&base, hash.clone(), &opts).unwrap();
        for (a, b) in first.sizes.iter().zip(&second.sizes) {
            assert_eq!(
                (&a.store, &a.database),
                (&b.store, &b.database),
                "{}",
                db.name()
            );
            assert!(
                a.recall_cached.p50_ms > 0.0 && a.bound_p50_ms > 0.0,
                "{a:?}"
            );
            // Every single store is timed.
            assert!(
                a.store_ms.p50_ms > 0.0 && a.store_ms.p50_ms <= a.store_ms.p95_ms,
                "{a:?}"
            );
            assert_eq!(a.database.is_some(), db.pg.is_some(), "{a:?}");
            // The store of each size holds its memories and no other size's.
            let mut cfg = base.clone();
            cfg.storage.path = Some(a.store.clone());
            if let Some(name) = &a.database {
                cfg.storage.postgres.url =
                    Some(base.postgres_options().on_database(name).unwrap().url);
            }
            let app = App::open_with_embedder(cfg, hash.clone()).unwrap();
            assert_eq!(app.store.stats().unwrap().memories, a.n as u64, "{a:?}");
        }
        let sizes: Vec<usize> = second.sizes.iter().map(|s| s.n).collect();
        assert_eq!(sizes, [40, 90]);
        let table = mira::bench::render_table(&second);
        assert!(
            table.contains(&format!("backend: {}", db.name())),
            "{table}"
        );
    }
}
