//! What `mira eval` measures on each question, and the means over a set of questions.
//!
//! Turn level: the share of a question's evidence turns among the first 5 or 10 memories of the
//! ranking, and among those the budget shows (verbatim or as facts). Session level, two ways:
//! the share of the evidence sessions with a turn among the first 10 memories
//! (`session_recall@10`), and LongMemEval's own retrieval metric, recall_any@k: sessions ranked
//! by the first appearance of one of their turns, a question scoring 1 when any of its evidence
//! sessions is among the first k.

use crate::locomo::Turn;
use crate::usecases::recall::RecalledItem;
use chrono::{DateTime, Utc};
use mira_core::memory::MemoryId;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// The category of a question asked of a conversation that is not its own: nothing in the
/// store answers it (printed `other`).
pub const FOREIGN: u8 = 0;

/// The metrics of one system over a set of questions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Metrics {
    /// Questions counted.
    pub questions: usize,
    /// Mean fraction of evidence turns among the top 5.
    #[serde(rename = "recall@5")]
    pub recall_at_5: f64,
    /// Mean fraction of evidence turns among the top 10.
    #[serde(rename = "recall@10")]
    pub recall_at_10: f64,
    /// Mean fraction of evidence sessions with a turn among the top 10.
    #[serde(rename = "session_recall@10")]
    pub session_recall_at_10: f64,
    /// Share of questions with an evidence session among the first 5 sessions of the ranking.
    #[serde(rename = "session_recall_any@5")]
    pub session_any_at_5: f64,
    /// Share of questions with an evidence session among the first 10 sessions of the ranking.
    #[serde(rename = "session_recall_any@10")]
    pub session_any_at_10: f64,
    /// Mean fraction of evidence turns rendered (verbatim or fingerprint) within the budget.
    pub budget_recall: f64,
    /// Mean tokens of the whole answer.
    pub mean_tokens: f64,
    /// Share of questions answered "nothing in memory closely matches" (the full pipeline).
    pub nothing_relevant: f64,
    /// Median recall latency (ms).
    pub p50_ms: f64,
    /// 95th percentile recall latency (ms).
    pub p95_ms: f64,
    /// Mean share of BM25's top 10 also in this system's top 10 (1 for BM25 itself).
    #[serde(rename = "bm25_overlap@10")]
    pub bm25_overlap_at_10: f64,
    /// Questions whose block shows evidence turns of two or more times.
    pub dated_evidence: usize,
    /// Of those, the questions whose block shows the newest evidence turn above the others.
    pub newest_first: usize,
    /// Mean memories per block marked as an earlier statement of a newer one.
    pub marked: f64,
}

/// What one system did on one question.
#[derive(Debug, Clone)]
pub(super) struct Record {
    /// Index of the conversation in its data set.
    pub conversation: usize,
    /// Index in the systems of the run.
    pub system: usize,
    pub category: u8,
    /// The evidence measures (questions with an answer in the conversation only).
    pub found: Option<Found>,
    /// Share of BM25's top 10 in this system's top 10.
    pub o10: f64,
    pub tokens: f64,
    pub nothing_relevant: bool,
    pub ms: f64,
    /// Whether the newest evidence turn is shown above the older ones (evidence of two or more
    /// times shown).
    pub newest_first: Option<bool>,
    /// Memories of the block marked as an earlier statement.
    pub marked: usize,
}

/// How much evidence one ranking found.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Found {
    pub r5: f64,
    pub r10: f64,
    pub s10: f64,
    pub any5: f64,
    pub any10: f64,
    pub budget: f64,
}

/// The turns each stored memory holds (several when a turn repeats an earlier one).
pub(super) type TurnsOf<'a> = HashMap<MemoryId, Vec<&'a Turn>>;

impl Found {
    /// The measures of a ranking (`ranked`, best first) and of the memories the budget
    /// rendered, for a question with `evidence` turns.
    pub fn of(
        evidence: &[String],
        ranked: &[MemoryId],
        rendered: &[MemoryId],
        turns: &TurnsOf<'_>,
    ) -> Found {
        let top = |n: usize| &ranked[..ranked.len().min(n)];
        let want: HashSet<&str> = evidence.iter().map(|e| session_of(e)).collect();
        let got: HashSet<&str> = turn_ids(top(10), turns).map(session_of).collect();
        let sessions = session_order(ranked, turns);
        let any = |k: usize| f64::from(u8::from(sessions.iter().take(k).any(|s| want.contains(s))));
        Found {
            r5: found(evidence, top(5), turns),
            r10: found(evidence, top(10), turns),
            s10: want.intersection(&got).count() as f64 / want.len().max(1) as f64,
            any5: any(5),
            any10: any(10),
            budget: found(evidence, rendered, turns),
        }
    }
}

/// The turn ids of `ids`, in order.
fn turn_ids<'a>(ids: &'a [MemoryId], turns: &'a TurnsOf<'_>) -> impl Iterator<Item = &'a str> {
    ids.iter()
        .flat_map(|id| turns.get(id).into_iter().flatten())
        .map(|t| t.dia_id.as_str())
}

/// Fraction of `evidence` found among the turns of `ids`.
pub(super) fn found(evidence: &[String], ids: &[MemoryId], turns: &TurnsOf<'_>) -> f64 {
    let got: HashSet<&str> = turn_ids(ids, turns).collect();
    evidence.iter().filter(|e| got.contains(e.as_str())).count() as f64
        / evidence.len().max(1) as f64
}

/// The sessions of a ranking, in order of the first appearance of one of their turns.
fn session_order<'a>(ranked: &'a [MemoryId], turns: &'a TurnsOf<'_>) -> Vec<&'a str> {
    let mut seen = Vec::new();
    for s in turn_ids(ranked, turns).map(session_of) {
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen
}

/// The session part of a turn id (`D3` of `D3:7`).
fn session_of(dia_id: &str) -> &str {
    dia_id.split(':').next().unwrap_or("")
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (n, sum) = v.fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((p / 100.0) * (s.len() - 1) as f64).round() as usize]
}

/// The means over `records`.
pub(super) fn metrics<'a>(records: impl Iterator<Item = &'a Record> + Clone) -> Metrics {
    let ms: Vec<f64> = records.clone().map(|r| r.ms).collect();
    let of = |f: fn(&Found) -> f64| mean(records.clone().filter_map(|r| r.found.as_ref().map(f)));
    Metrics {
        questions: ms.len(),
        recall_at_5: of(|f| f.r5),
        recall_at_10: of(|f| f.r10),
        session_recall_at_10: of(|f| f.s10),
        session_any_at_5: of(|f| f.any5),
        session_any_at_10: of(|f| f.any10),
        budget_recall: of(|f| f.budget),
        mean_tokens: mean(records.clone().map(|r| r.tokens)),
        nothing_relevant: mean(
            records
                .clone()
                .map(|r| f64::from(u8::from(r.nothing_relevant))),
        ),
        p50_ms: percentile(&ms, 50.0),
        p95_ms: percentile(&ms, 95.0),
        bm25_overlap_at_10: mean(records.clone().map(|r| r.o10)),
        dated_evidence: records.clone().filter(|r| r.newest_first.is_some()).count(),
        newest_first: records
            .clone()
            .filter(|r| r.newest_first == Some(true))
            .count(),
        marked: mean(records.clone().map(|r| r.marked as f64)),
    }
}

/// Whether the block (`items`, in order) shows the newest of the evidence turns it shows
/// above the others; `None` unless it shows evidence of two or more times.
pub(super) fn newest_first(
    evidence: &[String],
    items: &[RecalledItem],
    turns: &TurnsOf<'_>,
) -> Option<bool> {
    let shown: Vec<(usize, DateTime<Utc>)> = items
        .iter()
        .enumerate()
        .flat_map(|(i, item)| {
            turns
                .get(&item.id)
                .into_iter()
                .flatten()
                .filter(|t| evidence.contains(&t.dia_id))
                .map(move |t| (i, t.at))
        })
        .collect();
    let newest = shown.iter().map(|s| s.1).max()?;
    if shown.iter().all(|s| s.1 == newest) {
        return None;
    }
    let first_newest = shown.iter().filter(|s| s.1 == newest).map(|s| s.0).min()?;
    Some(
        shown
            .iter()
            .filter(|s| s.1 < newest)
            .all(|s| s.0 > first_newest),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_recall_any_ranks_sessions_by_their_first_turn() {
        let turn = |id: &str| Turn {
            dia_id: id.into(),
            session: 0,
            content: String::new(),
            at: Utc::now(),
        };
        let all: Vec<Turn> = ["D1:1", "D1:2", "D2:1", "D3:1", "D4:1", "D5:1", "D6:1"]
            .into_iter()
            .map(turn)
            .collect();
        let ids: Vec<MemoryId> = (0..all.len() as u128).map(MemoryId::from_u128).collect();
        let turns: TurnsOf<'_> = ids
            .iter()
            .copied()
            .zip(all.iter().map(|t| vec![t]))
            .collect();
        // Ranked: D1, D1, D2, D3, D4, D5, D6: D6 is the sixth session.
        let f = Found::of(&["D6:1".into()], &ids, &ids[..1], &turns);
        assert_eq!((f.any5, f.any10), (0.0, 1.0));
        assert_eq!((f.r5, f.r10, f.s10, f.budget), (0.0, 1.0, 1.0, 0.0));
        // Either of two evidence sessions among the first five is enough.
        let f = Found::of(&["D6:1".into(), "D2:1".into()], &ids, &[], &turns);
        assert_eq!((f.any5, f.r5, f.s10), (1.0, 0.5, 1.0));
        // Repeated turns of one session count once.
        let f = Found::of(&["D5:1".into()], &ids, &[], &turns);
        assert_eq!(f.any5, 1.0);
    }
}
