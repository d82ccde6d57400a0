//! Prompts: the identity prompt of `soul_recall` (within a token budget), the status summary,
//! and the reinforcement prompt of a model swap.
//!
//! The statements come from [`crate::statements`], in their order: the traits with their
//! confidence first, then what was observed, then the defaults of dimensions nothing observed
//! covers; none contradicts another. They are taken in that order while the whole prompt
//! (counted with cl100k, `mira_core::tokens::count`) stays within the budget; a statement
//! that does not fit is skipped, and then no statement of a later source is taken, so a
//! default never displaces an observed trait. Each section is headed by its dimension; the
//! defaults have their own section, "Defaults (not yet observed)". (The reference cut its
//! prompt at the `### ` headings, dropped the voice section first, and reported bytes/4 as
//! tokens.)

use crate::model::{Identity, Trait};
use crate::statements::{heading, statements, Source, Statement};
use mira_core::tokens;

/// The smallest budget a recall accepts: the heading and one statement.
pub const MIN_BUDGET: usize = 30;
/// Most traits named by the reinforcement prompt.
pub const REINFORCED_TRAITS: usize = 5;

const INTRO: &str = "## Your Identity\n\nThis is who you are, from your past interactions (best evidenced first). Stay consistent with it.";
const FOOTER: &str =
    "---\nStay true to this identity: let these characteristics show naturally in every answer.";
/// The heading of the defaults.
pub const DEFAULTS_HEADING: &str = "Defaults (not yet observed)";

/// The identity prompt and what went into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    /// The prompt text.
    pub text: String,
    /// Its cl100k tokens (never above the budget).
    pub tokens: usize,
    /// The statements included, in prompt order.
    pub statements: Vec<Statement>,
    /// Statements left out for the budget.
    pub omitted: usize,
}

fn section(s: &Statement) -> &'static str {
    if s.source == Source::Default {
        DEFAULTS_HEADING
    } else {
        heading(s.dimension)
    }
}

fn render(intro: &str, chosen: &[&Statement], footer: &str) -> String {
    let mut sections: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in chosen {
        match sections.iter_mut().find(|(s, _)| *s == section(c)) {
            Some((_, lines)) => lines.push(&c.line),
            None => sections.push((section(c), vec![&c.line])),
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

/// Takes the statements in order while the prompt fits `budget` (see the module docs), then
/// the footer if it still fits; the intro always is (the caller checks [`MIN_BUDGET`]).
fn allocate(intro: &str, all: &[Statement], footer: &str, budget: usize) -> Composed {
    let mut chosen: Vec<&Statement> = Vec::new();
    let mut omitted = 0;
    let mut missed: Option<Source> = None;
    for c in all {
        if missed.is_some_and(|m| c.source > m) {
            omitted += 1;
            continue;
        }
        chosen.push(c);
        if tokens::count(&render(intro, &chosen, "")) > budget {
            chosen.pop();
            omitted += 1;
            missed = Some(missed.map_or(c.source, |m| m.min(c.source)));
        }
    }
    let footer_used = if tokens::count(&render(intro, &chosen, footer)) <= budget {
        footer
    } else {
        ""
    };
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
        statements: chosen.into_iter().cloned().collect(),
        omitted,
    }
}

/// The identity prompt of `soul_recall`, within `budget` tokens. Words of `context` boost the
/// statements that mention them (within their source).
pub fn identity_prompt(
    id: &Identity,
    budget: usize,
    context: Option<&str>,
    min_observations: u32,
) -> Composed {
    allocate(
        INTRO,
        &statements(id, context, min_observations),
        FOOTER,
        budget,
    )
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
    let rest: Vec<Statement> = statements(id, None, min_observations)
        .into_iter()
        .filter(|c| !names.contains(&c.line))
        .collect();
    let footer = format!(
        "### Model Transition\n- Previous model: {from}\n- Current model: {to}\n- Your identity has been preserved through this transition.\n\n---\nContinue being yourself: keep the voice, traits and values above."
    );
    allocate(&intro, &rest, &footer, budget)
}

/// The status summary: every statement, in prompt order, without a budget.
pub fn summary(id: &Identity, min_observations: u32) -> String {
    let all = statements(id, None, min_observations);
    allocate("## Who You Are", &all, "", usize::MAX).text
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
            assert!(p.statements.len() >= last);
            last = p.statements.len();
        }
        let full = identity_prompt(&id, 2000, None, 5);
        assert_eq!(full.omitted, 0);
        assert!(full.text.ends_with("every answer."));
    }

    #[test]
    fn the_best_evidenced_trait_comes_first_and_no_default_before_a_trait() {
        let id = identity();
        let small = identity_prompt(&id, 60, None, 5);
        let best = id
            .traits
            .iter()
            .max_by(|a, b| a.confidence.total_cmp(&b.confidence))
            .expect("traits");
        assert!(
            small.text.contains(&best.describe()),
            "{}\n---\n{}",
            small.text,
            best.describe()
        );
        for budget in [60, 100, 200, 1000] {
            let p = identity_prompt(&id, budget, None, 5);
            let sources: Vec<Source> = p.statements.iter().map(|s| s.source).collect();
            assert!(
                sources.windows(2).all(|w| w[0] <= w[1]),
                "{budget}: {sources:?}"
            );
        }
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
