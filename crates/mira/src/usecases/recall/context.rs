//! The context: the Context Budget Allocator over the ranked candidates, and the rendered sections.

use super::{Candidate, RecalledItem};
use crate::App;
use mira_core::allocate::{self, AllocCandidate, AllocParams};
use mira_core::memory::{Memory, MemoryId};
use mira_core::{render, score};
use std::collections::HashSet;

/// Score factor of a superseded memory, so that its successor always ranks first.
const SUPERSEDED_FACTOR: f64 = 0.01;

fn alloc_params(app: &App) -> AllocParams {
    let a = &app.config.allocator;
    AllocParams {
        session_window_secs: a.session_window_seconds,
        session_boost_beta: a.session_boost_beta,
        session_boost_max: a.session_boost_max,
        causal_penalty_alpha: a.causal_penalty_alpha,
        ..AllocParams::default()
    }
}

fn base_score(app: &App, m: &Memory, fact_count: u32, relevance: f32, now_secs: i64) -> f64 {
    let a = &app.config.allocator;
    let rate = app.config.decay_rates.rate(m.memory_type);
    let density = score::density(
        fact_count,
        m.token_count,
        a.density_sigmoid.k,
        a.density_sigmoid.mu,
    );
    let age = score::age_days(now_secs, m.created_at.timestamp());
    let recency = score::recency_with_floor(age, rate, a.recency_floor);
    score::initial_score(relevance, density, recency)
}

pub(super) fn allocate_and_render(
    app: &App,
    budget: u32,
    now: i64,
    cands: &[Candidate],
) -> anyhow::Result<(Vec<RecalledItem>, u32)> {
    let alloc: Vec<AllocCandidate> = cands
        .iter()
        .map(|c| {
            let m = &c.loaded.memory;
            let mut costs = app.mode_costs(m);
            let mut base = base_score(app, m, c.loaded.fact_count, c.relevance, now);
            if m.superseded_by.is_some() {
                // Outdated: only a header, ranked below what replaced it.
                costs.fingerprint = u32::MAX;
                costs.verbatim = u32::MAX;
                base *= SUPERSEDED_FACTOR;
            }
            AllocCandidate {
                base_score: base,
                created_at_secs: m.created_at.timestamp(),
                costs,
            }
        })
        .collect();
    let ids: Vec<MemoryId> = cands.iter().map(|c| c.loaded.memory.id).collect();
    let edges: HashSet<(MemoryId, MemoryId)> = app.store.edges_among(&ids)?.into_iter().collect();
    let linked =
        |i: usize, j: usize| edges.contains(&(ids[i], ids[j])) || edges.contains(&(ids[j], ids[i]));
    let selections = allocate::allocate(
        &alloc,
        budget,
        &alloc_params(app),
        &mut |i, j| score::cosine(&cands[i].embedding, &cands[j].embedding).max(0.0),
        &linked,
    );
    let mut used = 0;
    let items = selections
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let c = &cands[s.index];
            let m = &c.loaded.memory;
            let (section, cost) = render::section(n + 1, s.mode, m);
            used += cost;
            RecalledItem {
                id: m.id,
                mode: s.mode.as_str(),
                tokens: cost,
                score: s.score,
                relevance: c.relevance,
                memory_type: m.memory_type.to_string(),
                wing: m.wing.clone(),
                room: m.room.clone(),
                created_at: m
                    .created_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                text: section,
            }
        })
        .collect();
    Ok((items, used))
}
