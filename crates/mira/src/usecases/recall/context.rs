//! The context: the Context Budget Allocator over the ranked candidates, and the rendered sections.

use super::{Candidate, RecalledItem};
use crate::App;
use mira_core::allocate::{self, AllocCandidate, AllocParams};
use mira_core::memory::{Memory, MemoryId};
use mira_core::{render, score};
use mira_store::index::Card;
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

fn base_score(app: &App, c: &Card, relevance: f32, now_secs: i64) -> f64 {
    let a = &app.config.allocator;
    let rate = app.config.decay_rates.rate(c.memory_type);
    let density = score::density(
        c.fact_count,
        c.token_count,
        a.density_sigmoid.k,
        a.density_sigmoid.mu,
    );
    let age = score::age_days(now_secs, c.created_at_ms.div_euclid(1000));
    let recency = score::recency_with_floor(age, rate, a.recency_floor);
    score::initial_score(relevance, density, recency)
}

pub(super) fn allocate_and_render(
    app: &App,
    budget: u32,
    now: i64,
    cands: &[Candidate],
) -> anyhow::Result<(Vec<RecalledItem>, u32)> {
    // Memories stored before their section costs were (the render format changed since):
    // read them now to count their sections.
    let uncosted: Vec<MemoryId> = cands
        .iter()
        .filter(|c| c.card.costs.is_none())
        .map(|c| c.card.id)
        .collect();
    let mut memories = app.store.memories(&uncosted)?;
    let alloc: Vec<AllocCandidate> = cands
        .iter()
        .map(|c| {
            let m = &c.card;
            let mut costs = m
                .costs
                .or_else(|| memories.get(&m.id).map(render::mode_costs))
                .unwrap_or_default();
            let mut base = base_score(app, m, c.relevance, now);
            if m.superseded_by.is_some() {
                // Outdated: only a header, ranked below what replaced it.
                costs.fingerprint = u32::MAX;
                costs.verbatim = u32::MAX;
                base *= SUPERSEDED_FACTOR;
            }
            AllocCandidate {
                base_score: base,
                created_at_secs: m.created_at_ms.div_euclid(1000),
                costs,
            }
        })
        .collect();
    let ids: Vec<MemoryId> = cands.iter().map(|c| c.card.id).collect();
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
    let missing: Vec<MemoryId> = selections
        .iter()
        .map(|s| cands[s.index].card.id)
        .filter(|id| !memories.contains_key(id))
        .collect();
    memories.extend(app.store.memories(&missing)?);
    let mut used = 0;
    let items = selections
        .iter()
        .enumerate()
        .filter_map(|(n, s)| {
            let c = &cands[s.index];
            // A memory deleted since the ranking read the catalog is skipped.
            let m: &Memory = memories.get(&c.card.id)?;
            let (section, cost) = render::section(n + 1, s.mode, m);
            used += cost;
            Some(RecalledItem {
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
            })
        })
        .collect();
    Ok((items, used))
}
