//! The learned memory type: a multinomial logistic regression over the memory's embedding and
//! the rules' answer ([`crate::classify::classify`]), trained on labelled statements
//! (`crates/mira/tests/data/types-train.jsonl`, by `mira eval types --train`) and shipped as a
//! data file ([`SHIPPED`], `data/type-model.json`).
//!
//! The rules know a few hundred cue phrases; the embedding carries what a statement is about
//! and how it is said, so a model over both files what the rules miss ("Use snake_case for
//! column names." is a team rule, "The staging environment runs in eu-west-1." configuration)
//! and keeps what they get right. Reading it costs one dot product per type.
//!
//! Training is deterministic (full-batch gradient descent from zero weights, a fixed number of
//! steps, examples in file order), and its settings are chosen by k-fold cross-validation
//! inside the training set ([`select`]), so a held-out set stays unseen.

use crate::memory::MemoryType;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// The types in the order of the model's rows.
pub const CLASSES: [MemoryType; 5] = MemoryType::ALL;

/// The weights shipped with mira (trained on `types-train.jsonl` with the default model).
pub const SHIPPED: &str = include_str!("../data/type-model.json");

/// Training settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrainParams {
    /// Factor applied to the embedding's components (a unit vector's are small beside the
    /// rules' 0/1 features).
    pub scale: f32,
    /// L2 penalty on the weights (not on the biases).
    pub l2: f32,
    /// Gradient steps.
    pub steps: usize,
    /// Step size.
    pub rate: f32,
}

/// The settings [`select`] chooses from: embedding scales × L2 penalties, 600 steps of 0.5.
pub fn grid() -> Vec<TrainParams> {
    let mut grid = Vec::new();
    for scale in [3.0, 10.0, 30.0] {
        for l2 in [0.0003, 0.001, 0.003, 0.01, 0.03] {
            grid.push(TrainParams {
                scale,
                l2,
                steps: 600,
                rate: 0.5,
            });
        }
    }
    grid
}

/// One labelled example: the statement's embedding, the rules' answer, the label.
#[derive(Debug, Clone)]
pub struct Example {
    /// The embedding of the statement.
    pub vector: Vec<f32>,
    /// What [`crate::classify::classify`] says of it.
    pub rules: MemoryType,
    /// The type a person filed it under.
    pub label: MemoryType,
}

/// A trained model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeModel {
    /// The embedding model whose vectors it reads (any precision of it: see [`Self::reads`]).
    pub embedding_model: String,
    /// Dimension of those vectors.
    pub dimension: usize,
    /// How it was trained.
    pub params: TrainParams,
    /// What it was trained on (the file and the embedding model's precision).
    pub trained_on: String,
    /// One row per class of [`CLASSES`]: weights of the scaled embedding, then of the rules'
    /// one-hot answer, then the bias.
    pub weights: Vec<Vec<f32>>,
}

/// The features of a statement: its scaled embedding, then the rules' answer as one-hot.
fn features(vector: &[f32], rules: MemoryType, scale: f32) -> Vec<f32> {
    let mut x: Vec<f32> = vector.iter().map(|v| v * scale).collect();
    x.extend(CLASSES.iter().map(|&c| f32::from(u8::from(c == rules))));
    x
}

/// Class probabilities of the features `x` (softmax of the scores).
fn probabilities(weights: &[Vec<f32>], x: &[f32]) -> [f32; CLASSES.len()] {
    let mut scores = [0.0f32; CLASSES.len()];
    for (s, w) in scores.iter_mut().zip(weights) {
        let (bias, coef) = w.split_last().map_or((0.0, &[][..]), |(b, c)| (*b, c));
        *s = bias + coef.iter().zip(x).map(|(a, b)| a * b).sum::<f32>();
    }
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for s in &mut scores {
        *s = (*s - max).exp();
        sum += *s;
    }
    scores.map(|e| e / sum)
}

fn class_index(t: MemoryType) -> usize {
    CLASSES.iter().position(|&c| c == t).unwrap_or(0)
}

impl TypeModel {
    /// Whether it reads vectors of the embedding model named `model` (its own, or another
    /// precision of it: `all-MiniLM-L6-v2-int8` for `all-MiniLM-L6-v2`).
    pub fn reads(&self, model: &str) -> bool {
        model
            .strip_prefix(self.embedding_model.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    }

    /// The type of a statement whose embedding is `vector` and whose rules say `rules`; the
    /// rules' answer when the vector does not fit the model (another dimension, or none).
    pub fn predict(&self, vector: &[f32], rules: MemoryType) -> MemoryType {
        let width = self.dimension + CLASSES.len() + 1;
        if vector.len() != self.dimension
            || self.weights.len() != CLASSES.len()
            || self.weights.iter().any(|w| w.len() != width)
        {
            return rules;
        }
        let p = probabilities(&self.weights, &features(vector, rules, self.params.scale));
        p.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(rules, |(i, _)| CLASSES[i])
    }

    /// Trains a model on `examples` (see the module docs).
    pub fn train(
        examples: &[Example],
        params: TrainParams,
        embedding_model: &str,
        trained_on: &str,
    ) -> TypeModel {
        let dimension = examples.first().map_or(0, |e| e.vector.len());
        let xs: Vec<Vec<f32>> = examples
            .iter()
            .map(|e| features(&e.vector, e.rules, params.scale))
            .collect();
        let width = dimension + CLASSES.len();
        let mut weights = vec![vec![0.0f32; width + 1]; CLASSES.len()];
        let n = examples.len().max(1) as f32;
        let mut grad = weights.clone();
        for _ in 0..params.steps {
            grad.iter_mut().for_each(|g| g.fill(0.0));
            for (x, e) in xs.iter().zip(examples) {
                let p = probabilities(&weights, x);
                let label = class_index(e.label);
                for (k, g) in grad.iter_mut().enumerate() {
                    let err = p[k] - f32::from(u8::from(k == label));
                    for (gi, xi) in g.iter_mut().zip(x) {
                        *gi += err * xi;
                    }
                    g[width] += err;
                }
            }
            for (w, g) in weights.iter_mut().zip(&grad) {
                for (i, (wi, gi)) in w.iter_mut().zip(g).enumerate() {
                    let penalty = if i < width { params.l2 * *wi } else { 0.0 };
                    *wi -= params.rate * (gi / n + penalty);
                }
            }
        }
        TypeModel {
            embedding_model: embedding_model.to_owned(),
            dimension,
            params,
            trained_on: trained_on.to_owned(),
            weights,
        }
    }

    /// The model as the JSON of its data file.
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }
}

/// Mean of the per-type accuracies of `(label, given)` pairs (each type counts the same,
/// whatever its share).
pub fn balanced_accuracy(pairs: impl IntoIterator<Item = (MemoryType, MemoryType)>) -> f64 {
    let mut right = [0usize; CLASSES.len()];
    let mut seen = [0usize; CLASSES.len()];
    for (label, given) in pairs {
        let k = class_index(label);
        seen[k] += 1;
        right[k] += usize::from(given == label);
    }
    let present: Vec<f64> = right
        .iter()
        .zip(&seen)
        .filter(|(_, &n)| n > 0)
        .map(|(&r, &n)| r as f64 / n as f64)
        .collect();
    present.iter().sum::<f64>() / present.len().max(1) as f64
}

/// One setting of the grid with its cross-validated score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scored {
    /// The setting.
    pub params: TrainParams,
    /// Balanced accuracy over the folds, each example scored by the model trained without
    /// its fold.
    pub accuracy: f64,
}

/// Scores each setting of `grid` by `folds`-fold cross-validation on `examples` (stratified:
/// the i-th example of each type goes to fold i mod `folds`) and returns them all, the best
/// first (ties: the earlier in the grid).
pub fn select(examples: &[Example], grid: &[TrainParams], folds: usize) -> Vec<Scored> {
    let folds = folds.max(2);
    let mut count = [0usize; CLASSES.len()];
    let fold_of: Vec<usize> = examples
        .iter()
        .map(|e| {
            let k = class_index(e.label);
            count[k] += 1;
            (count[k] - 1) % folds
        })
        .collect();
    let mut scored: Vec<Scored> = grid
        .iter()
        .map(|&params| {
            let mut predicted = Vec::with_capacity(examples.len());
            for f in 0..folds {
                let (test, train): (Vec<_>, Vec<_>) = examples
                    .iter()
                    .zip(&fold_of)
                    .partition(|(_, &fold)| fold == f);
                let train: Vec<Example> = train.into_iter().map(|(e, _)| e.clone()).collect();
                let model = TypeModel::train(&train, params, "", "");
                predicted.extend(
                    test.into_iter()
                        .map(|(e, _)| (e.label, model.predict(&e.vector, e.rules))),
                );
            }
            Scored {
                params,
                accuracy: balanced_accuracy(predicted),
            }
        })
        .collect();
    scored.sort_by(|a, b| b.accuracy.total_cmp(&a.accuracy));
    scored
}

/// The shipped model ([`SHIPPED`]); `None` if the file does not parse (then the rules decide).
pub fn shipped() -> Option<&'static TypeModel> {
    static MODEL: LazyLock<Option<TypeModel>> =
        LazyLock::new(|| serde_json::from_str(SHIPPED).ok());
    MODEL.as_ref()
}

/// The type of a statement whose rules say `rules` ([`crate::classify::classify`]) and whose
/// embedding by the model named `embedding_model` is `vector`: the shipped model's answer when
/// it reads that model's vectors, else the rules'.
pub fn refine(rules: MemoryType, vector: &[f32], embedding_model: &str) -> MemoryType {
    match shipped() {
        Some(m) if m.reads(embedding_model) => m.predict(vector, rules),
        _ => rules,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_hot(i: usize, dim: usize) -> Vec<f32> {
        let mut v = vec![0.0; dim];
        v[i % dim] = 1.0;
        v
    }

    /// Two examples per type, each type along its own axis.
    fn separable() -> Vec<Example> {
        CLASSES
            .iter()
            .enumerate()
            .flat_map(|(i, &c)| {
                [0.9, 1.0].map(|x| Example {
                    vector: one_hot(i, 8).iter().map(|v| v * x).collect(),
                    rules: MemoryType::SessionNote,
                    label: c,
                })
            })
            .collect()
    }

    #[test]
    fn the_shipped_model_parses_and_reads_minilm() {
        let m = shipped().expect("data/type-model.json parses");
        assert_eq!(m.weights.len(), CLASSES.len());
        assert!(m
            .weights
            .iter()
            .all(|w| w.len() == m.dimension + CLASSES.len() + 1));
        assert!(m.reads("all-MiniLM-L6-v2") && m.reads("all-MiniLM-L6-v2-int8"));
        assert!(!m.reads("hash-bow") && !m.reads("all-MiniLM-L6-v2x"));
    }

    #[test]
    fn training_separates_what_it_is_shown_and_is_deterministic() {
        let examples = separable();
        let params = grid()[0];
        let m = TypeModel::train(&examples, params, "test", "unit");
        for e in &examples {
            assert_eq!(m.predict(&e.vector, e.rules), e.label);
        }
        assert_eq!(
            balanced_accuracy(
                examples
                    .iter()
                    .map(|e| (e.label, m.predict(&e.vector, e.rules)))
            ),
            1.0
        );
        assert_eq!(TypeModel::train(&examples, params, "test", "unit"), m);
        // A vector of another dimension falls back to the rules.
        assert_eq!(m.predict(&[1.0; 3], MemoryType::Fact), MemoryType::Fact);
    }

    #[test]
    fn the_rules_answer_is_learned_where_it_is_right() {
        // The vectors say nothing; the rules are right: the model learns to follow them.
        let examples: Vec<Example> = (0..20)
            .map(|i| Example {
                vector: vec![0.1; 4],
                rules: CLASSES[i % 5],
                label: CLASSES[i % 5],
            })
            .collect();
        let m = TypeModel::train(&examples, grid()[0], "test", "unit");
        for &c in &CLASSES {
            assert_eq!(m.predict(&[0.1; 4], c), c);
        }
    }

    #[test]
    fn selection_scores_every_setting_out_of_fold() {
        let mut examples = separable();
        examples.extend(separable());
        let grid = grid();
        let scored = select(&examples, &grid[..2], 2);
        assert_eq!(scored.len(), 2);
        assert!(scored[0].accuracy >= scored[1].accuracy);
        assert!(scored.iter().all(|s| s.accuracy == 1.0), "{scored:?}");
        // Labels unrelated to the vectors cannot be learned out of fold.
        let noise: Vec<Example> = (0..20)
            .map(|i| Example {
                vector: one_hot(i, 20),
                rules: MemoryType::SessionNote,
                label: CLASSES[i % 5],
            })
            .collect();
        assert!(select(&noise, &grid[..1], 2)[0].accuracy < 0.5);
    }

    #[test]
    fn without_a_fitting_vector_the_rules_decide() {
        let rules = crate::classify::classify("We decided to use PostgreSQL.");
        assert_eq!(rules, MemoryType::Decision);
        assert_eq!(refine(rules, &[], "all-MiniLM-L6-v2"), rules);
        assert_eq!(refine(rules, &[0.0; 384], "hash-bow"), rules);
    }
}
