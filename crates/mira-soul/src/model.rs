//! The identity model: who the agent is, as one versioned snapshot per change.
//!
//! A snapshot ([`Identity`]) has six dimensions: personality [`Trait`]s, the [`Voice`], the
//! [`Communication`] style, the [`Values`], the [`Behaviour`] and the [`Emotion`]al tone.
//! Their numeric levels (all in [0, 1]) are addressed by a flat key such as
//! `voice.formality_level` (see [`LEVELS`]); together they form the identity vector that
//! drift is measured on. Each level also carries the evidence weight accumulated for it
//! ([`Identity::evidence`]), so that a merge can weigh what was observed against what is known.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The dimensions of an identity.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    /// Personality traits (a set, compared as a weighted set).
    Traits,
    /// How the agent speaks: formality, humour, empathy, technical depth …
    Voice,
    /// How it structures answers: length, questions, lists.
    Communication,
    /// What it prioritises: accuracy, helpfulness, efficiency …
    Values,
    /// Behavioural patterns: curiosity, handling of mistakes and disagreement.
    Behaviour,
    /// Emotional tone: warmth, calm, enthusiasm, playfulness …
    Emotion,
}

impl Dimension {
    /// Every dimension, in report order.
    pub const ALL: [Dimension; 6] = [
        Dimension::Voice,
        Dimension::Traits,
        Dimension::Communication,
        Dimension::Values,
        Dimension::Behaviour,
        Dimension::Emotion,
    ];

    /// The name used in reports and keys (`voice`, `traits` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Traits => "traits",
            Dimension::Voice => "voice",
            Dimension::Communication => "communication",
            Dimension::Values => "values",
            Dimension::Behaviour => "behaviour",
            Dimension::Emotion => "emotion",
        }
    }
}

/// How a level is measured, which says what each of its ends means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Both ends are shown by markers (formal vs casual words, direct vs hedging phrases,
    /// long vs short answers).
    Bipolar,
    /// A rate of markers (jokes, emojis, questions …): the high end is shown by them, the
    /// low end is only their absence.
    Presence,
    /// A priority (values): measured only when mentioned, so only its high end is shown.
    Priority,
}

/// One numeric level of an identity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// Its key, `<dimension>.<field>`.
    pub key: &'static str,
    /// Its dimension.
    pub dimension: Dimension,
    /// Its value before anything was observed (the reference's defaults).
    pub default: f64,
    /// What its ends mean.
    pub scale: Scale,
}

const fn level(key: &'static str, dimension: Dimension, default: f64, scale: Scale) -> Level {
    Level {
        key,
        dimension,
        default,
        scale,
    }
}

/// Every numeric level of an identity.
#[rustfmt::skip]
pub const LEVELS: &[Level] = &[
    level("voice.formality_level", Dimension::Voice, 0.5, Scale::Bipolar),
    level("voice.humor_level", Dimension::Voice, 0.3, Scale::Presence),
    level("voice.empathy_level", Dimension::Voice, 0.6, Scale::Presence),
    level("voice.technical_depth", Dimension::Voice, 0.5, Scale::Presence),
    level("voice.enthusiasm_level", Dimension::Voice, 0.5, Scale::Presence),
    level("voice.directness_level", Dimension::Voice, 0.6, Scale::Bipolar),
    level("voice.vocabulary_richness", Dimension::Voice, 0.6, Scale::Bipolar),
    level("voice.metaphor_usage", Dimension::Voice, 0.3, Scale::Presence),
    level("communication.length_level", Dimension::Communication, 0.5, Scale::Bipolar),
    level("communication.question_rate", Dimension::Communication, 0.3, Scale::Presence),
    level("communication.list_usage", Dimension::Communication, 0.3, Scale::Presence),
    level("values.accuracy", Dimension::Values, 0.7, Scale::Priority),
    level("values.helpfulness", Dimension::Values, 0.8, Scale::Priority),
    level("values.efficiency", Dimension::Values, 0.6, Scale::Priority),
    level("values.clarity", Dimension::Values, 0.7, Scale::Priority),
    level("values.safety", Dimension::Values, 0.7, Scale::Priority),
    level("values.creativity", Dimension::Values, 0.5, Scale::Priority),
    level("behaviour.curiosity_level", Dimension::Behaviour, 0.7, Scale::Presence),
    level("behaviour.persistence_level", Dimension::Behaviour, 0.8, Scale::Presence),
    level("behaviour.self_correction", Dimension::Behaviour, 0.5, Scale::Presence),
    level("emotion.warmth", Dimension::Emotion, 0.7, Scale::Presence),
    level("emotion.calmness", Dimension::Emotion, 0.7, Scale::Bipolar),
    level("emotion.enthusiasm", Dimension::Emotion, 0.5, Scale::Presence),
    level("emotion.seriousness", Dimension::Emotion, 0.5, Scale::Bipolar),
    level("emotion.playfulness", Dimension::Emotion, 0.3, Scale::Presence),
    level("emotion.encouragement_level", Dimension::Emotion, 0.7, Scale::Presence),
];

/// The level of that key, if it is one.
pub fn level_info(key: &str) -> Option<&'static Level> {
    LEVELS.iter().find(|l| l.key == key)
}

/// The dimension of a level key, if it is one.
pub fn level_dimension(key: &str) -> Option<Dimension> {
    level_info(key).map(|l| l.dimension)
}

/// The keys under which the style flags (not numeric levels) record their evidence and edits.
pub mod flag {
    /// `voice.uses_emojis`.
    pub const EMOJIS: &str = "voice.uses_emojis";
    /// `voice.sentence_structure`.
    pub const SENTENCE_STRUCTURE: &str = "voice.sentence_structure";
    /// `voice.explanation_style`.
    pub const EXPLANATION_STYLE: &str = "voice.explanation_style";
    /// `voice.catch_phrases` (and openings, closings).
    pub const PHRASES: &str = "voice.catch_phrases";
    /// `communication.structure_preference`.
    pub const STRUCTURE: &str = "communication.structure_preference";
    /// `communication.acknowledges_before_answering`.
    pub const ACKNOWLEDGES: &str = "communication.acknowledges_before_answering";
    /// `communication.provides_alternatives`.
    pub const ALTERNATIVES: &str = "communication.provides_alternatives";
    /// `behaviour.admits_mistakes`.
    pub const ADMITS_MISTAKES: &str = "behaviour.admits_mistakes";
    /// `behaviour.disagreement_style`.
    pub const DISAGREEMENT: &str = "behaviour.disagreement_style";
}

/// Agent turns an identity must have been captured from before the mere absence of a marker
/// (no joke, no emoji, no list …) is stated as part of it ("You rarely joke"). An edit that
/// sets the level states it at once.
pub const MIN_ABSENCE_TURNS: u32 = 6;

/// Distance from the midpoint 0.5 at which a level counts fully as high (direction +1) or
/// low (−1).
pub const DIRECTION_SPAN: f64 = 0.3;

/// Trait categories.
pub const CATEGORIES: &[&str] = &[
    "cognitive",
    "emotional",
    "social",
    "epistemic",
    "expressive",
    "ethical",
];

/// Sentence structures.
pub const SENTENCE_STRUCTURES: &[&str] = &["concise", "elaborate", "balanced", "punchy", "flowing"];
/// Explanation styles.
pub const EXPLANATION_STYLES: &[&str] = &[
    "analogy",
    "step_by_step",
    "big_picture",
    "example_driven",
    "socratic",
];
/// Response lengths, shortest first (their position maps onto `communication.length_level`).
pub const RESPONSE_LENGTHS: &[&str] = &["terse", "concise", "moderate", "detailed", "exhaustive"];
/// Structure preferences.
pub const STRUCTURES: &[&str] = &["freeform", "bulleted", "numbered", "sectioned", "mixed"];

/// One personality trait.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Trait {
    /// Its name, lower case (`analytical`, `empathetic` …).
    pub name: String,
    /// One of [`CATEGORIES`].
    pub category: String,
    /// How strongly it shows, in [0, 1].
    pub intensity: f64,
    /// How sure we are that the agent has it, in [0, 1].
    pub confidence: f64,
    /// Number of captures (or edits) that showed it.
    pub evidence_count: u32,
    /// When it was first seen (unix ms).
    pub first_observed: i64,
    /// When it was last seen (unix ms).
    pub last_observed: i64,
    /// The latest sentence (or edit reason) that showed it.
    pub last_evidence: String,
}

impl Trait {
    /// How characteristic it is: intensity × confidence.
    pub fn strength(&self) -> f64 {
        self.intensity * self.confidence
    }

    /// Whether it is well established: confidence > 0.7 and seen at least
    /// `min_observations` times.
    pub fn established(&self, min_observations: u32) -> bool {
        self.confidence > 0.7 && self.evidence_count >= min_observations
    }

    /// `You are <adverb> <name> (confidence NN%)`.
    pub fn describe(&self) -> String {
        format!(
            "You are {} {} (confidence {:.0}%).",
            adverb(self.intensity),
            self.name.replace('_', " "),
            self.confidence * 100.0
        )
    }
}

/// "strongly", "noticeably", "moderately", "somewhat" or "slightly", by intensity.
pub fn adverb(intensity: f64) -> &'static str {
    if intensity > 0.9 {
        "strongly"
    } else if intensity > 0.7 {
        "noticeably"
    } else if intensity > 0.5 {
        "moderately"
    } else if intensity > 0.3 {
        "somewhat"
    } else {
        "slightly"
    }
}

/// How the agent speaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Voice {
    /// Formal (1) … casual (0).
    pub formality_level: f64,
    /// Humour and wit.
    pub humor_level: f64,
    /// Empathy and validation.
    pub empathy_level: f64,
    /// Technical depth.
    pub technical_depth: f64,
    /// Enthusiasm.
    pub enthusiasm_level: f64,
    /// Directness (1) … hedging (0).
    pub directness_level: f64,
    /// Vocabulary richness.
    pub vocabulary_richness: f64,
    /// Use of metaphors and analogies.
    pub metaphor_usage: f64,
    /// One of [`SENTENCE_STRUCTURES`].
    pub sentence_structure: String,
    /// One of [`EXPLANATION_STYLES`].
    pub explanation_style: String,
    /// Whether it uses emojis.
    pub uses_emojis: bool,
    /// Whether it uses Markdown.
    pub uses_markdown: bool,
    /// Expressions it often uses.
    pub catch_phrases: Vec<String>,
    /// How it likes to open an answer.
    pub preferred_openings: Vec<String>,
    /// How it likes to close an answer.
    pub preferred_closings: Vec<String>,
    /// Mean words per sentence.
    pub avg_sentence_length: f64,
}

impl Default for Voice {
    fn default() -> Self {
        Voice {
            formality_level: 0.5,
            humor_level: 0.3,
            empathy_level: 0.6,
            technical_depth: 0.5,
            enthusiasm_level: 0.5,
            directness_level: 0.6,
            vocabulary_richness: 0.6,
            metaphor_usage: 0.3,
            sentence_structure: "balanced".into(),
            explanation_style: "step_by_step".into(),
            uses_emojis: false,
            uses_markdown: true,
            catch_phrases: vec![],
            preferred_openings: vec![],
            preferred_closings: vec![],
            avg_sentence_length: 15.0,
        }
    }
}

/// How the agent structures its answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Communication {
    /// Answer length: 0 terse … 1 exhaustive (see [`RESPONSE_LENGTHS`]).
    pub length_level: f64,
    /// Share of sentences that are questions (scaled to [0, 1]).
    pub question_rate: f64,
    /// Share of lines that are list items (scaled to [0, 1]).
    pub list_usage: f64,
    /// One of [`RESPONSE_LENGTHS`] (follows `length_level` unless set explicitly).
    pub response_length: String,
    /// One of [`STRUCTURES`].
    pub structure_preference: String,
    /// Whether it acknowledges what was said before answering.
    pub acknowledges_before_answering: bool,
    /// Whether it offers alternatives.
    pub provides_alternatives: bool,
}

impl Default for Communication {
    fn default() -> Self {
        Communication {
            length_level: 0.5,
            question_rate: 0.3,
            list_usage: 0.3,
            response_length: "moderate".into(),
            structure_preference: "mixed".into(),
            acknowledges_before_answering: false,
            provides_alternatives: false,
        }
    }
}

/// What the agent prioritises.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Values {
    /// Accuracy.
    pub accuracy: f64,
    /// Helpfulness.
    pub helpfulness: f64,
    /// Efficiency.
    pub efficiency: f64,
    /// Clarity.
    pub clarity: f64,
    /// Safety.
    pub safety: f64,
    /// Creativity.
    pub creativity: f64,
}

impl Default for Values {
    fn default() -> Self {
        Values {
            accuracy: 0.7,
            helpfulness: 0.8,
            efficiency: 0.6,
            clarity: 0.7,
            safety: 0.7,
            creativity: 0.5,
        }
    }
}

/// Behavioural patterns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Behaviour {
    /// Curiosity (questions asked, exploration).
    pub curiosity_level: f64,
    /// Persistence on hard problems.
    pub persistence_level: f64,
    /// How often it corrects or refines itself.
    pub self_correction: f64,
    /// Whether it acknowledges its mistakes.
    pub admits_mistakes: bool,
    /// How it disagrees: direct, polite, socratic or avoidant.
    pub disagreement_style: String,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            curiosity_level: 0.7,
            persistence_level: 0.8,
            self_correction: 0.5,
            admits_mistakes: true,
            disagreement_style: "polite".into(),
        }
    }
}

/// Emotional tone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Emotion {
    /// Warmth.
    pub warmth: f64,
    /// Calm.
    pub calmness: f64,
    /// Enthusiasm.
    pub enthusiasm: f64,
    /// Seriousness.
    pub seriousness: f64,
    /// Playfulness.
    pub playfulness: f64,
    /// Encouragement.
    pub encouragement_level: f64,
}

impl Default for Emotion {
    fn default() -> Self {
        Emotion {
            warmth: 0.7,
            calmness: 0.7,
            enthusiasm: 0.5,
            seriousness: 0.5,
            playfulness: 0.3,
            encouragement_level: 0.7,
        }
    }
}

/// The level keys of [`LEVELS`] and the fields they address.
macro_rules! level_fields {
    ($id:expr, $key:expr, $($r:tt)+) => {{
        let id = $id;
        Some(match $key {
            "voice.formality_level" => $($r)+ id.voice.formality_level,
            "voice.humor_level" => $($r)+ id.voice.humor_level,
            "voice.empathy_level" => $($r)+ id.voice.empathy_level,
            "voice.technical_depth" => $($r)+ id.voice.technical_depth,
            "voice.enthusiasm_level" => $($r)+ id.voice.enthusiasm_level,
            "voice.directness_level" => $($r)+ id.voice.directness_level,
            "voice.vocabulary_richness" => $($r)+ id.voice.vocabulary_richness,
            "voice.metaphor_usage" => $($r)+ id.voice.metaphor_usage,
            "communication.length_level" => $($r)+ id.communication.length_level,
            "communication.question_rate" => $($r)+ id.communication.question_rate,
            "communication.list_usage" => $($r)+ id.communication.list_usage,
            "values.accuracy" => $($r)+ id.values.accuracy,
            "values.helpfulness" => $($r)+ id.values.helpfulness,
            "values.efficiency" => $($r)+ id.values.efficiency,
            "values.clarity" => $($r)+ id.values.clarity,
            "values.safety" => $($r)+ id.values.safety,
            "values.creativity" => $($r)+ id.values.creativity,
            "behaviour.curiosity_level" => $($r)+ id.behaviour.curiosity_level,
            "behaviour.persistence_level" => $($r)+ id.behaviour.persistence_level,
            "behaviour.self_correction" => $($r)+ id.behaviour.self_correction,
            "emotion.warmth" => $($r)+ id.emotion.warmth,
            "emotion.calmness" => $($r)+ id.emotion.calmness,
            "emotion.enthusiasm" => $($r)+ id.emotion.enthusiasm,
            "emotion.seriousness" => $($r)+ id.emotion.seriousness,
            "emotion.playfulness" => $($r)+ id.emotion.playfulness,
            "emotion.encouragement_level" => $($r)+ id.emotion.encouragement_level,
            _ => return None,
        })
    }};
}

/// One version of an agent's identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Identity {
    /// Unique id (UUID).
    pub id: String,
    /// The agent.
    pub agent_id: String,
    /// 1 for the first version, then +1 per change (the reference never went past 2).
    pub version: i64,
    /// When this version was made (unix ms).
    pub created_at: i64,
    /// The version it was derived from.
    pub parent_id: Option<String>,
    /// The model the agent ran on when this version was made.
    pub model_id: String,
    /// Why this version exists ("capture", "model swap …", the directive or patch reason).
    pub reason: String,
    /// Personality traits, strongest first.
    pub traits: Vec<Trait>,
    /// Voice.
    pub voice: Voice,
    /// Communication style.
    pub communication: Communication,
    /// Values.
    pub values: Values,
    /// Behaviour.
    pub behaviour: Behaviour,
    /// Emotional tone.
    pub emotion: Emotion,
    /// Mean confidence of the traits (0 without traits).
    pub confidence: f64,
    /// Number of captures merged into it.
    pub captures: u32,
    /// Evidence weight accumulated per level key and per [`flag`] key (absent: never
    /// observed, still the default).
    pub evidence: BTreeMap<String, f64>,
    /// Agent turns read by the captures merged into it.
    #[serde(default)]
    pub turns: u32,
    /// Level and [`flag`] keys set by an edit (`soul_update`, `soul_patch`): stated by the
    /// user, not inferred.
    #[serde(default)]
    pub stated: BTreeSet<String>,
    /// The latest behavioural metrics given with a capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavioral_metrics: Option<serde_json::Value>,
}

impl Identity {
    /// A neutral identity (every level at its default, no trait), not yet stored: version 0.
    pub fn neutral(agent_id: &str, model_id: &str, now: i64) -> Identity {
        Identity {
            id: String::new(),
            agent_id: agent_id.to_owned(),
            version: 0,
            created_at: now,
            parent_id: None,
            model_id: model_id.to_owned(),
            reason: String::new(),
            traits: vec![],
            voice: Voice::default(),
            communication: Communication::default(),
            values: Values::default(),
            behaviour: Behaviour::default(),
            emotion: Emotion::default(),
            confidence: 0.0,
            captures: 0,
            evidence: BTreeMap::new(),
            turns: 0,
            stated: BTreeSet::new(),
            behavioral_metrics: None,
        }
    }

    /// The next version of this identity: a copy with a new id, version + 1, this one as
    /// parent, and the given model, reason and time.
    pub fn derive(&self, model_id: &str, reason: &str, now: i64) -> Identity {
        let mut next = self.clone();
        next.id = uuid::Uuid::new_v4().to_string();
        next.version = self.version + 1;
        next.parent_id = (!self.id.is_empty()).then(|| self.id.clone());
        next.model_id = model_id.to_owned();
        next.reason = reason.to_owned();
        next.created_at = now;
        next
    }

    /// The value of a level (see [`LEVELS`]).
    pub fn level(&self, key: &str) -> Option<f64> {
        level_fields!(self, key, &).copied()
    }

    /// The value of a level, to change it.
    pub fn level_mut(&mut self, key: &str) -> Option<&mut f64> {
        level_fields!(self, key, &mut)
    }

    /// Sets a level, clamped to [0, 1]; false for an unknown key.
    pub fn set_level(&mut self, key: &str, value: f64) -> bool {
        match self.level_mut(key) {
            Some(v) => {
                *v = value.clamp(0.0, 1.0);
                true
            }
            None => false,
        }
    }

    /// The evidence weight of a level (0 when never observed).
    pub fn evidence_of(&self, key: &str) -> f64 {
        self.evidence.get(key).copied().unwrap_or(0.0)
    }

    /// Whether a level or [`flag`] key was observed by a capture or set by an edit.
    pub fn observed(&self, key: &str) -> bool {
        self.evidence_of(key) > 0.0 || self.stated.contains(key)
    }

    /// Whether the absence of what `key` measures may be stated: enough agent turns were
    /// captured ([`MIN_ABSENCE_TURNS`]), or an edit set it.
    pub fn absence_known(&self, key: &str) -> bool {
        self.turns >= MIN_ABSENCE_TURNS || self.stated.contains(key)
    }

    /// Where a level points, in [−1, 1]: `(value − 0.5) / DIRECTION_SPAN`, clamped; 0 when it
    /// was never observed nor set (a default says nothing about the agent), and never below 0
    /// for a priority (a value is only measured when mentioned).
    pub fn direction(&self, key: &str) -> f64 {
        let (Some(info), Some(v)) = (level_info(key), self.level(key)) else {
            return 0.0;
        };
        if !self.observed(key) {
            return 0.0;
        }
        let d = ((v - 0.5) / DIRECTION_SPAN).clamp(-1.0, 1.0);
        match info.scale {
            Scale::Priority => d.max(0.0),
            _ => d,
        }
    }

    /// Recomputes the confidence (mean trait confidence) and orders the traits strongest first.
    pub fn refresh(&mut self) {
        self.traits.sort_by(|a, b| {
            b.strength()
                .total_cmp(&a.strength())
                .then_with(|| a.name.cmp(&b.name))
        });
        self.confidence = if self.traits.is_empty() {
            0.0
        } else {
            self.traits.iter().map(|t| t.confidence).sum::<f64>() / self.traits.len() as f64
        };
        let len = RESPONSE_LENGTHS.len() - 1;
        let at = (self.communication.length_level * len as f64).round() as usize;
        self.communication.response_length = RESPONSE_LENGTHS[at.min(len)].to_owned();
    }

    /// The trait of that name.
    pub fn trait_named(&self, name: &str) -> Option<&Trait> {
        self.traits.iter().find(|t| t.name == name)
    }

    /// The values, highest first (ties in a fixed order).
    pub fn top_values(&self) -> Vec<(&'static str, f64)> {
        let v = &self.values;
        let mut all = vec![
            ("accuracy", v.accuracy),
            ("helpfulness", v.helpfulness),
            ("efficiency", v.efficiency),
            ("clarity", v.clarity),
            ("safety", v.safety),
            ("creativity", v.creativity),
        ];
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_key_resolves_and_defaults_match() {
        let id = Identity::neutral("a", "m", 0);
        for l in LEVELS {
            assert_eq!(id.level(l.key), Some(l.default), "{}", l.key);
            assert_eq!(id.direction(l.key), 0.0, "a default points nowhere");
        }
        assert_eq!(id.level("voice.nope"), None);
        assert_eq!(level_dimension("emotion.warmth"), Some(Dimension::Emotion));
    }

    #[test]
    fn derive_increments_the_version_every_time() {
        let mut id = Identity::neutral("a", "m", 0);
        id.id = "root".into();
        id.version = 1;
        let v2 = id.derive("m", "capture", 1);
        let v3 = v2.derive("m2", "capture", 2);
        assert_eq!((v2.version, v3.version), (2, 3));
        assert_eq!(v3.parent_id.as_deref(), Some(v2.id.as_str()));
        assert_eq!(v3.model_id, "m2");
    }

    #[test]
    fn refresh_orders_traits_and_sets_confidence() {
        let t = |name: &str, i: f64, c: f64| Trait {
            name: name.into(),
            category: "cognitive".into(),
            intensity: i,
            confidence: c,
            evidence_count: 1,
            first_observed: 0,
            last_observed: 0,
            last_evidence: String::new(),
        };
        let mut id = Identity::neutral("a", "m", 0);
        id.traits = vec![t("weak", 0.2, 0.4), t("strong", 0.9, 0.8)];
        id.communication.length_level = 0.0;
        id.refresh();
        assert_eq!(id.traits[0].name, "strong");
        assert!((id.confidence - 0.6).abs() < 1e-9);
        assert_eq!(id.communication.response_length, "terse");
        assert_eq!(
            id.traits[0].describe(),
            "You are noticeably strong (confidence 80%)."
        );
    }
}
