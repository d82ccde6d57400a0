//! `mira eval updates FILE`: facts that change. Each case of the file (JSON lines, see
//! `crates/mira/tests/data/README.md`) is two memories stored one after the other in a wing of
//! its own (or, with `--one-wing`, every case in one wing), the earlier (`old`) dated
//! [`GAP_DAYS`] days before the later (`new`); once every case is stored, each question is
//! recalled in its wing. For an update, the new value should be shown first and the old one
//! marked (as an earlier statement, or superseded); for a control (another subject, another
//! attribute of the same subject, an addition), the memory asked about must not be shown below
//! the other one, and neither may be marked. The store of `new` should offer `old` to the
//! calling agent ("May update") for an update; for a control, an offer is one the agent must
//! turn down. Stores run as a server's do, with the vector index read.

use crate::config::Config;
use crate::usecases::access::Access;
use crate::usecases::recall::{recall, RecallRequest, RecalledItem};
use crate::usecases::store::{store, StoreRequest};
use crate::usecases::supersede::{supersede, SupersedeRequest};
use crate::App;
use anyhow::{bail, Context, Result};
use chrono::{DateTime, Duration, TimeZone, Utc};
use mira_core::memory::MemoryId;
use mira_embed::Embedder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Days between the two memories of a case.
pub const GAP_DAYS: i64 = 40;

/// One case of the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The kind of thing that changes (`home`, `employer`, …).
    pub kind: String,
    /// `update`, or a control: `other_subject`, `other_attribute`, `addition`.
    pub relation: String,
    /// For updates: whether `new` contains a word that announces a change.
    #[serde(default)]
    pub cue: Option<bool>,
    /// For updates: the grammar (`first`, `second`, `we`, `name`, `passive`).
    #[serde(default)]
    pub voice: Option<String>,
    /// The memory stored first.
    pub old: String,
    /// The memory stored [`GAP_DAYS`] later.
    pub new: String,
    /// The question recalled.
    pub question: String,
}

impl Case {
    fn is_update(&self) -> bool {
        self.relation == "update"
    }
}

/// Options of `mira eval updates`.
#[derive(Debug, Clone)]
pub struct UpdatesOptions {
    /// The JSON-lines file.
    pub path: PathBuf,
    /// Token budget of each recall.
    pub budget: u32,
    /// Every case in one wing.
    pub one_wing: bool,
    /// Confirm (`mira_supersede`) each offer that is the case's own update, as an agent that
    /// judges every offer right would: what the agent's part can bring at most.
    pub confirm_offers: bool,
}

/// What recall did with one case.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The case's kind.
    pub kind: String,
    /// The case's relation.
    pub relation: String,
    /// Whether `new` announces the change (updates).
    pub cue: Option<bool>,
    /// `new` shown above `old` in the block.
    pub new_first: bool,
    /// `new` ranked above `old` by relevance (before the block's order).
    pub ranked_new_first: bool,
    /// One of the two marked as an earlier statement of the other, or superseded by it.
    pub marked: bool,
    /// The store of `new` offered `old` to the agent ("May update") or superseded it.
    pub offered: bool,
    /// "May update" candidates the store of `new` offered.
    pub candidates: usize,
    /// The memory stored first.
    pub old: String,
    /// The memory stored later.
    pub new: String,
    /// The question.
    pub question: String,
}

/// Counts over a group of cases.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    /// Cases.
    pub n: usize,
    /// `new` shown first.
    pub new_first: usize,
    /// `new` ranked first by relevance.
    pub ranked_new_first: usize,
    /// `new` shown first though ranked below `old` by relevance: moved up by the block's order
    /// (the newer-first stage), not by the ranking.
    pub moved_first: usize,
    /// Marked.
    pub marked: usize,
    /// `old` offered to the agent when `new` was stored.
    pub offered: usize,
    /// "May update" candidates offered by the stores of `new`.
    pub candidates: usize,
}

impl Tally {
    fn add(&mut self, o: &Outcome) {
        self.n += 1;
        self.new_first += usize::from(o.new_first);
        self.ranked_new_first += usize::from(o.ranked_new_first);
        self.moved_first += usize::from(o.new_first && !o.ranked_new_first);
        self.marked += usize::from(o.marked);
        self.offered += usize::from(o.offered);
        self.candidates += o.candidates;
    }
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct UpdatesReport {
    /// The file.
    pub file: String,
    /// Budget of each recall.
    pub budget: u32,
    /// Every case in one wing.
    pub one_wing: bool,
    /// Offers that were updates confirmed before recall.
    pub confirm_offers: bool,
    /// Every update pair.
    pub updates: Tally,
    /// Update pairs by whether `new` has a cue word (`cue`, `no cue`).
    pub updates_by_cue: BTreeMap<String, Tally>,
    /// Update pairs by kind.
    pub updates_by_kind: BTreeMap<String, Tally>,
    /// Every control (`new_first` counts the displaced ones).
    pub controls: Tally,
    /// Controls by relation.
    pub controls_by_relation: BTreeMap<String, Tally>,
    /// Marked updates over every mark (updates and controls).
    pub mark_precision: f64,
    /// Marked updates over the updates.
    pub mark_recall: f64,
    /// Each case.
    pub cases: Vec<Outcome>,
}

/// Reads the cases of `path`.
pub fn read_cases(path: &std::path::Path) -> Result<Vec<Case>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: Case = serde_json::from_str(line)
            .with_context(|| format!("{} line {}: not a case", path.display(), i + 1))?;
        if !matches!(
            case.relation.as_str(),
            "update" | "other_subject" | "other_attribute" | "addition"
        ) {
            bail!(
                "{} line {}: relation '{}' is not known: use update, other_subject, other_attribute or addition",
                path.display(),
                i + 1,
                case.relation
            );
        }
        cases.push(case);
    }
    if cases.is_empty() {
        bail!("{} has no case", path.display());
    }
    Ok(cases)
}

/// When the first memory of case `i` happened.
fn first_date(i: usize) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 5, 9, 0, 0)
        .single()
        .unwrap_or_default()
        + Duration::hours(i as i64)
}

fn position(items: &[RecalledItem], id: MemoryId) -> Option<usize> {
    items.iter().position(|i| i.id == id)
}

/// Whether `a` is marked as earlier than `b` in the block, or superseded by it.
fn marked_by(items: &[RecalledItem], a: MemoryId, b: MemoryId) -> bool {
    items
        .iter()
        .any(|i| i.id == a && (i.newer == Some(b) || i.superseded_by == Some(b)))
}

/// The two memories of a case as stored, and what the store of `new` offered.
struct Stored {
    old: MemoryId,
    new: MemoryId,
    offered: bool,
    candidates: usize,
}

fn wing_of(i: usize, one_wing: bool) -> String {
    if one_wing {
        "cases".into()
    } else {
        format!("case-{i:04}")
    }
}

fn store_case(app: &App, i: usize, case: &Case, opts: &UpdatesOptions) -> Result<Stored> {
    let at = first_date(i);
    let mut outs = Vec::with_capacity(2);
    for (content, created_at) in [(&case.old, at), (&case.new, at + Duration::days(GAP_DAYS))] {
        let out = store(
            app,
            &Access::local(),
            StoreRequest {
                content: content.clone(),
                wing: wing_of(i, opts.one_wing),
                created_at: Some(created_at),
                ..StoreRequest::default()
            },
        )
        .map_err(|e| anyhow::anyhow!("storing '{content}': {e}"))?;
        outs.push(out);
    }
    let (old, new) = (outs[0].id, &outs[1]);
    let offered = new.may_update.iter().any(|m| m.id == old);
    if opts.confirm_offers && offered && case.is_update() {
        supersede(
            app,
            &Access::local(),
            &SupersedeRequest {
                old: old.to_string(),
                new: new.id.to_string(),
                ..SupersedeRequest::default()
            },
        )
        .map_err(|e| anyhow::anyhow!("confirming '{}': {e}", case.new))?;
    }
    Ok(Stored {
        old,
        new: new.id,
        offered: offered || new.superseded.contains(&old),
        candidates: new.may_update.len(),
    })
}

fn recall_case(
    app: &App,
    i: usize,
    case: &Case,
    stored: &Stored,
    opts: &UpdatesOptions,
) -> Result<Outcome> {
    let (old, new) = (stored.old, stored.new);
    let out = recall(
        app,
        &Access::local(),
        &RecallRequest {
            query: case.question.clone(),
            budget: Some(i64::from(opts.budget)),
            wing: Some(wing_of(i, opts.one_wing)),
            ..RecallRequest::default()
        },
    )
    .map_err(|e| anyhow::anyhow!("recall '{}': {e}", case.question))?;
    let before = |list: Option<usize>, other: Option<usize>| match (list, other) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        _ => false,
    };
    let rank = |id| out.ranking.iter().position(|r| *r == id);
    Ok(Outcome {
        kind: case.kind.clone(),
        relation: case.relation.clone(),
        cue: case.cue,
        new_first: before(position(&out.items, new), position(&out.items, old)),
        ranked_new_first: before(rank(new), rank(old)),
        marked: marked_by(&out.items, old, new) || marked_by(&out.items, new, old),
        offered: stored.offered,
        candidates: stored.candidates,
        old: case.old.clone(),
        new: case.new.clone(),
        question: case.question.clone(),
    })
}

/// Runs every case of `opts.path` in one temporary store.
pub fn run(
    base: &Config,
    embedder: Arc<dyn Embedder>,
    opts: &UpdatesOptions,
) -> Result<UpdatesReport> {
    let cases = read_cases(&opts.path)?;
    let tmp = tempfile::tempdir().context("cannot create a temporary store")?;
    let mut cfg = base.clone();
    cfg.storage.path = Some(tmp.path().to_path_buf());
    let app = App::open_with_embedder(cfg, embedder)?;
    // As a server: the index is read before the first store.
    app.index()?;
    let stored = cases
        .iter()
        .enumerate()
        .map(|(i, case)| store_case(&app, i, case, opts))
        .collect::<Result<Vec<_>>>()?;
    let outcomes = cases
        .iter()
        .zip(&stored)
        .enumerate()
        .map(|(i, (case, s))| recall_case(&app, i, case, s, opts))
        .collect::<Result<Vec<_>>>()?;
    let mut report = UpdatesReport {
        file: opts.path.display().to_string(),
        budget: opts.budget,
        one_wing: opts.one_wing,
        confirm_offers: opts.confirm_offers,
        updates: Tally::default(),
        updates_by_cue: BTreeMap::new(),
        updates_by_kind: BTreeMap::new(),
        controls: Tally::default(),
        controls_by_relation: BTreeMap::new(),
        mark_precision: 0.0,
        mark_recall: 0.0,
        cases: Vec::new(),
    };
    for (o, case) in outcomes.iter().zip(&cases) {
        if case.is_update() {
            report.updates.add(o);
            let cue = match case.cue {
                Some(true) => "cue",
                Some(false) => "no cue",
                None => "unlabelled",
            };
            report.updates_by_cue.entry(cue.into()).or_default().add(o);
            report
                .updates_by_kind
                .entry(case.kind.clone())
                .or_default()
                .add(o);
        } else {
            report.controls.add(o);
            report
                .controls_by_relation
                .entry(case.relation.clone())
                .or_default()
                .add(o);
        }
    }
    let marks = report.updates.marked + report.controls.marked;
    report.mark_precision = if marks == 0 {
        1.0
    } else {
        report.updates.marked as f64 / marks as f64
    };
    report.mark_recall = report.updates.marked as f64 / report.updates.n.max(1) as f64;
    report.cases = outcomes;
    Ok(report)
}

fn share(part: usize, n: usize) -> String {
    format!("{part}/{n} ({:.1}%)", 100.0 * part as f64 / n.max(1) as f64)
}

/// The report as text; with `failures`, every case that went wrong.
pub fn render_table(r: &UpdatesReport, failures: bool) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "Facts that change: {} ({} updates, {} controls), budget {}, {}{}\n\n",
        r.file,
        r.updates.n,
        r.controls.n,
        r.budget,
        if r.one_wing {
            "every case in one wing"
        } else {
            "a wing per case"
        },
        if r.confirm_offers {
            ", offered updates confirmed (as an agent that judges every offer right)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "updates   new value shown first {}  (ranked first by relevance {})",
        share(r.updates.new_first, r.updates.n),
        share(r.updates.ranked_new_first, r.updates.n)
    );
    for (cue, t) in &r.updates_by_cue {
        let _ = writeln!(
            out,
            "  {cue:<8} new value shown first {}  marked {}",
            share(t.new_first, t.n),
            share(t.marked, t.n)
        );
    }
    let _ = writeln!(
        out,
        "marking   precision {:.3}  recall {:.3}",
        r.mark_precision, r.mark_recall
    );
    let _ = writeln!(
        out,
        "controls  displaced {} (by the block's order {}, ranked above by relevance {})  marked {}",
        share(r.controls.new_first, r.controls.n),
        r.controls.moved_first,
        r.controls.new_first - r.controls.moved_first,
        share(r.controls.marked, r.controls.n)
    );
    let _ = writeln!(
        out,
        "offered to the agent (May update)  updates {}  controls {}  candidates per store {:.2}",
        share(r.updates.offered, r.updates.n),
        share(r.controls.offered, r.controls.n),
        (r.updates.candidates + r.controls.candidates) as f64
            / (r.updates.n + r.controls.n).max(1) as f64
    );
    for (rel, t) in &r.controls_by_relation {
        let _ = writeln!(
            out,
            "  {rel:<16} displaced {} (by the block's order {})  marked {}",
            share(t.new_first, t.n),
            t.moved_first,
            share(t.marked, t.n)
        );
    }
    let _ = writeln!(out, "\nupdates by kind (shown first / marked):");
    for (kind, t) in &r.updates_by_kind {
        let _ = writeln!(
            out,
            "  {kind:<13} {:>2}/{:<2} {:>2}/{:<2}",
            t.new_first, t.n, t.marked, t.n
        );
    }
    if failures {
        let _ = writeln!(out, "\nfailures:");
        for c in &r.cases {
            let update = c.relation == "update";
            let wrong = if update {
                !c.new_first || !c.marked
            } else {
                c.new_first || c.marked
            };
            if wrong {
                let _ = writeln!(
                    out,
                    "  [{} {}] first:{} marked:{} offered:{}\n    old: {}\n    new: {}\n    q:   {}",
                    c.relation, c.kind, c.new_first, c.marked, c.offered, c.old, c.new, c.question
                );
            }
        }
    }
    out
}
