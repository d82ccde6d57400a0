//! The text answers of the SOUL tools (the reference's layouts, with the fixed content).

use crate::drift::DriftReport;
use crate::merge::Diff;
use crate::service::{
    CaptureOutcome, DriftOutcome, DriftScope, EditOutcome, HistoryOutcome, RecallOutcome,
    StatusOutcome, SwapOutcome, VersionEntry,
};
use std::fmt::Write;

/// RFC 3339 (UTC, seconds) of a unix-ms time.
pub fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| ms.to_string())
}

fn date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// `soul_capture`.
pub fn capture(o: &CaptureOutcome) -> String {
    let mut s = format!(
        "Identity captured successfully.\nAgent:     {}\nVersion:   {}\nModel:     {}\nConfidence: {:.1}%\nTraits:    {} captured ({} in the identity)\nTimestamp: {}\n",
        o.agent_id,
        o.version,
        o.model_id,
        o.confidence * 100.0,
        o.traits.len(),
        o.identity_traits,
        rfc3339(o.timestamp)
    );
    if !o.traits.is_empty() {
        s.push_str("\nObserved traits:\n");
        for t in &o.traits {
            let _ = writeln!(
                s,
                "  {:<22} confidence {:.2}  intensity {:.2}  e.g. \"{}\"",
                t.name, t.confidence, t.intensity, t.evidence
            );
        }
    }
    if !o.dropped.is_empty() {
        let _ = writeln!(
            s,
            "\nBelow the confidence threshold (not stored): {}",
            o.dropped.join(", ")
        );
    }
    if let Some(d) = o.drift.as_ref().filter(|d| d.significant) {
        let _ = writeln!(
            s,
            "\nDrift from the previous version: {:.3} (above {:.2}); see soul_drift.",
            d.score, d.threshold
        );
    }
    s
}

/// `soul_recall`.
pub fn recall(o: &RecallOutcome) -> String {
    format!(
        "=== SOUL IDENTITY CONTEXT ({} tokens) ===\n\n{}\n\n=== END SOUL IDENTITY ===\n",
        o.tokens, o.prompt
    )
}

fn report_lines(s: &mut String, r: &DriftReport) {
    let _ = writeln!(
        s,
        "Status:     {}",
        if r.significant {
            "SIGNIFICANT DRIFT DETECTED"
        } else {
            "stable"
        }
    );
    let _ = writeln!(
        s,
        "Drift Score: {:.3} / 1.0 (largest dimension; mean {:.3})",
        r.score, r.mean
    );
    let _ = writeln!(s, "Threshold:  {:.3}", r.threshold);
    if !r.dimensions.is_empty() {
        s.push_str("\nDrift by Dimension:\n");
        for d in &r.dimensions {
            let _ = write!(
                s,
                "  {:<20} {:.3}{}",
                d.dimension.as_str(),
                d.distance,
                if d.significant { " [!]" } else { "" }
            );
            if !d.details.is_empty() {
                let _ = write!(s, "  ({})", d.details.join("; "));
            }
            s.push('\n');
        }
    }
    if !r.recommendations.is_empty() {
        s.push_str("\nRecommendations:\n");
        for rec in &r.recommendations {
            let _ = writeln!(s, "  - {rec}");
        }
    }
}

/// `soul_drift`.
pub fn drift(o: &DriftOutcome) -> String {
    let mut s = format!("=== SOUL DRIFT REPORT: {} ===\n", o.agent_id);
    match (&o.scope, &o.report) {
        (Some(scope), Some(r)) => {
            match scope {
                DriftScope::Versions {
                    from_version,
                    to_version,
                } => {
                    let _ = writeln!(s, "Window:     last {} versions", o.window);
                    let _ = writeln!(s, "Versions:   v{from_version} -> v{to_version}");
                }
                DriftScope::Models {
                    from_model,
                    to_model,
                    from_observations,
                    to_observations,
                } => {
                    let _ = writeln!(
                        s,
                        "Models:     {from_model} ({from_observations} captures) -> {to_model} ({to_observations} captures)"
                    );
                }
            }
            report_lines(&mut s, r);
        }
        _ => {
            let _ = writeln!(
                s,
                "Status:     stable\nDrift Score: 0.000 / 1.0\nWindow:     last {} versions\n\nFewer than two versions: nothing to compare yet.",
                o.window
            );
        }
    }
    s
}

/// `soul_swap`.
pub fn swap(o: &SwapOutcome) -> String {
    let mut s = format!(
        "=== SOUL MODEL SWAP ===\nAgent:      {}\nTransition: {} -> {}\nStatus:     Identity preserved{}\nVersion:    v{}\n",
        o.agent_id,
        o.from_model,
        o.to_model,
        if o.reinforced { " (reinforced)" } else { "" },
        o.version
    );
    if let Some(d) = &o.drift {
        let _ = writeln!(
            s,
            "Drift between the models: {:.3}{}",
            d.score,
            if d.significant {
                " [!] above the threshold"
            } else {
                ""
            }
        );
    }
    let _ = write!(
        s,
        "\n=== REINFORCEMENT PROMPT ({} tokens) ===\n\n{}\n\n=== END REINFORCEMENT PROMPT ===\n",
        o.tokens, o.prompt
    );
    s
}

/// What changed in the identity, then (in parentheses) the confidences that moved: more
/// evidence for the same trait is not a change.
fn diff_line(d: &Diff) -> String {
    let names = |list: &[crate::merge::TraitChange], sign: &str| {
        list.iter()
            .map(|t| format!("{sign}{}", t.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !d.added.is_empty() {
        parts.push(names(&d.added, "+"));
    }
    if !d.removed.is_empty() {
        parts.push(names(&d.removed, "-"));
    }
    for l in d.levels.iter().take(4) {
        let name = l.key.split_once('.').map_or(l.key.as_str(), |(_, k)| k);
        parts.push(format!("{name} {:.2} → {:.2}", l.before, l.after));
    }
    if d.levels.len() > 4 {
        parts.push(format!("{} more levels", d.levels.len() - 4));
    }
    let mut line = if d.is_unchanged() {
        "no change".to_owned()
    } else {
        parts.join("; ")
    };
    let confidence: Vec<String> = d
        .strengthened
        .iter()
        .chain(&d.weakened)
        .map(|t| {
            format!(
                "{} {:.0}% → {:.0}%",
                t.name,
                t.before.unwrap_or(0.0) * 100.0,
                t.after.unwrap_or(0.0) * 100.0
            )
        })
        .collect();
    if !confidence.is_empty() {
        let _ = write!(line, " (confidence: {})", confidence.join(", "));
    }
    line
}

fn entry(s: &mut String, i: usize, v: &VersionEntry) {
    let _ = writeln!(s, "\n[{i}] Version {}", v.version);
    let _ = writeln!(s, "    Date:       {}", date(v.created_at));
    let _ = writeln!(s, "    Model:      {}", v.model_id);
    let _ = writeln!(s, "    Reason:     {}", v.reason);
    let _ = writeln!(s, "    Confidence: {:.1}%", v.confidence * 100.0);
    let _ = writeln!(s, "    Traits:     {}", v.traits);
    if let Some(c) = &v.changes {
        let _ = writeln!(s, "    Changes:    {}", diff_line(c));
    }
}

/// `soul_status`.
pub fn status(o: &StatusOutcome) -> String {
    let mut s = format!("=== SOUL STATUS: {} ===\n\n", o.agent_id);
    let Some(id) = &o.identity else {
        s.push_str("No identity captured yet.\n\nDrift: 0.000 (stable)\n");
        return s;
    };
    let _ = writeln!(
        s,
        "Version:    v{} ({} stored)\nModel:      {}\nConfidence: {:.1}%\nCaptures:   {}\nTraits:     {}\nUpdated:    {}\n",
        id.version,
        o.versions,
        id.model_id,
        id.confidence * 100.0,
        id.captures,
        id.traits.len(),
        rfc3339(id.created_at)
    );
    if let Some(summary) = &o.summary {
        s.push_str(summary);
        s.push('\n');
    }
    if !o.recent.is_empty() {
        s.push_str("\nRecent Snapshots:\n");
        for v in &o.recent {
            let _ = writeln!(
                s,
                "  v{:<3} | {:.1}% confidence | {} | model: {} | {}",
                v.version,
                v.confidence * 100.0,
                date(v.created_at),
                v.model_id,
                v.reason
            );
        }
    }
    if !o.models.is_empty() {
        let list: Vec<String> = o.models.iter().map(|(m, n)| format!("{m} ({n})")).collect();
        let _ = writeln!(s, "\nModels observed: {}", list.join(", "));
    }
    if let Some(w) = &o.last_swap {
        let _ = writeln!(
            s,
            "Last model swap: {} -> {} at {}",
            w.from_model,
            w.to_model,
            rfc3339(w.swapped_at)
        );
    }
    match &o.drift {
        Some(d) => {
            let _ = writeln!(
                s,
                "\nDrift: {:.3} ({})",
                d.score,
                if d.significant {
                    "DRIFT ALERT"
                } else {
                    "stable"
                }
            );
        }
        None => s.push_str("\nDrift: 0.000 (stable)\n"),
    }
    s
}

/// `soul_history`.
pub fn history(o: &HistoryOutcome) -> String {
    let mut s = format!("=== SOUL HISTORY: {} ===\n", o.agent_id);
    let _ = writeln!(s, "\nSnapshots ({} of {}):", o.versions.len(), o.total);
    if o.versions.is_empty() {
        s.push_str("  No identity snapshots found for this agent.\n");
    }
    for (i, v) in o.versions.iter().enumerate() {
        entry(&mut s, i + 1, v);
    }
    s
}

/// `soul_update` and `soul_patch`.
pub fn edit(o: &EditOutcome) -> String {
    let mut s = format!(
        "=== SOUL {}: {} ===\nNew version:  v{}\nConfidence:   {:.1}%\n",
        if o.directive.is_some() {
            "UPDATE"
        } else {
            "PATCH"
        },
        o.agent_id,
        o.version,
        o.confidence * 100.0
    );
    if let Some(d) = &o.directive {
        let _ = writeln!(s, "Directive:    {d}");
    }
    let _ = writeln!(s, "Reason:       {}", o.reason);
    let _ = writeln!(s, "\nChanges applied ({}):", o.changes.len());
    for c in &o.changes {
        let _ = writeln!(s, "  • {c}");
    }
    let _ = writeln!(s, "\nTimestamp: {}", rfc3339(o.timestamp));
    s
}
