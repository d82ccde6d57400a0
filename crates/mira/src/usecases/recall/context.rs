//! The context: the Context Budget Allocator over the ranked candidates, then the block.
//!
//! Section costs come from the catalog (computed when each memory was stored); only memories
//! without valid stored costs (an older render format, or superseded since: their header names
//! the successor) are read and measured here. Content and fingerprints are read for the
//! selected memories alone, in one query, and their sections printed at the cost the allocator
//! paid for them: no tokenizer runs on this path but for the frame's few short lines.

use super::{why, Candidate, Order, RecalledItem};
use crate::App;
use mira_core::allocate::{self, AllocCandidate, AllocParams};
use mira_core::memory::{Memory, MemoryId};
use mira_core::render::{self, Frame, Placed};
use mira_store::index::unit_cosine;
use std::collections::HashMap;

/// The block, its items (in display order) and its cost in tokens.
pub(super) struct Context {
    pub items: Vec<RecalledItem>,
    pub text: String,
    pub used: u32,
}

/// Up to this many candidates, every one may be shown: the relevance floor is for large
/// scopes, where most candidates are noise; a small store must not lose its least relevant
/// memory for being last.
pub const SMALL_SCOPE: usize = 20;

fn alloc_params(app: &App, candidates: usize, limit: Option<usize>) -> AllocParams {
    let a = &app.config.allocator;
    let defaults = AllocParams::default();
    AllocParams {
        relevance_floor: if candidates <= SMALL_SCOPE {
            0.0
        } else {
            a.relevance_floor
        },
        redundancy: a.redundancy_threshold,
        pinned_share: a.pinned_share,
        max_selections: limit.unwrap_or(defaults.max_selections),
    }
}

/// Chooses what of `cands` (in relevance order) fits `frame.budget`, frame included, at most
/// `limit` memories when given, and renders the block in `order`.
pub(super) fn build(
    app: &App,
    frame: &Frame<'_>,
    cands: &[Candidate],
    order: Order,
    limit: Option<usize>,
) -> anyhow::Result<Context> {
    let reserve = frame.reserve(cands.len());
    let needs_costs: Vec<MemoryId> = cands
        .iter()
        .filter(|c| c.card.costs.is_none() || c.card.superseded_by.is_some())
        .map(|c| c.card.id)
        .collect();
    let mut memories = app.store.memories(&needs_costs)?;
    let mut day_costs: HashMap<i64, u32> = HashMap::new();
    let alloc: Vec<AllocCandidate> = cands
        .iter()
        .map(|c| {
            let fresh = memories.get(&c.card.id).map(render::mode_costs);
            let at =
                chrono::DateTime::from_timestamp_millis(c.card.created_at_ms).unwrap_or_default();
            let day = render::day_number(at);
            AllocCandidate {
                relevance: c.relevance,
                // A memory gone since the catalog was read costs nothing and is skipped below.
                costs: fresh.or(c.card.costs).unwrap_or_default(),
                header_only: c.card.superseded_by.is_some(),
                pinned: c.card.pinned,
                day,
                day_cost: *day_costs
                    .entry(day)
                    .or_insert_with(|| render::day_line_cost(at)),
            }
        })
        .collect();
    let selections = allocate::allocate(
        &alloc,
        frame.budget.saturating_sub(reserve),
        &alloc_params(app, cands.len(), limit),
        &mut |i, j| unit_cosine(&cands[i].embedding, &cands[j].embedding),
    );
    let missing: Vec<MemoryId> = selections
        .iter()
        .map(|s| cands[s.index].card.id)
        .filter(|id| !memories.contains_key(id))
        .collect();
    memories.extend(app.store.memories(&missing)?);
    let mut chosen: Vec<(&Candidate, &Memory, allocate::Selection)> = selections
        .iter()
        .filter_map(|s| {
            let c = &cands[s.index];
            Some((c, memories.get(&c.card.id)?, *s))
        })
        .collect();
    if order == Order::Time {
        chosen.sort_by_key(|(c, m, _)| (m.created_at, c.card.key));
    }
    let mut sections = Vec::with_capacity(chosen.len());
    let mut items = Vec::with_capacity(chosen.len());
    for (c, m, s) in chosen {
        // The allocator's cost: the section's token count, stored with the memory.
        let (text, tokens) = (render::section_text(s.mode, m), s.cost);
        items.push(RecalledItem {
            id: m.id,
            short_id: render::short_id(m.id),
            mode: s.mode.as_str(),
            tokens,
            relevance: c.relevance,
            memory_type: m.memory_type.to_string(),
            wing: m.wing.clone(),
            room: m.room.clone(),
            created_at: m
                .created_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            superseded_by: m.superseded_by,
            pinned: c.card.pinned,
            text: text.clone(),
            why: why::explain(&why::Picked {
                rank: s.index,
                of: cands.len(),
                relevance: c.relevance,
                pinned: c.card.pinned,
                superseded_by: m.superseded_by,
                mode: s.mode,
            }),
        });
        sections.push(Placed {
            at: m.created_at,
            text,
            cost: tokens,
        });
    }
    let (mut text, mut used) = render::context_block(frame, &sections);
    // The allocator kept the sections within the budget less the frame's largest cost; this
    // only guards that bound.
    while used > frame.budget && !sections.is_empty() {
        sections.pop();
        items.pop();
        (text, used) = render::context_block(frame, &sections);
    }
    Ok(Context { items, text, used })
}
