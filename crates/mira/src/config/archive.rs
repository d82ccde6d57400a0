//! `archive_thresholds:`: when `mira archive` archives a type by age.

use super::checks::check;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// `archive_thresholds:` (days; absent types never auto-archive). Only session notes and debug
/// logs age out: decisions, facts and preferences must stay null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchiveThresholds {
    /// session_note
    pub session_note: Option<u32>,
    /// debug_log
    pub debug_log: Option<u32>,
    /// decision: must be null (never by age)
    pub decision: Option<u32>,
    /// fact: must be null (never by age)
    pub fact: Option<u32>,
    /// preference: must be null (never by age)
    pub preference: Option<u32>,
}
impl Default for ArchiveThresholds {
    fn default() -> Self {
        ArchiveThresholds {
            session_note: Some(30),
            debug_log: Some(7),
            decision: None,
            fact: None,
            preference: None,
        }
    }
}

impl ArchiveThresholds {
    /// Checks `archive_thresholds:`.
    pub(super) fn validate(&self) -> Result<()> {
        for (k, v) in [
            ("session_note", self.session_note),
            ("debug_log", self.debug_log),
        ] {
            check(
                v != Some(0),
                &format!("archive_thresholds.{k}"),
                "must be at least 1 day (omit it to never archive)",
            )?;
        }
        for (k, v) in [
            ("decision", self.decision),
            ("fact", self.fact),
            ("preference", self.preference),
        ] {
            check(
                v.is_none(),
                &format!("archive_thresholds.{k}"),
                "must be null: decisions, facts and preferences never age out of recall (archive one by id: mira archive --id ID)",
            )?;
        }
        Ok(())
    }
}
