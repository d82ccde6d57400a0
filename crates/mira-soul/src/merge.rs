//! Evolution: merging a capture's observation into the current identity, and the difference
//! between two versions.
//!
//! Levels: a running mean weighted by evidence. With `W` the evidence already accumulated for
//! a level (capped at [`PRIOR_CAP`], so that the identity keeps evolving) and `w` the weight of
//! the new measure, the level becomes `(old·W + new·w) / (W + w)` and its evidence `W + w`. A
//! level never observed (W = 0) takes the observed value outright.
//!
//! Traits: an observed trait below the confidence threshold is ignored. A new one is added
//! with the observed intensity and confidence. A known one is reinforced: evidence + 1,
//! intensity the evidence-weighted mean, confidence combined as independent evidence
//! `1 − (1 − c_old)(1 − c_new)`. A known trait not seen in a capture fades: its confidence is
//! multiplied by [`FADE`], and it leaves the identity when it falls below the threshold (it
//! stays in the earlier versions). (The reference appended duplicates at every capture and
//! overwrote every dimension with the latest text's values.)

use crate::extract::Observation;
use crate::model::{flag, Identity, Trait, LEVELS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Evidence weight beyond which the past stops growing heavier.
pub const PRIOR_CAP: f64 = 5.0;
/// Confidence kept by a known trait that a capture did not show.
pub const FADE: f64 = 0.95;
/// Most catch phrases (and openings, closings) kept.
pub const MAX_PHRASES: usize = 8;

/// Merges `obs` into `id` (in place). Traits with confidence below `min_confidence` are not
/// stored. Returns the names of the observed traits that were dropped for low confidence.
pub fn merge(id: &mut Identity, obs: &Observation, min_confidence: f64, now: i64) -> Vec<String> {
    for (key, m) in &obs.levels {
        let prior = id.evidence_of(key);
        let w = prior.min(PRIOR_CAP);
        if let Some(level) = id.level_mut(key) {
            *level = ((*level * w + m.value * m.weight) / (w + m.weight)).clamp(0.0, 1.0);
            id.evidence.insert(key.clone(), prior + m.weight);
        }
    }
    let mut dropped = Vec::new();
    let mut seen = Vec::new();
    for t in &obs.traits {
        if t.confidence < min_confidence {
            dropped.push(t.name.clone());
            continue;
        }
        seen.push(t.name.clone());
        match id.traits.iter_mut().find(|x| x.name == t.name) {
            Some(x) => {
                let n = x.evidence_count as f64;
                x.intensity = ((x.intensity * n + t.intensity) / (n + 1.0)).clamp(0.0, 1.0);
                x.confidence = 1.0 - (1.0 - x.confidence) * (1.0 - t.confidence);
                x.evidence_count += 1;
                x.last_observed = now;
                x.last_evidence = t.evidence.clone();
            }
            None => id.traits.push(Trait {
                name: t.name.clone(),
                category: t.category.clone(),
                intensity: t.intensity,
                confidence: t.confidence,
                evidence_count: 1,
                first_observed: now,
                last_observed: now,
                last_evidence: t.evidence.clone(),
            }),
        }
    }
    if !obs.is_empty() {
        for x in id.traits.iter_mut().filter(|x| !seen.contains(&x.name)) {
            x.confidence *= FADE;
        }
        id.traits.retain(|x| x.confidence >= min_confidence);
    }
    let seen_flag = |key: &str, id: &mut Identity| {
        *id.evidence.entry(key.to_owned()).or_insert(0.0) += 1.0;
    };
    if let Some(b) = obs.uses_emojis {
        id.voice.uses_emojis = b;
        seen_flag(flag::EMOJIS, id);
    }
    if let Some(b) = obs.uses_markdown {
        id.voice.uses_markdown = b;
    }
    if let Some(s) = &obs.sentence_structure {
        id.voice.sentence_structure = s.clone();
        seen_flag(flag::SENTENCE_STRUCTURE, id);
    }
    if let Some(a) = obs.avg_sentence_length {
        id.voice.avg_sentence_length = a;
    }
    if !obs.catch_phrases.is_empty() {
        seen_flag(flag::PHRASES, id);
    }
    let v = &mut id.voice;
    for p in &obs.catch_phrases {
        if !v.catch_phrases.contains(p) {
            v.catch_phrases.insert(0, p.clone());
        }
    }
    v.catch_phrases.truncate(MAX_PHRASES);
    if let Some(s) = &obs.structure_preference {
        id.communication.structure_preference = s.clone();
        seen_flag(flag::STRUCTURE, id);
    }
    if let Some(b) = obs.acknowledges_before_answering {
        id.communication.acknowledges_before_answering = b;
        seen_flag(flag::ACKNOWLEDGES, id);
    }
    if let Some(b) = obs.provides_alternatives {
        id.communication.provides_alternatives = b;
        seen_flag(flag::ALTERNATIVES, id);
    }
    if let Some(b) = obs.admits_mistakes {
        id.behaviour.admits_mistakes = b;
        seen_flag(flag::ADMITS_MISTAKES, id);
    }
    if let Some(s) = &obs.disagreement_style {
        id.behaviour.disagreement_style = s.clone();
        seen_flag(flag::DISAGREEMENT, id);
    }
    id.turns = id
        .turns
        .saturating_add(u32::try_from(obs.turns).unwrap_or(u32::MAX));
    if !obs.is_empty() {
        id.captures += 1;
    }
    id.refresh();
    dropped
}

/// A trait that changed between two versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraitChange {
    /// Trait name.
    pub name: String,
    /// Confidence before (None: absent).
    pub before: Option<f64>,
    /// Confidence after (None: absent).
    pub after: Option<f64>,
}

/// A level that moved by more than [`LEVEL_CHANGE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelChange {
    /// Level key.
    pub key: String,
    /// Value before.
    pub before: f64,
    /// Value after.
    pub after: f64,
}

/// Level moves below this are not reported as changes.
pub const LEVEL_CHANGE: f64 = 0.05;

/// What changed from one version to the next. Traits gained or lost and levels that moved
/// change the identity; a confidence that rose or fell only says how sure SOUL is of it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Diff {
    /// Traits that appeared.
    pub added: Vec<TraitChange>,
    /// Traits that disappeared.
    pub removed: Vec<TraitChange>,
    /// Traits whose confidence rose by more than 20 % (relative): more evidence, same identity.
    pub strengthened: Vec<TraitChange>,
    /// Traits whose confidence fell by more than 20 %: less evidence, same identity.
    pub weakened: Vec<TraitChange>,
    /// Levels that moved.
    pub levels: Vec<LevelChange>,
}

impl Diff {
    /// Whether the identity is the same: no trait gained or lost, no level moved (confidences
    /// may differ).
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.levels.is_empty()
    }
}

/// The difference from `from` to `to`.
pub fn diff(from: &Identity, to: &Identity) -> Diff {
    let mut d = Diff::default();
    for t in &to.traits {
        match from.trait_named(&t.name) {
            None => d.added.push(TraitChange {
                name: t.name.clone(),
                before: None,
                after: Some(t.confidence),
            }),
            Some(f) => {
                let change = TraitChange {
                    name: t.name.clone(),
                    before: Some(f.confidence),
                    after: Some(t.confidence),
                };
                if t.confidence > f.confidence * 1.2 {
                    d.strengthened.push(change);
                } else if t.confidence < f.confidence * 0.8 {
                    d.weakened.push(change);
                }
            }
        }
    }
    for f in &from.traits {
        if to.trait_named(&f.name).is_none() {
            d.removed.push(TraitChange {
                name: f.name.clone(),
                before: Some(f.confidence),
                after: None,
            });
        }
    }
    for key in LEVELS.iter().map(|l| l.key) {
        let (a, b) = (from.level(key), to.level(key));
        if let (Some(a), Some(b)) = (a, b) {
            if (a - b).abs() > LEVEL_CHANGE {
                d.levels.push(LevelChange {
                    key: key.to_owned(),
                    before: a,
                    after: b,
                });
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{Measure, ObservedTrait};

    fn obs(formality: f64, weight: f64, traits: &[(&str, f64)]) -> Observation {
        let mut o = Observation::default();
        o.levels.insert(
            "voice.formality_level".into(),
            Measure {
                value: formality,
                weight,
            },
        );
        o.traits = traits
            .iter()
            .map(|(n, c)| ObservedTrait {
                name: (*n).into(),
                category: "cognitive".into(),
                intensity: 0.8,
                confidence: *c,
                evidence: "e".into(),
                phrases: vec![],
            })
            .collect();
        o
    }

    #[test]
    fn first_observation_replaces_defaults_then_evidence_weighs() {
        let mut id = Identity::neutral("a", "m", 0);
        merge(&mut id, &obs(0.9, 1.0, &[]), 0.3, 1);
        assert!((id.voice.formality_level - 0.9).abs() < 1e-9);
        merge(&mut id, &obs(0.1, 1.0, &[]), 0.3, 2);
        assert!((id.voice.formality_level - 0.5).abs() < 1e-9);
        assert_eq!(id.evidence_of("voice.formality_level"), 2.0);
        assert_eq!(id.captures, 2);
    }

    #[test]
    fn traits_below_threshold_are_dropped_and_known_ones_reinforced() {
        let mut id = Identity::neutral("a", "m", 0);
        let dropped = merge(
            &mut id,
            &obs(0.5, 0.1, &[("analytical", 0.5), ("shy", 0.2)]),
            0.3,
            1,
        );
        assert_eq!(dropped, vec!["shy".to_owned()]);
        assert_eq!(id.traits.len(), 1);
        merge(&mut id, &obs(0.5, 0.1, &[("analytical", 0.5)]), 0.3, 2);
        let t = &id.traits[0];
        assert_eq!(t.evidence_count, 2);
        assert!((t.confidence - 0.75).abs() < 1e-9);
        // Not seen for a while: fades out.
        for i in 0..30 {
            merge(&mut id, &obs(0.5, 0.1, &[]), 0.3, 3 + i);
        }
        assert!(id.traits.is_empty());
    }

    #[test]
    fn diff_reports_changes() {
        let mut a = Identity::neutral("a", "m", 0);
        merge(
            &mut a,
            &obs(0.9, 1.0, &[("analytical", 0.4), ("old", 0.5)]),
            0.3,
            1,
        );
        let mut b = a.clone();
        merge(
            &mut b,
            &obs(0.1, 1.0, &[("analytical", 0.6), ("new", 0.5)]),
            0.3,
            2,
        );
        b.traits.retain(|t| t.name != "old");
        let d = diff(&a, &b);
        assert_eq!(d.added[0].name, "new");
        assert_eq!(d.removed[0].name, "old");
        assert_eq!(d.strengthened[0].name, "analytical");
        assert_eq!(d.levels[0].key, "voice.formality_level");
    }
}
