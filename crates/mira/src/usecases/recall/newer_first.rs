//! Newer first within a subject: of two memories chosen for the block that speak of the same
//! thing ([`mira_core::sameness`]: close vectors and a shared subject), the newer is shown
//! first and the older is marked as an earlier statement with the newer's id (the day lines
//! above the two give their dates). Nothing is left out and nothing is demoted below memories
//! of other subjects: the older keeps its place, the newer moves up to just above it (with the
//! memories of its day: one line per day). Only the block's [`COMPARED`] most relevant
//! memories are compared. Explicit supersession (`superseded_by`) stays the strong form and is
//! left to it: a superseded memory, or a pair where one replaces the other, is not compared.

use super::{Candidate, Order};
use mira_core::allocate::Selection;
use mira_core::memory::{Memory, MemoryId};
use mira_core::render;
use mira_core::sameness::{self, Question, Statement};

/// A chosen memory, in the block's order.
pub(super) struct Shown<'a> {
    /// The candidate (ranking data, embedding).
    pub candidate: &'a Candidate,
    /// The memory.
    pub memory: &'a Memory,
    /// How the allocator chose to show it.
    pub selection: Selection,
    /// The newest memory of the block about the same thing, when there is a newer one.
    pub newer: Option<&'a Memory>,
}

/// Whether `m` takes part: not superseded (its successor already says it is old), and with a
/// vector.
fn comparable(c: &Candidate, m: &Memory) -> bool {
    m.superseded_by.is_none() && !c.embedding.is_empty()
}

/// How many of the most relevant chosen memories are compared with each other: the answers a
/// reader looks at first. Comparing every pair of a large block would cost time and mark turns
/// of a long chat no one asked about.
pub(super) const COMPARED: usize = 20;

/// For each chosen memory, the later ones about the same thing, newest first; only the
/// [`COMPARED`] most relevant comparable memories take part (the question's distinctive terms
/// are those few of them contain).
fn restatements(
    chosen: &[(&Candidate, &Memory, Selection)],
    query: &str,
    question: &[f32],
) -> Vec<Vec<usize>> {
    let mut compared: Vec<usize> = (0..chosen.len())
        .filter(|&i| comparable(chosen[i].0, chosen[i].1))
        .collect();
    compared.sort_by(|&a, &b| chosen[b].0.relevance.total_cmp(&chosen[a].0.relevance));
    compared.truncate(COMPARED);
    let statements: Vec<Statement<'_>> = compared
        .iter()
        .map(|&i| {
            let (c, m, _) = chosen[i];
            Statement::new(&m.content, &c.embedding, m.created_at)
                .with_entities(&m.fingerprint.entities)
        })
        .collect();
    let asked = (!question.is_empty()).then(|| Question::new(query, question, &statements));
    let mut later: Vec<Vec<usize>> = vec![Vec::new(); chosen.len()];
    for (a, older) in statements.iter().enumerate() {
        let mut newer: Vec<usize> = (0..statements.len())
            .filter(|&b| {
                statements[b].at > older.at
                    && sameness::same_thing(older, &statements[b], asked.as_ref())
            })
            .collect();
        newer.sort_by_key(|&b| std::cmp::Reverse(statements[b].at));
        later[compared[a]] = newer.into_iter().map(|b| compared[b]).collect();
    }
    later
}

/// Puts the chosen memories (in the block's order) in their final order (`question`: the query
/// and its vector, empty without a model; `None` when `recall.newer_first` is off, which leaves
/// the order as it is): in relevance order, each memory comes right after the later ones about
/// the same thing not shown yet (newest first), then the memories are grouped by day
/// ([`render::by_day_newer_first`]: a newer statement's day comes up above the older one's);
/// in time order they stay oldest first. Either way each older one is marked with the newest.
pub(super) fn arrange<'a>(
    chosen: Vec<(&'a Candidate, &'a Memory, Selection)>,
    question: Option<(&str, &[f32])>,
    order: Order,
) -> Vec<Shown<'a>> {
    let later = match question {
        Some((query, vector)) => restatements(&chosen, query, vector),
        None => vec![Vec::new(); chosen.len()],
    };
    let sequence: Vec<usize> = match order {
        Order::Time => (0..chosen.len()).collect(),
        Order::Relevance => {
            let mut placed = vec![false; chosen.len()];
            let mut sequence = Vec::with_capacity(chosen.len());
            for i in 0..chosen.len() {
                place(i, &later, &mut placed, &mut sequence);
            }
            // One line per day: a newer statement's day comes up above the older one's.
            let mut position = vec![0; chosen.len()];
            for (k, &i) in sequence.iter().enumerate() {
                position[i] = k;
            }
            let times: Vec<_> = sequence.iter().map(|&i| chosen[i].1.created_at).collect();
            let pairs: Vec<(usize, usize)> = later
                .iter()
                .enumerate()
                .flat_map(|(i, l)| l.iter().map(move |&j| (j, i)))
                .map(|(j, i)| (position[j], position[i]))
                .collect();
            render::by_day_newer_first(&times, &pairs)
                .into_iter()
                .map(|k| sequence[k])
                .collect()
        }
    };
    sequence
        .into_iter()
        .map(|i| {
            let (candidate, memory, selection) = chosen[i];
            Shown {
                candidate,
                memory,
                selection,
                newer: later[i].first().map(|&j| chosen[j].1),
            }
        })
        .collect()
}

/// Appends `i` to `sequence` after the later memories about the same thing (and theirs), each
/// once. Later means strictly newer, so this ends.
fn place(i: usize, later: &[Vec<usize>], placed: &mut [bool], sequence: &mut Vec<usize>) {
    if placed[i] {
        return;
    }
    placed[i] = true;
    for &j in &later[i] {
        place(j, later, placed, sequence);
    }
    sequence.push(i);
}

/// The id of the newer restatement, as recall's items report it.
pub(super) fn newer_id(s: &Shown<'_>) -> Option<MemoryId> {
    s.newer.map(|m| m.id)
}
