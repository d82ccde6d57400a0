//! The statements an identity supports, in the order the prompt gives them.
//!
//! Every statement has a [`Source`], and the sources come in this order:
//! 1. **Traits**: the personality traits captured (or edited), each with its confidence; the
//!    most confident first.
//! 2. **Observed**: what captures measured (or an edit set) about the voice, communication,
//!    values, behaviour and emotional tone; a level is stated when it points clearly high or
//!    low (|direction| ≥ 0.5, see [`Identity::direction`]), weighted by |direction| × its
//!    evidence (at most 1), the most characteristic first.
//! 3. **Defaults**: the neutral reference values, only for a dimension that no trait or
//!    observed statement covers, and last.
//!
//! Two more rules make the prompt say only what was seen:
//! - **No inference from absence** on too little text: a low rate of markers (no joke, no
//!   emoji, no list, no question …) is stated only once the identity was captured from at least
//!   [`MIN_ABSENCE_TURNS`](crate::model::MIN_ABSENCE_TURNS) agent turns, or when an edit set
//!   it. Until then, not seeing a joke says nothing.
//! - **No contradiction**: a statement that takes the opposite side of an axis already taken
//!   by an earlier (better-evidenced) statement is left out (see [`crate::coherence`]): a
//!   captured "humorous" trait wins over "You rarely joke".

use crate::coherence;
use crate::model::{flag, Dimension, Identity, Scale};
use schemars::JsonSchema;
use serde::Serialize;

/// Where a statement comes from; also its rank (traits first, defaults last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A personality trait captured or edited.
    Trait,
    /// A level or style flag captured or edited.
    Observed,
    /// A neutral default of a dimension nothing observed covers.
    Default,
}

/// One statement of the identity prompt.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Statement {
    /// The dimension it describes.
    pub dimension: Dimension,
    /// The sentence.
    pub line: String,
    /// Where it comes from.
    pub source: Source,
    /// Its rank within its source: a trait's confidence (+0.1 when well established), an
    /// observation's |direction| × evidence; +0.25 when it shares a word with the recall
    /// context.
    pub weight: f64,
}

/// Level lines: the key, the statement when it points high, and when it points low (None:
/// a low value is not worth a statement).
#[rustfmt::skip]
const LEVEL_LINES: &[(&str, &str, Option<&str>)] = &[
    ("voice.humor_level", "You often use humour and wit.", Some("You rarely joke; you keep it straight.")),
    ("voice.empathy_level", "You are deeply empathetic and validating.", Some("You keep to the facts rather than dwelling on feelings.")),
    ("voice.technical_depth", "You go into technical depth.", Some("You avoid jargon and keep explanations simple.")),
    ("voice.enthusiasm_level", "You are enthusiastic and energetic.", Some("You stay low-key rather than excitable.")),
    ("voice.directness_level", "You are direct and straightforward.", Some("You prefer a gentle, hedged approach.")),
    ("voice.vocabulary_richness", "Your vocabulary is rich and varied.", Some("You use plain, everyday words.")),
    ("voice.metaphor_usage", "You like explaining through metaphors and analogies.", Some("You explain literally, without metaphors.")),
    ("communication.question_rate", "You ask questions to clarify and engage.", Some("You rarely ask questions back.")),
    ("behaviour.curiosity_level", "You are curious and explore ideas thoroughly.", None),
    ("behaviour.persistence_level", "You are persistent and don't give up easily on hard problems.", None),
    ("behaviour.self_correction", "You refine and correct yourself openly as you go.", None),
    ("emotion.warmth", "You have a warm, welcoming presence.", Some("You keep an even, neutral tone.")),
    ("emotion.calmness", "You keep a calm, composed demeanour.", None),
    ("emotion.enthusiasm", "You are enthusiastic and energetic.", Some("You stay low-key rather than excitable.")),
    ("emotion.seriousness", "You have a serious, thoughtful presence.", Some("You keep things light.")),
    ("emotion.playfulness", "You have a playful, light-hearted approach.", None),
    ("emotion.encouragement_level", "You are encouraging and supportive.", None),
];

/// |direction| from which a level is stated.
const STATED_DIRECTION: f64 = 0.5;
/// Weight of a statement that only says a level is middling ("a balanced tone").
const NEUTRAL_WEIGHT: f64 = 0.1;
/// Boost of a statement sharing a word with the recall context.
const CONTEXT_BOOST: f64 = 0.25;

/// The prompt heading of a dimension.
pub fn heading(d: Dimension) -> &'static str {
    match d {
        Dimension::Traits => "Personality",
        Dimension::Voice => "Voice",
        Dimension::Communication => "Communication",
        Dimension::Values => "Values",
        Dimension::Behaviour => "Behaviour",
        Dimension::Emotion => "Emotional tone",
    }
}

fn dimension_of(key: &str) -> Dimension {
    crate::model::level_dimension(key).unwrap_or(match key.split_once('.') {
        Some(("communication", _)) => Dimension::Communication,
        Some(("behaviour", _)) => Dimension::Behaviour,
        _ => Dimension::Voice,
    })
}

/// How much a key's evidence backs a statement, in (0, 1].
fn support(id: &Identity, key: &str) -> f64 {
    if id.stated.contains(key) {
        1.0
    } else {
        id.evidence_of(key).min(1.0)
    }
}

/// "a", "a and b", "a, b and c".
fn enumerate(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

struct Builder<'a> {
    id: &'a Identity,
    out: Vec<Statement>,
}

impl Builder<'_> {
    fn push(&mut self, key: &str, line: &str, weight: f64) {
        self.out.push(Statement {
            dimension: dimension_of(key),
            line: line.to_owned(),
            source: Source::Observed,
            weight,
        });
    }

    /// A flag's statement, weighted by the flag's evidence.
    fn flag(&mut self, key: &str, line: &str, weight: f64) {
        if self.id.observed(key) {
            self.push(key, line, weight * support(self.id, key));
        }
    }

    fn levels(&mut self) {
        let id = self.id;
        for (key, high, low) in LEVEL_LINES {
            if !id.observed(key) {
                continue;
            }
            let d = id.direction(key);
            let weight = d.abs() * support(id, key);
            if d >= STATED_DIRECTION {
                self.push(key, high, weight);
            } else if d <= -STATED_DIRECTION {
                let from_absence =
                    crate::model::level_info(key).is_some_and(|l| l.scale == Scale::Presence);
                if let Some(low) = low.filter(|_| !from_absence || id.absence_known(key)) {
                    self.push(key, low, weight);
                }
            }
        }
        let key = "voice.formality_level";
        if id.observed(key) {
            let (v, d) = (id.voice.formality_level, id.direction(key));
            let line = match d {
                d if d >= STATED_DIRECTION && v > 0.8 => {
                    "You communicate in a highly professional and formal manner."
                }
                d if d >= STATED_DIRECTION => "You are generally professional but approachable.",
                d if d <= -STATED_DIRECTION && v < 0.2 => "You are very informal and relaxed.",
                d if d <= -STATED_DIRECTION => "You are casual and conversational.",
                _ => "You keep a balanced, conversational tone.",
            };
            self.push(key, line, d.abs().max(NEUTRAL_WEIGHT) * support(id, key));
        }
        let key = "communication.length_level";
        if id.observed(key) {
            let line = match id.communication.response_length.as_str() {
                "terse" => "You keep answers extremely brief.",
                "concise" => "You prefer concise answers.",
                "detailed" => "You give detailed, thorough answers.",
                "exhaustive" => "You give comprehensive, exhaustive answers.",
                _ => "You give moderately detailed answers.",
            };
            let w = id.direction(key).abs().max(NEUTRAL_WEIGHT) * support(id, key);
            self.push(key, line, w);
        }
        let mut priorities: Vec<(&str, f64, f64)> = [
            "accuracy",
            "helpfulness",
            "efficiency",
            "clarity",
            "safety",
            "creativity",
        ]
        .iter()
        .map(|name| (*name, format!("values.{name}")))
        .filter(|(_, key)| id.observed(key))
        .map(|(name, key)| {
            let v = id.level(&key).unwrap_or(0.0);
            (name, v, id.direction(&key) * support(id, &key))
        })
        .collect();
        if !priorities.is_empty() {
            priorities.sort_by(|a, b| b.1.total_cmp(&a.1));
            priorities.truncate(3);
            let names: Vec<&str> = priorities.iter().map(|p| p.0).collect();
            let weight = priorities
                .iter()
                .map(|p| p.2)
                .fold(NEUTRAL_WEIGHT, f64::max);
            self.push(
                "values.accuracy",
                &format!("You prioritise {}.", enumerate(&names)),
                weight,
            );
        }
    }

    fn flags(&mut self) {
        let id = self.id;
        let v = &id.voice;
        if v.uses_emojis {
            self.flag(flag::EMOJIS, "You use emojis.", 0.5);
        } else if id.absence_known(flag::EMOJIS) {
            self.flag(flag::EMOJIS, "You do not use emojis.", 0.1);
        }
        let structure = match v.sentence_structure.as_str() {
            "concise" => Some("You write in short, crisp sentences."),
            "elaborate" => Some("You write long, elaborate sentences."),
            "punchy" => Some("You use short, punchy statements."),
            "flowing" => Some("Your prose flows naturally."),
            _ => None,
        };
        if let Some(l) = structure {
            self.flag(flag::SENTENCE_STRUCTURE, l, 0.2);
        }
        self.flag(
            flag::EXPLANATION_STYLE,
            explanation_line(&v.explanation_style),
            0.3,
        );
        let quoted = |list: &[String]| {
            list.iter()
                .take(4)
                .map(|p| format!("\"{p}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (list, intro) in [
            (&v.catch_phrases, "Expressions you often use:"),
            (&v.preferred_openings, "You like to open with:"),
            (&v.preferred_closings, "You like to close with:"),
        ] {
            if !list.is_empty() {
                let line = format!("{intro} {}.", quoted(list));
                self.push(flag::PHRASES, &line, 0.35);
            }
        }
        let c = &id.communication;
        let structure = match c.structure_preference.as_str() {
            "bulleted" => Some(("You structure answers with bullet points.", 0.25)),
            "numbered" => Some(("You prefer numbered lists.", 0.25)),
            "sectioned" => Some(("You organise answers in clear sections.", 0.25)),
            "freeform" if id.absence_known(flag::STRUCTURE) => {
                Some(("You write natural prose rather than lists.", 0.15))
            }
            _ => None,
        };
        if let Some((l, w)) = structure {
            self.flag(flag::STRUCTURE, l, w);
        }
        if c.acknowledges_before_answering {
            self.flag(
                flag::ACKNOWLEDGES,
                "You acknowledge what was said before answering.",
                0.2,
            );
        }
        if c.provides_alternatives {
            self.flag(
                flag::ALTERNATIVES,
                "You offer alternatives and options.",
                0.2,
            );
        }
        let b = &id.behaviour;
        if b.admits_mistakes {
            self.flag(
                flag::ADMITS_MISTAKES,
                "You openly acknowledge your mistakes.",
                0.15,
            );
        }
        self.flag(
            flag::DISAGREEMENT,
            disagreement_line(&b.disagreement_style),
            0.15,
        );
    }
}

fn explanation_line(style: &str) -> &'static str {
    match style {
        "analogy" => "You explain through analogies.",
        "big_picture" => "You start with the big picture before the details.",
        "example_driven" => "You teach through concrete examples.",
        "socratic" => "You guide others to answers through questions.",
        _ => "You break things down step by step.",
    }
}

fn disagreement_line(style: &str) -> &'static str {
    match style {
        "direct" => "When you disagree, you say so directly.",
        "socratic" => "You explore disagreements through questions.",
        "avoidant" => "You avoid confrontation when you disagree.",
        _ => "You disagree tactfully and respectfully.",
    }
}

/// The neutral statements of a dimension nothing observed covers.
fn defaults(id: &Identity, d: Dimension) -> Vec<String> {
    match d {
        Dimension::Traits => {
            vec!["Your personality is still developing through interactions.".into()]
        }
        Dimension::Voice => vec![
            "You keep a balanced, conversational tone.".into(),
            explanation_line(&id.voice.explanation_style).into(),
        ],
        Dimension::Communication => vec!["You give moderately detailed answers.".into()],
        Dimension::Values => {
            let top = id.top_values();
            let names: Vec<&str> = top.iter().take(3).map(|v| v.0).collect();
            vec![format!("You prioritise {}.", enumerate(&names))]
        }
        Dimension::Behaviour => vec![
            "You openly acknowledge your mistakes.".into(),
            disagreement_line(&id.behaviour.disagreement_style).into(),
        ],
        Dimension::Emotion => vec!["You have a warm, welcoming presence.".into()],
    }
}

/// Adds `s` unless it repeats or contradicts a statement already kept.
fn admit(s: Statement, kept: &mut Vec<Statement>) {
    let clash = kept
        .iter()
        .any(|k| k.line == s.line || coherence::conflict(&k.line, &s.line).is_some());
    if !clash {
        kept.push(s);
    }
}

/// Every statement the identity supports, in prompt order (see the module docs): traits by
/// confidence, then observations by weight, then the defaults of uncovered dimensions; none
/// contradicting an earlier one. Words of `context` (4 letters or more, not stop words) boost
/// the statements that contain them within their source. A trait seen in at least
/// `min_observations` captures ranks higher.
pub fn statements(id: &Identity, context: Option<&str>, min_observations: u32) -> Vec<Statement> {
    let ctx: Vec<String> = context
        .map(crate::text::words)
        .unwrap_or_default()
        .into_iter()
        .filter(|w| w.chars().count() >= 4 && !mira_core::text::is_stop_word(w))
        .collect();
    let mut b = Builder {
        id,
        out: Vec::new(),
    };
    let mut traits: Vec<&crate::model::Trait> = id.traits.iter().collect();
    traits.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(b.strength().total_cmp(&a.strength()))
            .then_with(|| a.name.cmp(&b.name))
    });
    for t in traits {
        b.out.push(Statement {
            dimension: Dimension::Traits,
            line: t.describe(),
            source: Source::Trait,
            weight: t.confidence
                + if t.established(min_observations) {
                    0.1
                } else {
                    0.0
                },
        });
    }
    b.levels();
    b.flags();
    let mut ranked = b.out;
    if !ctx.is_empty() {
        for s in &mut ranked {
            if crate::text::words(&s.line).iter().any(|w| ctx.contains(w)) {
                s.weight += CONTEXT_BOOST;
            }
        }
    }
    // Stable: equal weights keep the order above (traits by confidence then strength).
    ranked.sort_by(|a, b| a.source.cmp(&b.source).then(b.weight.total_cmp(&a.weight)));
    let mut kept: Vec<Statement> = Vec::with_capacity(ranked.len());
    for s in ranked {
        admit(s, &mut kept);
    }
    for d in [
        Dimension::Traits,
        Dimension::Voice,
        Dimension::Communication,
        Dimension::Values,
        Dimension::Behaviour,
        Dimension::Emotion,
    ] {
        if kept.iter().any(|s| s.dimension == d) {
            continue;
        }
        for line in defaults(id, d) {
            let s = Statement {
                dimension: d,
                line,
                source: Source::Default,
                weight: 0.0,
            };
            admit(s, &mut kept);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract;
    use crate::merge::merge;

    fn captured(texts: &[&str]) -> Identity {
        let mut id = Identity::neutral("a", "m", 0);
        for t in texts {
            merge(&mut id, &extract(t), 0.3, 1);
        }
        id
    }

    #[test]
    fn traits_come_first_and_defaults_last() {
        let id = captured(&[
            "Hello! I am curious and love digging into puzzles. Let me explain step by step.",
        ]);
        let all = statements(&id, None, 5);
        let sources: Vec<Source> = all.iter().map(|s| s.source).collect();
        let mut sorted = sources.clone();
        sorted.sort();
        assert_eq!(sources, sorted, "{all:#?}");
        assert_eq!(all[0].source, Source::Trait);
        let traits: Vec<&str> = all
            .iter()
            .filter(|s| s.source == Source::Trait)
            .map(|s| s.line.as_str())
            .collect();
        assert!(traits.iter().any(|l| l.contains("curious")), "{traits:?}");
        // One short reply: no statement from what it did not contain.
        for absent in [
            "rarely joke",
            "without metaphors",
            "do not use emojis",
            "rarely ask",
        ] {
            assert!(
                all.iter().all(|s| !s.line.contains(absent)),
                "{absent}: {all:#?}"
            );
        }
        // Defaults only for dimensions nothing observed covers.
        for s in all.iter().filter(|s| s.source == Source::Default) {
            assert!(
                all.iter()
                    .all(|o| o.source == Source::Default || o.dimension != s.dimension),
                "{s:?}"
            );
        }
    }

    #[test]
    fn absence_is_stated_once_enough_turns_were_seen_or_an_edit_says_so() {
        let turn = "Assistant: I would recommend that we analyze the schema. Therefore, the index must change. Furthermore, the query is slow. It is important to verify the plan.";
        let few = captured(&[turn]);
        let line = "You rarely joke; you keep it straight.";
        assert!(statements(&few, None, 5).iter().all(|s| s.line != line));
        let many = captured(&[turn; crate::model::MIN_ABSENCE_TURNS as usize]);
        assert!(statements(&many, None, 5).iter().any(|s| s.line == line));
        let mut edited = few.clone();
        crate::patch::apply(
            &mut edited,
            &crate::Patch {
                humor_level: Some(0.05),
                ..crate::Patch::default()
            },
            "test",
            2,
        );
        assert!(statements(&edited, None, 5).iter().any(|s| s.line == line));
    }

    #[test]
    fn an_observed_trait_wins_over_a_contradicting_level() {
        let mut id =
            captured(&["Assistant: Haha, that's a funny one. Honestly the fix is simple."]);
        id.turns = 100;
        id.voice.humor_level = 0.0;
        let all = statements(&id, None, 5);
        assert!(all.iter().any(|s| s.line.contains("humorous")), "{all:#?}");
        assert!(
            all.iter().all(|s| !s.line.contains("rarely joke")),
            "{all:#?}"
        );
        let text: Vec<&str> = all.iter().map(|s| s.line.as_str()).collect();
        assert!(coherence::contradictions(&text.join("\n")).is_empty());
    }
}
