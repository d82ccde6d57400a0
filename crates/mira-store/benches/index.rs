//! Vector index benchmarks: query latency (k = 100) of the exact scan and of HNSW at 10K and
//! 100K vectors, build time, load time at restart, memory per vector, and the exact scan's
//! bytes per second against a rough single-thread memory bandwidth.
//!
//! Data: 384-d vectors from a Gaussian mixture of 200 unit centroids with per-component sigma
//! 1/sqrt(384), L2-normalised (clustered like sentence embeddings; uniformly random vectors are
//! a misleading worst case for HNSW). Queries are fresh draws from the same mixture.
//!
//! Run with `cargo bench -p mira-store --bench index -- --warm-up-time 1 --measurement-time 5`.
//! Besides criterion's output, each size prints one `index-bench:` summary line per figure;
//! `MIRA_INDEX_BENCH_SIZES=10000` (comma-separated) picks the sizes.
#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mira_core::memory::MemoryId;
use mira_store::index::{ExactIndex, IndexEntry, IndexParams, VectorIndex, VectorIndexManager};
use mira_store::{Scope, SqliteOptions, SqliteStore};
use mira_testkit::Rng;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DIM: usize = 384;
const CENTROIDS: usize = 200;
const K: usize = 100;
const QUERIES: usize = 500;

fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn mixture(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut r = Rng::new(42);
    let cents: Vec<Vec<f32>> = (0..CENTROIDS)
        .map(|_| normalise((0..DIM).map(|_| r.gauss()).collect()))
        .collect();
    let mut r = Rng::new(seed);
    let s = 1.0 / (DIM as f32).sqrt();
    (0..n)
        .map(|_| {
            let c = &cents[(r.next_u64() % CENTROIDS as u64) as usize];
            normalise(c.iter().map(|x| x + s * r.gauss()).collect())
        })
        .collect()
}

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (
        ms[ms.len() / 2],
        ms[(ms.len() * 99 / 100).min(ms.len() - 1)],
    )
}

fn latencies(queries: &[Vec<f32>], mut f: impl FnMut(&[f32])) -> (f64, f64) {
    let ms = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            f(q);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    percentiles(ms)
}

/// Single-thread read bandwidth: the best of 5 sums over 1 GiB of f32 (page-faulted in first),
/// with 16 independent accumulators so that the adds vectorise and memory is the limit.
fn bandwidth_gbs() -> f64 {
    let v = vec![1.0f32; 256 << 20];
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        let lanes = v.chunks_exact(16).fold([0.0f32; 16], |mut acc, c| {
            for (a, x) in acc.iter_mut().zip(c) {
                *a += x;
            }
            acc
        });
        std::hint::black_box(lanes);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (v.len() * 4) as f64 / best / 1e9
}

/// A store of `n` rows with embeddings (one transaction), 10 % of them in wing `small`.
fn fill_store(store: &SqliteStore, vectors: &[Vec<f32>]) -> Vec<IndexEntry> {
    store
        .write(|tx| {
            let mut out = Vec::with_capacity(vectors.len());
            let mut v_stmt = tx.prepare(
                "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count, created_at, stored_at)
                 VALUES (?1, ?2, 'facts', 'fact', 'x', ?1, 1, 0, 0)",
            )?;
            let mut e_stmt = tx.prepare("INSERT INTO embeddings (memory_id, model, dim, vector) VALUES (?1, 'bench', ?2, ?3)")?;
            for (i, v) in vectors.iter().enumerate() {
                let id = MemoryId::new_v4();
                let wing = if i % 10 == 0 { "small" } else { "main" };
                v_stmt.execute(rusqlite::params![id.to_string(), wing])?;
                let key = tx.last_insert_rowid() as u64;
                let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                e_stmt.execute(rusqlite::params![id.to_string(), DIM as i64, blob])?;
                out.push(IndexEntry { key, id, wing: wing.into(), room: "facts".into(), vector: v.clone() });
            }
            Ok(out)
        })
        .expect("fill store")
}

fn bench_size(c: &mut Criterion, n: usize, bandwidth: f64) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("mira.db");
    let store = Arc::new(SqliteStore::open(&db, &SqliteOptions::default()).expect("store"));
    let vectors = mixture(n, 7);
    let queries = mixture(QUERIES, 1234);
    let entries = fill_store(&store, &vectors);
    drop(vectors);
    let dir = tmp.path().join("index");
    // Route every search through the graph so that both paths can be measured.
    let params = IndexParams {
        exact_threshold: 0,
        ..IndexParams::default()
    };

    let t = Instant::now();
    let m = VectorIndexManager::open(store.clone(), &dir, params).expect("open");
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(m.wait_idle(Duration::from_secs(3600)));
    let build_s = t.elapsed().as_secs_f64() - open_ms / 1e3;
    let state = m.state();
    assert!(state.ready && state.persisted, "{state:?}");
    let graph_bytes = state.memory_bytes - n * DIM * 4;
    let files: u64 = ["hnsw.usearch", "hnsw.keys", "hnsw.meta.json"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum();
    drop(m);

    // Restart: exact index from SQLite, then the persisted graph verified and loaded.
    let t = Instant::now();
    let m = VectorIndexManager::open(store.clone(), &dir, params).expect("reopen");
    let reopen_exact_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(m.wait_idle(Duration::from_secs(600)));
    let reopen_ready_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(m.state().loaded, "{:?}", m.state());

    let exact = ExactIndex::from_entries(entries).expect("exact");
    let all = Scope::all();
    let small = Scope::wing("small");
    let ids = |h: Vec<mira_store::index::Hit>| h.into_iter().map(|h| h.id).collect::<Vec<_>>();
    let recall = |k: usize, f: &Scope| {
        let mut hit = 0usize;
        for q in &queries {
            let truth: HashSet<MemoryId> = ids(exact.search(q, k, f)).into_iter().collect();
            hit += ids(m.search(q, k, f))
                .iter()
                .filter(|id| truth.contains(id))
                .count();
        }
        hit as f64 / (queries.len() * k) as f64
    };
    let (r10, r100, rf) = (recall(10, &all), recall(K, &all), recall(10, &small));

    let (e50, e99) = latencies(&queries, |q| {
        std::hint::black_box(exact.search(q, K, &all));
    });
    let (h50, h99) = latencies(&queries, |q| {
        std::hint::black_box(m.search(q, K, &all));
    });
    let (f50, f99) = latencies(&queries, |q| {
        std::hint::black_box(m.search(q, K, &small));
    });
    let scanned = (n * DIM * 4) as f64;
    println!("index-bench: n={n} data: {CENTROIDS}-centroid Gaussian mixture, {DIM}-d, normalised; k={K}; params {params:?}");
    println!("index-bench: n={n} exact    p50 {e50:.3} ms  p99 {e99:.3} ms  scan {:.1} GB/s (bandwidth ~{bandwidth:.1} GB/s single thread, {:.0} %)",
        scanned / (e50 / 1e3) / 1e9, 100.0 * scanned / (e50 / 1e3) / 1e9 / bandwidth);
    println!("index-bench: n={n} hnsw     p50 {h50:.3} ms  p99 {h99:.3} ms  ratio hnsw/exact p50 {:.2} p99 {:.2}", h50 / e50, h99 / e99);
    println!("index-bench: n={n} hnsw 10%-wing filter p50 {f50:.3} ms  p99 {f99:.3} ms");
    println!("index-bench: n={n} recall vs exact: @10 {r10:.4}  @100 {r100:.4}  filtered(10% wing)@10 {rf:.4}");
    println!("index-bench: n={n} build: exact from SQLite {open_ms:.0} ms; HNSW {build_s:.1} s (background, all cores) incl. save");
    println!("index-bench: n={n} restart: exact from SQLite {reopen_exact_ms:.0} ms; graph verified+loaded, ready at {reopen_ready_ms:.0} ms");
    println!("index-bench: n={n} memory/vector: exact {} B, graph (usearch) {} B, total {} B; files {} B/vector",
        DIM * 4, graph_bytes / n, state.memory_bytes / n, files / n as u64);

    let mut g = c.benchmark_group(format!("index_{n}"));
    g.sample_size(20);
    let mut i = 0usize;
    g.bench_function(BenchmarkId::new("exact_k100", n), |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            exact.search(&queries[i], K, &all)
        })
    });
    g.bench_function(BenchmarkId::new("hnsw_k100", n), |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            m.search(&queries[i], K, &all)
        })
    });
    g.bench_function(BenchmarkId::new("hnsw_k100_wing10pct", n), |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            m.search(&queries[i], K, &small)
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let bandwidth = bandwidth_gbs();
    println!("index-bench: memory bandwidth (single-thread read of 1 GiB) ~{bandwidth:.1} GB/s");
    // `MIRA_INDEX_BENCH_SIZES=10000` runs one size only.
    let sizes: Vec<usize> = std::env::var("MIRA_INDEX_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    for n in sizes {
        bench_size(c, n, bandwidth);
    }
}

criterion_group! {
    name = index;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    targets = benches
}
criterion_main!(index);
