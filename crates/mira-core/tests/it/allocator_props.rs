//! Property tests of the Context Budget Allocator's invariants, and of the exact section costs
//! it relies on.

use chrono::TimeZone;
use mira_core::allocate::{
    allocate, AllocCandidate, AllocParams, ModeCosts, RenderMode, Selection,
};
use mira_core::fingerprint::Fingerprint;
use mira_core::memory::{Memory, MemoryType};
use mira_core::{render, tokens};
use proptest::prelude::*;
use std::collections::HashSet;

/// Scores with many ties, zeros and non-finite values.
fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => 0.0..1.0f64,
        2 => prop::sample::select(vec![0.0, 0.25, 0.5, 1.0]),
        1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, -1.0]),
    ]
}

/// Costs from tiny to far above the largest budget (headers included).
fn cost() -> impl Strategy<Value = u32> {
    prop_oneof![3 => 0..200u32, 3 => 0..3000u32, 1 => 0..30000u32, 1 => Just(u32::MAX)]
}

fn candidate() -> impl Strategy<Value = AllocCandidate> {
    (score(), 0..50_000i64, cost(), cost(), cost()).prop_map(
        |(base_score, created_at_secs, header, fingerprint, verbatim)| AllocCandidate {
            base_score,
            created_at_secs,
            costs: ModeCosts {
                header,
                fingerprint,
                verbatim,
            },
        },
    )
}

/// A deterministic pseudo-random overlap in roughly [−0.2, 1.2], sometimes NaN.
fn overlap(seed: u64, i: usize, j: usize) -> f32 {
    let mut x = seed
        ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    if x % 97 == 13 {
        f32::NAN
    } else {
        (x % 1400) as f32 / 1000.0 - 0.2
    }
}

fn linked(seed: u64, i: usize, j: usize) -> bool {
    (seed as usize).wrapping_add(i * 31 + j * 17) % 5 == 3
}

fn run_full(cands: &[AllocCandidate], budget: u32, seed: u64) -> Vec<Selection> {
    allocate(
        cands,
        budget,
        &AllocParams::default(),
        &mut |i, j| overlap(seed, i, j),
        &|i, j| linked(seed, i, j),
    )
}

fn sane(s: f64) -> f64 {
    if s.is_finite() && s > 0.0 {
        s
    } else {
        0.0
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn never_over_budget_and_well_formed(
        cands in prop::collection::vec(candidate(), 0..60),
        budget in 0..20_000u32,
        seed in any::<u64>(),
    ) {
        let sel = run_full(&cands, budget, seed);
        let total: u64 = sel.iter().map(|s| u64::from(s.cost)).sum();
        prop_assert!(total <= u64::from(budget), "{total} > {budget}");
        let mut seen = HashSet::new();
        for s in &sel {
            prop_assert!(s.index < cands.len());
            prop_assert!(seen.insert(s.index), "index {} selected twice", s.index);
            prop_assert_eq!(s.cost, cands[s.index].costs.get(s.mode));
            prop_assert!(s.score.is_finite() && s.score >= 0.0);
        }
        for w in sel.windows(2) {
            prop_assert!(w[0].score > w[1].score || (w[0].score == w[1].score && w[0].index < w[1].index));
        }
    }

    #[test]
    fn deterministic(
        cands in prop::collection::vec(candidate(), 0..60),
        budget in 0..20_000u32,
        seed in any::<u64>(),
    ) {
        prop_assert_eq!(run_full(&cands, budget, seed), run_full(&cands, budget, seed));
    }

    #[test]
    fn higher_score_never_loses_to_a_dearer_lower_one(
        cands in prop::collection::vec(candidate(), 0..60),
        budget in 0..20_000u32,
    ) {
        // No overlap, no links, no session effects: only scores and costs matter.
        let params = AllocParams { session_window_secs: 0, ..AllocParams::default() };
        let sel = allocate(&cands, budget, &params, &mut |_, _| 0.0, &|_, _| false);
        let chosen: HashSet<usize> = sel.iter().map(|s| s.index).collect();
        for b in &sel {
            for (a, ca) in cands.iter().enumerate() {
                if chosen.contains(&a) || sane(ca.base_score) <= sane(cands[b.index].base_score) {
                    continue;
                }
                let mode: RenderMode = b.mode;
                prop_assert!(
                    ca.costs.get(mode) > b.cost,
                    "candidate {a} (score {}, {mode} cost {}) dropped for {} (score {}, cost {})",
                    ca.base_score, ca.costs.get(mode), b.index, cands[b.index].base_score, b.cost
                );
            }
        }
    }
}

fn memory(content: String, wing: String, decision: Option<String>) -> Memory {
    Memory {
        id: uuid::Uuid::from_u128(0xfeed_0000_0000_0000_0000_0000_0000_0001),
        wing,
        room: "facts".into(),
        memory_type: MemoryType::Fact,
        token_count: tokens::count(&content) as u32,
        content,
        fingerprint: Fingerprint {
            decision,
            ..Fingerprint::default()
        },
        created_at: chrono::Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
        session_id: None,
        archived: false,
        superseded_by: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The cost of a section is the token count of the whole printed section, whatever the
    /// text and for every index up to the maximum, and it is what `mode_costs` announced.
    #[test]
    fn section_cost_is_exact_and_index_independent(
        content in "(\\PC|\n|[0-9 ()]){0,300}",
        wing in "\\PC{0,12}",
        decision in proptest::option::of("[a-zA-Z0-9 ,.()]{0,40}"),
        index in 1..=render::MAX_SECTION_INDEX,
    ) {
        let m = memory(content, wing, decision);
        let costs = render::mode_costs(&m);
        for mode in [RenderMode::Header, RenderMode::Fingerprint, RenderMode::Verbatim] {
            let (text, cost) = render::section(index, mode, &m);
            prop_assert_eq!(tokens::count(&text) as u32, cost);
            prop_assert_eq!(cost, costs.get(mode));
            let announced = format!("] {} ({cost} tokens) | ID: T0:", mode.as_str());
            prop_assert!(text.contains(&announced));
        }
    }
}
