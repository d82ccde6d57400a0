//! Explicit edits (`soul_patch`) and natural-language directives (`soul_update`).
//!
//! A [`Patch`] lists the fields to set; [`Patch::validate`] rejects out-of-range levels and
//! unknown enumeration values (the reference clamped and accepted anything); [`apply`] writes
//! them into a new version and describes each change. An edited level gets at least
//! [`EDIT_EVIDENCE`] of evidence, so that a single later capture does not undo it.
//!
//! [`parse_directive`] turns an instruction in English or French ("be more concise", "stop
//! using emojis", "sois plus formel") into a patch. It splits the directive into clauses, finds
//! whole words (not substrings: the reference's "fun" matched "function" and "direct" matched
//! "indirect"), and reads a negation or "less"/"moins" in the clause as the opposite change.

use crate::model::{
    flag, Identity, Trait, CATEGORIES, EXPLANATION_STYLES, RESPONSE_LENGTHS, SENTENCE_STRUCTURES,
    STRUCTURES,
};
use crate::SoulError;
use mira_core::message::Term;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

/// Evidence given to a level set by an edit.
pub const EDIT_EVIDENCE: f64 = 2.0;
/// Confidence of a trait added by an edit without one.
pub const EDIT_TRAIT_CONFIDENCE: f64 = 0.7;

/// The actions of a trait edit.
pub const TRAIT_ACTIONS: &[&str] = &["upsert", "add", "remove"];

/// A trait edit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraitEdit {
    /// Trait name, e.g. "curious" (1 to 64 characters).
    pub name: String,
    /// Category (default `expressive`).
    #[serde(default)]
    #[schemars(schema_with = "category_schema")]
    pub category: Option<String>,
    /// Intensity in [0, 1] (default 0.7).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub intensity: Option<f64>,
    /// Confidence in [0, 1] (default 0.7).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub confidence: Option<f64>,
    /// `upsert` (default, also `add`) or `remove`.
    #[serde(default)]
    #[schemars(schema_with = "action_schema")]
    pub action: Option<String>,
}

/// An explicit edit of an identity: every field is optional; levels are numbers from 0 to 1.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    /// Voice: how enthusiastic the agent sounds, 0 (flat) to 1 (very).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub enthusiasm_level: Option<f64>,
    /// Voice: 0 (very casual) to 1 (highly formal).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub formality_level: Option<f64>,
    /// Voice: how often it uses humour, 0 (never) to 1 (constantly).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub humor_level: Option<f64>,
    /// Voice: how empathetic and validating, 0 to 1.
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub empathy_level: Option<f64>,
    /// Voice: how technical its explanations are, 0 (lay) to 1 (expert).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub technical_depth: Option<f64>,
    /// Voice: 0 (gentle, indirect) to 1 (blunt, straightforward).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub directness_level: Option<f64>,
    /// Voice: 0 (plain words) to 1 (rich vocabulary).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub vocabulary_richness: Option<f64>,
    /// Voice: how often it explains with metaphors, 0 to 1.
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub metaphor_usage: Option<f64>,
    /// Emotional tone: warmth, 0 (cold) to 1 (very warm).
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub warmth: Option<f64>,
    /// Emotional tone: enthusiasm (`emotion.enthusiasm`), 0 to 1.
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub emotion_enthusiasm: Option<f64>,
    /// Emotional tone: playfulness, 0 to 1.
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub playfulness: Option<f64>,
    /// Emotional tone: seriousness, 0 to 1.
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub seriousness: Option<f64>,
    /// Emotional tone: how encouraging, 0 to 1.
    #[serde(default)]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub encouragement_level: Option<f64>,
    /// Whether the agent uses emojis.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub uses_emojis: Option<bool>,
    /// Whether the agent formats answers with Markdown.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub uses_markdown: Option<bool>,
    /// Sentence structure: concise, elaborate, balanced, punchy or flowing.
    #[serde(default)]
    #[schemars(schema_with = "sentence_structure_schema")]
    pub sentence_structure: Option<String>,
    /// Explanation style: analogy, step_by_step, big_picture, example_driven or socratic.
    #[serde(default)]
    #[schemars(schema_with = "explanation_style_schema")]
    pub explanation_style: Option<String>,
    /// Response length: terse, concise, moderate, detailed or exhaustive.
    #[serde(default)]
    #[schemars(schema_with = "response_length_schema")]
    pub response_length: Option<String>,
    /// Structure of answers: freeform, bulleted, numbered, sectioned or mixed.
    #[serde(default)]
    #[schemars(schema_with = "structure_schema")]
    pub structure_preference: Option<String>,
    /// Catch phrases to add (each 1 to 200 characters).
    #[serde(default)]
    pub add_catch_phrases: Vec<String>,
    /// Catch phrases to remove.
    #[serde(default)]
    pub remove_catch_phrases: Vec<String>,
    /// Preferred openings to add, e.g. "Good question!".
    #[serde(default)]
    pub add_preferred_openings: Vec<String>,
    /// Preferred openings to remove.
    #[serde(default)]
    pub remove_preferred_openings: Vec<String>,
    /// Preferred closings to add, e.g. "Hope this helps.".
    #[serde(default)]
    pub add_preferred_closings: Vec<String>,
    /// Preferred closings to remove.
    #[serde(default)]
    pub remove_preferred_closings: Vec<String>,
    /// Trait edits: `{name, category, intensity, confidence, action}` each, action `upsert`
    /// (default) or `remove`.
    #[serde(default)]
    pub traits: Vec<TraitEdit>,
}

fn one_of(values: &[&str]) -> Schema {
    json_schema!({ "type": "string", "enum": values })
}

fn category_schema(_: &mut SchemaGenerator) -> Schema {
    one_of(CATEGORIES)
}

fn action_schema(_: &mut SchemaGenerator) -> Schema {
    one_of(TRAIT_ACTIONS)
}

fn sentence_structure_schema(_: &mut SchemaGenerator) -> Schema {
    one_of(SENTENCE_STRUCTURES)
}

fn explanation_style_schema(_: &mut SchemaGenerator) -> Schema {
    one_of(EXPLANATION_STYLES)
}

fn response_length_schema(_: &mut SchemaGenerator) -> Schema {
    one_of(RESPONSE_LENGTHS)
}

fn structure_schema(_: &mut SchemaGenerator) -> Schema {
    one_of(STRUCTURES)
}

impl Patch {
    /// The level fields: (patch name, level key, value).
    fn levels(&self) -> [(&'static str, &'static str, Option<f64>); 13] {
        [
            (
                "enthusiasm_level",
                "voice.enthusiasm_level",
                self.enthusiasm_level,
            ),
            (
                "formality_level",
                "voice.formality_level",
                self.formality_level,
            ),
            ("humor_level", "voice.humor_level", self.humor_level),
            ("empathy_level", "voice.empathy_level", self.empathy_level),
            (
                "technical_depth",
                "voice.technical_depth",
                self.technical_depth,
            ),
            (
                "directness_level",
                "voice.directness_level",
                self.directness_level,
            ),
            (
                "vocabulary_richness",
                "voice.vocabulary_richness",
                self.vocabulary_richness,
            ),
            (
                "metaphor_usage",
                "voice.metaphor_usage",
                self.metaphor_usage,
            ),
            ("warmth", "emotion.warmth", self.warmth),
            (
                "emotion_enthusiasm",
                "emotion.enthusiasm",
                self.emotion_enthusiasm,
            ),
            ("playfulness", "emotion.playfulness", self.playfulness),
            ("seriousness", "emotion.seriousness", self.seriousness),
            (
                "encouragement_level",
                "emotion.encouragement_level",
                self.encouragement_level,
            ),
        ]
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self == &Patch::default()
    }

    /// Checks ranges, enumerations and names; the error says what to send instead.
    pub fn validate(&self) -> Result<(), SoulError> {
        for (name, _, v) in self.levels() {
            if let Some(v) = v {
                if !(0.0..=1.0).contains(&v) || !v.is_finite() {
                    return Err(SoulError::Invalid(
                        format!("{name} {v} is out of range: give a number from 0 to 1").into(),
                    ));
                }
            }
        }
        let one_of = |name: &str, v: &Option<String>, allowed: &[&str]| match v {
            Some(x) if !allowed.contains(&x.as_str()) => Err(SoulError::Invalid(
                format!(
                    "{name} '{x}' is not valid: give one of {}",
                    allowed.join(", ")
                )
                .into(),
            )),
            _ => Ok(()),
        };
        one_of(
            "sentence_structure",
            &self.sentence_structure,
            SENTENCE_STRUCTURES,
        )?;
        one_of(
            "explanation_style",
            &self.explanation_style,
            EXPLANATION_STYLES,
        )?;
        one_of("response_length", &self.response_length, RESPONSE_LENGTHS)?;
        one_of(
            "structure_preference",
            &self.structure_preference,
            STRUCTURES,
        )?;
        for (name, list) in [
            ("add_catch_phrases", &self.add_catch_phrases),
            ("remove_catch_phrases", &self.remove_catch_phrases),
            ("add_preferred_openings", &self.add_preferred_openings),
            ("remove_preferred_openings", &self.remove_preferred_openings),
            ("add_preferred_closings", &self.add_preferred_closings),
            ("remove_preferred_closings", &self.remove_preferred_closings),
        ] {
            if list
                .iter()
                .any(|p| p.trim().is_empty() || p.chars().count() > 200)
            {
                return Err(SoulError::Invalid(
                    format!("{name}: every phrase must be 1 to 200 characters").into(),
                ));
            }
        }
        for t in &self.traits {
            if t.name.trim().is_empty() || t.name.chars().count() > 64 {
                return Err(SoulError::Invalid(
                    "traits: every trait needs a name of 1 to 64 characters".into(),
                ));
            }
            for (field, v) in [("intensity", t.intensity), ("confidence", t.confidence)] {
                if let Some(v) = v {
                    if !(0.0..=1.0).contains(&v) || !v.is_finite() {
                        return Err(SoulError::Invalid(
                            format!(
                                "traits: {field} of '{}' is {v}: give a number from 0 to 1",
                                t.name
                            )
                            .into(),
                        ));
                    }
                }
            }
            one_of("traits: category", &t.category, CATEGORIES)?;
            one_of("traits: action", &t.action, TRAIT_ACTIONS)?;
        }
        Ok(())
    }
}

fn push_unique(list: &mut Vec<String>, item: &str) -> bool {
    if list.iter().any(|x| x == item) {
        false
    } else {
        list.push(item.to_owned());
        true
    }
}

fn remove(list: &mut Vec<String>, item: &str) -> bool {
    let before = list.len();
    list.retain(|x| x != item);
    list.len() != before
}

/// Marks `key` as stated by an edit, with at least [`EDIT_EVIDENCE`].
fn state(id: &mut Identity, key: &str) {
    let e = id.evidence_of(key).max(EDIT_EVIDENCE);
    id.evidence.insert(key.to_owned(), e);
    id.stated.insert(key.to_owned());
}

/// Applies a (validated) patch to `id` and lists the changes made; `reason` becomes the
/// evidence of edited traits. Every key it sets counts as stated (see [`Identity::stated`]).
pub fn apply(id: &mut Identity, patch: &Patch, reason: &str, now: i64) -> Vec<String> {
    let mut changes = Vec::new();
    for (name, key, v) in patch.levels() {
        if let Some(v) = v {
            let before = id.level(key).unwrap_or(0.0);
            id.set_level(key, v);
            state(id, key);
            changes.push(format!("{name}: {before:.2} → {v:.2}"));
        }
    }
    if let Some(b) = patch.uses_emojis {
        id.voice.uses_emojis = b;
        state(id, flag::EMOJIS);
        changes.push(format!("uses_emojis: {b}"));
    }
    if let Some(b) = patch.uses_markdown {
        id.voice.uses_markdown = b;
        changes.push(format!("uses_markdown: {b}"));
    }
    if let Some(s) = &patch.sentence_structure {
        id.voice.sentence_structure = s.clone();
        state(id, flag::SENTENCE_STRUCTURE);
        changes.push(format!("sentence_structure: {s}"));
    }
    if let Some(s) = &patch.explanation_style {
        id.voice.explanation_style = s.clone();
        state(id, flag::EXPLANATION_STYLE);
        changes.push(format!("explanation_style: {s}"));
    }
    if let Some(s) = &patch.response_length {
        let at = RESPONSE_LENGTHS.iter().position(|x| x == s).unwrap_or(2);
        id.communication.length_level = at as f64 / (RESPONSE_LENGTHS.len() - 1) as f64;
        state(id, "communication.length_level");
        changes.push(format!("response_length: {s}"));
    }
    if let Some(s) = &patch.structure_preference {
        id.communication.structure_preference = s.clone();
        state(id, flag::STRUCTURE);
        changes.push(format!("structure_preference: {s}"));
    }
    let v = &mut id.voice;
    for p in &patch.add_catch_phrases {
        if push_unique(&mut v.catch_phrases, p.trim()) {
            changes.push(format!("catch phrase added: \"{}\"", p.trim()));
        }
    }
    for p in &patch.remove_catch_phrases {
        if remove(&mut v.catch_phrases, p.trim()) {
            changes.push(format!("catch phrase removed: \"{}\"", p.trim()));
        }
    }
    for p in &patch.add_preferred_openings {
        if push_unique(&mut v.preferred_openings, p.trim()) {
            changes.push(format!("opening added: \"{}\"", p.trim()));
        }
    }
    for p in &patch.remove_preferred_openings {
        if remove(&mut v.preferred_openings, p.trim()) {
            changes.push(format!("opening removed: \"{}\"", p.trim()));
        }
    }
    for p in &patch.add_preferred_closings {
        if push_unique(&mut v.preferred_closings, p.trim()) {
            changes.push(format!("closing added: \"{}\"", p.trim()));
        }
    }
    for p in &patch.remove_preferred_closings {
        if remove(&mut v.preferred_closings, p.trim()) {
            changes.push(format!("closing removed: \"{}\"", p.trim()));
        }
    }
    for t in &patch.traits {
        let name = t.name.trim().to_lowercase();
        if t.action.as_deref() == Some("remove") {
            let before = id.traits.len();
            id.traits.retain(|x| x.name != name);
            if id.traits.len() != before {
                changes.push(format!("trait \"{name}\" removed"));
            }
            continue;
        }
        let intensity = t.intensity.unwrap_or(0.7);
        let confidence = t.confidence.unwrap_or(EDIT_TRAIT_CONFIDENCE);
        match id.traits.iter_mut().find(|x| x.name == name) {
            Some(x) => {
                x.intensity = intensity;
                x.confidence = confidence;
                if let Some(c) = &t.category {
                    x.category = c.clone();
                }
                x.evidence_count += 1;
                x.last_observed = now;
                x.last_evidence = reason.to_owned();
                changes.push(format!(
                    "trait \"{name}\" updated: intensity={intensity:.2} confidence={confidence:.2}"
                ));
            }
            None => {
                id.traits.push(Trait {
                    name: name.clone(),
                    category: t.category.clone().unwrap_or_else(|| "expressive".into()),
                    intensity,
                    confidence,
                    evidence_count: 1,
                    first_observed: now,
                    last_observed: now,
                    last_evidence: reason.to_owned(),
                });
                changes.push(format!(
                    "trait \"{name}\" added: intensity={intensity:.2} confidence={confidence:.2}"
                ));
            }
        }
    }
    id.refresh();
    changes
}

/// One directive rule: its words, what it sets, and what it sets when negated.
struct Rule {
    words: &'static [&'static str],
    on: fn(&mut Patch),
    off: fn(&mut Patch),
}

fn trait_edit(name: &str, category: &str, intensity: f64, confidence: f64) -> TraitEdit {
    TraitEdit {
        name: name.into(),
        category: Some(category.into()),
        intensity: Some(intensity),
        confidence: Some(confidence),
        action: None,
    }
}

fn trait_removal(name: &str) -> TraitEdit {
    TraitEdit {
        name: name.into(),
        action: Some("remove".into()),
        ..TraitEdit::default()
    }
}

#[rustfmt::skip]
const RULES: &[Rule] = &[
    Rule { words: &["informal", "informel", "informelle", "casual", "relaxed", "décontracté", "décontractée", "familier", "friendly", "amical", "sympa"],
        on: |p| p.formality_level = Some(0.2), off: |p| p.formality_level = Some(0.7) },
    Rule { words: &["formal", "formel", "formelle", "professional", "professionnel", "professionnelle", "soutenu"],
        on: |p| p.formality_level = Some(0.85), off: |p| p.formality_level = Some(0.3) },
    Rule { words: &["humor", "humour", "humorous", "funny", "drôle", "jokes", "joke", "blagues", "playful", "ludique", "espiègle", "witty"],
        on: |p| { p.humor_level = Some(0.8); p.playfulness = Some(0.75); p.traits.push(trait_edit("humorous", "expressive", 0.8, 0.8)); },
        off: |p| { p.humor_level = Some(0.1); p.playfulness = Some(0.1); p.traits.push(trait_removal("humorous")); } },
    Rule { words: &["serious", "sérieux", "sérieuse", "sober", "sobre", "austère", "stern"],
        on: |p| { p.humor_level = Some(0.1); p.seriousness = Some(0.9); p.playfulness = Some(0.05); },
        off: |p| p.seriousness = Some(0.4) },
    Rule { words: &["empathetic", "empathy", "empathique", "empathie", "warm", "warmer", "chaleureux", "chaleureuse", "caring", "bienveillant", "bienveillante", "gentle", "doux", "kind", "compassionate"],
        on: |p| { p.empathy_level = Some(0.9); p.warmth = Some(0.9); p.encouragement_level = Some(0.85); },
        off: |p| { p.empathy_level = Some(0.4); p.warmth = Some(0.5); } },
    Rule { words: &["concise", "concis", "concise", "brief", "bref", "brève", "short", "shorter", "court", "courte", "succinct", "succincte", "terse", "laconique"],
        on: |p| { p.response_length = Some("concise".into()); p.sentence_structure = Some("concise".into()); },
        off: |p| p.response_length = Some("detailed".into()) },
    Rule { words: &["detailed", "détaillé", "détaillée", "détaillées", "thorough", "approfondi", "in-depth", "longer", "verbose"],
        on: |p| p.response_length = Some("detailed".into()), off: |p| p.response_length = Some("concise".into()) },
    Rule { words: &["exhaustive", "exhaustif", "exhaustive", "comprehensive", "complet"],
        on: |p| p.response_length = Some("exhaustive".into()), off: |p| p.response_length = Some("moderate".into()) },
    Rule { words: &["direct", "straightforward", "franc", "franche", "frank", "blunt", "directement"],
        on: |p| p.directness_level = Some(0.9), off: |p| p.directness_level = Some(0.35) },
    Rule { words: &["technical", "technique", "expert", "advanced", "avancé", "jargon"],
        on: |p| { p.technical_depth = Some(0.9); p.vocabulary_richness = Some(0.8); },
        off: |p| { p.technical_depth = Some(0.2); p.vocabulary_richness = Some(0.35); } },
    Rule { words: &["simple", "simpler", "plain", "beginner", "beginners", "débutant", "débutants", "accessible", "vulgariser", "simplifier"],
        on: |p| { p.technical_depth = Some(0.2); p.vocabulary_richness = Some(0.35); },
        off: |p| p.technical_depth = Some(0.7) },
    Rule { words: &["enthusiastic", "enthusiasm", "enthousiaste", "enthousiasme", "energetic", "énergique", "excited", "passionate", "passionné", "passionnée"],
        on: |p| { p.enthusiasm_level = Some(0.9); p.emotion_enthusiasm = Some(0.9); p.traits.push(trait_edit("enthusiastic", "emotional", 0.9, 0.85)); },
        off: |p| { p.enthusiasm_level = Some(0.3); p.emotion_enthusiasm = Some(0.3); } },
    Rule { words: &["emoji", "emojis", "emoticons", "emoticon", "émoticônes", "émojis", "smileys"],
        on: |p| p.uses_emojis = Some(true), off: |p| p.uses_emojis = Some(false) },
    Rule { words: &["markdown", "formatting"],
        on: |p| p.uses_markdown = Some(true), off: |p| p.uses_markdown = Some(false) },
    Rule { words: &["bullet", "bullets", "bulleted", "puces", "list", "lists", "liste", "listes"],
        on: |p| p.structure_preference = Some("bulleted".into()), off: |p| p.structure_preference = Some("freeform".into()) },
    Rule { words: &["numbered", "numérotée", "numérotées", "numéroté", "numérotés"],
        on: |p| p.structure_preference = Some("numbered".into()), off: |p| p.structure_preference = Some("freeform".into()) },
    Rule { words: &["encouraging", "encourageant", "encourageante", "positive", "positif", "positive", "supportive", "motivating", "motivant", "optimistic", "optimiste"],
        on: |p| { p.encouragement_level = Some(0.9); p.warmth = Some(0.85); },
        off: |p| p.encouragement_level = Some(0.4) },
    Rule { words: &["neutral", "neutre", "objective", "objectif", "objective", "factual", "factuel", "impartial"],
        on: |p| { p.warmth = Some(0.5); p.humor_level = Some(0.2); p.seriousness = Some(0.6); },
        off: |p| p.warmth = Some(0.75) },
    Rule { words: &["creative", "créatif", "créative", "imaginative", "imaginatif", "original", "poetic", "poétique", "metaphors", "métaphores", "analogies"],
        on: |p| { p.vocabulary_richness = Some(0.85); p.metaphor_usage = Some(0.75); p.explanation_style = Some("analogy".into()); p.traits.push(trait_edit("creative", "cognitive", 0.85, 0.8)); },
        off: |p| { p.metaphor_usage = Some(0.1); p.traits.push(trait_removal("creative")); } },
    Rule { words: &["analytical", "analytique", "rigorous", "rigoureux", "rigoureuse", "methodical", "méthodique"],
        on: |p| { p.explanation_style = Some("step_by_step".into()); p.traits.push(trait_edit("analytical", "cognitive", 0.9, 0.85)); },
        off: |p| p.traits.push(trait_removal("analytical")) },
];

/// Words that turn a clause's change around.
const NEGATIONS: &[&str] = &[
    "stop", "no", "not", "don't", "dont", "never", "avoid", "less", "fewer", "without", "quit",
    "arrête", "arrêter", "arrête", "cesse", "cesser", "sans", "moins", "pas", "jamais", "évite",
    "éviter", "aucun", "aucune", "plus de",
];

/// The patch a directive describes, or an error when it names nothing known.
pub fn parse_directive(directive: &str) -> Result<Patch, SoulError> {
    let mut patch = Patch::default();
    let mut matched = false;
    let lower = directive.to_lowercase().replace('’', "'");
    for clause in lower.split([',', ';', '.', '!', '\n']).flat_map(|c| {
        c.split(" and ")
            .flat_map(|c| c.split(" et "))
            .flat_map(|c| c.split(" but "))
            .flat_map(|c| c.split(" mais "))
    }) {
        let words: Vec<String> = crate::text::words(clause);
        if words.is_empty() {
            continue;
        }
        let joined = format!(" {} ", words.join(" "));
        // "plus de X" (no more X) is a negation in French; "plus X" alone means more.
        let negated = NEGATIONS.iter().any(|n| {
            if n.contains(' ') {
                joined.contains(&format!(" {n} ")) && !joined.contains(" un peu plus de ")
            } else {
                words.iter().any(|w| w == n)
            }
        });
        for rule in RULES {
            if rule.words.iter().any(|k| words.iter().any(|w| w == k)) {
                matched = true;
                if negated {
                    (rule.off)(&mut patch);
                } else {
                    (rule.on)(&mut patch);
                }
            }
        }
    }
    if !matched || patch.is_empty() {
        return Err(SoulError::Invalid(
            Term::Directive.then(format!(
                " not understood: nothing in \"{}\" names a known change. Say what to change, e.g. \"be more concise\", \"stop using emojis\", \"be more formal\", \"use more humour\" (English or French), or use ",
                directive.trim()
            ))
            .then(Term::SoulPatch)
            .then(" to set fields explicitly"),
        ));
    }
    Ok(patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_in_english_and_french() {
        let p = parse_directive("Be more concise, and stop using emojis").expect("parse");
        assert_eq!(p.response_length.as_deref(), Some("concise"));
        assert_eq!(p.uses_emojis, Some(false));
        let p = parse_directive("sois plus formel et utilise des émojis").expect("parse");
        assert_eq!(p.formality_level, Some(0.85));
        assert_eq!(p.uses_emojis, Some(true));
        let p = parse_directive("be less formal").expect("parse");
        assert_eq!(p.formality_level, Some(0.3));
        let p = parse_directive("be informal").expect("parse");
        assert_eq!(p.formality_level, Some(0.2));
        // Whole words only: "function" is not "fun", "indirect" is not "direct".
        assert!(parse_directive("explain the function").is_err());
        assert!(parse_directive("blah")
            .unwrap_err()
            .to_string()
            .contains("be more concise"));
    }

    #[test]
    fn apply_and_validate() {
        let mut id = Identity::neutral("a", "m", 0);
        let p = Patch {
            humor_level: Some(1.0),
            uses_emojis: Some(true),
            add_catch_phrases: vec!["let's go".into()],
            remove_catch_phrases: vec!["absent".into()],
            traits: vec![trait_edit("witty", "expressive", 0.8, 0.9)],
            ..Patch::default()
        };
        p.validate().expect("valid");
        let changes = apply(&mut id, &p, "test", 1);
        assert_eq!(
            changes,
            vec![
                "humor_level: 0.30 → 1.00",
                "uses_emojis: true",
                "catch phrase added: \"let's go\"",
                "trait \"witty\" added: intensity=0.80 confidence=0.90"
            ]
        );
        assert!((id.confidence - 0.9).abs() < 1e-9);
        assert!(Patch {
            humor_level: Some(1.7),
            ..Patch::default()
        }
        .validate()
        .unwrap_err()
        .to_string()
        .contains("from 0 to 1"));
        assert!(Patch {
            response_length: Some("long".into()),
            ..Patch::default()
        }
        .validate()
        .unwrap_err()
        .to_string()
        .contains("terse, concise"));
        assert!(Patch::default().is_empty());
    }
}
