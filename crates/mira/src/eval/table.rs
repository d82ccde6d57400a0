//! The report as text: per data set every system by category (and per conversation if asked),
//! then the leave-one-out figures and the stages when they were run.

use super::loco::LocoReport;
use super::metrics::{Metrics, FOREIGN};
use super::{DatasetReport, EvalReport};
use std::fmt::Write;

/// The name of a category in the report: its number, `other` for a question of another
/// conversation.
pub(super) fn category_name(category: u8) -> String {
    if category == FOREIGN {
        "other".to_owned()
    } else {
        category.to_string()
    }
}

/// The report as tables.
pub fn render_table(r: &EvalReport, per_conversation: bool) -> String {
    let mut out = format!(
        "Evaluation of {} data set{}, budget {} tokens, {:.0}s\n",
        r.datasets.len(),
        if r.datasets.len() == 1 { "" } else { "s" },
        r.budget,
        r.seconds
    );
    for d in &r.datasets {
        dataset(&mut out, d, per_conversation);
    }
    if let Some(l) = &r.loco {
        loco(&mut out, l, &r.datasets);
    }
    out
}

fn dataset(out: &mut String, d: &DatasetReport, per_conversation: bool) {
    let _ = writeln!(
        out,
        "\n{}: {} conversations, {} turns, {} questions (and {} of other conversations), {:.0}s ({} malformed evidence ids skipped)\n",
        d.name,
        d.conversations.len(),
        d.turns,
        d.questions,
        d.foreign_questions,
        d.seconds,
        d.skipped_evidence
    );
    let width = d.systems.keys().map(String::len).max().unwrap_or(0).max(6);
    let label = d
        .conversations
        .iter()
        .map(|c| c.id.len())
        .filter(|_| per_conversation)
        .max()
        .unwrap_or(0)
        .max(8);
    let _ = writeln!(
        out,
        "{:<width$} {:<label$} {:>5} {:>8} {:>9} {:>11} {:>6} {:>7} {:>10} {:>6} {:>7} {:>7} {:>7} {:>11}",
        "system",
        "category",
        "n",
        "recall@5",
        "recall@10",
        "sess_rec@10",
        "any@5",
        "any@10",
        "budget_rec",
        "tokens",
        "nothing",
        "p50_ms",
        "p95_ms",
        "bm25_ovl@10"
    );
    let row = |out: &mut String, name: &str, cat: &str, m: &Metrics| {
        let _ = writeln!(
            out,
            "{:<width$} {:<label$} {:>5} {:>8.3} {:>9.3} {:>11.3} {:>6.3} {:>7.3} {:>10.3} {:>6.0} {:>7.3} {:>7.1} {:>7.1} {:>11.3}",
            name,
            cat,
            m.questions,
            m.recall_at_5,
            m.recall_at_10,
            m.session_recall_at_10,
            m.session_any_at_5,
            m.session_any_at_10,
            m.budget_recall,
            m.mean_tokens,
            m.nothing_relevant,
            m.p50_ms,
            m.p95_ms,
            m.bm25_overlap_at_10
        );
    };
    for (name, s) in &d.systems {
        for (cat, m) in &s.by_category {
            row(out, name, cat, m);
        }
        row(out, name, "all 1-4", &s.overall);
    }
    let _ = writeln!(
        out,
        "\nNewest evidence first (questions whose block shows evidence of two or more times) and earlier statements marked per block:"
    );
    for (name, s) in &d.systems {
        let cats: Vec<String> = s
            .by_category
            .iter()
            .filter(|(_, m)| m.dated_evidence > 0)
            .map(|(c, m)| format!("cat {c} {}/{}", m.newest_first, m.dated_evidence))
            .collect();
        let _ = writeln!(
            out,
            "{name:<width$} {}  marked {:.2}",
            if cats.is_empty() {
                "-".to_owned()
            } else {
                cats.join(", ")
            },
            s.overall.marked
        );
    }
    if per_conversation {
        let _ = writeln!(out, "\nPer conversation (categories 1-4):");
        for c in &d.conversations {
            for (name, m) in &c.systems {
                row(out, name, &c.id, m);
            }
        }
    }
}

fn loco(out: &mut String, l: &LocoReport, datasets: &[DatasetReport]) {
    let _ = writeln!(
        out,
        "\nChosen where not scored, over {} grid points (recall@10, categories 1-4):",
        l.grid.len()
    );
    let width = l
        .datasets
        .iter()
        .map(|h| h.dataset.len())
        .max()
        .unwrap_or(0)
        .max(8);
    let _ = writeln!(
        out,
        "{:<width$} {:>9} {:>10} {:>17} {:>16}  chosen on the other data sets",
        "data set", "questions", "configured", "conversation out", "data set out"
    );
    for h in &l.datasets {
        let _ = writeln!(
            out,
            "{:<width$} {:>9} {:>10.3} {:>17.3} {:>16}  {}",
            h.dataset,
            h.questions,
            h.configured_recall_at_10,
            h.conversation_out_recall_at_10,
            h.dataset_out_recall_at_10
                .map_or("-".to_owned(), |r| format!("{r:.3}")),
            h.dataset_out_chosen.as_deref().unwrap_or("-")
        );
    }
    for h in &l.datasets {
        let moved: Vec<_> = h
            .folds
            .iter()
            .filter(|f| f.chosen != "configured")
            .collect();
        if moved.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "  {}: {} of {} conversations chose another point on the others:",
            h.dataset,
            moved.len(),
            h.folds.len()
        );
        for f in moved.iter().take(10) {
            let _ = writeln!(
                out,
                "    {:<20} {:>4} q  held-out {:.3} (configured {:.3})  chosen: {}",
                f.held_out, f.questions, f.recall_at_10, f.configured_recall_at_10, f.chosen
            );
        }
        if moved.len() > 10 {
            let _ = writeln!(out, "    … {} more (--json lists them)", moved.len() - 10);
        }
    }
    if l.stages.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nStages: recall@10 of the configured ranking less that without the stage (conversations better / worse):"
    );
    let width = l.stages.iter().map(|s| s.stage.len()).max().unwrap_or(0);
    let _ = write!(out, "{:<width$}", "stage");
    for d in datasets {
        let _ = write!(out, " {:>24}", d.name);
    }
    let _ = writeln!(out);
    for s in &l.stages {
        let _ = write!(out, "{:<width$}", s.stage);
        for g in &s.datasets {
            let cell = format!("{:+.3} ({}/{})", g.recall_at_10, g.better, g.worse);
            let _ = write!(out, " {cell:>24}");
        }
        let _ = writeln!(out);
    }
}
