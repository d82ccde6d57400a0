//! Retraction requests in stored text: "Please forget my old address.", "Disregard what I said
//! about the budget." The memory they name is retracted by the store (archived, restorable),
//! never deleted.

use crate::text::{in_question, is_stop_word, words};
use regex::Regex;
use std::sync::LazyLock;

/// A sentence that asks to forget something, and what.
static RETRACTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[.!?]\s+)(?:please\s+|kindly\s+)?(?:forget|disregard|scratch|never mind)\s+(?:about\s+)?(?:what\s+(?:i|we)\s+(?:said|told\s+you|wrote|mentioned)\s+(?:about|regarding)\s+)?(?P<what>[^.?!;]{3,120})",
    )
    .expect("literal regex")
});

/// Words of a request that do not say which memory ("forget my *old* one").
const VAGUE: &[&str] = &[
    "old",
    "new",
    "previous",
    "earlier",
    "last",
    "that",
    "this",
    "it",
    "one",
    "thing",
    "everything",
];

/// What `content` asks to forget, as the words that name it (none: it asks nothing, or is too
/// vague, like "forget it"; a question asks nothing).
pub fn retraction_terms(content: &str) -> Vec<String> {
    let Some(c) = RETRACTION.captures(content) else {
        return Vec::new();
    };
    let Some(what) = c.name("what") else {
        return Vec::new();
    };
    if in_question(content, what.start()) {
        return Vec::new();
    }
    words(what.as_str())
        .into_iter()
        .filter(|w| w.chars().count() >= 3 && !is_stop_word(w) && !VAGUE.contains(&w.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_what_they_name() {
        assert_eq!(
            retraction_terms("Please forget my old address."),
            vec!["address"]
        );
        assert_eq!(
            retraction_terms("Disregard what I said about the budget."),
            vec!["budget"]
        );
        assert!(retraction_terms("Forget it.").is_empty());
        assert!(retraction_terms("Should we forget the budget?").is_empty());
        assert!(retraction_terms("I forgot my keys at home.").is_empty());
        assert!(retraction_terms("The budget is $5000.").is_empty());
    }
}
