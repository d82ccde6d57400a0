//! T1 fingerprint: the structured facts extracted from a memory's text by rules.

use crate::memory::MemoryType;
use serde::{Deserialize, Serialize};

/// The kind of an extracted entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Entity {
    /// The entity as written in the text.
    pub text: String,
    /// What kind of entity it is.
    pub kind: EntityKind,
}

/// The T1 form of a memory. Serialised with `serde_json` in field order, it is the canonical
/// JSON stored in the database; extraction is deterministic (same text, same fingerprint).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
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
}
