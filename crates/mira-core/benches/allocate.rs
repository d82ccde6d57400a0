//! Benchmarks of the recall tail: CBA allocation over 100 candidates, and rendering / costing
//! of 100 memories.

use chrono::TimeZone;
use criterion::{criterion_group, criterion_main, Criterion};
use mira_core::allocate::{allocate, AllocCandidate, AllocParams};
use mira_core::memory::Fingerprint;
use mira_core::memory::{Memory, MemoryType};
use mira_core::render::RenderMode;
use mira_core::{render, tokens};
use std::hint::black_box;
use uuid::Uuid;

const N: usize = 100;

/// 100 memories of 20 to 300 words, with small fingerprints.
fn memories() -> Vec<Memory> {
    let words = [
        "database",
        "connection",
        "pool",
        "migration",
        "PostgreSQL",
        "latency",
        "deploy",
        "team",
        "the",
        "is",
    ];
    (0..N)
        .map(|i| {
            let len = 20 + (i * 37) % 280;
            let content: Vec<&str> = (0..len).map(|w| words[(w * 7 + i) % words.len()]).collect();
            let content = content.join(" ") + ".";
            let memory_type = MemoryType::ALL[i % MemoryType::ALL.len()];
            Memory {
                id: Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_0000_0000 + i as u128),
                wing: "bench".into(),
                room: memory_type.default_room().into(),
                memory_type,
                fingerprint: Fingerprint {
                    subjects: vec![format!("topic {i}")],
                    decision: (i % 3 == 0).then(|| "Use PostgreSQL".to_string()),
                    reasons: vec!["ACID".into()],
                    ..Fingerprint::default()
                },
                token_count: tokens::count(&content) as u32,
                content,
                created_at: chrono::Utc
                    .timestamp_opt(1_700_000_000 + (i as i64) * 1800, 0)
                    .unwrap(),
                session_id: None,
                archived: false,
                superseded_by: None,
            }
        })
        .collect()
}

fn bench_allocate(c: &mut Criterion) {
    tokens::warm_up();
    let mems = memories();
    let cands: Vec<AllocCandidate> = mems
        .iter()
        .enumerate()
        .map(|(i, m)| AllocCandidate {
            relevance: 1.0 / (1.0 + i as f32 * 0.01),
            costs: render::mode_costs(m),
            header_only: false,
            pinned: false,
            day: (i / 10) as i64,
            day_cost: 5,
        })
        .collect();
    // A precomputed similarity matrix stands in for the embeddings' dot products.
    let sim: Vec<f32> = (0..N * N)
        .map(|k| ((k * 7919) % 1000) as f32 / 2000.0)
        .collect();
    let params = AllocParams::default();
    for budget in [4000u32, 20_000] {
        c.bench_function(&format!("allocate/100 candidates, budget {budget}"), |b| {
            b.iter(|| {
                allocate(
                    black_box(&cands),
                    black_box(budget),
                    &params,
                    &mut |i, j| sim[i * N + j],
                )
            })
        });
    }
}

fn bench_render(c: &mut Criterion) {
    tokens::warm_up();
    let mems = memories();
    c.bench_function("render/mode_costs of 100 memories", |b| {
        b.iter(|| {
            mems.iter()
                .map(|m| render::mode_costs(black_box(m)))
                .collect::<Vec<_>>()
        })
    });
    c.bench_function("render/100 verbatim sections + context block", |b| {
        b.iter(|| {
            let sections: Vec<render::Placed> = mems
                .iter()
                .map(|m| {
                    let (text, cost) = render::section(RenderMode::Verbatim, black_box(m));
                    render::Placed {
                        at: m.created_at,
                        text,
                        cost,
                    }
                })
                .collect();
            let frame = render::Frame {
                query: "database connection pool",
                budget: 100_000,
                wing: Some("bench"),
                fallback: false,
                instructions: Some(render::Surface::Mcp),
                notices: &[],
            };
            render::context_block(&frame, &sections)
        })
    });
}

criterion_group!(benches, bench_allocate, bench_render);
criterion_main!(benches);
