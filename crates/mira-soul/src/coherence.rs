//! Coherence: which statements of an identity prompt contradict each other.
//!
//! A statement takes a side on an [`Axis`] (formality, levity, energy …) when it contains one
//! of the axis's phrases, matched as whole words: a negative phrase first ("rarely joke",
//! "without metaphors", "low-key"), else a positive one ("humour", "metaphors",
//! "enthusiastic"). Two statements contradict each other when they take opposite sides of one
//! axis: "You are enthusiastic and energetic." against "You stay matter-of-fact rather than
//! emotional." (energy), or "You are somewhat humorous" against "You rarely joke" (levity).
//!
//! The prompt builder ([`crate::statements`]) keeps, of two contradicting statements, the
//! better-evidenced one; [`contradictions`] checks any prompt text.

use crate::text::Lexicon;
use serde::Serialize;
use std::sync::LazyLock;

/// A trait of style or character that statements can take opposite sides of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Formal … casual.
    Formality,
    /// Humorous, playful … serious, no jokes.
    Levity,
    /// Enthusiastic, energetic … low-key, calm.
    Energy,
    /// Empathetic, validating … matter-of-fact.
    Empathy,
    /// Warm, welcoming … cold, distant.
    Warmth,
    /// Detailed, thorough … concise, brief.
    Length,
    /// Direct, blunt … hedged, gentle.
    Directness,
    /// Metaphors, analogies … literal.
    Metaphor,
    /// Uses emojis … never.
    Emojis,
    /// Technical, jargon … plain, simple.
    Technical,
    /// Bullet points, lists … prose.
    Lists,
    /// Curious, asks questions … rarely asks.
    Curiosity,
}

/// Which side of an axis a statement takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The first pole named in [`Axis`] (formal, humorous, enthusiastic …).
    High,
    /// The second one (casual, serious, low-key …).
    Low,
}

struct Poles {
    axis: Axis,
    low: Lexicon,
    high: Lexicon,
}

#[rustfmt::skip]
static POLES: LazyLock<Vec<Poles>> = LazyLock::new(|| {
    let p = |axis, low: &[&str], high: &[&str]| Poles { axis, low: Lexicon::new(low), high: Lexicon::new(high) };
    vec![
        p(Axis::Formality, &["casual", "informal", "informally", "relaxed", "colloquial", "laid-back"],
          &["formal", "formally", "professional", "professionally"]),
        p(Axis::Levity, &["rarely joke", "never joke", "no jokes", "serious", "seriously", "keep it straight", "no humour", "no humor", "without humour", "without humor"],
          &["humour", "humor", "humorous", "joke", "jokes", "joking", "witty", "wit", "playful", "light-hearted", "lighthearted", "funny"]),
        p(Axis::Energy, &["low-key", "subdued", "calm", "calmly", "matter-of-fact", "unexcitable"],
          &["enthusiastic", "enthusiasm", "energetic", "excited", "excitable", "lively", "high-energy"]),
        p(Axis::Empathy, &["matter-of-fact", "unemotional", "detached", "rather than validating", "rather than dwelling on feelings", "facts rather than feelings"],
          &["empathetic", "empathic", "validating", "validate", "compassionate"]),
        p(Axis::Warmth, &["cold", "distant", "aloof", "neutral tone"],
          &["warm", "warmth", "welcoming", "friendly"]),
        p(Axis::Length, &["concise", "brief", "briefly", "terse", "succinct", "short answers", "to the point"],
          &["detailed", "thorough", "exhaustive", "comprehensive", "long answers", "lengthy"]),
        p(Axis::Directness, &["hedged", "hedging", "hedge", "indirect", "indirectly", "gentle", "tentative"],
          &["direct", "directly", "straightforward", "blunt", "bluntly", "frank", "frankly"]),
        p(Axis::Metaphor, &["literally", "literal", "without metaphors", "no metaphors"],
          &["metaphor", "metaphors", "metaphorical", "analogy", "analogies"]),
        p(Axis::Emojis, &["do not use emojis", "don't use emojis", "no emojis", "never use emojis", "without emojis"],
          &["emoji", "emojis"]),
        p(Axis::Technical, &["avoid jargon", "avoids jargon", "no jargon", "keep explanations simple", "everyday words", "non-technical", "lay terms"],
          &["technical", "technically", "jargon", "expert"]),
        p(Axis::Lists, &["rather than lists", "no lists", "without lists", "prose"],
          &["bullet", "bullets", "bullet points", "numbered lists", "lists", "list"]),
        p(Axis::Curiosity, &["rarely ask questions", "incurious", "rarely explore"],
          &["curious", "curiosity", "explore", "explores", "exploring", "ask questions", "inquisitive"]),
    ]
});

/// The sides a statement takes.
pub fn sides(statement: &str) -> Vec<(Axis, Side)> {
    POLES
        .iter()
        .filter_map(|p| {
            if p.low.count(statement) > 0 {
                Some((p.axis, Side::Low))
            } else if p.high.count(statement) > 0 {
                Some((p.axis, Side::High))
            } else {
                None
            }
        })
        .collect()
}

/// The axis on which two statements take opposite sides, if any.
pub fn conflict(a: &str, b: &str) -> Option<Axis> {
    let sb = sides(b);
    sides(a).into_iter().find_map(|(axis, side)| {
        sb.iter()
            .any(|(x, s)| *x == axis && *s != side)
            .then_some(axis)
    })
}

/// A pair of contradicting statements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contradiction {
    /// The axis they disagree on.
    pub axis: Axis,
    /// The first statement.
    pub first: String,
    /// The second statement.
    pub second: String,
}

/// Every pair of contradicting statements in a prompt: its lines (a leading `- ` list marker
/// is dropped; headings and blank lines are skipped) compared two by two.
pub fn contradictions(prompt: &str) -> Vec<Contradiction> {
    let lines: Vec<&str> = prompt
        .lines()
        .map(|l| l.trim().trim_start_matches("- ").trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("---"))
        .collect();
    let mut out = Vec::new();
    for (i, a) in lines.iter().enumerate() {
        for b in &lines[i + 1..] {
            if let Some(axis) = conflict(a, b) {
                out.push(Contradiction {
                    axis,
                    first: (*a).to_owned(),
                    second: (*b).to_owned(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposite_sides_contradict() {
        // The pair reported in the issue, from the previous prompt.
        assert_eq!(
            conflict(
                "You are enthusiastic and energetic.",
                "You stay matter-of-fact rather than emotional."
            ),
            Some(Axis::Energy)
        );
        assert_eq!(
            conflict(
                "You are somewhat humorous (confidence 49%).",
                "You rarely joke; you keep it straight."
            ),
            Some(Axis::Levity)
        );
        assert_eq!(
            conflict(
                "You are casual and conversational.",
                "You communicate in a highly professional and formal manner."
            ),
            Some(Axis::Formality)
        );
        // Whole words: "indirect" is not "direct", "informal" is not "formal".
        assert_eq!(
            sides("You are very informal and relaxed."),
            vec![(Axis::Formality, Side::Low)]
        );
        assert_eq!(
            sides("You prefer an indirect approach."),
            vec![(Axis::Directness, Side::Low)]
        );
    }

    #[test]
    fn compatible_statements_do_not() {
        for (a, b) in [
            (
                "You are noticeably curious (confidence 49%).",
                "You are moderately patient (confidence 49%).",
            ),
            (
                "You are enthusiastic and energetic.",
                "You are enthusiastic and energetic.",
            ),
            (
                "You keep a balanced, conversational tone.",
                "You have a warm, welcoming presence.",
            ),
        ] {
            assert_eq!(conflict(a, b), None, "{a} / {b}");
        }
    }

    #[test]
    fn a_prompt_is_checked_line_by_line() {
        let prompt = "## Your Identity\n\n### Voice\n- You are enthusiastic and energetic.\n- You keep a calm, composed demeanour.\n\n### Values\n- You prioritise accuracy.";
        let c = contradictions(prompt);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].axis, Axis::Energy);
        assert_eq!(c[0].second, "You keep a calm, composed demeanour.");
    }
}
