//! Property tests of the Context Budget Allocator's invariants, and of the exact section costs
//! it relies on.

use chrono::TimeZone;
use mira_core::allocate::{allocate, AllocCandidate, AllocParams, Selection};
use mira_core::memory::Fingerprint;
use mira_core::memory::{Memory, MemoryType};
use mira_core::render::{ModeCosts, RenderMode, NOT_OFFERED};
use mira_core::{render, tokens};
use proptest::prelude::*;
use std::collections::HashSet;

/// Relevances with many ties, zeros and non-finite values.
fn relevance() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => 0.0..1.0f32,
        2 => prop::sample::select(vec![0.0, 0.25, 0.5, 1.0]),
        1 => prop::sample::select(vec![f32::NAN, f32::INFINITY, -1.0]),
    ]
}

/// Costs from tiny to far above the largest budget (headers included).
fn cost() -> impl Strategy<Value = u32> {
    prop_oneof![3 => 0..200u32, 3 => 0..3000u32, 1 => 0..30000u32, 1 => Just(u32::MAX)]
}

fn candidate() -> impl Strategy<Value = AllocCandidate> {
    (
        relevance(),
        cost(),
        cost(),
        cost(),
        any::<u8>(),
        0..4i64,
        0..12u32,
    )
        .prop_map(
            |(relevance, header, fingerprint, verbatim, flags, day, day_cost)| AllocCandidate {
                relevance,
                costs: ModeCosts {
                    header,
                    fingerprint,
                    verbatim,
                },
                header_only: flags % 7 == 0,
                pinned: flags % 5 == 0,
                day,
                day_cost,
            },
        )
}

/// Candidates in relevance order, as the ranking hands them over.
fn ranked() -> impl Strategy<Value = Vec<AllocCandidate>> {
    prop::collection::vec(candidate(), 0..60).prop_map(|mut v| {
        v.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
        v
    })
}

fn params() -> impl Strategy<Value = AllocParams> {
    (0.0..1.0f32, 0.5..1.2f32, 0.0..1.0f32).prop_map(|(floor, redundancy, share)| AllocParams {
        relevance_floor: floor,
        redundancy,
        pinned_share: share,
        ..AllocParams::default()
    })
}

/// A deterministic pseudo-random similarity in roughly [−0.2, 1.2], sometimes NaN.
fn similarity(seed: u64, i: usize, j: usize) -> f32 {
    let (i, j) = (i.min(j), i.max(j));
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

fn run(cands: &[AllocCandidate], budget: u32, p: &AllocParams, seed: u64) -> Vec<Selection> {
    allocate(cands, budget, p, &mut |i, j| similarity(seed, i, j))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn never_over_budget_and_well_formed(
        cands in ranked(),
        budget in 0..20_000u32,
        p in params(),
        seed in any::<u64>(),
    ) {
        let sel = run(&cands, budget, &p, seed);
        let total: u64 = sel.iter().map(|s| u64::from(s.cost) + u64::from(s.heading)).sum();
        prop_assert!(total <= u64::from(budget), "{total} > {budget}");
        // Pinned memories take at most their share in a richer form than a header; beyond it
        // they are headers.
        let pinned_rich: u64 = sel
            .iter()
            .filter(|s| cands[s.index].pinned && s.mode != RenderMode::Header)
            .map(|s| u64::from(s.cost) + u64::from(s.heading))
            .sum();
        prop_assert!(pinned_rich as f64 <= f64::from(budget) * f64::from(p.pinned_share.clamp(0.0, 1.0)) + 1e-6);
        // One day line per day shown, paid by the first memory of that day.
        let mut days = HashSet::new();
        for s in &sel {
            let c = &cands[s.index];
            prop_assert_eq!(s.heading, if days.insert(c.day) { c.day_cost } else { 0 });
        }
        let mut seen = HashSet::new();
        for s in &sel {
            prop_assert!(s.index < cands.len());
            prop_assert!(seen.insert(s.index), "index {} selected twice", s.index);
            prop_assert_eq!(s.cost, cands[s.index].costs.get(s.mode));
            if cands[s.index].header_only {
                prop_assert_eq!(s.mode, RenderMode::Header);
            }
        }
        // Pinned first, then the others in input (relevance) order.
        let pinned = sel.iter().take_while(|s| cands[s.index].pinned).count();
        prop_assert!(sel[pinned..].iter().all(|s| !cands[s.index].pinned));
        prop_assert!(sel[pinned..].windows(2).all(|w| w[0].index < w[1].index));
    }

    #[test]
    fn deterministic(cands in ranked(), budget in 0..20_000u32, p in params(), seed in any::<u64>()) {
        prop_assert_eq!(run(&cands, budget, &p, seed), run(&cands, budget, &p, seed));
    }

    /// Without redundancy, a more relevant candidate is never left out for a less relevant one
    /// that costs more than what it could have been shown as; and everything shown is above the
    /// floor but the most relevant unpinned candidate.
    #[test]
    fn relevance_decides(cands in ranked(), budget in 0..20_000u32, floor in 0.0..1.0f32) {
        let p = AllocParams { relevance_floor: floor, redundancy: 2.0, pinned_share: 0.0, ..AllocParams::default() };
        let sel = run(&cands, budget, &p, 0);
        let chosen: HashSet<usize> = sel.iter().map(|s| s.index).collect();
        let first = cands.iter().position(|c| !c.pinned);
        for s in &sel {
            let c = &cands[s.index];
            if c.pinned {
                // A share of 0 leaves pinned memories their header (a richer form only when it
                // costs nothing).
                prop_assert!(s.mode == RenderMode::Header || s.cost + s.heading == 0, "{s:?}");
                continue;
            }
            prop_assert!(c.relevance >= floor || Some(s.index) == first);
            for (a, ca) in cands.iter().enumerate().take(s.index) {
                if chosen.contains(&a) || ca.pinned || !(ca.relevance >= floor || Some(a) == first) || ca.relevance.is_nan() {
                    continue;
                }
                // What `a` needed (its header and at most its day line) did not fit where
                // `s` still did.
                prop_assert!(
                    u64::from(ca.costs.header) + u64::from(ca.day_cost) > u64::from(s.cost) + u64::from(s.heading),
                    "candidate {a} (header {}) dropped before {} (cost {})",
                    ca.costs.header, s.index, s.cost
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
    /// text, and it is what `mode_costs` announced (a fingerprint not offered costs
    /// `NOT_OFFERED`, and an offered one is clearly cheaper than the text).
    #[test]
    fn section_cost_is_exact(
        content in "(\\PC|\n|[0-9 ()]){0,300}",
        wing in "\\PC{0,12}",
        decision in proptest::option::of("[a-zA-Z0-9 ,.()]{0,40}"),
    ) {
        let m = memory(content, wing, decision);
        let costs = render::mode_costs(&m);
        for mode in [RenderMode::Header, RenderMode::Fingerprint, RenderMode::Verbatim] {
            let (text, cost) = render::section(mode, &m);
            prop_assert_eq!(tokens::count(&text) as u32, cost);
            let line = format!("[{}] ", render::short_id(m.id));
            prop_assert!(text.starts_with(&line));
            if mode != RenderMode::Fingerprint || costs.fingerprint != NOT_OFFERED {
                prop_assert_eq!(cost, costs.get(mode));
            }
        }
        prop_assert!(
            costs.fingerprint == NOT_OFFERED || costs.fingerprint * 4 <= costs.verbatim * 3
        );
    }
}
