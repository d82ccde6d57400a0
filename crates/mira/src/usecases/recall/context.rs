//! The context: the Context Budget Allocator over the ranked candidates, then the block.
//!
//! Section costs come from the catalog (computed when each memory was stored); only memories
//! without valid stored costs (an older render format, or superseded since: their header names
//! the successor) are read and measured here. Content and fingerprints are read for the
//! selected memories alone, in one query, and their sections printed at the cost the allocator
//! paid for them: no tokenizer runs on this path but for the frame's few short lines and the
//! sections marked as earlier statements.

use super::{newer_first, why, Candidate, Order, RecalledItem};
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

fn alloc_params(app: &App, candidates: usize) -> AllocParams {
    let a = &app.config.allocator;
    AllocParams {
        relevance_floor: if candidates <= SMALL_SCOPE {
            0.0
        } else {
            a.relevance_floor
        },
        redundancy: a.redundancy_threshold,
        pinned_share: a.pinned_share,
        ..AllocParams::default()
    }
}

/// Chooses what of `cands` (in relevance order) fits `frame.budget`, frame included, and
/// renders the block in `order`, newer restatements first ([`newer_first`], for the query's
/// vector `question`). The marks of
/// earlier statements are paid for: when they push the block over the budget, the allocator
/// runs again with that much less.
pub(super) fn build(
    app: &App,
    frame: &Frame<'_>,
    cands: &[Candidate],
    question: &[f32],
    order: Order,
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
    let mut room = frame.budget.saturating_sub(reserve);
    let mut attempt = 0;
    loop {
        let selections = allocate::allocate(
            &alloc,
            room,
            &alloc_params(app, cands.len()),
            &mut |i, j| unit_cosine(&cands[i].embedding, &cands[j].embedding),
        );
        let missing: Vec<MemoryId> = selections
            .iter()
            .map(|s| cands[s.index].card.id)
            .filter(|id| !memories.contains_key(id))
            .collect();
        memories.extend(app.store.memories(&missing)?);
        let question = app
            .config
            .recall
            .newer_first
            .then_some((frame.query, question));
        let (mut items, mut sections) = shown(cands, &memories, &selections, question, order);
        let (mut text, mut used) = render::context_block(frame, &sections);
        if used > frame.budget && attempt < 2 && room > 0 {
            room = room.saturating_sub(used - frame.budget);
            attempt += 1;
            continue;
        }
        // The allocator kept the sections within the budget less the frame's largest cost and
        // the marks; this only guards that bound.
        while used > frame.budget && !sections.is_empty() {
            sections.pop();
            items.pop();
            (text, used) = render::context_block(frame, &sections);
        }
        return Ok(Context { items, text, used });
    }
}

/// The items and sections of `selections`, in the block's order.
fn shown(
    cands: &[Candidate],
    memories: &HashMap<MemoryId, Memory>,
    selections: &[allocate::Selection],
    question: Option<(&str, &[f32])>,
    order: Order,
) -> (Vec<RecalledItem>, Vec<Placed>) {
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
    for shown in newer_first::arrange(chosen, question, order) {
        let (c, m, s) = (shown.candidate, shown.memory, shown.selection);
        // The allocator's cost: the section's token count, stored with the memory; a marked
        // section is counted as printed.
        let (text, tokens) = match shown.newer {
            None => (render::section_text(s.mode, m), s.cost),
            Some(newer) => {
                let mark = render::earlier_mark(m.created_at, newer.id, newer.created_at);
                let text = render::with_mark(&render::section_text(s.mode, m), &mark);
                let cost = u32::try_from(mira_core::tokens::count(&text)).unwrap_or(u32::MAX);
                (text, cost)
            }
        };
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
            newer: newer_first::newer_id(&shown),
            pinned: c.card.pinned,
            text: text.clone(),
            why: why::explain(&why::Picked {
                rank: s.index,
                of: cands.len(),
                relevance: c.relevance,
                pinned: c.card.pinned,
                superseded_by: m.superseded_by,
                newer: newer_first::newer_id(&shown),
                mode: s.mode,
            }),
        });
        sections.push(Placed {
            at: m.created_at,
            text,
            cost: tokens,
        });
    }
    (items, sections)
}
