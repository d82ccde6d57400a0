//! `mira eval types`: how well memory types are classified, per type, by the rules alone and by
//! the store's classifier (the model of [`mira_core::type_model`] over the embedding and the
//! rules), on a held-out set of labelled statements. With `--train` the model is first trained
//! on the training sets, its settings chosen by cross-validation inside them, and its
//! weights written (the shipped `crates/mira-core/data/type-model.json` is made that way); the
//! held-out set is only scored.
//!
//! The sets are JSON lines `{"type": "fact", "text": "…"}` (`crates/mira/tests/data/`).

use crate::usecases::archive::AGEING;
use anyhow::{bail, Context, Result};
use mira_core::classify;
use mira_core::memory::MemoryType;
use mira_core::type_model::{self, Example, Scored, TypeModel, CLASSES};
use mira_embed::Embedder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Folds of the cross-validation that chooses the training settings.
pub const FOLDS: usize = 5;

/// The labelled sets as they lie in mira's source tree (relative to its root): the training
/// sets, trained on together.
pub const DEFAULT_TRAIN: [&str; 2] = [
    "crates/mira/tests/data/types-train.jsonl",
    "crates/mira/tests/data/types-train-more.jsonl",
];
/// See [`DEFAULT_TRAIN`].
pub const DEFAULT_HELDOUT: &str = "crates/mira/tests/data/types-heldout.jsonl";
/// Where the shipped weights lie in mira's source tree.
pub const DEFAULT_WEIGHTS: &str = "crates/mira-core/data/type-model.json";

/// What to run.
#[derive(Debug, Clone)]
pub struct TypesOptions {
    /// The statements scored.
    pub heldout: PathBuf,
    /// Train on these sets first (and score that model instead of the shipped one).
    pub train: Option<Vec<PathBuf>>,
}

/// One labelled statement as the file holds it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Labelled {
    #[serde(rename = "type")]
    memory_type: String,
    text: String,
}

/// The score of one type.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TypeScore {
    /// Statements of the type given their label.
    pub right: usize,
    /// Statements of the type.
    pub total: usize,
    /// `right / total`.
    pub accuracy: f64,
}

/// Accuracy of one classifier, overall and per labelled type.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Accuracy {
    /// Share of statements given their label.
    pub overall: f64,
    /// The lowest per-type accuracy.
    pub worst_type: f64,
    /// Per labelled type.
    pub per_type: BTreeMap<String, TypeScore>,
    /// "label → given" and how many statements it got wrong that way.
    pub confusions: BTreeMap<String, usize>,
    /// Statements of a lasting type (decision, fact, preference) filed under a type that
    /// archiving by age takes ([`AGEING`]): the harm a wrong type does.
    pub lasting_filed_ageing: usize,
    /// Statements of a lasting type.
    pub lasting: usize,
}

/// A statement the classifier got wrong.
#[derive(Debug, Clone, Serialize)]
pub struct Wrong {
    /// Its label.
    pub label: MemoryType,
    /// What the classifier said.
    pub given: MemoryType,
    /// The statement.
    pub text: String,
}

/// The training run (`--train`).
#[derive(Debug, Clone, Serialize)]
pub struct Training {
    /// The training sets.
    pub files: Vec<String>,
    /// Their statements.
    pub statements: usize,
    /// Each setting of the grid with its cross-validated balanced accuracy, the chosen first.
    pub selection: Vec<Scored>,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct TypesReport {
    /// The scored set.
    pub file: String,
    /// Its statements.
    pub statements: usize,
    /// The embedding model whose vectors were classified.
    pub embedding_model: String,
    /// The classifier's model: what it was trained on.
    pub trained_on: String,
    /// Present when the model was trained by this run.
    pub training: Option<Training>,
    /// The rules alone (what mira does without an embedding).
    pub rules: Accuracy,
    /// The store's classifier.
    pub model: Accuracy,
    /// Statements the store's classifier got wrong.
    pub wrong: Vec<Wrong>,
}

/// Reads the labelled statements of `path`.
pub fn read_labelled(path: &Path) -> Result<Vec<(MemoryType, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {}: give the file, or run from the root of mira's source tree for the default",
            path.display()
        )
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: Labelled = serde_json::from_str(line).with_context(|| {
            format!(
                "{} line {}: expected {{\"type\": \"fact\", \"text\": \"…\"}}",
                path.display(),
                i + 1
            )
        })?;
        let t: MemoryType = l
            .memory_type
            .parse()
            .with_context(|| format!("{} line {}", path.display(), i + 1))?;
        out.push((t, l.text));
    }
    if out.is_empty() {
        bail!("{} holds no labelled statement", path.display());
    }
    Ok(out)
}

/// The labelled statements of `path` with their embeddings and the rules' answers.
pub fn examples(embedder: &dyn Embedder, path: &Path) -> Result<Vec<(Example, String)>> {
    let labelled = read_labelled(path)?;
    let texts: Vec<&str> = labelled.iter().map(|(_, t)| t.as_str()).collect();
    let vectors = embedder.embed_batch(&texts)?;
    Ok(labelled
        .into_iter()
        .zip(vectors)
        .map(|((label, text), vector)| {
            let example = Example {
                vector,
                rules: classify::classify(&text),
                label,
            };
            (example, text)
        })
        .collect())
}

/// Trains the type model on the statements of `paths` together: the grid's best setting by
/// [`FOLDS`]-fold cross-validation, then all of them with it.
pub fn train(embedder: &dyn Embedder, paths: &[PathBuf]) -> Result<(TypeModel, Training)> {
    let mut examples: Vec<Example> = Vec::new();
    for path in paths {
        examples.extend(self::examples(embedder, path)?.into_iter().map(|(e, _)| e));
    }
    if examples.is_empty() {
        bail!("no training set given: give at least one --train-set FILE");
    }
    let selection = type_model::select(&examples, &type_model::grid(), FOLDS);
    let params = selection
        .first()
        .map(|s| s.params)
        .context("the training grid is empty")?;
    let name = paths
        .iter()
        .map(|path| {
            path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect::<Vec<_>>()
        .join(" + ");
    let model_name = embedder.model_name();
    let family = match model_name.strip_prefix(mira_embed::DEFAULT_MODEL_NAME) {
        Some(rest) if rest.is_empty() || rest.starts_with('-') => mira_embed::DEFAULT_MODEL_NAME,
        _ => model_name,
    };
    let model = TypeModel::train(
        &examples,
        params,
        family,
        &format!("{name}, {model_name} vectors"),
    );
    let training = Training {
        files: paths.iter().map(|p| p.display().to_string()).collect(),
        statements: examples.len(),
        selection,
    };
    Ok((model, training))
}

fn accuracy(pairs: impl Iterator<Item = (MemoryType, MemoryType)>) -> Accuracy {
    let mut a = Accuracy::default();
    let (mut right, mut n) = (0usize, 0usize);
    for (label, given) in pairs {
        if !AGEING.contains(&label) {
            a.lasting += 1;
            a.lasting_filed_ageing += usize::from(AGEING.contains(&given));
        }
        let e = a.per_type.entry(label.to_string()).or_default();
        e.total += 1;
        n += 1;
        if label == given {
            e.right += 1;
            right += 1;
        } else {
            *a.confusions
                .entry(format!("{label} → {given}"))
                .or_default() += 1;
        }
    }
    for s in a.per_type.values_mut() {
        s.accuracy = s.right as f64 / s.total.max(1) as f64;
    }
    a.overall = right as f64 / n.max(1) as f64;
    a.worst_type = a.per_type.values().map(|s| s.accuracy).fold(1.0, f64::min);
    a
}

/// Scores the rules and the model (trained now on `opts.train`, else the shipped one) on the
/// statements of `opts.heldout`; returns the model trained, if any.
pub fn run(
    embedder: &dyn Embedder,
    opts: &TypesOptions,
) -> Result<(TypesReport, Option<TypeModel>)> {
    let trained = opts
        .train
        .as_deref()
        .map(|paths| train(embedder, paths))
        .transpose()?;
    let model = match &trained {
        Some((m, _)) => m,
        None => type_model::shipped().context("the shipped type model does not parse")?,
    };
    if !model.reads(embedder.model_name()) {
        bail!(
            "the type model reads vectors of {}, not of {}: set embeddings to that model",
            model.embedding_model,
            embedder.model_name()
        );
    }
    let rows: Vec<(Example, MemoryType, String)> = examples(embedder, &opts.heldout)?
        .into_iter()
        .map(|(e, text)| {
            let given = model.predict(&e.vector, e.rules);
            (e, given, text)
        })
        .collect();
    let report = TypesReport {
        file: opts.heldout.display().to_string(),
        statements: rows.len(),
        embedding_model: embedder.model_name().to_owned(),
        trained_on: model.trained_on.clone(),
        rules: accuracy(rows.iter().map(|(e, _, _)| (e.label, e.rules))),
        model: accuracy(rows.iter().map(|(e, given, _)| (e.label, *given))),
        wrong: rows
            .iter()
            .filter(|(e, given, _)| e.label != *given)
            .map(|(e, given, text)| Wrong {
                label: e.label,
                given: *given,
                text: text.clone(),
            })
            .collect(),
        training: trained.as_ref().map(|(_, t)| t.clone()),
    };
    Ok((report, trained.map(|(m, _)| m)))
}

/// The report as text; with `wrong`, every statement the classifier got wrong.
pub fn render_table(r: &TypesReport, wrong: bool) -> String {
    let mut out = String::new();
    if let Some(t) = &r.training {
        let _ = writeln!(
            out,
            "Trained on {} ({} statements); settings by {FOLDS}-fold cross-validation inside them:",
            t.files.join(" + "),
            t.statements
        );
        for (i, s) in t.selection.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {} scale {:<5} l2 {:<7} steps {} rate {}: balanced accuracy {:.3}",
                if i == 0 { "*" } else { " " },
                s.params.scale,
                s.params.l2,
                s.params.steps,
                s.params.rate,
                s.accuracy
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Memory types: {} ({} statements, {} vectors; model trained on {})\n",
        r.file, r.statements, r.embedding_model, r.trained_on
    );
    let _ = writeln!(out, "{:<14} {:>15} {:>15}", "type", "rules", "classifier");
    let cell = |a: &Accuracy, name: &str| {
        a.per_type.get(name).map_or("-".to_owned(), |s| {
            format!("{:.3} ({}/{})", s.accuracy, s.right, s.total)
        })
    };
    for t in CLASSES {
        let name = t.as_str();
        let _ = writeln!(
            out,
            "{name:<14} {:>15} {:>15}",
            cell(&r.rules, name),
            cell(&r.model, name)
        );
    }
    let _ = writeln!(
        out,
        "{:<14} {:>15.3} {:>15.3}",
        "overall", r.rules.overall, r.model.overall
    );
    let harm = |a: &Accuracy| format!("{}/{}", a.lasting_filed_ageing, a.lasting);
    let _ = writeln!(
        out,
        "{:<14} {:>15} {:>15}",
        "lasting→ageing",
        harm(&r.rules),
        harm(&r.model)
    );
    let _ = writeln!(
        out,
        "(lasting→ageing: decisions, facts and preferences filed as session notes or debug logs,\n which archiving by age would take)"
    );
    if !r.model.confusions.is_empty() {
        let _ = writeln!(out, "\nclassifier's confusions (label → given):");
        for (pair, n) in &r.model.confusions {
            let _ = writeln!(out, "  {pair}: {n}");
        }
    }
    if wrong {
        let _ = writeln!(out, "\nwrong:");
        for w in &r.wrong {
            let _ = writeln!(out, "  {} → {}: {}", w.label, w.given, w.text);
        }
    }
    out
}
