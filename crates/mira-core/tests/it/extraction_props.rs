//! Property tests of the store-side extraction: no panics on arbitrary text up to 64 KiB,
//! canonical JSON that round-trips, never an empty subject list.

use mira_core::causal::detect_cues;
use mira_core::classify::classify;
use mira_core::fingerprint::extract;
use mira_core::memory::Fingerprint;
use mira_core::tags::extract_tags;
use mira_core::MemoryType;
use proptest::prelude::*;

/// Largest content a memory may have.
const MAX_BYTES: usize = 64 * 1024;

/// Cue words and tricky fragments, so that every extraction regex gets exercised.
#[rustfmt::skip]
const FRAGMENTS: &[&str] = &[
    "decided to migrate to", "PostgreSQL", "Rejected:", "(not ACID)", "rather than", "instead of",
    "over", "because of", "since", "due to", "Reason:", "and", "Approved by", "CTO", "Assigned to",
    "Jean", "will take care of", "deadline:", "by", "15/04/2024", "April 15, 2024", "sprint 4",
    "is", "100", "v2", "1.4.3", "port 8080", "https://x.io/a", "a@b.co", "ABC-123", "#42",
    "3f2a9c1d", "Update:", "is now", "supersedes", "reverted", "fixes", "Following", "after",
    "however", "décidé d'utiliser", "plutôt que", "parce que", "car", "Validé par", "Éric",
    "assigné à", "avant le", "15 avril 2024", "s'en charge", "Suite à", "désormais", "résout",
    "topic:", "about", "database", "=", ":", ".", ",", ";", "\n", "(", ")", "'", "’", "-", "panic",
    "error handling", "I prefer", "New York", "l'API", "Jean-Pierre", "ÉÉ", "🦀",
];

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        2 => "[a-zA-Z0-9 .,:;()#@/'-]{1,12}",
        1 => any::<char>().prop_map(String::from),
        1 => "\\PC{1,8}",
    ]
}

/// Arbitrary UTF-8 text mixing cue words, ASCII noise and any characters, cut to `max` bytes.
fn text(max_pieces: usize, max_bytes: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..max_pieces).prop_map(move |pieces| {
        let mut text = pieces.join(" ");
        let mut end = text.len().min(max_bytes);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text
    })
}

fn check(content: &str) -> Result<(), TestCaseError> {
    let memory_type = classify(content);
    for forced in [memory_type, MemoryType::Decision] {
        let fingerprint = extract(content, forced, 2);
        prop_assert_eq!(fingerprint.memory_type, Some(forced));
        prop_assert!(!fingerprint.subjects.is_empty() && fingerprint.subjects.len() <= 3);
        let json = fingerprint.to_json();
        let back: Fingerprint =
            serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&back, &fingerprint);
        prop_assert!(
            json.len() <= 16 * 1024,
            "fingerprint of {} bytes",
            json.len()
        );
        let strings = fingerprint
            .subjects
            .iter()
            .chain(&fingerprint.rejected)
            .chain(&fingerprint.reasons)
            .chain(&fingerprint.approvals)
            .chain(&fingerprint.key_facts)
            .chain(&fingerprint.decision)
            .chain(&fingerprint.assignee)
            .chain(&fingerprint.deadline)
            .chain(fingerprint.entities.iter().map(|e| &e.text));
        for s in strings {
            prop_assert!(!s.is_empty() && s.chars().count() <= 200, "{:?}", s);
        }
        let tags = extract_tags(content, &fingerprint);
        prop_assert!(tags.len() <= 64);
        for tag in &tags {
            prop_assert!((2..=64).contains(&tag.tag.chars().count()), "{:?}", tag);
        }
    }
    for cue in detect_cues(content) {
        prop_assert!(cue.strength > 0.0 && cue.strength <= 1.0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn short_texts_never_panic(content in text(40, MAX_BYTES)) {
        check(&content)?;
    }

    #[test]
    fn texts_up_to_64_kib_never_panic(content in text(12_000, MAX_BYTES)) {
        check(&content)?;
    }
}

#[test]
fn full_64_kib_of_repeated_cues() {
    let mut content = FRAGMENTS.join(" ").repeat(200);
    let mut end = MAX_BYTES;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    content.truncate(end);
    check(&content).unwrap();
}
