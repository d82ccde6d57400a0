//! Text helpers of the extractor: the agent's turns, sentences, words and phrase counts.

use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// A line starting a turn of the user (`User:`, `Human:`, `Q:` …).
static USER_TURN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:\*\*)?(?:user|human|me|client|customer|utilisateur|q)(?:\*\*)?\s*:")
        .expect("valid regex")
});

/// A line starting a turn of the agent (`Assistant:`, `AI:`, `Agent:` …).
static AGENT_TURN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:\*\*)?(?:assistant|agent|ai|bot|claude|gpt|model|llm|a)(?:\*\*)?\s*:")
        .expect("valid regex")
});

/// The agent's part of a conversation, one string per turn.
///
/// With role markers (`User:` / `Assistant:` at the start of a line), only the agent's turns
/// are kept: the identity is the agent's, not the user's. Without any marker the whole text is
/// taken as the agent's, one turn per paragraph (blank-line separated). (The reference only
/// read a list of agent responses that its MCP and CLI never filled, so it extracted nothing;
/// this is the fix.)
pub fn agent_turns(conversation: &str) -> Vec<String> {
    let has_markers = conversation
        .lines()
        .any(|l| USER_TURN.is_match(l) || AGENT_TURN.is_match(l));
    if !has_markers {
        return conversation
            .split("\n\n")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let mut turns: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    // Text before the first marker belongs to nobody in particular: it is ignored.
    let mut agent = false;
    for line in conversation.lines() {
        if let Some(m) = AGENT_TURN.find(line) {
            if let Some(t) = current.take() {
                turns.push(t);
            }
            agent = true;
            current = Some(line[m.end()..].trim().to_owned());
        } else if USER_TURN.is_match(line) {
            if let Some(t) = current.take() {
                turns.push(t);
            }
            agent = false;
        } else if agent {
            if let Some(t) = current.as_mut() {
                t.push('\n');
                t.push_str(line);
            }
        }
    }
    turns.extend(current);
    turns
        .into_iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Sentences: split on `.`, `!`, `?`, `…` and line breaks; pieces of fewer than 2 words are
/// dropped.
pub fn sentences(text: &str) -> Vec<&str> {
    text.split(['.', '!', '?', '\n', '…'])
        .map(str::trim)
        .filter(|s| s.split_whitespace().count() >= 2)
        .collect()
}

/// Lower-case words (letters, digits and apostrophes inside a word).
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A compiled list of phrases matched as whole words, case-insensitively, each with a weight.
/// A phrase written with a leading `~` is weak evidence (weight 0.4); others weigh 1.
pub struct Lexicon {
    re: Regex,
    weights: BTreeMap<String, f64>,
}

impl Lexicon {
    /// Compiles `phrases` (longer phrases should come before their prefixes).
    pub fn new(phrases: &[&str]) -> Lexicon {
        let mut weights = BTreeMap::new();
        let mut plain: Vec<&str> = Vec::with_capacity(phrases.len());
        for p in phrases {
            let (w, p) = match p.strip_prefix('~') {
                Some(rest) => (0.4, rest),
                None => (1.0, *p),
            };
            weights.insert(normalise(p), w);
            plain.push(p);
        }
        // Longest first, so that "break down" wins over "break".
        plain.sort_by_key(|p| std::cmp::Reverse(p.len()));
        Lexicon {
            re: mira_core::text::phrase_regex(&plain),
            weights,
        }
    }

    /// Each phrase found in `text` (normalised: lower case, single spaces, `'` apostrophes)
    /// with its number of occurrences.
    pub fn hits(&self, text: &str) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for m in mira_core::text::phrase_matches(&self.re, text) {
            *out.entry(normalise(m.as_str())).or_insert(0) += 1;
        }
        out
    }

    /// Total occurrences in `text`.
    pub fn count(&self, text: &str) -> usize {
        mira_core::text::phrase_matches(&self.re, text).count()
    }

    /// The weight of a normalised phrase (1 for unknown ones).
    pub fn weight(&self, phrase: &str) -> f64 {
        self.weights.get(phrase).copied().unwrap_or(1.0)
    }
}

/// Lower case, whitespace runs as one space, typographic apostrophes as `'`.
pub fn normalise(phrase: &str) -> String {
    phrase
        .to_lowercase()
        .replace('’', "'")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `x / (1 + x)`: maps a non-negative rate onto [0, 1), 0.5 at x = 1.
pub fn saturate(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        0.0
    } else {
        x / (1.0 + x)
    }
}

/// Whether `c` is an emoji (the common pictographic blocks).
pub fn is_emoji(c: char) -> bool {
    matches!(c as u32,
        0x1F300..=0x1F5FF | 0x1F600..=0x1F64F | 0x1F680..=0x1F6FF | 0x1F900..=0x1F9FF
        | 0x1FA70..=0x1FAFF | 0x2600..=0x26FF | 0x2700..=0x27BF)
}

/// ASCII emoticons counted with emojis.
pub const EMOTICONS: &[&str] = &[":)", ":-)", ":D", ";)", ":P", ":(", "<3", "xD"];

/// Number of emojis and emoticons in `text`.
pub fn emoji_count(text: &str) -> usize {
    text.chars().filter(|c| is_emoji(*c)).count()
        + EMOTICONS
            .iter()
            .map(|e| text.matches(e).count())
            .sum::<usize>()
}

/// `s` cut to at most `max` characters on a word boundary, with `…` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(i) if i > max / 2 => &cut[..i],
        _ => &cut[..],
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_keep_only_the_agent() {
        let c = "User: hey, can you help?\nAssistant: Certainly. Here is the plan.\nIt has two steps.\nUser: thanks lol\nAI: You are welcome.";
        let t = agent_turns(c);
        assert_eq!(
            t,
            vec![
                "Certainly. Here is the plan.\nIt has two steps.".to_owned(),
                "You are welcome.".to_owned()
            ]
        );
        let plain = "First paragraph here.\n\nSecond one.";
        assert_eq!(agent_turns(plain).len(), 2);
    }

    #[test]
    fn lexicon_counts_whole_words_only() {
        let l = Lexicon::new(&["fun", "break down", "~might", "I'm"]);
        let h = l.hits("This function is fun. Let me BREAK   down it. I’m sure it might, fun!");
        assert_eq!(h.get("fun"), Some(&2));
        assert_eq!(h.get("break down"), Some(&1));
        assert_eq!(h.get("i'm"), Some(&1));
        assert_eq!(l.weight("might"), 0.4);
        assert_eq!(l.count("functional"), 0);
    }

    #[test]
    fn sentences_and_helpers() {
        assert_eq!(
            sentences("Hi. This is one! Is it? ok\nNext line here"),
            vec!["This is one", "Is it", "Next line here"]
        );
        assert_eq!(
            words("Don't stop, ça va?"),
            vec!["don't", "stop", "ça", "va"]
        );
        assert_eq!(emoji_count("great 🎉 :) ok"), 2);
        assert!((saturate(1.0) - 0.5).abs() < 1e-9);
        assert_eq!(shorten("one two three four", 9), "one two…");
    }
}
