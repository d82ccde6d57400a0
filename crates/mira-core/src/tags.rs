//! Tags of a memory (`memory_tags`): its entities, subjects and keywords, normalised.
//!
//! Every tag is lower-cased, whitespace-collapsed and trimmed of surrounding punctuation
//! (a leading `#` and trailing `+`/`#` stay: "#123", "c++", "c#"), and 2 to 64 characters
//! long. Tags are unique; the first kind wins in the order entity, subject, keyword. At most
//! [`MAX_TAGS`] tags.

use crate::memory::Fingerprint;
use crate::text::{extraction_prefix, is_stop_word, keywords, words};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// At most this many tags per memory.
pub const MAX_TAGS: usize = 64;
/// Shortest tag, in characters.
const MIN_TAG_CHARS: usize = 2;
/// Longest tag, in characters.
const MAX_TAG_CHARS: usize = 64;
/// Shortest keyword, in characters (as the reference).
const MIN_KEYWORD_CHARS: usize = 5;
/// Shortest word of a subject phrase kept as a tag of its own, in characters.
const MIN_SUBJECT_WORD_CHARS: usize = 3;

/// Where a tag comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TagKind {
    /// An entity of the fingerprint.
    Entity,
    /// A subject phrase, or a word of one.
    Subject,
    /// A content word of the text.
    Keyword,
}

impl TagKind {
    /// The name stored in `tags.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            TagKind::Entity => "entity",
            TagKind::Subject => "subject",
            TagKind::Keyword => "keyword",
        }
    }
}

impl std::str::FromStr for TagKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "entity" => Ok(TagKind::Entity),
            "subject" => Ok(TagKind::Subject),
            "keyword" => Ok(TagKind::Keyword),
            other => Err(format!(
                "tag kind '{other}' is not known: use entity, subject or keyword"
            )),
        }
    }
}

/// One tag of a memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Tag {
    /// The normalised tag text.
    pub tag: String,
    /// Where it comes from.
    pub kind: TagKind,
}

/// The tags of a memory from its text and fingerprint: entity texts, subject phrases and
/// their words of 3+ characters that are not stop words, then keywords of 5+ characters
/// ([`keywords`]) of the content's [`extraction_prefix`]. Deterministic.
pub fn extract_tags(content: &str, fingerprint: &Fingerprint) -> Vec<Tag> {
    let content = extraction_prefix(content);
    let mut tags = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |raw: &str, kind: TagKind| {
        if tags.len() < MAX_TAGS {
            if let Some(tag) = normalise(raw) {
                if seen.insert(tag.clone()) {
                    tags.push(Tag { tag, kind });
                }
            }
        }
    };
    for entity in &fingerprint.entities {
        add(&entity.text, TagKind::Entity);
    }
    for subject in &fingerprint.subjects {
        add(subject, TagKind::Subject);
        let subject_words = words(subject);
        if subject_words.len() > 1 {
            for word in subject_words {
                if word.chars().count() >= MIN_SUBJECT_WORD_CHARS && !is_stop_word(&word) {
                    add(&word, TagKind::Subject);
                }
            }
        }
    }
    for keyword in keywords(content, MIN_KEYWORD_CHARS)
        .into_iter()
        .take(MAX_TAGS)
    {
        add(&keyword, TagKind::Keyword);
    }
    tags
}

/// The tag form of `raw`, or `None` when it is too short or too long.
fn normalise(raw: &str) -> Option<String> {
    let collapsed = raw
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let tag = collapsed
        .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '#')
        .trim_end_matches(|c: char| !c.is_alphanumeric() && c != '+' && c != '#');
    (MIN_TAG_CHARS..=MAX_TAG_CHARS)
        .contains(&tag.chars().count())
        .then(|| tag.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::extract;
    use crate::memory::MemoryType;

    fn tag_list(content: &str, memory_type: MemoryType) -> Vec<(String, &'static str)> {
        let fp = extract(content, memory_type, 2);
        extract_tags(content, &fp)
            .into_iter()
            .map(|t| (t.tag, t.kind.as_str()))
            .collect()
    }

    #[test]
    fn seed_tags() {
        let seed = "We decided to migrate to PostgreSQL for v2. Rejected: MySQL (not ACID), \
                    MongoDB (not relational). Reason: ACID and team expertise. Approved by CTO. \
                    Assigned to Jean.";
        let tags = tag_list(seed, MemoryType::Decision);
        assert_eq!(
            &tags[..3],
            &[
                ("postgresql".to_string(), "entity"),
                ("v2".to_string(), "entity"),
                ("mysql".to_string(), "entity"),
            ]
        );
        assert!(tags.contains(&("jean".to_string(), "entity")));
        assert!(tags.contains(&("decided".to_string(), "keyword")));
        assert!(tags.contains(&("expertise".to_string(), "keyword")));
        assert!(
            !tags
                .iter()
                .any(|(t, k)| t == "postgresql" && *k != "entity"),
            "first kind wins"
        );
    }

    #[test]
    fn subject_phrases_and_words() {
        let tags = tag_list(
            "The database connection pool max is 100 connections.",
            MemoryType::Fact,
        );
        assert!(tags.contains(&("database connection pool".to_string(), "subject")));
        assert!(tags.contains(&("pool".to_string(), "subject")));
        assert!(tags.contains(&("connections".to_string(), "keyword")));
    }

    #[test]
    fn normalisation() {
        assert_eq!(normalise("  (C++) "), Some("c++".into()));
        assert_eq!(normalise("#123,"), Some("#123".into()));
        assert_eq!(normalise("New   York"), Some("new york".into()));
        assert_eq!(normalise("x"), None);
        assert_eq!(normalise(&"a".repeat(65)), None);
        assert_eq!(normalise("Éric"), Some("éric".into()));
    }

    #[test]
    fn tags_are_unique_capped_and_valid() {
        let text: String = (0..500).map(|i| format!("keyword{i} ")).collect();
        let fp = extract(&text, MemoryType::SessionNote, 2);
        let tags = extract_tags(&text, &fp);
        assert_eq!(tags.len(), MAX_TAGS);
        let unique: HashSet<_> = tags.iter().map(|t| &t.tag).collect();
        assert_eq!(unique.len(), tags.len());
        assert!(tags
            .iter()
            .all(|t| (2..=64).contains(&t.tag.chars().count()) && t.tag == t.tag.to_lowercase()));
        assert_eq!(extract_tags(&text, &fp), tags, "deterministic");
    }
}
