//! What the lifecycle use cases ask of a store: the timeline, archiving and un-archiving, and deletion
//! (clear a scope, forget one memory).
//!
//! Deletion removes the `verbatims` rows only: every derived table cascades from it
//! (fingerprints, embeddings, tags, causal edges), the FTS rows go through the
//! delete trigger, and `superseded_by` pointing at a deleted memory is set to NULL by its foreign
//! key. Callers remove the deleted ids from the vector index after the transaction commits.

use crate::model::StoredMemory;
use mira_core::memory::{Memory, MemoryId, MemoryType};
use std::collections::{HashMap, HashSet};

/// A page of the timeline: filters, order and position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineQuery {
    /// Only this wing (all wings when `None`).
    pub wing: Option<String>,
    /// Only these wings (every wing when `None`): what the caller may read.
    pub wings: Option<Vec<String>>,
    /// Only this room.
    pub room: Option<String>,
    /// Only this type.
    pub memory_type: Option<MemoryType>,
    /// Only memories created at or after this time (unix ms).
    pub since_ms: Option<i64>,
    /// Only memories created at or before this time (unix ms).
    pub until_ms: Option<i64>,
    /// Include archived memories.
    pub include_archived: bool,
    /// Include superseded memories.
    pub include_superseded: bool,
    /// Only memories from this source.
    pub source: Option<crate::model::Source>,
    /// Only pinned memories.
    pub pinned_only: bool,
    /// Newest first (`true`) or oldest first; ties on `created_at` are broken by `seq`.
    pub newest_first: bool,
    /// Start strictly after this `(created_at ms, seq)` position in the chosen order.
    pub after: Option<(i64, i64)>,
    /// At most this many rows.
    pub limit: usize,
}

/// One rule of an archive run: live memories (of one type, or of any type) created strictly
/// before a cut-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveRule {
    /// The type it applies to (`None` = every type).
    pub memory_type: Option<MemoryType>,
    /// The cut-off (unix ms): memories created strictly before it are archived.
    pub before_ms: i64,
}

/// What an archive run selects.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArchivePlan {
    /// Age rules.
    pub rules: Vec<ArchiveRule>,
    /// The rules apply to these wings only (every wing when `None`): what the caller may
    /// change.
    pub wings: Option<Vec<String>>,
    /// Explicit ids (those already archived or absent are skipped).
    pub ids: Vec<MemoryId>,
    /// The `archived_at` written (unix ms).
    pub now_ms: i64,
}

impl ArchivePlan {
    /// The memories the plan selects, oldest first, each with the first reason that matched:
    /// `by_rule[i]` holds the live memories rule `i` matches, `by_id` the memories named by id.
    pub(crate) fn selection(
        &self,
        by_rule: Vec<Vec<StoredMemory>>,
        by_id: &HashMap<MemoryId, StoredMemory>,
    ) -> Vec<(StoredMemory, ArchiveMatch)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (i, rows) in by_rule.into_iter().enumerate() {
            for m in rows {
                if seen.insert(m.memory.id) {
                    out.push((m, ArchiveMatch::Rule(i)));
                }
            }
        }
        for id in &self.ids {
            if let Some(m) = by_id.get(id).filter(|m| !m.memory.archived) {
                if seen.insert(m.memory.id) {
                    out.push((m.clone(), ArchiveMatch::Id));
                }
            }
        }
        out.sort_by_key(|(m, _)| (m.memory.created_at, m.seq));
        out
    }
}

/// Why a memory was selected by an archive run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveMatch {
    /// By the rule at this index of [`ArchivePlan::rules`] (the first one that matched).
    Rule(usize),
    /// By its id.
    Id,
}

/// The result of an archive run (or of its dry run: what it would do).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArchiveReport {
    /// The memories archived, oldest first, with the reason.
    pub archived: Vec<(Memory, ArchiveMatch)>,
}

impl ArchiveReport {
    /// The report of archiving `rows` (a [`ArchivePlan::selection`]).
    pub(crate) fn of(rows: Vec<(StoredMemory, ArchiveMatch)>) -> Self {
        ArchiveReport {
            archived: rows.into_iter().map(|(m, why)| (m.memory, why)).collect(),
        }
    }
}

/// What a deletion covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteScope {
    /// Every memory.
    All,
    /// Every memory of a wing.
    Wing(String),
    /// Every memory of one room of a wing.
    Room {
        /// The wing.
        wing: String,
        /// The room.
        room: String,
    },
    /// One memory.
    Memory(MemoryId),
}

/// What a deletion removes (or would remove).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteCounts {
    /// The memories, in `seq` order.
    pub ids: Vec<MemoryId>,
    /// Causal edges touching them.
    pub edges: u64,
    /// Their tags.
    pub tags: u64,
    /// Sum of their T0 token counts.
    pub tokens: u64,
}
