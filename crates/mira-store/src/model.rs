//! The one model of a stored memory, shared by both backends: what is written ([`NewMemory`],
//! for a store and for a restore alike), what is read back ([`StoredMemory`], with the optional
//! [`Parts`] a caller asks for), the scope of a search ([`Scope`]), a live memory as the
//! catalog holds it ([`Card`], [`CatalogRow`]) and the id parser.

use crate::{Result, StoreError};
use mira_core::memory::{Memory, MemoryId, MemoryType, RelationType};
use mira_core::render::ModeCosts;
use mira_core::tags::Tag;
use std::sync::Arc;

/// Where a memory came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Stored on purpose, by an agent or a person (`mira_store`, the CLI, the browser, an
    /// import): every memory written before sources were recorded.
    #[default]
    Stored,
    /// Kept by a client hook from a session's transcript (`mira hook`), without being asked.
    Captured,
}

impl Source {
    /// Every source.
    pub const ALL: [Source; 2] = [Source::Stored, Source::Captured];

    /// The word stored in the database and printed (`stored`, `captured`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Stored => "stored",
            Source::Captured => "captured",
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Source {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        Source::ALL
            .into_iter()
            .find(|v| v.as_str() == wanted)
            .ok_or_else(|| {
                format!("unknown source '{s}': use stored (stored on purpose) or captured (kept by a client hook)")
            })
    }
}

/// The store's bookkeeping of a memory: what its row records besides the [`Memory`] itself
/// (its hash, when it was stored and archived, its metadata, pin and source, the token costs of
/// its renderings). None of it is extracted from the text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bookkeeping {
    /// SHA-256 (hex) of the trimmed content: the exact-duplicate key within a wing.
    pub content_hash: String,
    /// When it was written (unix ms).
    pub stored_at: i64,
    /// When it was archived (unix ms), if it is; [`Memory::archived`] follows from it.
    pub archived_at: Option<i64>,
    /// Free-form JSON metadata, as stored.
    pub metadata: String,
    /// cl100k tokens of the rendered fingerprint.
    pub fingerprint_tokens: u32,
    /// Shown in every recall of its wing, before anything else.
    pub pinned: bool,
    /// Where it came from.
    pub source: Source,
    /// Token cost of each render mode's section for the current render format
    /// ([`mira_core::render::RENDER_VERSION`]); `None` when not computed for it (the
    /// application fills it in the background).
    pub costs: Option<ModeCosts>,
}

/// A stored embedding (T2).
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Name of the model that computed it.
    pub model: String,
    /// The vector, bit for bit as stored.
    pub vector: Vec<f32>,
}

/// A causal edge seen from one of its two memories.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// The memory at the other end: the cause among [`StoredMemory::causes`] and
    /// [`NewMemory::causes`], the consequence among [`StoredMemory::consequences`].
    pub other: MemoryId,
    /// The relation (cause → consequence).
    pub relation: RelationType,
    /// Confidence in [0, 1], as stored.
    pub confidence: f64,
    /// When the link was detected (unix ms).
    pub detected_at: i64,
}

/// The write model: a memory with everything derived from it and its relations to earlier
/// memories, written in one transaction by a store and (without relations) by a restore.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    /// T0, T1 and metadata. `archived` and `superseded_by` are not written from here:
    /// [`Bookkeeping::archived_at`] and the relations say them.
    pub memory: Memory,
    /// The rest of the row: the store's bookkeeping.
    pub bookkeeping: Bookkeeping,
    /// Tags in extraction order.
    pub tags: Vec<Tag>,
    /// T2 (absent when the memory was stored without a model).
    pub embedding: Option<Embedding>,
    /// Causal edges from earlier memories to this one.
    pub causes: Vec<Edge>,
    /// Earlier memories this one supersedes (their `superseded_by` becomes this id).
    pub supersedes: Vec<MemoryId>,
    /// Earlier memories this one retracts ("please forget …"): archived in the same
    /// transaction, restorable.
    pub retracts: Vec<MemoryId>,
}

/// Which optional parts of a memory to read with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Parts {
    /// Its tags.
    pub tags: bool,
    /// Its embedding.
    pub embedding: bool,
    /// The edges leading to it.
    pub causes: bool,
    /// The edges leading from it.
    pub consequences: bool,
    /// The memories it superseded.
    pub supersedes: bool,
}

impl Parts {
    /// The row alone.
    pub const NONE: Parts = Parts {
        tags: false,
        embedding: false,
        causes: false,
        consequences: false,
        supersedes: false,
    };
    /// Tags and causal edges both ways (a memory as `mira_load` shows it).
    pub const LINKED: Parts = Parts {
        tags: true,
        embedding: false,
        causes: true,
        consequences: true,
        supersedes: false,
    };
    /// What an export writes: tags, causes and, when asked, the embedding.
    pub fn export(embedding: bool) -> Parts {
        Parts {
            tags: true,
            embedding,
            causes: true,
            ..Parts::NONE
        }
    }
}

/// The read model: a memory as stored, with the parts that were asked for ([`Parts`]; the
/// others are empty).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMemory {
    /// The row's stable key (`seq`): the key of the index and the tie-breaker of time order.
    pub seq: i64,
    /// T0, T1 and metadata.
    pub memory: Memory,
    /// The rest of the row: the store's bookkeeping.
    pub bookkeeping: Bookkeeping,
    /// Tags in stored order.
    pub tags: Vec<Tag>,
    /// T2, when it has one.
    pub embedding: Option<Embedding>,
    /// Edges whose target is this memory, by (detected_at, cause, relation).
    pub causes: Vec<Edge>,
    /// Edges whose source is this memory, by (detected_at, consequence, relation).
    pub consequences: Vec<Edge>,
    /// The memories whose `superseded_by` is this one, oldest first.
    pub supersedes: Vec<MemoryId>,
}

impl StoredMemory {
    /// Number of facts in its fingerprint.
    pub fn fact_count(&self) -> u32 {
        self.memory.fingerprint.fact_count()
    }

    /// Its entity tags.
    pub fn entities(&self) -> impl Iterator<Item = &str> {
        self.tags
            .iter()
            .filter(|t| t.kind == mira_core::tags::TagKind::Entity)
            .map(|t| t.tag.as_str())
    }
}

/// A memory that has no embedding yet (stored without a model: recall ranks it by its lexical
/// score alone until one is filled in with [`crate::MemoryStore::set_embeddings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unembedded {
    /// Its id.
    pub id: MemoryId,
    /// Its text (what the embedding is computed from).
    pub content: String,
}

/// A relation between two memories that a restore applies only once both exist.
#[derive(Debug, Clone, PartialEq)]
pub enum Relation {
    /// A causal edge `edge.other → to`.
    Edge {
        /// The newer memory (which carries the edge in an export).
        to: MemoryId,
        /// The edge (`other` is its cause).
        edge: Edge,
    },
    /// `memory` is superseded by `by`.
    Supersession {
        /// The older memory.
        memory: MemoryId,
        /// The newer one.
        by: MemoryId,
    },
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RestoreOutcome {
    /// The `seq` of each memory written, in input order.
    pub seqs: Vec<i64>,
    /// For each relation offered, whether both of its ends exist now (so it is in the store:
    /// written, or already there). Those still `false` can be offered again later.
    pub resolved: Vec<bool>,
    /// How many of the relations were written (not in the store before).
    pub added: u64,
}

impl RestoreOutcome {
    /// The outcome of writing memories at `seqs` and applying relations with results
    /// `applied` (`None`: an end is missing; else whether it was written).
    pub(crate) fn of(seqs: Vec<i64>, applied: &[Option<bool>]) -> RestoreOutcome {
        RestoreOutcome {
            seqs,
            resolved: applied.iter().map(Option::is_some).collect(),
            added: applied.iter().filter(|a| **a == Some(true)).count() as u64,
        }
    }
}

/// A causal edge with both of its memories: what a link made or removed by hand names.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The cause (the older memory, as links are found).
    pub from: MemoryId,
    /// What it led to.
    pub to: MemoryId,
    /// How `to` follows from `from`.
    pub relation: RelationType,
    /// Confidence in [0, 1] (1 for a link made by hand).
    pub confidence: f64,
}

impl Link {
    /// The edge as `to` holds it, detected at `at_ms`.
    pub(crate) fn edge(&self, at_ms: i64) -> Edge {
        Edge {
            other: self.from,
            relation: self.relation,
            confidence: self.confidence,
            detected_at: at_ms,
        }
    }
}

/// Where a search or a listing looks: one wing and/or one room (`None` = any). Archived
/// memories are always left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Scope {
    /// Only memories of this wing.
    pub wing: Option<String>,
    /// Only memories of this room (of any wing unless `wing` is set too).
    pub room: Option<String>,
}

impl Scope {
    /// No restriction.
    pub fn all() -> Self {
        Scope::default()
    }

    /// Only memories of `wing`.
    pub fn wing(wing: impl Into<String>) -> Self {
        Scope {
            wing: Some(wing.into()),
            room: None,
        }
    }
}

/// Counts over the whole store.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoreStats {
    /// All memories, archived included.
    pub memories: u64,
    /// Archived memories.
    pub archived: u64,
    /// Superseded memories.
    pub superseded: u64,
    /// Stored embeddings.
    pub embeddings: u64,
    /// Causal edges.
    pub edges: u64,
    /// Tags.
    pub tags: u64,
    /// Sum of the T0 token counts.
    pub total_tokens: u64,
    /// Memories per type.
    pub by_type: std::collections::BTreeMap<String, u64>,
    /// Memories per wing.
    pub by_wing: std::collections::BTreeMap<String, u64>,
    /// Memories per `wing/room`.
    pub by_room: std::collections::BTreeMap<String, u64>,
    /// Per wing with captured memories: how many, and when the last one was written (unix ms).
    pub captures: std::collections::BTreeMap<String, (u64, i64)>,
}

/// A live memory as recall sees it before choosing what to read in full.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    /// `verbatims.seq`, the stable row key.
    pub key: u64,
    /// The memory's id.
    pub id: MemoryId,
    /// Its wing.
    pub wing: Arc<str>,
    /// Its room.
    pub room: Arc<str>,
    /// Its type.
    pub memory_type: MemoryType,
    /// When it happened (unix ms).
    pub created_at_ms: i64,
    /// Its session, if any.
    pub session: Option<Arc<str>>,
    /// cl100k tokens of the content.
    pub token_count: u32,
    /// Facts in its fingerprint.
    pub fact_count: u32,
    /// Section costs stored with the row for the current render format (`None` when the row
    /// predates it; recall then computes them from the memory).
    pub costs: Option<ModeCosts>,
    /// The memory that replaced it, if any.
    pub superseded_by: Option<MemoryId>,
    /// Who said it (`Name:` prefix of the content), in lower case.
    pub speaker: Option<Arc<str>>,
    /// Shown in every recall of its wing, before anything else.
    pub pinned: bool,
}

/// One live row read from the database: the card's fields and the text the lexical index covers.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogRow {
    /// The card (its `speaker` is derived from `content` on insertion).
    pub card: Card,
    /// The content (T0).
    pub content: String,
}

/// `8 May 2023`: the day a memory happened, as the lexical index sees it.
pub(crate) fn day_text(created_at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(created_at_ms)
        .map(|t| t.format("%-d %B %Y").to_string())
        .unwrap_or_default()
}

/// Parses a stored memory id.
pub(crate) fn parse_id(s: &str) -> Result<MemoryId> {
    MemoryId::parse_str(s).map_err(|_| StoreError::Corrupt(format!("bad id '{s}'")))
}

/// A stored value that does not decode, as a [`StoreError::Corrupt`] naming the memory.
pub(crate) fn corrupt(
    id: impl std::fmt::Display,
    what: &str,
    e: impl std::fmt::Display,
) -> StoreError {
    StoreError::Corrupt(format!("memory {id}: {what}: {e}"))
}

/// Unix ms as a time (the epoch for a value out of range).
pub(crate) fn millis_to_time(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// A costs triple read from a row, kept only when it was computed for the current render format.
pub(crate) fn current_costs(
    header: Option<i64>,
    fingerprint: Option<i64>,
    verbatim: Option<i64>,
    version: Option<i64>,
) -> Option<ModeCosts> {
    match (header, fingerprint, verbatim, version) {
        (Some(h), Some(f), Some(v), Some(version))
            if version == i64::from(mira_core::render::RENDER_VERSION) =>
        {
            Some(ModeCosts {
                header: h.clamp(0, i64::from(u32::MAX)) as u32,
                fingerprint: f.clamp(0, i64::from(u32::MAX)) as u32,
                verbatim: v.clamp(0, i64::from(u32::MAX)) as u32,
            })
        }
        _ => None,
    }
}

/// The columns of one memory's row as both backends read them (before decoding).
#[derive(Debug, Clone)]
pub(crate) struct RawRow {
    pub seq: i64,
    pub id: MemoryId,
    pub wing: String,
    pub room: String,
    pub memory_type: String,
    pub content: String,
    pub content_hash: String,
    pub token_count: i64,
    pub created_at: i64,
    pub stored_at: i64,
    pub session_id: Option<String>,
    pub metadata: String,
    pub archived_at: Option<i64>,
    pub superseded_by: Option<MemoryId>,
    pub pinned: bool,
    pub source: String,
    pub costs: [Option<i64>; 4],
    pub fingerprint: String,
    pub fingerprint_tokens: i64,
}

impl RawRow {
    /// Decodes the row into a [`StoredMemory`] without its optional parts.
    pub fn decode(self) -> Result<StoredMemory> {
        let id = self.id;
        let memory_type = self
            .memory_type
            .parse()
            .map_err(|e| corrupt(id, "type", e))?;
        let fingerprint =
            serde_json::from_str(&self.fingerprint).map_err(|e| corrupt(id, "fingerprint", e))?;
        let [h, f, v, version] = self.costs;
        let source = self.source.parse().map_err(|e| corrupt(id, "source", e))?;
        Ok(StoredMemory {
            seq: self.seq,
            memory: Memory {
                id,
                wing: self.wing,
                room: self.room,
                memory_type,
                content: self.content,
                fingerprint,
                token_count: u32::try_from(self.token_count.max(0)).unwrap_or(u32::MAX),
                created_at: millis_to_time(self.created_at),
                session_id: self.session_id,
                archived: self.archived_at.is_some(),
                superseded_by: self.superseded_by,
            },
            bookkeeping: Bookkeeping {
                content_hash: self.content_hash,
                stored_at: self.stored_at,
                archived_at: self.archived_at,
                metadata: self.metadata,
                fingerprint_tokens: u32::try_from(self.fingerprint_tokens.max(0))
                    .unwrap_or(u32::MAX),
                pinned: self.pinned,
                source,
                costs: current_costs(h, f, v, version),
            },
            tags: Vec::new(),
            embedding: None,
            causes: Vec::new(),
            consequences: Vec::new(),
            supersedes: Vec::new(),
        })
    }
}
