//! Choosing the ranking parameters where they are not scored (`--loco`): over a declared grid,
//! the point that ranks best on the other conversations of a data set is scored on each
//! conversation (leave one conversation out), and the point that ranks best on the other data
//! sets is scored on each data set (leave one data set out), so the figures say how a choice
//! made on one shape of conversation holds on another. The stages of the ranking are also
//! switched off one at a time: a stage earns its place by helping on most conversations of
//! every data set.

use mira_core::rank::RankParams;
use serde::Serialize;

/// Per data set, per conversation, per grid point: the recall@10 of each question.
pub(super) type GridScores = Vec<Vec<Vec<Vec<f64>>>>;

/// A point of the grid: its name (the values it sets) and its parameters.
pub type GridPoint = (String, RankParams);

/// The declared grid around `base` (the configured parameters, point 0): every combination of
/// propagation weight and session diversity, and each other parameter varied
/// alone; then each stage switched off alone ([`stages`]). Each parameter's configured value
/// comes first among its values, so that where the data cannot tell two points apart (a
/// parameter that changes nothing on them), the choice keeps the configured value.
pub fn grid(base: RankParams) -> Vec<GridPoint> {
    let mut out: Vec<GridPoint> = vec![("configured".to_owned(), base)];
    let mut add = |name: String, p: RankParams| {
        if !out.iter().any(|(_, q)| *q == p) {
            out.push((name, p));
        }
    };
    for propagation in configured_first(base.propagation, [0.0, 0.4, 0.5, 0.6]) {
        for diversity in configured_first(base.session_diversity, [0.0, 0.05, 0.1]) {
            add(
                format!("propagation={propagation} diversity={diversity}"),
                RankParams {
                    propagation,
                    session_diversity: diversity,
                    ..base
                },
            );
        }
    }
    for w in configured_first(base.lexical_weight, [0.3, 0.4, 0.5]) {
        add(
            format!("lexical_weight={w}"),
            RankParams {
                lexical_weight: w,
                ..base
            },
        );
    }
    for tokens in configured_first(base.propagation_tokens, [64, 128, 256, 0]) {
        add(
            format!("propagation_tokens={tokens}"),
            RankParams {
                propagation_tokens: tokens,
                ..base
            },
        );
    }
    for b in configured_first(base.bm25.b, [0.0, 0.25, 0.5, 0.75]) {
        add(
            format!("bm25_b={b}"),
            RankParams {
                bm25: mira_core::lexical::Bm25Params { b, ..base.bm25 },
                ..base
            },
        );
    }
    for (name, p) in stages(base) {
        add(name.to_owned(), p);
    }
    out
}

/// `values` with `configured` first (added when it is not among them).
fn configured_first<T: PartialEq + Copy, const N: usize>(configured: T, values: [T; N]) -> Vec<T> {
    let mut out = vec![configured];
    out.extend(values.into_iter().filter(|v| *v != configured));
    out
}

/// Each stage of the ranking that `base` runs, switched off alone.
pub fn stages(base: RankParams) -> Vec<(&'static str, RankParams)> {
    let off = [
        (
            "neighbour propagation",
            RankParams {
                propagation: 0.0,
                ..base
            },
        ),
        (
            "shorter memories take more from neighbours",
            RankParams {
                propagation_tokens: 0,
                ..base
            },
        ),
        (
            "session diversity",
            RankParams {
                session_diversity: 0.0,
                ..base
            },
        ),
        (
            "entity boost",
            RankParams {
                entity_boost: 0.0,
                ..base
            },
        ),
    ];
    off.into_iter().filter(|(_, p)| *p != base).collect()
}

/// One held-out conversation.
#[derive(Debug, Clone, Serialize)]
pub struct LocoFold {
    /// The conversation held out.
    pub held_out: String,
    /// The grid point that ranked best on the other conversations of its data set.
    pub chosen: String,
    /// Its recall@10 on the held-out conversation.
    #[serde(rename = "recall@10")]
    pub recall_at_10: f64,
    /// The configured parameters' recall@10 on the held-out conversation.
    #[serde(rename = "configured_recall@10")]
    pub configured_recall_at_10: f64,
    /// Questions of the held-out conversation.
    pub questions: usize,
}

/// The held-out figures of one data set.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    /// The data set.
    pub dataset: String,
    /// Its questions (categories 1-4).
    pub questions: usize,
    /// recall@10 of the configured parameters.
    #[serde(rename = "configured_recall@10")]
    pub configured_recall_at_10: f64,
    /// recall@10 with each conversation ranked by the point chosen on the others.
    #[serde(rename = "conversation_out_recall@10")]
    pub conversation_out_recall_at_10: f64,
    /// One fold per conversation.
    pub folds: Vec<LocoFold>,
    /// recall@10 with the point chosen on the other data sets (`None`: no other data set).
    #[serde(rename = "dataset_out_recall@10")]
    pub dataset_out_recall_at_10: Option<f64>,
    /// That point.
    pub dataset_out_chosen: Option<String>,
}

/// One stage switched off: what the configured ranking gains by it on each data set.
#[derive(Debug, Clone, Serialize)]
pub struct StageGain {
    /// The stage.
    pub stage: String,
    /// Per data set, in the order of the report.
    pub datasets: Vec<Gain>,
}

/// The gain of a stage on one data set.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Gain {
    /// Configured recall@10 less that without the stage.
    #[serde(rename = "recall@10")]
    pub recall_at_10: f64,
    /// Conversations where the stage raises recall@10.
    pub better: usize,
    /// Conversations where it lowers it.
    pub worse: usize,
}

/// The leave-one-out report (`--loco`).
#[derive(Debug, Clone, Serialize)]
pub struct LocoReport {
    /// The grid points, by name (point 0 is the configured parameters).
    pub grid: Vec<String>,
    /// Per data set.
    pub datasets: Vec<HeldOut>,
    /// Each stage switched off.
    pub stages: Vec<StageGain>,
}

/// Sum and count of recall@10 of `point` over the conversations of data set `d` that `keep`
/// accepts.
fn total(
    scores: &GridScores,
    d: usize,
    point: usize,
    keep: impl Fn(usize) -> bool,
) -> (f64, usize) {
    scores[d]
        .iter()
        .enumerate()
        .filter(|(c, _)| keep(*c))
        .fold((0.0, 0), |(s, n), (_, conv)| {
            (s + conv[point].iter().sum::<f64>(), n + conv[point].len())
        })
}

fn ratio((sum, n): (f64, usize)) -> f64 {
    sum / n.max(1) as f64
}

/// The point with the best `score` (ties keep the earlier point: the configured one first).
fn best(points: usize, score: impl Fn(usize) -> f64) -> usize {
    (0..points)
        .fold((0, f64::NEG_INFINITY), |(b, bs), p| {
            let s = score(p);
            if s > bs + 1e-12 {
                (p, s)
            } else {
                (b, bs)
            }
        })
        .0
}

/// The leave-one-out figures of `scores` (data sets named `names`, conversations `convs`) over
/// `grid`.
pub(super) fn leave_one_out(
    names: &[String],
    convs: &[Vec<String>],
    grid: &[GridPoint],
    scores: &GridScores,
) -> LocoReport {
    let points = grid.len();
    let name = |p: usize| grid.get(p).map(|g| g.0.clone()).unwrap_or_default();
    let mut datasets = Vec::new();
    for (d, dataset) in names.iter().enumerate() {
        let mut folds = Vec::new();
        for (held, conv) in convs[d].iter().enumerate() {
            let chosen = best(points, |p| ratio(total(scores, d, p, |c| c != held)));
            let on = |p| ratio(total(scores, d, p, |c| c == held));
            folds.push(LocoFold {
                held_out: conv.clone(),
                chosen: name(chosen),
                recall_at_10: on(chosen),
                configured_recall_at_10: on(0),
                questions: total(scores, d, 0, |c| c == held).1,
            });
        }
        let questions = total(scores, d, 0, |_| true).1;
        let weighted = |f: fn(&LocoFold) -> f64| {
            folds.iter().map(|x| f(x) * x.questions as f64).sum::<f64>() / questions.max(1) as f64
        };
        // Chosen on the other data sets, each weighing the same.
        let others: Vec<usize> = (0..names.len()).filter(|&o| o != d).collect();
        let chosen = (!others.is_empty()).then(|| {
            best(points, |p| {
                others
                    .iter()
                    .map(|&o| ratio(total(scores, o, p, |_| true)))
                    .sum::<f64>()
            })
        });
        datasets.push(HeldOut {
            dataset: dataset.clone(),
            questions,
            configured_recall_at_10: ratio(total(scores, d, 0, |_| true)),
            conversation_out_recall_at_10: weighted(|f| f.recall_at_10),
            folds,
            dataset_out_recall_at_10: chosen.map(|p| ratio(total(scores, d, p, |_| true))),
            dataset_out_chosen: chosen.map(name),
        });
    }
    let stages = stages(grid[0].1)
        .into_iter()
        .filter_map(|(stage, off)| {
            let p = grid.iter().position(|(_, q)| *q == off)?;
            let datasets = (0..names.len())
                .map(|d| {
                    let per_conv: Vec<f64> = (0..convs[d].len())
                        .map(|c| {
                            ratio(total(scores, d, 0, |x| x == c))
                                - ratio(total(scores, d, p, |x| x == c))
                        })
                        .collect();
                    Gain {
                        recall_at_10: ratio(total(scores, d, 0, |_| true))
                            - ratio(total(scores, d, p, |_| true)),
                        better: per_conv.iter().filter(|&&g| g > 1e-9).count(),
                        worse: per_conv.iter().filter(|&&g| g < -1e-9).count(),
                    }
                })
                .collect();
            Some(StageGain {
                stage: stage.to_owned(),
                datasets,
            })
        })
        .collect();
    LocoReport {
        grid: grid.iter().map(|g| g.0.clone()).collect(),
        datasets,
        stages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_scored_where_they_were_not_made() {
        let base = RankParams::default();
        let grid: Vec<GridPoint> = vec![
            ("configured".into(), base),
            (
                "a".into(),
                RankParams {
                    propagation: 0.0,
                    ..base
                },
            ),
        ];
        // Data set 0 prefers point 1 on both conversations, data set 1 prefers point 0.
        let scores: GridScores = vec![
            vec![vec![vec![0.5], vec![0.9]], vec![vec![0.4], vec![0.8]]],
            vec![vec![vec![1.0, 1.0], vec![0.2, 0.2]]],
        ];
        let names = vec!["x".to_owned(), "y".to_owned()];
        let convs = vec![vec!["x1".into(), "x2".into()], vec!["y1".into()]];
        let r = leave_one_out(&names, &convs, &grid, &scores);
        let x = &r.datasets[0];
        assert!((x.configured_recall_at_10 - 0.45).abs() < 1e-9);
        // Each conversation of x is ranked by point 1, chosen on the other.
        assert!((x.conversation_out_recall_at_10 - 0.85).abs() < 1e-9);
        // y prefers the configured point: x held out gets it.
        assert_eq!(x.dataset_out_chosen.as_deref(), Some("configured"));
        assert!((x.dataset_out_recall_at_10.unwrap() - 0.45).abs() < 1e-9);
        let y = &r.datasets[1];
        assert_eq!(y.dataset_out_chosen.as_deref(), Some("a"));
        assert!((y.dataset_out_recall_at_10.unwrap() - 0.2).abs() < 1e-9);
        // Propagation off is point "a": the stage loses on x, wins on y.
        let prop = &r.stages[0];
        assert_eq!(prop.stage, "neighbour propagation");
        assert_eq!((prop.datasets[0].better, prop.datasets[0].worse), (0, 2));
        assert_eq!((prop.datasets[1].better, prop.datasets[1].worse), (1, 0));
    }

    #[test]
    fn the_grid_starts_with_the_configured_point_and_has_no_twins() {
        let g = grid(RankParams::default());
        assert_eq!(g[0].0, "configured");
        for (i, a) in g.iter().enumerate() {
            assert!(g[i + 1..].iter().all(|b| b.1 != a.1), "{} repeated", a.0);
        }
        assert!(stages(RankParams::default())
            .iter()
            .all(|(_, p)| g.iter().any(|(_, q)| q == p)));
        // Ties keep the earlier point: each parameter's configured value is tried first.
        assert_eq!(
            configured_first(0.05, [0.0, 0.05, 0.1]),
            vec![0.05, 0.0, 0.1]
        );
        assert_eq!(configured_first(7, [1, 2]), vec![7, 1, 2]);
    }
}
