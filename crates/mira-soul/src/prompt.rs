//! Prompts: the identity prompt of `soul_recall` (within a token budget), the status summary,
//! and the reinforcement prompt of a model swap.
//!
//! The recall prompt is built like mira's context: every statement the identity supports is a
//! candidate with a salience, and the candidates are taken most characteristic first while the
//! whole prompt (counted with cl100k, `mira_core::tokens::count`) stays within the budget.
//! Salience: a trait's strength (intensity × confidence, +0.1 when well established); a level's
//! distance from neutral (|level − 0.5| × 2) scaled by its evidence (min(1, evidence) — levels
//! never observed nor edited get half); fixed small values for style flags. A context, when
//! given, adds 0.25 to the candidates that share a word with it. (The reference cut its prompt
//! at the `### ` headings, dropped the voice section first, and reported bytes/4 as tokens.)

use crate::model::{Identity, Trait};
use mira_core::tokens;

/// The smallest budget a recall accepts: the heading and one statement.
pub const MIN_BUDGET: usize = 30;
/// Most traits named by the reinforcement prompt.
pub const REINFORCED_TRAITS: usize = 5;

const INTRO: &str = "## Your Identity\n\nThis is who you are, from your past interactions (most characteristic first). Stay consistent with it.";
const FOOTER: &str =
    "---\nStay true to this identity: let these characteristics show naturally in every answer.";

/// A statement of the prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Section heading (`Personality`, `Voice` …).
    pub section: &'static str,
    /// The sentence.
    pub line: String,
    /// How characteristic it is.
    pub salience: f64,
}

/// The identity prompt and what went into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    /// The prompt text.
    pub text: String,
    /// Its cl100k tokens (never above the budget).
    pub tokens: usize,
    /// Statements included.
    pub included: usize,
    /// Statements left out for the budget.
    pub omitted: usize,
}

fn level_salience(id: &Identity, key: &str) -> f64 {
    let v = id.level(key).unwrap_or(0.5);
    let evidence = id.evidence_of(key);
    let support = if evidence > 0.0 {
        evidence.min(1.0)
    } else {
        0.5
    };
    (v - 0.5).abs() * 2.0 * support
}

/// Every statement the identity supports, with its salience (unordered).
pub fn candidates(id: &Identity, min_observations: u32) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut push = |section, line: String, salience: f64| {
        out.push(Candidate {
            section,
            line,
            salience,
        })
    };
    for t in &id.traits {
        let bonus = if t.established(min_observations) {
            0.1
        } else {
            0.0
        };
        push("Personality", t.describe(), t.strength() + bonus);
    }
    let v = &id.voice;
    let s = |k: &str| level_salience(id, k);
    let formality = match v.formality_level {
        x if x > 0.8 => "You communicate in a highly professional and formal manner.",
        x if x > 0.6 => "You are generally professional but approachable.",
        x if x > 0.4 => "You keep a balanced, conversational tone.",
        x if x > 0.2 => "You are casual and conversational.",
        _ => "You are very informal and relaxed.",
    };
    push(
        "Voice",
        formality.into(),
        s("voice.formality_level").max(0.05),
    );
    let level_lines: [(&str, &str, &str); 7] = [
        (
            "voice.humor_level",
            "You often use humour and wit.",
            "You rarely joke; you keep it straight.",
        ),
        (
            "voice.empathy_level",
            "You are deeply empathetic and validating.",
            "You stay matter-of-fact rather than emotional.",
        ),
        (
            "voice.technical_depth",
            "You go into technical depth.",
            "You avoid jargon and keep explanations simple.",
        ),
        (
            "voice.enthusiasm_level",
            "You are enthusiastic and energetic.",
            "You stay low-key rather than excitable.",
        ),
        (
            "voice.directness_level",
            "You are direct and straightforward.",
            "You prefer a gentle, hedged approach.",
        ),
        (
            "voice.vocabulary_richness",
            "Your vocabulary is rich and varied.",
            "You use plain, everyday words.",
        ),
        (
            "voice.metaphor_usage",
            "You like explaining through metaphors and analogies.",
            "You explain literally, without metaphors.",
        ),
    ];
    for (key, high, low) in level_lines {
        let x = id.level(key).unwrap_or(0.5);
        if (x - 0.5).abs() >= 0.15 {
            push("Voice", if x > 0.5 { high } else { low }.into(), s(key));
        }
    }
    let structure = match v.sentence_structure.as_str() {
        "concise" => Some("You keep sentences short and to the point."),
        "elaborate" => Some("You write long, thorough sentences."),
        "punchy" => Some("You use short, punchy statements."),
        "flowing" => Some("Your prose flows naturally."),
        _ => None,
    };
    if let Some(l) = structure {
        push("Voice", l.into(), 0.2);
    }
    let explain = match v.explanation_style.as_str() {
        "analogy" => "You explain through analogies.",
        "big_picture" => "You start with the big picture before the details.",
        "example_driven" => "You teach through concrete examples.",
        "socratic" => "You guide others to answers through questions.",
        _ => "You break things down step by step.",
    };
    push("Voice", explain.into(), 0.15);
    push(
        "Voice",
        if v.uses_emojis {
            "You use emojis."
        } else {
            "You do not use emojis."
        }
        .into(),
        if v.uses_emojis { 0.3 } else { 0.1 },
    );
    if !v.catch_phrases.is_empty() {
        let list: Vec<String> = v
            .catch_phrases
            .iter()
            .take(4)
            .map(|p| format!("\"{p}\""))
            .collect();
        push(
            "Voice",
            format!("Expressions you often use: {}.", list.join(", ")),
            0.35,
        );
    }
    if !v.preferred_openings.is_empty() {
        push(
            "Voice",
            format!(
                "You like to open with: \"{}\".",
                v.preferred_openings.join("\", \"")
            ),
            0.35,
        );
    }
    if !v.preferred_closings.is_empty() {
        push(
            "Voice",
            format!(
                "You like to close with: \"{}\".",
                v.preferred_closings.join("\", \"")
            ),
            0.35,
        );
    }
    let c = &id.communication;
    let length = match c.response_length.as_str() {
        "terse" => "You keep answers extremely brief.",
        "concise" => "You prefer concise answers.",
        "detailed" => "You give detailed, thorough answers.",
        "exhaustive" => "You give comprehensive, exhaustive answers.",
        _ => "You give moderately detailed answers.",
    };
    push(
        "Communication",
        length.into(),
        s("communication.length_level").max(0.1),
    );
    let structure = match c.structure_preference.as_str() {
        "bulleted" => Some("You structure answers with bullet points."),
        "numbered" => Some("You prefer numbered lists."),
        "sectioned" => Some("You organise answers in clear sections."),
        "freeform" => Some("You write natural prose rather than lists."),
        _ => None,
    };
    if let Some(l) = structure {
        push("Communication", l.into(), 0.25);
    }
    if c.question_rate > 0.6 {
        push(
            "Communication",
            "You ask questions to clarify and engage.".into(),
            s("communication.question_rate"),
        );
    }
    if c.acknowledges_before_answering {
        push(
            "Communication",
            "You acknowledge what was said before answering.".into(),
            0.2,
        );
    }
    if c.provides_alternatives {
        push(
            "Communication",
            "You offer alternatives and options.".into(),
            0.2,
        );
    }
    let top = id.top_values();
    push(
        "Values",
        format!(
            "You prioritise {}, {} and {}.",
            top[0].0, top[1].0, top[2].0
        ),
        0.1 + top
            .iter()
            .take(3)
            .map(|(name, _)| s(&format!("values.{name}")))
            .fold(0.0, f64::max),
    );
    let b = &id.behaviour;
    if b.admits_mistakes {
        push(
            "Behaviour",
            "You openly acknowledge your mistakes.".into(),
            0.15,
        );
    }
    let disagree = match b.disagreement_style.as_str() {
        "direct" => "When you disagree, you say so directly.",
        "socratic" => "You explore disagreements through questions.",
        "avoidant" => "You avoid direct confrontation.",
        _ => "You disagree tactfully and respectfully.",
    };
    push("Behaviour", disagree.into(), 0.12);
    if b.curiosity_level > 0.7 {
        push(
            "Behaviour",
            "You are curious and explore ideas thoroughly.".into(),
            s("behaviour.curiosity_level"),
        );
    }
    let tone = match id.dominant_tone() {
        "calm" => "You keep a calm, composed demeanour.",
        "enthusiastic" => "You are enthusiastic and energetic.",
        "serious" => "You have a serious, thoughtful presence.",
        "playful" => "You have a playful, light-hearted approach.",
        _ => "You have a warm, welcoming presence.",
    };
    let e = &id.emotion;
    let tone_level = [
        "emotion.warmth",
        "emotion.calmness",
        "emotion.enthusiasm",
        "emotion.seriousness",
        "emotion.playfulness",
    ]
    .iter()
    .map(|k| s(k))
    .fold(0.0, f64::max);
    push("Emotional tone", tone.into(), tone_level.max(0.1));
    if e.encouragement_level > 0.7 {
        push(
            "Emotional tone",
            "You are encouraging and supportive.".into(),
            s("emotion.encouragement_level"),
        );
    }
    out
}

fn shares_word(line: &str, context: &[String]) -> bool {
    let words = crate::text::words(line);
    words.iter().any(|w| context.contains(w))
}

fn render(intro: &str, chosen: &[&Candidate], footer: &str) -> String {
    let mut sections: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in chosen {
        match sections.iter_mut().find(|(s, _)| *s == c.section) {
            Some((_, lines)) => lines.push(&c.line),
            None => sections.push((c.section, vec![&c.line])),
        }
    }
    let mut out = intro.to_owned();
    for (section, lines) in sections {
        out.push_str("\n\n### ");
        out.push_str(section);
        for l in lines {
            out.push_str("\n- ");
            out.push_str(l);
        }
    }
    if !footer.is_empty() {
        out.push_str("\n\n");
        out.push_str(footer);
    }
    out
}

/// Takes candidates, most salient first, while the prompt fits `budget` tokens. The footer
/// is kept only if it fits; the intro always is (the caller checks [`MIN_BUDGET`]).
fn allocate(intro: &str, mut all: Vec<Candidate>, footer: &str, budget: usize) -> Composed {
    all.sort_by(|a, b| {
        b.salience
            .total_cmp(&a.salience)
            .then_with(|| a.line.cmp(&b.line))
    });
    let mut chosen: Vec<&Candidate> = Vec::new();
    let mut footer_used = footer;
    if tokens::count(&render(intro, &[], footer)) > budget {
        footer_used = "";
    }
    let mut omitted = 0;
    for c in &all {
        chosen.push(c);
        if tokens::count(&render(intro, &chosen, footer_used)) > budget {
            chosen.pop();
            omitted += 1;
        }
    }
    let mut text = render(intro, &chosen, footer_used);
    if tokens::count(&text) > budget {
        // Only the intro is left and it does not fit: cut it word by word.
        let mut words: Vec<&str> = intro.split(' ').collect();
        while !words.is_empty() && tokens::count(&words.join(" ")) > budget {
            words.pop();
        }
        text = words.join(" ");
    }
    Composed {
        tokens: tokens::count(&text),
        text,
        included: chosen.len(),
        omitted,
    }
}

/// The identity prompt of `soul_recall`, within `budget` tokens. Words of `context` boost the
/// statements that mention them.
pub fn identity_prompt(
    id: &Identity,
    budget: usize,
    context: Option<&str>,
    min_observations: u32,
) -> Composed {
    let ctx: Vec<String> = context
        .map(crate::text::words)
        .unwrap_or_default()
        .into_iter()
        .filter(|w| w.chars().count() >= 4 && !mira_core::text::is_stop_word(w))
        .collect();
    let mut all = candidates(id, min_observations);
    if !ctx.is_empty() {
        for c in &mut all {
            if shares_word(&c.line, &ctx) {
                c.salience += 0.25;
            }
        }
    }
    allocate(INTRO, all, FOOTER, budget)
}

/// The strongest traits, for the reinforcement prompt and the status.
pub fn strongest_traits(id: &Identity, n: usize) -> Vec<&Trait> {
    let mut t: Vec<&Trait> = id.traits.iter().collect();
    t.sort_by(|a, b| {
        b.strength()
            .total_cmp(&a.strength())
            .then_with(|| a.name.cmp(&b.name))
    });
    t.truncate(n);
    t
}

/// The reinforcement prompt after a swap from `from` to `to`: the strongest traits by name
/// (always, strongest first), then the most characteristic other statements within `budget`,
/// then the transition. (The reference lost the agent id of the swap, so its transition
/// block never appeared.)
pub fn reinforcement_prompt(
    id: &Identity,
    from: &str,
    to: &str,
    budget: usize,
    min_observations: u32,
) -> Composed {
    let strongest = strongest_traits(id, REINFORCED_TRAITS);
    let mut intro = format!(
        "## Identity Reinforcement\n\nYou have just moved from the model {from} to {to}. Your identity stays the same: keep being who you were."
    );
    if strongest.is_empty() {
        intro.push_str("\n\n### Critical Identity Markers\n- No trait is established yet: keep the voice and style below.");
    } else {
        intro.push_str("\n\n### Critical Identity Markers (strongest first)");
        for t in &strongest {
            intro.push_str(&format!(
                "\n- **{}** ({} {}, confidence {:.0}%)",
                t.name,
                crate::model::adverb(t.intensity),
                t.category,
                t.confidence * 100.0
            ));
        }
    }
    let names: Vec<String> = strongest.iter().map(|t| t.describe()).collect();
    let rest: Vec<Candidate> = candidates(id, min_observations)
        .into_iter()
        .filter(|c| !names.contains(&c.line))
        .collect();
    let footer = format!(
        "### Model Transition\n- Previous model: {from}\n- Current model: {to}\n- Your identity has been preserved through this transition.\n\n---\nContinue being yourself: keep the voice, traits and values above."
    );
    allocate(&intro, rest, &footer, budget)
}

/// The status summary: every statement, most characteristic first, without a budget.
pub fn summary(id: &Identity, min_observations: u32) -> String {
    let all = candidates(id, min_observations);
    allocate("## Who You Are", all, "", usize::MAX).text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract;
    use crate::merge::merge;

    fn identity() -> Identity {
        let mut id = Identity::neutral("a", "m", 0);
        let obs = extract("Certainly. I would recommend that we analyze the schema systematically. Therefore, the index must change. Furthermore, please note that the migration must be verified. Honestly, to be transparent, I might be wrong about the cache.");
        merge(&mut id, &obs, 0.3, 1);
        id
    }

    #[test]
    fn the_prompt_fits_every_budget_and_grows_with_it() {
        let id = identity();
        let mut last = 0;
        for budget in [30, 60, 120, 400, 2000] {
            let p = identity_prompt(&id, budget, None, 5);
            assert!(p.tokens <= budget, "{budget}: {}", p.tokens);
            assert_eq!(p.tokens, tokens::count(&p.text));
            assert!(p.included >= last);
            last = p.included;
        }
        let full = identity_prompt(&id, 2000, None, 5);
        assert_eq!(full.omitted, 0);
        assert!(full.text.ends_with("every answer."));
    }

    #[test]
    fn most_characteristic_first() {
        let id = identity();
        let small = identity_prompt(&id, 60, None, 5);
        let best = candidates(&id, 5)
            .into_iter()
            .max_by(|a, b| a.salience.total_cmp(&b.salience))
            .expect("candidates");
        assert!(
            small.text.contains(&best.line),
            "{}\n---\n{}",
            small.text,
            best.line
        );
    }

    #[test]
    fn reinforcement_names_the_strongest_traits_and_models() {
        let id = identity();
        let p = reinforcement_prompt(&id, "gpt-4", "claude-3", 1000, 5);
        let first = &strongest_traits(&id, 1)[0].name;
        assert!(p.text.contains(&format!("**{first}**")), "{}", p.text);
        assert!(
            p.text.contains("Previous model: gpt-4") && p.text.contains("Current model: claude-3")
        );
        assert!(p.tokens <= 1000);
    }
}
