//! Embedding throughput of `MiniLm` (texts/s), f32 and int8, for short (~20 words) and long
//! (~200 words) texts: one at a time, four at a time (a recall's query variants) and in
//! batches of 32.
//!
//! Needs the model (`scripts/fetch-model.sh`). Quick run:
//! `cargo bench -p mira-embed -- --warm-up-time 2 --measurement-time 10 --sample-size 10`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mira_embed::{resolve_model_dir, Embedder, MiniLm, ModelOptions, Precision};

const WORDS: &[&str] = &[
    "we",
    "decided",
    "to",
    "migrate",
    "the",
    "database",
    "PostgreSQL",
    "because",
    "of",
    "ACID",
    "guarantees",
    "and",
    "team",
    "expertise",
    "deadline",
    "Friday",
    "sprint",
    "review",
    "user",
    "prefers",
    "dark",
    "mode",
    "tabs",
    "over",
    "spaces",
    "fixed",
    "panic",
    "HTTP",
    "handler",
    "retry",
    "body",
    "read",
    "twice",
    "meeting",
    "with",
    "Marie",
    "Jean",
    "about",
    "deployment",
    "pipeline",
    "Kubernetes",
    "cluster",
    "latency",
    "budget",
    "approved",
    "rejected",
    "MongoDB",
    "relational",
    "schema",
    "index",
];

/// `count` distinct pseudo-sentences of `words` words each (deterministic).
fn texts(count: usize, words: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            (0..words)
                .map(|j| WORDS[(i * 7 + j * 13 + j * j) % WORDS.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    for precision in Precision::ALL {
        let options = ModelOptions {
            precision,
            ..ModelOptions::default()
        };
        let model =
            MiniLm::load_with(&resolve_model_dir(None), &options).unwrap_or_else(|e| panic!("{e}"));
        let mut group = c.benchmark_group(format!("embed_{precision}"));
        for (name, words) in [("short", 20), ("long", 200)] {
            let set = texts(32, words);
            let refs: Vec<&str> = set.iter().map(String::as_str).collect();
            for size in [1, 4, 32] {
                if name == "long" && size == 4 {
                    continue;
                }
                group.throughput(Throughput::Elements(size as u64));
                group.bench_with_input(
                    BenchmarkId::new(name, format!("batch{size}")),
                    &refs,
                    |b, refs| {
                        let mut i = 0;
                        b.iter(|| {
                            i = (i + size) % refs.len();
                            let end = (i + size).min(refs.len());
                            black_box(model.embed_batch(black_box(&refs[end - size..end])))
                                .expect("embed_batch")
                        })
                    },
                );
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
