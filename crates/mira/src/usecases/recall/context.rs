//! The context: the Context Budget Allocator over the ranked candidates, then the block.
//!
//! Section costs come from the catalog (computed when each memory was stored); only memories
//! without valid stored costs (an older render format, or superseded since: their header names
//! the successor) are read and measured here. A pinned memory's sections cost the pinned mark
//! more. Content and fingerprints are read for the selected memories alone, in one query, and
//! their sections printed at the cost the allocator paid for them: no tokenizer runs on this
//! path but for the frame's few short lines and the sections marked as earlier statements.

use super::{newer_first, why, Candidate, Order, RecalledItem};
use crate::usecases::{UseCaseError, UseCaseResult};
use crate::App;
use mira_core::allocate::{self, AllocCandidate, AllocParams, Selection};
use mira_core::memory::{Memory, MemoryId};
use mira_core::message::Term;
use mira_core::render::{self, Frame, Placed};
use mira_core::render::{ModeCosts, NOT_OFFERED};
use mira_store::index::unit_cosine;
use std::collections::{HashMap, HashSet};

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

/// `costs` with the pinned mark added to each offered mode.
fn with_pin_mark(costs: ModeCosts) -> ModeCosts {
    let mark = render::pin_mark_cost();
    let add = |c: u32| if c == NOT_OFFERED { c } else { c + mark };
    ModeCosts {
        header: add(costs.header),
        fingerprint: add(costs.fingerprint),
        verbatim: add(costs.verbatim),
    }
}

/// The line saying which pinned memories did not fit the budget.
fn left_out_notice(ids: &[MemoryId]) -> String {
    let ids: Vec<String> = ids.iter().map(|id| render::short_id(*id)).collect();
    format!("Pinned, left out for lack of budget: {}.", ids.join(", "))
}

/// Chooses what of `cands` (in relevance order) fits `frame.budget`, frame included, at most
/// `limit` memories when given, and renders the block in `order`, newer restatements first
/// when `recall.newer_first` is on ([`newer_first`], for the query's vector `question`). When
/// candidates exist but not one fits, the error says the smallest budget that shows one; a
/// pinned memory that does not fit is named under the query. The marks of earlier statements
/// are paid for: when they push the block over the budget, the allocator runs again with that
/// much less room.
pub(super) fn build(
    app: &App,
    frame: &Frame<'_>,
    cands: &[Candidate],
    question: &[f32],
    order: Order,
    limit: Option<usize>,
) -> UseCaseResult<Context> {
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
            // A memory gone since the catalog was read costs nothing and is skipped below.
            let costs = fresh.or(c.card.costs).unwrap_or_default();
            AllocCandidate {
                relevance: c.relevance,
                costs: if c.card.pinned {
                    with_pin_mark(costs)
                } else {
                    costs
                },
                header_only: c.card.superseded_by.is_some(),
                pinned: c.card.pinned,
                day,
                day_cost: *day_costs
                    .entry(day)
                    .or_insert_with(|| render::day_line_cost(at)),
            }
        })
        .collect();
    let params = alloc_params(app, cands.len(), limit);
    // Every pinned candidate, named: the most the line naming those left out can cost.
    let pinned: Vec<MemoryId> = cands
        .iter()
        .filter(|c| c.card.pinned)
        .map(|c| c.card.id)
        .collect();
    let mut reserving = frame.notices.to_vec();
    if !pinned.is_empty() {
        reserving.push(left_out_notice(&pinned));
    }
    // The memories shown at `budget` and the frame's lines. Pinned memories the budget cannot
    // hold are named under the query; that line takes budget too, so the choice is then made
    // again leaving room for it naming every pinned candidate (each id costs its own tokens:
    // naming fewer never costs more). `marks`: the room left for earlier-statement marks.
    let choose = |budget: u32, marks: u32| -> (Vec<Selection>, Vec<String>) {
        let at = |notices: &[String]| {
            let f = Frame {
                budget,
                notices,
                ..*frame
            };
            allocate::allocate(
                &alloc,
                budget
                    .saturating_sub(f.reserve(cands.len()))
                    .saturating_sub(marks),
                &params,
                &mut |i, j| unit_cosine(&cands[i].embedding, &cands[j].embedding),
            )
        };
        let mut notices = frame.notices.to_vec();
        let mut selections = at(&notices);
        if !left_out_pinned(cands, &selections).is_empty() {
            selections = at(&reserving);
            let left_out = left_out_pinned(cands, &selections);
            if !left_out.is_empty() {
                notices.push(left_out_notice(&left_out));
            }
        }
        (selections, notices)
    };
    let (mut selections, mut notices) = choose(frame.budget, 0);
    let first = Frame {
        notices: &notices,
        ..*frame
    };
    if selections.is_empty() && !cands.is_empty() {
        // A larger budget never shows less: the smallest that shows a memory lies between
        // this one and one that holds the first memory's header with every line reserved.
        let reserved = Frame {
            notices: &reserving,
            ..first
        };
        if let Some(enough) = enough_budget(&reserved, &alloc, cands.len()) {
            let (mut lo, mut hi) = (first.budget, enough);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if choose(mid, 0).0.is_empty() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return Err(too_small(
                first.budget,
                hi,
                "the block's own lines and its first memory as a one-line header",
                app,
            ));
        }
    }
    if cands.is_empty() {
        let frame_only = render::context_block(&first, &[]).1;
        if frame_only > first.budget {
            return Err(too_small(
                first.budget,
                frame_only,
                "the block's own lines",
                app,
            ));
        }
    }
    let question = app
        .config
        .recall
        .newer_first
        .then_some((frame.query, question));
    let budget = frame.budget;
    let (mut marks, mut attempts) = (0, 0);
    loop {
        let missing: Vec<MemoryId> = selections
            .iter()
            .map(|s| cands[s.index].card.id)
            .filter(|id| !memories.contains_key(id))
            .collect();
        memories.extend(app.store.memories(&missing)?);
        let frame = Frame {
            notices: &notices,
            ..*frame
        };
        let (mut items, mut sections) = shown(cands, &memories, &selections, question, order);
        let (mut text, mut used) = render::context_block(&frame, &sections);
        if used > budget && attempts < 2 && items.iter().any(|i| i.newer.is_some()) {
            // The marks pushed the block over: choose again with that much less room.
            marks += used - budget;
            attempts += 1;
            (selections, notices) = choose(budget, marks);
            continue;
        }
        // The allocator kept the sections within the budget less the frame's largest cost (and
        // the marks); this only guards that bound.
        while used > frame.budget && !sections.is_empty() {
            sections.pop();
            items.pop();
            (text, used) = render::context_block(&frame, &sections);
        }
        return Ok(Context { items, text, used });
    }
}

/// The items and sections of `selections`, in the block's order.
fn shown(
    cands: &[Candidate],
    memories: &HashMap<MemoryId, Memory>,
    selections: &[Selection],
    question: Option<(&str, &[f32])>,
    order: Order,
) -> (Vec<RecalledItem>, Vec<Placed>) {
    let mut chosen: Vec<(&Candidate, &Memory, Selection)> = selections
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
        let section = render::section_text(s.mode, m, c.card.pinned);
        // The allocator's cost: the section's token count, stored with the memory; a marked
        // section is counted as printed.
        let (text, tokens) = match shown.newer {
            None => (section, s.cost),
            Some(newer) => {
                let mark = render::earlier_mark(newer.id);
                let text = render::with_mark(&section, &mark);
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

/// The pinned candidates the selections leave out, in relevance order.
fn left_out_pinned(cands: &[Candidate], selections: &[Selection]) -> Vec<MemoryId> {
    let shown: HashSet<usize> = selections.iter().map(|s| s.index).collect();
    cands
        .iter()
        .enumerate()
        .filter(|(i, c)| c.card.pinned && !shown.contains(i))
        .map(|(_, c)| c.card.id)
        .collect()
}

/// A budget at which the allocator shows the memory it takes first (the first pinned one, else
/// the most relevant): `frame` (with room for the line naming pinned memories left out, when
/// there are pinned ones), its day line and its header; `None` when `frame.budget` already
/// holds that (nothing was shown for another reason).
fn enough_budget(frame: &Frame<'_>, alloc: &[AllocCandidate], count: usize) -> Option<u32> {
    let first = alloc
        .iter()
        .find(|c| c.pinned)
        .or_else(|| alloc.iter().find(|c| !c.relevance.is_nan()))?;
    // The title prints the budget: a larger one can cost a token more (a fixed point).
    let mut need = frame.budget;
    for _ in 0..4 {
        let at = Frame {
            budget: need,
            ..*frame
        };
        need = need.max(at.reserve(count) + first.day_cost + first.costs.header);
    }
    (need > frame.budget).then_some(need)
}

/// The refusal of a budget too small for `what`, which takes `need` tokens.
fn too_small(budget: u32, need: u32, what: &str, app: &App) -> UseCaseError {
    UseCaseError::Invalid(Term::Budget.then(format!(
        " {budget} is too small: {what} take {need} tokens; give a budget of at least {need} (whole memories need more; the default is {})",
        app.config.allocator.default_budget
    )))
}
