//! The Context Budget Allocator (CBA): which of the ranked memories to show, and in which render
//! mode, within a token budget.
//!
//! Selection and order are separate from ranking: the candidates arrive in relevance order (the
//! ranking `mira eval` scores) and the allocator walks down that order, so a memory is never
//! shown in place of a more relevant one that fits. For each candidate:
//! - **Pinned** memories come first, each in the richest mode that fits their share of the
//!   budget ([`AllocParams::pinned_share`]); one that fits it in no mode is still shown as a
//!   header when the budget holds it (pinned means "in every recall"), before anything else.
//! - Below the **relevance floor** ([`AllocParams::relevance_floor`], relevance relative to the
//!   best candidate) nothing more is shown: a question whose answer is in one memory gets that
//!   memory and its close competitors, not a full budget of noise.
//! - A candidate at least [`AllocParams::redundancy`] similar to a memory already chosen is
//!   **redundant**: it is shown as a header (a pointer), never in full.
//! - Otherwise the **richest mode that fits** the remaining budget: verbatim, else its
//!   fingerprint, else its header. With budget to spare every relevant memory is verbatim;
//!   cheaper forms appear only when they let one more relevant memory in.
//!
//! - Memories are shown under the **day** they happened, one day line per day
//!   ([`crate::render::by_day`]): the first memory of a day pays its line.
//!
//! **Hard invariant:** the sum of the selected costs and day lines never exceeds the budget
//! (costs are the exact token counts of the rendered sections, see
//! [`crate::render::mode_costs`], and of the day lines, [`crate::render::day_line`]). The same
//! inputs always give the same output.

use crate::render::{ModeCosts, RenderMode};
use std::collections::HashSet;

/// A candidate memory as the allocator sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllocCandidate {
    /// Relevance in [0, 1], relative to the best candidate (NaN counts as 0).
    pub relevance: f32,
    /// Cost of each render mode.
    pub costs: ModeCosts,
    /// Shown as a header only (a superseded memory).
    pub header_only: bool,
    /// Shown before everything else, within the pinned share of the budget.
    pub pinned: bool,
    /// The day it happened (equal for memories of the same day, e.g. days since 1970).
    pub day: i64,
    /// Tokens of its day line, paid by the first memory of its day that is chosen.
    pub day_cost: u32,
}

/// Allocator parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllocParams {
    /// Candidates less relevant than this are not shown (the most relevant unpinned one always
    /// may be).
    pub relevance_floor: f32,
    /// Similarity at which a candidate is redundant with a chosen memory (shown as a header).
    pub redundancy: f32,
    /// Share of the budget in [0, 1] that pinned memories may take.
    pub pinned_share: f32,
    /// Maximum number of selections.
    pub max_selections: usize,
}

impl Default for AllocParams {
    fn default() -> Self {
        Self {
            relevance_floor: 0.0,
            redundancy: 0.95,
            pinned_share: 0.2,
            max_selections: 1000,
        }
    }
}

/// One selected memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    /// Index of the candidate in the input slice.
    pub index: usize,
    /// How it is rendered.
    pub mode: RenderMode,
    /// The tokens it costs in that mode.
    pub cost: u32,
    /// Tokens of its day's line when it is the first memory of its day chosen (else 0).
    pub heading: u32,
}

/// The richest mode of `c` that costs at most `room` (only the header when `header_only`).
fn fitting_mode(c: &AllocCandidate, room: u32, header_only: bool) -> Option<RenderMode> {
    let modes: &[RenderMode] = if header_only {
        &[RenderMode::Header]
    } else {
        &[
            RenderMode::Verbatim,
            RenderMode::Fingerprint,
            RenderMode::Header,
        ]
    };
    modes.iter().copied().find(|&m| c.costs.get(m) <= room)
}

/// Selects memories for `budget` tokens from `cands`, given in relevance order.
/// `similarity(a, b)` is the similarity in [0, 1] of candidates `a` and `b` (NaN counts as 0).
/// Returns the pinned selections first (those that fit the pinned share, then those shown as
/// headers beyond it, each in input order), then the others in input order; their costs and
/// headings (one day line per distinct day, paid by its first selection) sum to at most
/// `budget`. A pinned candidate absent from the result did not fit the budget even as a header.
pub fn allocate(
    cands: &[AllocCandidate],
    budget: u32,
    params: &AllocParams,
    similarity: &mut dyn FnMut(usize, usize) -> f32,
) -> Vec<Selection> {
    let share = if params.pinned_share.is_nan() {
        0.0
    } else {
        params.pinned_share.clamp(0.0, 1.0)
    };
    let pinned_budget = (budget as f64 * share as f64).floor() as u32;
    let mut selected: Vec<Selection> = Vec::new();
    let mut days: HashSet<i64> = HashSet::new();
    let mut used = 0u32;
    // Picks candidate `i` in the richest mode (only the header when `header`) that fits what
    // is left of `limit`; whether it was picked.
    let mut pick = |i: usize, limit: u32, header: bool, selected: &mut Vec<Selection>| {
        if selected.len() >= params.max_selections {
            return false;
        }
        let c = &cands[i];
        let heading = if days.contains(&c.day) { 0 } else { c.day_cost };
        let redundant = !c.header_only
            && selected.iter().any(|s| {
                let sim = similarity(i, s.index);
                !sim.is_nan() && sim >= params.redundancy
            });
        let Some(room) = limit.saturating_sub(used).checked_sub(heading) else {
            return false;
        };
        let Some(mode) = fitting_mode(c, room, header || c.header_only || redundant) else {
            return false;
        };
        let cost = c.costs.get(mode);
        used += cost + heading;
        days.insert(c.day);
        selected.push(Selection {
            index: i,
            mode,
            cost,
            heading,
        });
        true
    };
    let pinned: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].pinned).collect();
    let beyond_share: Vec<usize> = pinned
        .into_iter()
        .filter(|&i| !pick(i, pinned_budget, false, &mut selected))
        .collect();
    for i in beyond_share {
        pick(i, budget, true, &mut selected);
    }
    for (n, i) in (0..cands.len()).filter(|&i| !cands[i].pinned).enumerate() {
        let r = cands[i].relevance;
        if r >= params.relevance_floor || (n == 0 && !r.is_nan()) {
            pick(i, budget, false, &mut selected);
        }
    }
    selected
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::NOT_OFFERED;

    fn cand(relevance: f32, h: u32, f: u32, v: u32) -> AllocCandidate {
        AllocCandidate {
            relevance,
            costs: ModeCosts {
                header: h,
                fingerprint: f,
                verbatim: v,
            },
            header_only: false,
            pinned: false,
            day: 0,
            day_cost: 0,
        }
    }

    fn run(
        cands: &[AllocCandidate],
        budget: u32,
        params: &AllocParams,
    ) -> Vec<(usize, RenderMode)> {
        allocate(cands, budget, params, &mut |_, _| 0.0)
            .iter()
            .map(|s| (s.index, s.mode))
            .collect()
    }

    #[test]
    fn with_budget_to_spare_everything_relevant_is_verbatim() {
        let c = [
            cand(1.0, 10, 20, 300),
            cand(0.6, 10, 20, 200),
            cand(0.3, 10, 20, 100),
        ];
        let p = AllocParams::default();
        assert_eq!(
            run(&c, 600, &p),
            vec![
                (0, RenderMode::Verbatim),
                (1, RenderMode::Verbatim),
                (2, RenderMode::Verbatim)
            ]
        );
    }

    #[test]
    fn cheaper_forms_only_let_more_memories_in() {
        let c = [
            cand(1.0, 10, 40, 300),
            cand(0.9, 10, 40, 300),
            cand(0.8, 10, 40, 300),
        ];
        let p = AllocParams::default();
        // 300 + 40 + 10 = 350: the most relevant in full, then what still fits.
        assert_eq!(
            run(&c, 350, &p),
            vec![
                (0, RenderMode::Verbatim),
                (1, RenderMode::Fingerprint),
                (2, RenderMode::Header)
            ]
        );
        // A budget smaller than the best memory's verbatim gives its fingerprint.
        assert_eq!(run(&c[..1], 100, &p), vec![(0, RenderMode::Fingerprint)]);
        assert_eq!(run(&c[..1], 9, &p), vec![]);
    }

    #[test]
    fn the_floor_stops_irrelevant_memories_but_never_the_best() {
        let c = [
            cand(1.0, 10, 20, 30),
            cand(0.5, 10, 20, 30),
            cand(0.1, 10, 20, 30),
        ];
        let p = AllocParams {
            relevance_floor: 0.4,
            ..AllocParams::default()
        };
        assert_eq!(run(&c, 1000, &p).len(), 2);
        let weak = [cand(0.2, 10, 20, 30)];
        assert_eq!(run(&weak, 1000, &p).len(), 1, "the best candidate is kept");
        assert!(run(&[cand(f32::NAN, 1, 1, 1)], 1000, &p).is_empty());
    }

    #[test]
    fn redundant_and_superseded_memories_are_headers() {
        let c = [
            cand(1.0, 10, 20, 30),
            cand(0.9, 10, 20, 30),
            AllocCandidate {
                header_only: true,
                ..cand(0.8, 10, 20, 30)
            },
        ];
        let p = AllocParams::default();
        let sel: Vec<_> = allocate(&c, 1000, &p, &mut |a, b| {
            if a.min(b) == 0 && a.max(b) == 1 {
                0.97
            } else {
                f32::NAN
            }
        })
        .iter()
        .map(|s| s.mode)
        .collect();
        assert_eq!(
            sel,
            vec![RenderMode::Verbatim, RenderMode::Header, RenderMode::Header]
        );
    }

    #[test]
    fn a_day_line_is_paid_once_per_day() {
        let day = |d: i64, v: u32| AllocCandidate {
            day: d,
            day_cost: 5,
            ..cand(1.0, 3, NOT_OFFERED, v)
        };
        let c = [day(1, 10), day(1, 10), day(2, 10), day(1, 10)];
        let sel = allocate(&c, 1000, &AllocParams::default(), &mut |_, _| 0.0);
        let headings: Vec<u32> = sel.iter().map(|s| s.heading).collect();
        assert_eq!(headings, vec![5, 0, 5, 0]);
        // 15 + 10 fit the first two; the third needs its day line too: 10 + 5 > 9 left, so
        // it is a header (3 + 5); the fourth, of the first day, fits no more.
        let sel = allocate(&c, 34, &AllocParams::default(), &mut |_, _| 0.0);
        let got: Vec<(usize, RenderMode, u32)> =
            sel.iter().map(|s| (s.index, s.mode, s.heading)).collect();
        assert_eq!(
            got,
            vec![
                (0, RenderMode::Verbatim, 5),
                (1, RenderMode::Verbatim, 0),
                (2, RenderMode::Header, 5)
            ]
        );
        let total: u32 = sel.iter().map(|s| s.cost + s.heading).sum();
        assert!(total <= 34);
        // One more token: the fourth joins its day as a header, paying no day line.
        let sel = allocate(&c, 37, &AllocParams::default(), &mut |_, _| 0.0);
        assert_eq!(sel.len(), 4);
        assert_eq!((sel[3].mode, sel[3].heading), (RenderMode::Header, 0));
    }

    #[test]
    fn pinned_memories_come_first_within_their_share() {
        let mut c = [
            cand(1.0, 10, 20, 100),
            cand(0.1, 10, 20, 100),
            cand(0.1, 10, 20, 100),
        ];
        c[1].pinned = true;
        c[2].pinned = true;
        let p = AllocParams {
            relevance_floor: 0.5,
            ..AllocParams::default()
        };
        // Share 0.2 of 1000 = 200: both pinned fit in full, despite their low relevance.
        assert_eq!(
            run(&c, 1000, &p),
            vec![
                (1, RenderMode::Verbatim),
                (2, RenderMode::Verbatim),
                (0, RenderMode::Verbatim)
            ]
        );
        // Share of 500 = 100: the second pinned memory no longer fits in it, in any mode
        // (100 + 10 > 100): it is shown as a header all the same, before the others.
        assert_eq!(
            run(&c, 500, &p),
            vec![
                (1, RenderMode::Verbatim),
                (2, RenderMode::Header),
                (0, RenderMode::Verbatim)
            ]
        );
    }

    #[test]
    fn a_pinned_memory_is_kept_at_any_budget_that_holds_its_header() {
        let mut c = [cand(1.0, 10, 20, 100), cand(0.1, 12, 20, 100)];
        c[1].pinned = true;
        let p = AllocParams::default();
        for budget in 12..=40 {
            let got = run(&c, budget, &p);
            assert_eq!(got.first(), Some(&(1, RenderMode::Header)), "{budget}");
        }
        // Its share of 100 holds its fingerprint.
        assert_eq!(run(&c, 100, &p)[0], (1, RenderMode::Fingerprint));
        // Below its header's cost it cannot be shown; the unpinned one fits.
        assert_eq!(run(&c, 11, &p), vec![(0, RenderMode::Header)]);
        // Two pinned headers where one fits: the first in relevance order is kept.
        let mut two = [cand(0.5, 12, 20, 100), cand(0.4, 12, 20, 100)];
        two[0].pinned = true;
        two[1].pinned = true;
        assert_eq!(run(&two, 20, &p), vec![(0, RenderMode::Header)]);
    }
}
