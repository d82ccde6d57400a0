//! Changing where a memory is filed (wing, room, type) with what is derived from its type.

use mira_core::memory::Fingerprint;
use mira_core::memory::MemoryType;
use mira_core::render::ModeCosts;
use mira_core::tags::Tag;

/// A memory's new placement and everything derived from its type, written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEdit {
    /// The wing.
    pub wing: String,
    /// The room.
    pub room: String,
    /// The type.
    pub memory_type: MemoryType,
    /// The fingerprint extracted for that type.
    pub fingerprint: Fingerprint,
    /// cl100k tokens of the rendered fingerprint.
    pub fingerprint_tokens: u32,
    /// The tags derived from the content and that fingerprint (they replace the old ones).
    pub tags: Vec<Tag>,
    /// Section costs of the edited memory, for render format `cost_version`.
    pub costs: ModeCosts,
    /// The render format the costs were computed for.
    pub cost_version: u32,
}
