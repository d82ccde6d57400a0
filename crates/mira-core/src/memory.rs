//! Memory types, relation types, identifiers and the T1 fingerprint (with its entities).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// Identifier of a memory (a UUID v4). Printed as `T0:<uuid>` by recall and timeline.
pub type MemoryId = Uuid;

/// The kind of a memory; drives the default room, the recency decay and archiving.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MemoryType {
    /// A choice that was made, with its reasons and rejected options.
    Decision,
    /// A statement of how things are (numbers, versions, configuration).
    Fact,
    /// A taste or habit of the user.
    Preference,
    /// What happened in a working session (the fallback type).
    SessionNote,
    /// An error, a crash, a bug and its fix.
    DebugLog,
}

impl MemoryType {
    /// All types, in their canonical order.
    pub const ALL: [MemoryType; 5] = [
        MemoryType::Decision,
        MemoryType::Fact,
        MemoryType::Preference,
        MemoryType::SessionNote,
        MemoryType::DebugLog,
    ];

    /// The snake_case name used in tool arguments, storage and output.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Decision => "decision",
            MemoryType::Fact => "fact",
            MemoryType::Preference => "preference",
            MemoryType::SessionNote => "session_note",
            MemoryType::DebugLog => "debug_log",
        }
    }

    /// The room a memory of this type goes to when none is given.
    pub fn default_room(self) -> &'static str {
        match self {
            MemoryType::Decision => "decisions",
            MemoryType::Fact => "facts",
            MemoryType::Preference => "preferences",
            MemoryType::SessionNote => "session",
            MemoryType::DebugLog => "debug",
        }
    }

    /// The reference's recency decay rate λ per day (recency = e^(−λ·age_days)).
    pub fn default_decay_rate(self) -> f64 {
        match self {
            MemoryType::Decision => 0.001,
            MemoryType::Fact => 0.005,
            MemoryType::Preference => 0.01,
            MemoryType::SessionNote => 0.1,
            MemoryType::DebugLog => 0.5,
        }
    }

    /// The comma-separated list of valid names, for error messages.
    pub fn valid_names() -> String {
        Self::ALL.map(|t| t.as_str()).join(", ")
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for a memory type name that is not one of [`MemoryType::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown memory type '{0}': valid types are {valid}", valid = MemoryType::valid_names())]
pub struct UnknownMemoryType(pub String);

impl FromStr for MemoryType {
    type Err = UnknownMemoryType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == wanted)
            .ok_or_else(|| UnknownMemoryType(s.to_string()))
    }
}

/// The relation carried by a causal edge `from → to` (the newer memory is `to`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RelationType {
    /// `to` happened because of `from`.
    Because,
    /// `to` was triggered by (followed) `from`.
    Triggered,
    /// `to` contradicts `from`.
    Contradicts,
    /// `to` updates (supersedes) `from`.
    Updates,
    /// `to` resolves the problem described by `from`.
    Resolves,
}

impl RelationType {
    /// All relation types.
    pub const ALL: [RelationType; 5] = [
        RelationType::Because,
        RelationType::Triggered,
        RelationType::Contradicts,
        RelationType::Updates,
        RelationType::Resolves,
    ];

    /// The lower-case name stored in the database and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            RelationType::Because => "because",
            RelationType::Triggered => "triggered",
            RelationType::Contradicts => "contradicts",
            RelationType::Updates => "updates",
            RelationType::Resolves => "resolves",
        }
    }

    /// Whether the newer memory replaces the older one (it becomes superseded).
    pub fn supersedes(self) -> bool {
        matches!(self, RelationType::Updates | RelationType::Contradicts)
    }
}

impl fmt::Display for RelationType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RelationType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("unknown relation type '{s}'"))
    }
}

/// The kind of an extracted entity.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A person's name.
    Person,
    /// A technology, product, language or tool.
    Technology,
    /// A company, team or other organisation.
    Organization,
    /// A place.
    Location,
    /// A calendar date or a time expression.
    Date,
    /// A version number (`v2`, `1.4.3`).
    Version,
    /// An identifier (ticket, issue, hash, UUID).
    Id,
    /// An e-mail address.
    Email,
    /// A URL.
    Url,
    /// Any other proper noun.
    Other,
}

/// One entity found in a memory.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct Entity {
    /// The entity as written in the text.
    pub text: String,
    /// What kind of entity it is.
    pub kind: EntityKind,
}

/// The T1 form of a memory. Serialised with `serde_json` in field order, it is the canonical
/// JSON stored in the database; extraction is deterministic (same text, same fingerprint).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Fingerprint {
    /// The memory type (given or classified).
    #[serde(rename = "type")]
    pub memory_type: Option<MemoryType>,
    /// What the memory is about (at most 3 short phrases); never empty after extraction.
    pub subjects: Vec<String>,
    /// People, technologies, dates, versions, ids, e-mails and URLs mentioned.
    pub entities: Vec<Entity>,
    /// The option chosen, when the memory records a decision.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub decision: Option<String>,
    /// Options that were rejected.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub rejected: Vec<String>,
    /// Reasons given.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub reasons: Vec<String>,
    /// Who is responsible.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub assignee: Option<String>,
    /// Who approved or validated it.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub approvals: Vec<String>,
    /// When it is due.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub deadline: Option<String>,
    /// Other short factual statements (numbers, settings, states).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub key_facts: Vec<String>,
}

impl Fingerprint {
    /// Canonical JSON of this fingerprint.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a fingerprint always serialises")
    }

    /// The number of extracted facts, the numerator of the allocator's density: 1 for a
    /// decision, 1 per rejected option, per reason and per approval, 1 for an assignee, 1 for a
    /// deadline and 1 per key fact. Subjects and entities do not count (every memory has a
    /// subject, and entities are names rather than facts).
    pub fn fact_count(&self) -> u32 {
        let count = usize::from(self.decision.is_some())
            + self.rejected.len()
            + self.reasons.len()
            + self.approvals.len()
            + usize::from(self.assignee.is_some())
            + usize::from(self.deadline.is_some())
            + self.key_facts.len();
        u32::try_from(count).unwrap_or(u32::MAX)
    }
}

/// A stored memory as the recall side sees it (T0 text, T1 fingerprint and metadata).
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// The memory's id.
    pub id: MemoryId,
    /// The wing (project) it belongs to.
    pub wing: String,
    /// The room (topic) inside the wing.
    pub room: String,
    /// Its type.
    pub memory_type: MemoryType,
    /// T0: the verbatim text.
    pub content: String,
    /// T1: the extracted fingerprint.
    pub fingerprint: Fingerprint,
    /// cl100k tokens of `content`.
    pub token_count: u32,
    /// When it was stored (or when it happened, for imported memories).
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The session it was stored in, when known.
    pub session_id: Option<String>,
    /// Archived memories stay loadable but leave recall and the index.
    pub archived: bool,
    /// The newer memory that replaces this one, when superseded.
    pub superseded_by: Option<MemoryId>,
}

/// Shortest id prefix accepted (the short id printed in the context block is 8 hex digits).
pub const MIN_ID_PREFIX: usize = 8;

/// A memory id as a caller wrote it: a whole UUID, or the start of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdRef {
    /// A complete id.
    Full(MemoryId),
    /// The first hex digits of an id, in its lower-case hyphenated form (`0a1b2c3d`,
    /// `0a1b2c3d-4e5f`).
    Prefix(String),
}

/// Parses a memory id as printed by mira: `<uuid>`, `T0:<uuid>`, `ID: T0:<uuid>`, the short id
/// `0a1b2c3d` or `[0a1b2c3d]`, or any prefix of at least [`MIN_ID_PREFIX`] hex digits.
pub fn parse_id_ref(raw: &str) -> Result<IdRef, String> {
    let mut s = raw.trim();
    if let Some(rest) = s.strip_prefix("ID:") {
        s = rest.trim();
    }
    for prefix in ["T0:", "F0:", "V0:", "FP:"] {
        if s.len() >= 3 && s.is_char_boundary(3) && s[..3].eq_ignore_ascii_case(prefix) {
            s = s[3..].trim();
            break;
        }
    }
    let s = s
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(s)
        .trim();
    if let Ok(id) = Uuid::parse_str(s) {
        return Ok(IdRef::Full(id));
    }
    let hex: String = s.chars().filter(|&c| c != '-').collect();
    if hex.len() >= MIN_ID_PREFIX && hex.len() < 32 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        // Re-hyphenated as in 8-4-4-4-12, so it is a prefix of the stored form.
        let mut out = String::with_capacity(hex.len() + 4);
        for (i, c) in hex.to_ascii_lowercase().chars().enumerate() {
            if matches!(i, 8 | 12 | 16 | 20) {
                out.push('-');
            }
            out.push(c);
        }
        return Ok(IdRef::Prefix(out));
    }
    Err(format!(
        "invalid ID '{raw}': not a memory id. Use an ID printed by mira_recall or mira_timeline: the short id (8 hex digits, e.g. 0a1b2c3d), any longer prefix, or the whole UUID"
    ))
}

/// Parses a complete memory id (`<uuid>`, `T0:<uuid>`, `ID: T0:<uuid>`).
pub fn parse_memory_id(raw: &str) -> Result<MemoryId, String> {
    match parse_id_ref(raw)? {
        IdRef::Full(id) => Ok(id),
        IdRef::Prefix(_) => Err(format!(
            "invalid ID '{raw}': a whole memory id (a UUID) is needed here"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_round_trip() {
        for t in MemoryType::ALL {
            assert_eq!(t.as_str().parse::<MemoryType>().unwrap(), t);
        }
        let err = "bogus".parse::<MemoryType>().unwrap_err().to_string();
        assert!(
            err.contains("decision, fact, preference, session_note, debug_log"),
            "{err}"
        );
    }

    #[test]
    fn ids_accept_printed_forms() {
        let id = Uuid::new_v4();
        for form in [
            id.to_string(),
            format!("T0:{id}"),
            format!("t0:{id}"),
            format!("  ID: T0:{id} "),
        ] {
            assert_eq!(parse_memory_id(&form).unwrap(), id, "{form}");
        }
        assert!(parse_memory_id("T0:abc")
            .unwrap_err()
            .contains("mira_recall"));
        assert!(parse_memory_id("é").is_err());
        assert!(parse_memory_id("0a1b2c3d").is_err());
    }

    #[test]
    fn short_ids_and_prefixes_are_references() {
        let id = Uuid::parse_str("0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d").unwrap();
        assert_eq!(
            parse_id_ref("T0:0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"),
            Ok(IdRef::Full(id))
        );
        for (form, prefix) in [
            ("0a1b2c3d", "0a1b2c3d"),
            ("[0A1B2C3D]", "0a1b2c3d"),
            ("T0:0a1b2c3d", "0a1b2c3d"),
            ("0a1b2c3d4e", "0a1b2c3d-4e"),
            ("0a1b2c3d-4e5f-4", "0a1b2c3d-4e5f-4"),
        ] {
            assert_eq!(
                parse_id_ref(form),
                Ok(IdRef::Prefix(prefix.into())),
                "{form}"
            );
        }
        for bad in ["0a1b2c3", "0a1b2c3z", "", "[]"] {
            assert!(
                parse_id_ref(bad).unwrap_err().contains("8 hex digits"),
                "{bad}"
            );
        }
    }
}
