//! Memory events and their JSON payloads.

use chrono::{DateTime, SecondsFormat, Utc};
use mira_core::memory::{Memory, MemoryId, MemoryType};
use serde_json::{json, Value};

/// What happened to a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A new memory was stored.
    Stored,
    /// A memory was archived.
    Archived,
    /// A memory was deleted (clear or forget).
    Cleared,
    /// A newer memory superseded this one.
    Superseded,
}

impl EventKind {
    /// Every kind.
    pub const ALL: [EventKind; 4] = [
        EventKind::Stored,
        EventKind::Archived,
        EventKind::Cleared,
        EventKind::Superseded,
    ];

    /// The event name (`memory.stored`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Stored => "memory.stored",
            EventKind::Archived => "memory.archived",
            EventKind::Cleared => "memory.cleared",
            EventKind::Superseded => "memory.superseded",
        }
    }
}

/// One event about one memory.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEvent {
    /// What happened.
    pub kind: EventKind,
    /// The memory.
    pub id: MemoryId,
    /// Its wing, when known.
    pub wing: Option<String>,
    /// Its room, when known.
    pub room: Option<String>,
    /// Its type, when known.
    pub memory_type: Option<MemoryType>,
    /// Its text (sent only to endpoints with `include_content`).
    pub content: Option<String>,
    /// For `memory.superseded`: the memory that replaces it.
    pub superseded_by: Option<MemoryId>,
    /// When it happened.
    pub timestamp: DateTime<Utc>,
}

impl MemoryEvent {
    /// An event about `memory`, now.
    pub fn about(kind: EventKind, memory: &Memory) -> MemoryEvent {
        MemoryEvent {
            kind,
            id: memory.id,
            wing: Some(memory.wing.clone()),
            room: Some(memory.room.clone()),
            memory_type: Some(memory.memory_type),
            content: Some(memory.content.clone()),
            superseded_by: None,
            timestamp: Utc::now(),
        }
    }

    /// `memory.cleared` for a deleted memory known only by its id and scope.
    pub fn cleared(id: MemoryId, wing: Option<&str>, room: Option<&str>) -> MemoryEvent {
        MemoryEvent {
            kind: EventKind::Cleared,
            id,
            wing: wing.map(str::to_owned),
            room: room.map(str::to_owned),
            memory_type: None,
            content: None,
            superseded_by: None,
            timestamp: Utc::now(),
        }
    }

    /// `memory.superseded` for `old`, replaced by `by`.
    pub fn superseded(old: &Memory, by: MemoryId) -> MemoryEvent {
        MemoryEvent {
            superseded_by: Some(by),
            ..MemoryEvent::about(EventKind::Superseded, old)
        }
    }

    /// The JSON body: `{event, id, wing, room, type, timestamp}`, plus `superseded_by` for a
    /// supersession and `content` when asked.
    pub fn payload(&self, include_content: bool) -> String {
        let mut v = json!({
            "event": self.kind.as_str(),
            "id": self.id.to_string(),
            "wing": self.wing,
            "room": self.room,
            "type": self.memory_type.map(MemoryType::as_str),
            "timestamp": self.timestamp.to_rfc3339_opts(SecondsFormat::Millis, true),
        });
        if let Value::Object(map) = &mut v {
            if let Some(by) = self.superseded_by {
                map.insert("superseded_by".into(), by.to_string().into());
            }
            if include_content {
                map.insert("content".into(), self.content.clone().into());
            }
        }
        v.to_string()
    }
}
