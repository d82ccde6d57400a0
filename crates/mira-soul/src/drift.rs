//! Drift: how far apart two identities are, dimension by dimension: whether the agent is still
//! *the same* (the same traits, the same leanings), not whether SOUL is as sure of it.
//!
//! **Traits.** The weighted Jaccard distance over trait *intensities* (how strongly each trait
//! shows; absent = 0): `1 − Σ min(a, b) / Σ max(a, b)` over the union of names. A trait gained
//! or lost counts with its whole intensity; confidence does not count, so capturing the same
//! conversation again (more evidence, same traits) leaves the distance at 0.
//!
//! **Levels** (voice, communication, values, behaviour, emotion). Each level is reduced to its
//! direction in [−1, 1] ([`Identity::direction`]: `(value − 0.5) / 0.3`, clamped; 0 for a
//! level never observed nor edited). Per level the distance is `|d_a − d_b| / 2`: 1 for a
//! reversal (formal → casual), 0.5 for a leaning that appears or disappears, 0 for the same
//! leaning however sure. The dimension's distance is the root mean square of its levels', so
//! one reversal among the 8 voice levels (√(1/8) = 0.35) is not averaged away. When comparing
//! what was *observed* (two models' captures), a level counts only if both sides observed it,
//! and a dimension with no such level (or no trait on either side) is left out.
//!
//! **Score and significance.** The drift score is the largest per-dimension distance (the mean
//! is given too). A dimension (and the identity) has drifted when its distance exceeds
//! `soul.drift_detection.threshold` (default 0.3). (The reference's `soul_drift` averaged
//! stored trait-only diffs, in which a confidence rising by 20 % counted as a change, against a
//! hard-coded 0.3.)

use crate::model::{Dimension, Identity, LEVELS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The drift of one dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DimensionDrift {
    /// The dimension.
    pub dimension: Dimension,
    /// Its distance in [0, 1].
    pub distance: f64,
    /// Whether it exceeds the threshold.
    pub significant: bool,
    /// What moved most (level key or trait name, with before → after).
    pub details: Vec<String>,
}

/// A drift report between two identities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriftReport {
    /// Largest per-dimension distance.
    pub score: f64,
    /// Mean per-dimension distance.
    pub mean: f64,
    /// The threshold applied.
    pub threshold: f64,
    /// Whether any dimension drifted.
    pub significant: bool,
    /// One entry per compared dimension.
    pub dimensions: Vec<DimensionDrift>,
    /// What to do about it.
    pub recommendations: Vec<String>,
}

/// Compares `a` with `b`. With `observed_only`, levels that either side never observed are
/// ignored (see the module docs).
pub fn compare(a: &Identity, b: &Identity, threshold: f64, observed_only: bool) -> DriftReport {
    let mut dims = Vec::new();
    for dim in Dimension::ALL {
        let entry = if dim == Dimension::Traits {
            traits_distance(a, b)
        } else {
            levels_distance(a, b, dim, observed_only)
        };
        if let Some((distance, details)) = entry {
            dims.push(DimensionDrift {
                dimension: dim,
                distance,
                significant: distance > threshold,
                details,
            });
        }
    }
    let score = dims.iter().map(|d| d.distance).fold(0.0, f64::max);
    let mean = if dims.is_empty() {
        0.0
    } else {
        dims.iter().map(|d| d.distance).sum::<f64>() / dims.len() as f64
    };
    let significant = dims.iter().any(|d| d.significant);
    let mut recommendations: Vec<String> = dims
        .iter()
        .filter(|d| d.significant)
        .map(|d| {
            match d.dimension {
                Dimension::Voice => "Voice has drifted: reinforce the voice (soul_recall, or soul_patch the levels back).",
                Dimension::Traits => "Personality traits have drifted: review recent conversations for consistency.",
                Dimension::Communication => "Communication style has drifted: restate the preferred answer length and structure.",
                Dimension::Values => "Values have drifted: restate the priorities.",
                Dimension::Behaviour => "Behaviour has drifted: review how mistakes and disagreements are handled.",
                Dimension::Emotion => "Emotional tone has drifted: reinforce the tone.",
            }
            .to_owned()
        })
        .collect();
    if significant {
        recommendations.push(format!(
            "Drift score {score:.2} is above the threshold {threshold:.2}: inject the soul_recall prompt (or the soul_swap reinforcement after a model change)."
        ));
    }
    DriftReport {
        score,
        mean,
        threshold,
        significant,
        dimensions: dims,
        recommendations,
    }
}

fn levels_distance(
    a: &Identity,
    b: &Identity,
    dim: Dimension,
    observed_only: bool,
) -> Option<(f64, Vec<String>)> {
    let mut sq = 0.0;
    let mut n = 0usize;
    let mut moves: Vec<(f64, String)> = Vec::new();
    for key in LEVELS.iter().filter(|l| l.dimension == dim).map(|l| l.key) {
        if observed_only && (a.evidence_of(key) <= 0.0 || b.evidence_of(key) <= 0.0) {
            continue;
        }
        let (x, y) = (a.level(key)?, b.level(key)?);
        let step = (a.direction(key) - b.direction(key)).abs() / 2.0;
        sq += step * step;
        n += 1;
        if step >= 0.25 {
            let name = key.split_once('.').map_or(key, |(_, k)| k);
            let how = if step > 0.75 { " reversed" } else { "" };
            moves.push((step, format!("{name} {x:.2} → {y:.2}{how}")));
        }
    }
    if n == 0 {
        return None;
    }
    moves.sort_by(|p, q| q.0.total_cmp(&p.0));
    Some((
        (sq / n as f64).sqrt(),
        moves.into_iter().take(3).map(|m| m.1).collect(),
    ))
}

fn traits_distance(a: &Identity, b: &Identity) -> Option<(f64, Vec<String>)> {
    if a.traits.is_empty() && b.traits.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = a
        .traits
        .iter()
        .chain(&b.traits)
        .map(|t| t.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let (mut min, mut max) = (0.0, 0.0);
    let mut moves: Vec<(f64, String)> = Vec::new();
    for name in names {
        let x = a.trait_named(name).map_or(0.0, |t| t.intensity);
        let y = b.trait_named(name).map_or(0.0, |t| t.intensity);
        min += f64::min(x, y);
        max += f64::max(x, y);
        let label = match (x > 0.0, y > 0.0) {
            (true, false) => format!("{name} lost"),
            (false, true) => format!("{name} gained"),
            _ => format!("{name} intensity {x:.2} → {y:.2}"),
        };
        if (x - y).abs() >= 0.1 {
            moves.push(((x - y).abs(), label));
        }
    }
    let distance = if max > 0.0 { 1.0 - min / max } else { 0.0 };
    moves.sort_by(|p, q| q.0.total_cmp(&p.0));
    Some((distance, moves.into_iter().take(3).map(|m| m.1).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract;
    use crate::merge::merge;
    use crate::model::Trait;

    fn profile(texts: &[&str]) -> Identity {
        let mut id = Identity::neutral("a", "m", 0);
        for t in texts {
            merge(&mut id, &extract(t), 0.3, 1);
        }
        id
    }

    fn t(name: &str, intensity: f64, confidence: f64) -> Trait {
        Trait {
            name: name.into(),
            category: "social".into(),
            intensity,
            confidence,
            evidence_count: 1,
            first_observed: 0,
            last_observed: 0,
            last_evidence: String::new(),
        }
    }

    const STEADY: &str = "Assistant: I am analytical and methodical. I double-check every step.";

    #[test]
    fn more_evidence_for_the_same_identity_is_no_drift() {
        let once = profile(&[STEADY]);
        let thrice = profile(&[STEADY, STEADY, STEADY]);
        assert!(thrice.traits[0].confidence > once.traits[0].confidence);
        let r = compare(&once, &thrice, 0.3, false);
        assert!(r.score < 1e-9, "{r:#?}");
        assert!(!r.significant && r.recommendations.is_empty());
    }

    #[test]
    fn a_gained_or_lost_trait_is_drift_and_confidence_is_not() {
        let mut a = Identity::neutral("a", "m", 0);
        let mut b = a.clone();
        a.traits = vec![t("x", 1.0, 0.3), t("y", 1.0, 0.3)];
        b.traits = vec![t("y", 1.0, 0.95), t("z", 1.0, 0.95)];
        let (d, details) = traits_distance(&a, &b).expect("traits");
        assert!((d - (1.0 - 1.0 / 3.0)).abs() < 1e-9);
        assert_eq!(details, vec!["x lost", "z gained"]);
        b.traits = vec![t("x", 1.0, 0.9), t("y", 1.0, 0.9)];
        assert_eq!(traits_distance(&a, &b).map(|x| x.0), Some(0.0));
        b.traits.clear();
        assert_eq!(traits_distance(&a, &b).map(|x| x.0), Some(1.0));
    }

    #[test]
    fn a_reversed_level_is_significant_and_a_surer_one_is_not() {
        let mut a = Identity::neutral("a", "m", 0);
        a.evidence.insert("voice.formality_level".into(), 1.0);
        a.voice.formality_level = 0.9;
        let mut b = a.clone();
        b.voice.formality_level = 0.95;
        b.evidence.insert("voice.formality_level".into(), 5.0);
        assert_eq!(compare(&a, &b, 0.3, false).score, 0.0);
        b.voice.formality_level = 0.1;
        let r = compare(&a, &b, 0.3, false);
        let voice = &r.dimensions[0];
        assert_eq!(voice.dimension, Dimension::Voice);
        // One reversal among the 8 voice levels: √(1/8).
        assert!(
            (voice.distance - (1.0f64 / 8.0).sqrt()).abs() < 1e-9,
            "{voice:?}"
        );
        assert!(voice.significant && r.significant);
        assert_eq!(voice.details, vec!["formality_level 0.90 → 0.10 reversed"]);
        // A higher threshold from the config changes the verdict.
        assert!(!compare(&a, &b, 0.5, false).significant);
    }

    #[test]
    fn the_readme_worked_example() {
        let mut a = Identity::neutral("a", "m", 0);
        for key in ["voice.formality_level", "voice.humor_level"] {
            a.evidence.insert(key.into(), 1.0);
        }
        let mut b = a.clone();
        a.traits = vec![t("analytical", 0.8, 0.5), t("logical", 0.8, 0.5)];
        (a.voice.formality_level, a.voice.humor_level) = (0.9, 0.1);
        b.traits = vec![t("analytical", 0.8, 0.9), t("humorous", 0.7, 0.5)];
        (b.voice.formality_level, b.voice.humor_level) = (0.2, 0.5);
        let r = compare(&a, &b, 0.3, false);
        let of = |d: Dimension| {
            r.dimensions
                .iter()
                .find(|x| x.dimension == d)
                .map(|x| x.distance)
        };
        assert!((of(Dimension::Traits).expect("traits") - (1.0 - 0.8 / 2.3)).abs() < 1e-9);
        assert!((of(Dimension::Voice).expect("voice") - (1.25f64 / 8.0).sqrt()).abs() < 1e-9);
        assert!((r.score - 0.652).abs() < 1e-3 && r.significant, "{r:#?}");
    }
}
