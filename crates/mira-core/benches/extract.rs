//! Store-side extraction cost per memory: classify + fingerprint + tags, the cl100k token
//! counts of the content and of the fingerprint JSON, and the "may update" comparison of a new
//! memory with a full lookback of similar earlier ones.

use criterion::{criterion_group, criterion_main, Criterion};
use mira_core::{classify, fingerprint, sameness, tags, tokens};
use std::hint::black_box;

const SHORT: &str = "We decided to migrate to PostgreSQL for v2. Rejected: MySQL (not ACID), \
                     MongoDB (not relational). Reason: ACID and team expertise. Approved by CTO. \
                     Assigned to Jean.";

const PARAGRAPH: &str = "Following the incident review, the platform team decided to move the \
    session store from Memcached to Redis 7.2 because the eviction policy kept dropping logins. \
    The connection pool max is 100 connections and the timeout is 30s. Jean will take care of \
    the rollout by April 15, 2024; the CTO approved it. See https://wiki.example.com/redis and \
    OPS-1234. Nous avons aussi décidé d'utiliser PostgreSQL plutôt que MySQL, car l'équipe le \
    connaît bien. ";

/// About `bytes` of realistic mixed English and French text.
fn long_text(bytes: usize) -> String {
    let mut text = PARAGRAPH.repeat(bytes / PARAGRAPH.len() + 1);
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

fn extract_and_count(content: &str) -> (usize, usize, usize) {
    let memory_type = classify::classify(content);
    let fp = fingerprint::extract(content, memory_type, 2);
    let tags = tags::extract_tags(content, &fp);
    (
        tokens::count(content),
        tokens::count(&fp.to_json()),
        tags.len(),
    )
}

fn bench(c: &mut Criterion) {
    tokens::warm_up();
    let ten_kib = long_text(10 * 1024);
    let max = long_text(64 * 1024);
    let mut group = c.benchmark_group("extract");
    for (name, text) in [
        ("short_30_words", SHORT),
        ("10_kib", ten_kib.as_str()),
        ("64_kib", max.as_str()),
    ] {
        group.bench_function(format!("{name}/extraction"), |b| {
            b.iter(|| {
                let content = black_box(text);
                let fp = fingerprint::extract(content, classify::classify(content), 2);
                black_box(tags::extract_tags(content, &fp))
            })
        });
        group.bench_function(format!("{name}/extraction+tokens"), |b| {
            b.iter(|| extract_and_count(black_box(text)))
        });
    }
    group.finish();
    // A new memory against 50 earlier ones (`extraction.causal_lookback`), all of one vector so
    // that every pair is compared in full, as `mira bench`'s single stores are.
    let vector = [1.0f32];
    let at = chrono::Utc::now();
    let earlier: Vec<String> = (0..50)
        .map(|i| {
            format!(
                "Probe {i}: the cache of service {i} was warmed at {} UTC.",
                i % 24
            )
        })
        .collect();
    c.bench_function("sameness/new_against_50_earlier", |b| {
        b.iter(|| {
            let new = sameness::Statement::new(black_box(SHORT), &vector, at);
            earlier
                .iter()
                .filter(|text| {
                    let old = sameness::Statement::new(text, &vector, at);
                    sameness::same_thing(&old, &new, None)
                })
                .count()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
