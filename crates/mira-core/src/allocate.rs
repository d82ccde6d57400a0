//! The Context Budget Allocator (CBA): which memories to show, in which render mode, within a
//! token budget.
//!
//! Greedy over a max-heap with lazy re-scoring (catalogue §4.9, README "CBA v2"): pop the best
//! candidate; re-score it against the memories selected so far as
//! `base × (1 − max overlap) × e^(−α·links) × session boost`; if the next candidate's score × 0.8
//! beats that, push it back with the new score and go on; otherwise select it in the richest
//! render mode the remaining budget allows.
//!
//! **Hard invariant:** the sum of the selected costs never exceeds the budget (costs are the
//! exact token counts of the rendered sections, see [`crate::render::mode_costs`]).
//!
//! Deliberate differences from the reference:
//! - **A real heap with lazy re-insertion.** The reference documented this but implemented a
//!   linear scan that re-scored everything each round. Re-scoring is incremental: each
//!   candidate remembers how much of the selected set it has already been compared with, so
//!   `overlap` and `linked` are called at most once per (candidate, selected) pair. A popped
//!   entry already scored against the current selected set is accepted as it is, so the loop
//!   always terminates (at most one push-back per candidate per selection).
//! - **Deterministic ties**: equal scores go to the lower index (the reference's swap-removal
//!   picked `a, d, c, b` among equal scores); NaN and infinite scores count as 0, negative as 0.
//! - **No "early pruning" branch**: the reference gave candidates below its threshold a free
//!   ×(1+β) and skipped their penalties. Relevance pruning happens before the allocator.
//! - **Mode choice never pays more for less.** The remaining budget picks a preferred mode
//!   (< 100 header, < 1000 fingerprint, else verbatim); the selected mode is the richest whose
//!   cost is at most `min(remaining, cost of the preferred mode)`. With the usual costs
//!   (header ≤ fingerprint ≤ verbatim) this is exactly the reference's downgrade chain
//!   verbatim → fingerprint → header; when a richer form is no dearer (a short memory whose
//!   verbatim is cheaper than its fingerprint) the richer form is shown.
//! - **Small budgets still get a header.** The reference stopped below 50 remaining tokens,
//!   with a fictitious header cost of 5. Here `min_remaining` (default 50) only ends the loop
//!   once something has been selected; before that, any candidate with a mode that fits is
//!   eligible, so a budget of 45 returns a 40-token header rather than nothing.
//! - **At most [`crate::render::MAX_SECTION_INDEX`] selections** (`max_selections`), so section
//!   indices stay within the range whose cost [`crate::render::mode_costs`] guarantees.
//! - **Results are sorted by score**, best first (ties by index); the reference returned them
//!   in selection order although its README promised score order.

use crate::render::MAX_SECTION_INDEX;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// How a selected memory is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RenderMode {
    /// A one-line reference: type, date, wing and id.
    Header,
    /// The extracted facts on one line.
    Fingerprint,
    /// The original content.
    Verbatim,
}

impl RenderMode {
    /// The upper-case name printed in section headers.
    pub fn as_str(self) -> &'static str {
        match self {
            RenderMode::Header => "HEADER",
            RenderMode::Fingerprint => "FINGERPRINT",
            RenderMode::Verbatim => "VERBATIM",
        }
    }
}

impl std::fmt::Display for RenderMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The exact token cost of a memory's section in each mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ModeCosts {
    /// Cost of the HEADER section.
    pub header: u32,
    /// Cost of the FINGERPRINT section.
    pub fingerprint: u32,
    /// Cost of the VERBATIM section.
    pub verbatim: u32,
}

impl ModeCosts {
    /// The cost of `mode`.
    pub fn get(&self, mode: RenderMode) -> u32 {
        match mode {
            RenderMode::Header => self.header,
            RenderMode::Fingerprint => self.fingerprint,
            RenderMode::Verbatim => self.verbatim,
        }
    }
}

/// A candidate memory as the allocator sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllocCandidate {
    /// Initial score (relevance × density × recency).
    pub base_score: f64,
    /// Creation time, Unix seconds (for the session boost).
    pub created_at_secs: i64,
    /// Cost of each render mode.
    pub costs: ModeCosts,
}

/// Allocator parameters; [`Default`] gives the reference's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllocParams {
    /// Two memories created less than this many seconds apart are in the same session (7200).
    pub session_window_secs: i64,
    /// Session boost β: a candidate in the session of a selected memory gets ×(1+β) (0.2).
    pub session_boost_beta: f64,
    /// Cap of the session boost factor (1.2).
    pub session_boost_max: f64,
    /// Causal penalty α: ×e^(−α·links to selected memories) (0.15).
    pub causal_penalty_alpha: f64,
    /// Once something is selected, stop when fewer tokens than this remain (50).
    pub min_remaining: u32,
    /// Below this remaining budget the preferred mode is FINGERPRINT (1000).
    pub fingerprint_below: u32,
    /// Below this remaining budget the preferred mode is HEADER (100).
    pub header_below: u32,
    /// A re-scored candidate is pushed back when the next score × this beats it (0.8).
    pub repush_factor: f64,
    /// Maximum number of selections ([`MAX_SECTION_INDEX`]).
    pub max_selections: usize,
}

impl Default for AllocParams {
    fn default() -> Self {
        Self {
            session_window_secs: 7200,
            session_boost_beta: 0.2,
            session_boost_max: 1.2,
            causal_penalty_alpha: 0.15,
            min_remaining: 50,
            fingerprint_below: 1000,
            header_below: 100,
            repush_factor: 0.8,
            max_selections: MAX_SECTION_INDEX,
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
    /// Its adjusted score when it was selected.
    pub score: f64,
}

/// A finite, non-negative score (NaN, infinities and negatives → 0; −0 → 0).
fn sane(score: f64) -> f64 {
    if score.is_finite() && score > 0.0 {
        score
    } else {
        0.0
    }
}

/// A heap entry: `score` was computed against the first `seen` selections.
#[derive(Debug, Clone, Copy)]
struct Entry {
    score: f64,
    index: usize,
    seen: usize,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.index.cmp(&self.index))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

/// What a candidate has accumulated against the selected memories it has been compared with.
#[derive(Debug, Clone, Copy, Default)]
struct Penalties {
    max_overlap: f64,
    links: u32,
    in_session: bool,
    /// How many selections these penalties cover.
    seen: usize,
}

/// The richest mode whose cost is at most `min(remaining, cost of the preferred mode)`.
fn choose_mode(costs: &ModeCosts, remaining: u32, params: &AllocParams) -> Option<RenderMode> {
    let preferred = if remaining < params.header_below {
        RenderMode::Header
    } else if remaining < params.fingerprint_below {
        RenderMode::Fingerprint
    } else {
        RenderMode::Verbatim
    };
    let cap = remaining.min(costs.get(preferred));
    [
        RenderMode::Verbatim,
        RenderMode::Fingerprint,
        RenderMode::Header,
    ]
    .into_iter()
    .find(|&mode| costs.get(mode) <= cap)
}

/// Selects memories for `budget` tokens. `overlap(c, s)` is the similarity in [0, 1] of
/// candidate `c` to selected candidate `s` (values outside are clamped, NaN is 0), `linked(c, s)`
/// whether a causal edge joins them. Returns the selections best score first; their costs sum
/// to at most `budget`, and the same inputs always give the same output.
pub fn allocate(
    cands: &[AllocCandidate],
    budget: u32,
    params: &AllocParams,
    overlap: &mut dyn FnMut(usize, usize) -> f32,
    linked: &dyn Fn(usize, usize) -> bool,
) -> Vec<Selection> {
    let mut heap: BinaryHeap<Entry> = cands
        .iter()
        .enumerate()
        .map(|(index, c)| Entry {
            score: sane(c.base_score),
            index,
            seen: 0,
        })
        .collect();
    let mut penalties = vec![Penalties::default(); cands.len()];
    let mut selected: Vec<Selection> = Vec::new();
    let mut used: u32 = 0;
    let boost = sane(
        params
            .session_boost_max
            .min(1.0 + params.session_boost_beta),
    );
    let boost = if boost > 0.0 { boost } else { 1.0 };
    let alpha = if params.causal_penalty_alpha.is_nan() {
        0.0
    } else {
        params.causal_penalty_alpha
    };

    while let Some(top) = heap.pop() {
        let remaining = budget - used;
        if selected.len() >= params.max_selections
            || (!selected.is_empty() && remaining < params.min_remaining)
        {
            break;
        }
        let score = if top.seen == selected.len() {
            top.score
        } else {
            let p = &mut penalties[top.index];
            for s in &selected[p.seen..] {
                let o = f64::from(overlap(top.index, s.index));
                p.max_overlap = p
                    .max_overlap
                    .max(if o.is_nan() { 0.0 } else { o.clamp(0.0, 1.0) });
                p.links = p
                    .links
                    .saturating_add(u32::from(linked(top.index, s.index)));
                let gap = cands[top.index]
                    .created_at_secs
                    .abs_diff(cands[s.index].created_at_secs);
                p.in_session |= params.session_window_secs > 0
                    && gap < params.session_window_secs.unsigned_abs();
            }
            p.seen = selected.len();
            let session = if p.in_session { boost } else { 1.0 };
            let adjusted = sane(
                sane(cands[top.index].base_score)
                    * (1.0 - p.max_overlap)
                    * (-alpha * f64::from(p.links)).exp()
                    * session,
            );
            if heap
                .peek()
                .is_some_and(|next| next.score * params.repush_factor > adjusted)
            {
                heap.push(Entry {
                    score: adjusted,
                    index: top.index,
                    seen: selected.len(),
                });
                continue;
            }
            adjusted
        };
        let costs = &cands[top.index].costs;
        if let Some(mode) = choose_mode(costs, remaining, params) {
            let cost = costs.get(mode);
            used += cost;
            selected.push(Selection {
                index: top.index,
                mode,
                cost,
                score,
            });
        }
    }
    selected.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    selected
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryType;
    use crate::render::{mode_costs, tests::memory};

    fn cand(score: f64, at: i64, h: u32, f: u32, v: u32) -> AllocCandidate {
        AllocCandidate {
            base_score: score,
            created_at_secs: at,
            costs: ModeCosts {
                header: h,
                fingerprint: f,
                verbatim: v,
            },
        }
    }

    fn run(cands: &[AllocCandidate], budget: u32) -> Vec<Selection> {
        allocate(
            cands,
            budget,
            &AllocParams::default(),
            &mut |_, _| 0.0,
            &|_, _| false,
        )
    }

    fn modes(sel: &[Selection]) -> Vec<(usize, RenderMode)> {
        sel.iter().map(|s| (s.index, s.mode)).collect()
    }

    #[test]
    fn scenario_s7_modes_and_downgrades() {
        let m = memory(1, MemoryType::SessionNote, "r", &"alpha ".repeat(1500));
        let costs = mode_costs(&m);
        assert!(
            costs.header < 80 && costs.fingerprint < 200 && costs.verbatim > 1500,
            "{costs:?}"
        );
        let c = [AllocCandidate {
            base_score: 0.5,
            created_at_secs: 0,
            costs,
        }];
        let one = |budget| {
            let s = run(&c, budget);
            assert!(s.len() <= 1);
            s.first().map(|s| (s.mode, s.cost))
        };
        assert_eq!(one(4000), Some((RenderMode::Verbatim, costs.verbatim)));
        assert_eq!(
            one(1200),
            Some((RenderMode::Fingerprint, costs.fingerprint))
        );
        assert_eq!(one(500), Some((RenderMode::Fingerprint, costs.fingerprint)));
        // Below 100 the header is preferred; a fingerprint that costs no more is shown instead.
        let small = if costs.fingerprint <= costs.header {
            RenderMode::Fingerprint
        } else {
            RenderMode::Header
        };
        assert_eq!(one(80), Some((small, costs.header)));
        assert_eq!(one(costs.header), Some((small, costs.header)));
        assert_eq!(one(costs.header - 1), None);
        assert_eq!(one(0), None);
    }

    #[test]
    fn scenario_s17_costs_3000_3000() {
        let c = [
            cand(0.9, 0, 60, 120, 3000),
            cand(0.8, 100_000, 60, 120, 3000),
        ];
        let s = run(&c, 4000);
        assert_eq!(
            modes(&s),
            vec![(0, RenderMode::Verbatim), (1, RenderMode::Fingerprint)]
        );
        assert_eq!(s.iter().map(|s| s.cost).sum::<u32>(), 3120);
    }

    #[test]
    fn scenario_s17_session_boost() {
        // Created one hour apart: the second pick is boosted ×1.2.
        let c = [cand(1.0, 0, 10, 10, 10), cand(0.9, 3600, 10, 10, 10)];
        let s = run(&c, 4000);
        assert_eq!(s.len(), 2);
        let second = s.iter().find(|s| s.index == 1).unwrap();
        assert!((second.score - 0.9 * 1.2).abs() < 1e-12, "{s:?}");
        // Sorted by score: the boosted second pick now comes first.
        assert_eq!(s[0].index, 1);
        // Outside the window: no boost.
        let far = [cand(1.0, 0, 10, 10, 10), cand(0.9, 7200, 10, 10, 10)];
        assert!((run(&far, 4000)[1].score - 0.9).abs() < 1e-12);
    }

    #[test]
    fn scenario_s17_causal_penalty() {
        let c = [cand(1.0, 0, 10, 10, 10), cand(0.9, 100_000, 10, 10, 10)];
        let s = allocate(
            &c,
            4000,
            &AllocParams::default(),
            &mut |_, _| 0.0,
            &|a, b| a + b == 1,
        );
        let factor = s[1].score / 0.9;
        assert!((factor - (-0.15f64).exp()).abs() < 1e-12);
        assert!((factor - 0.8607).abs() < 1e-4);
    }

    #[test]
    fn equal_scores_go_by_index() {
        let c = [cand(0.0, 0, 10, 10, 10); 4];
        let s = run(&c, 4000);
        assert_eq!(
            s.iter().map(|s| s.index).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        let nan = [
            cand(f64::NAN, 0, 10, 10, 10),
            cand(0.1, 0, 10, 10, 10),
            cand(f64::INFINITY, 0, 10, 10, 10),
        ];
        assert_eq!(
            run(&nan, 4000).iter().map(|s| s.index).collect::<Vec<_>>(),
            vec![1, 0, 2]
        );
    }

    #[test]
    fn overlap_pushes_back_and_is_called_once_per_pair() {
        // 1 duplicates 0; 2 is distinct but scores lower: 2 must overtake 1.
        let c = [
            cand(1.0, 0, 10, 10, 10),
            cand(0.95, 100_000, 10, 10, 10),
            cand(0.5, 200_000, 10, 10, 10),
        ];
        let mut calls = Vec::new();
        let s = allocate(
            &c,
            4000,
            &AllocParams::default(),
            &mut |a, b| {
                calls.push((a, b));
                if a + b == 1 {
                    0.9
                } else {
                    0.0
                }
            },
            &|_, _| false,
        );
        assert_eq!(s.iter().map(|s| s.index).collect::<Vec<_>>(), vec![0, 2, 1]);
        assert!((s[2].score - 0.095).abs() < 1e-6);
        let mut sorted = calls.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), calls.len(), "{calls:?}");
    }

    #[test]
    fn never_pays_more_for_less() {
        // A short memory whose verbatim is cheaper than its fingerprint is shown verbatim.
        let c = [cand(1.0, 0, 30, 50, 40)];
        assert_eq!(modes(&run(&c, 500)), vec![(0, RenderMode::Verbatim)]);
        // A huge header does not hide a fingerprint that fits a small budget.
        let c = [cand(1.0, 0, 500, 60, 2000)];
        assert_eq!(modes(&run(&c, 90)), vec![(0, RenderMode::Fingerprint)]);
    }

    #[test]
    fn small_budgets_and_min_remaining() {
        let c = [cand(1.0, 0, 40, 60, 80), cand(0.5, 100_000, 5, 60, 80)];
        // Budget 45: the first header fits although 45 < min_remaining.
        assert_eq!(modes(&run(&c, 45)), vec![(0, RenderMode::Header)]);
        // Budget 100: after the first fingerprint, 40 < 50 remain: stop.
        assert_eq!(modes(&run(&c, 100)), vec![(0, RenderMode::Fingerprint)]);
        let p = AllocParams {
            min_remaining: 0,
            ..AllocParams::default()
        };
        let s = allocate(&c, 100, &p, &mut |_, _| 0.0, &|_, _| false);
        assert_eq!(
            modes(&s),
            vec![(0, RenderMode::Fingerprint), (1, RenderMode::Header)]
        );
    }

    #[test]
    fn max_selections_and_degenerate_params() {
        let c = vec![cand(1.0, 0, 1, 1, 1); 1200];
        assert_eq!(run(&c, 100_000).len(), MAX_SECTION_INDEX);
        let weird = AllocParams {
            session_window_secs: i64::MIN,
            session_boost_beta: f64::NAN,
            session_boost_max: f64::INFINITY,
            causal_penalty_alpha: f64::NAN,
            repush_factor: f64::INFINITY,
            ..AllocParams::default()
        };
        let c = [
            cand(1.0, i64::MIN, 10, 10, 10),
            cand(0.9, i64::MAX, 10, 10, 10),
            cand(0.8, 0, 10, 10, 10),
        ];
        let s = allocate(&c, 4000, &weird, &mut |_, _| f32::NAN, &|_, _| true);
        assert_eq!(s.len(), 3);
        assert!(run(&[], 4000).is_empty());
    }
}
