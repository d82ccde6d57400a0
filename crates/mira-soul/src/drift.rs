//! Drift: how far apart two identities are, dimension by dimension.
//!
//! **Metric.** For each level dimension (voice, communication, values, behaviour, emotion) the
//! distance is the normalised Euclidean distance between the two level vectors,
//! `‖a − b‖₂ / √n`, in [0, 1]. (The reference's mean absolute difference lets one strong
//! shift — a formal voice turning casual — be averaged away by seven stable levels.) For the
//! traits the distance is the weighted Jaccard distance over trait strengths
//! (intensity × confidence): `1 − Σ min(a, b) / Σ max(a, b)` over the union of names; 1 when
//! only one side has traits. When comparing what was *observed* (two models' captures), a
//! level counts only if both sides observed it, and a dimension with no such level (or no
//! trait on either side) is left out.
//!
//! **Score and significance.** The drift score is the largest per-dimension distance, so a
//! drift of the voice alone is enough to be reported; the mean over the dimensions is given
//! too. A dimension (and the identity) has drifted when its distance exceeds
//! `soul.drift_detection.threshold` (default 0.3). (The reference's `soul_drift` averaged
//! stored trait-only diffs against a hard-coded 0.3 and ignored the configured threshold.)

use crate::model::{Dimension, Identity, LEVELS};
use serde::{Deserialize, Serialize};

/// The drift of one dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    for (key, d, _) in LEVELS {
        if *d != dim {
            continue;
        }
        if observed_only && (a.evidence_of(key) <= 0.0 || b.evidence_of(key) <= 0.0) {
            continue;
        }
        let (x, y) = (a.level(key)?, b.level(key)?);
        sq += (x - y) * (x - y);
        n += 1;
        if (x - y).abs() >= 0.1 {
            let name = key.split_once('.').map_or(*key, |(_, k)| k);
            moves.push(((x - y).abs(), format!("{name} {x:.2} → {y:.2}")));
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
        let x = a.trait_named(name).map_or(0.0, |t| t.strength());
        let y = b.trait_named(name).map_or(0.0, |t| t.strength());
        min += f64::min(x, y);
        max += f64::max(x, y);
        let label = match (x > 0.0, y > 0.0) {
            (true, false) => format!("{name} lost"),
            (false, true) => format!("{name} gained"),
            _ => format!("{name} {x:.2} → {y:.2}"),
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

    fn profile(text: &str) -> Identity {
        let mut id = Identity::neutral("a", "m", 0);
        merge(&mut id, &extract(text), 0.3, 1);
        id
    }

    #[test]
    fn identical_identities_do_not_drift() {
        let a = profile("Certainly. I would recommend that we analyze the schema. Therefore, the index must change.");
        let r = compare(&a, &a, 0.3, true);
        assert_eq!(r.score, 0.0);
        assert!(!r.significant && r.recommendations.is_empty());
    }

    #[test]
    fn a_voice_shift_alone_is_significant() {
        let a = Identity::neutral("a", "m", 0);
        let mut b = a.clone();
        b.voice.formality_level = 0.95;
        b.voice.humor_level = 0.9;
        b.voice.enthusiasm_level = 1.0;
        let r = compare(&a, &b, 0.3, false);
        let voice = &r.dimensions[0];
        assert_eq!(voice.dimension, Dimension::Voice);
        assert!(voice.significant && voice.distance > 0.3, "{voice:?}");
        assert!(r.significant && r.mean < r.score);
        assert!(
            voice.details[0].starts_with("humor_level"),
            "{:?}",
            voice.details
        );
        // A higher threshold from the config changes the verdict.
        assert!(!compare(&a, &b, 0.5, false).significant);
    }

    #[test]
    fn trait_sets_use_weighted_jaccard() {
        let mut a = Identity::neutral("a", "m", 0);
        let mut b = a.clone();
        let t = |name: &str| crate::model::Trait {
            name: name.into(),
            category: "social".into(),
            intensity: 1.0,
            confidence: 1.0,
            evidence_count: 1,
            first_observed: 0,
            last_observed: 0,
            last_evidence: String::new(),
        };
        a.traits = vec![t("x"), t("y")];
        b.traits = vec![t("y"), t("z")];
        let (d, _) = traits_distance(&a, &b).expect("traits");
        assert!((d - (1.0 - 1.0 / 3.0)).abs() < 1e-9);
        b.traits.clear();
        assert_eq!(traits_distance(&a, &b).map(|x| x.0), Some(1.0));
    }
}
