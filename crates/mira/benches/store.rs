//! Store throughput with the real model: one memory per call vs batches of 32.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mira::usecases::access::Access;
use mira::usecases::store::{store, store_batch, StoreRequest};
use std::sync::Arc;

fn texts(n: usize, salt: &str) -> Vec<String> {
    (0..n)
        .map(|i| format!("{salt} note {i}: the deploy of service {i} moved to port {} after the review with Alice.", 8000 + i))
        .collect()
}

fn bench(c: &mut Criterion) {
    let model: Arc<dyn mira_embed::Embedder> = Arc::new(
        mira_embed::MiniLm::load(&mira_embed::resolve_model_dir(None)).expect("model installed"),
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let mut cfg = mira::Config::default();
    cfg.storage.path = Some(dir.path().to_path_buf());
    let app = mira::App::open_with_embedder(cfg, model).expect("app");
    let mut round = 0usize;
    let mut g = c.benchmark_group("store");
    g.sample_size(10);
    g.throughput(Throughput::Elements(32));
    g.bench_function("single x32", |b| {
        b.iter(|| {
            round += 1;
            for t in texts(32, &format!("s{round}")) {
                store(
                    &app,
                    &Access::local(),
                    StoreRequest {
                        content: t,
                        wing: "bench".into(),
                        ..StoreRequest::default()
                    },
                )
                .expect("stored");
            }
        })
    });
    g.bench_function("batch of 32", |b| {
        b.iter(|| {
            round += 1;
            let reqs = texts(32, &format!("b{round}"))
                .into_iter()
                .map(|t| StoreRequest {
                    content: t,
                    wing: "bench".into(),
                    ..StoreRequest::default()
                })
                .collect();
            assert!(store_batch(&app, reqs).iter().all(|r| r.is_ok()));
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
