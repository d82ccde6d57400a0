//! The archive use case: soft archiving (`archived_at` is set, nothing is deleted) by the
//! per-type age thresholds of the config, or by an explicit age or ids; dry run; un-archive.
//!
//! Archived memories leave recall and the vector index but stay loadable (and visible in the
//! timeline with `include_archived`).

use super::access::Access;
use super::timeline::{rfc3339, summary};
use super::{validate, UseCaseError, UseCaseResult};
use crate::webhooks::{EventKind, MemoryEvent};
use crate::App;
use chrono::{DateTime, Duration, Utc};
use mira_core::memory::{Memory, MemoryId, MemoryType};
use mira_core::message::{Message, Term};
use mira_core::render::short_id;
use mira_core::text::plural;
use mira_store::{ArchiveMatch, ArchivePlan, ArchiveRule};
use serde::Serialize;
use std::fmt::Write;

/// Largest age accepted for `older_than_days` (about a century).
pub const MAX_OLDER_THAN_DAYS: i64 = 36_500;
/// Most ids accepted in one call.
pub const MAX_IDS: usize = 1000;

/// The types that age out of recall: archiving by age (the thresholds or `older_than_days`)
/// never takes a decision, a fact or a preference; only explicit ids do.
pub const AGEING: [MemoryType; 2] = [MemoryType::SessionNote, MemoryType::DebugLog];

/// An archive request. With neither `older_than_days` nor `ids`, the configured thresholds
/// (`archive_thresholds`) apply; with either, only what was asked for.
#[derive(Debug, Clone, Default)]
pub struct ArchiveRequest {
    /// Archive session notes and debug logs older than this many days.
    pub older_than_days: Option<i64>,
    /// Archive these memories (short ids, longer prefixes, `<uuid>` or `T0:<uuid>`).
    pub ids: Vec<String>,
    /// Report what would be archived without changing anything.
    pub dry_run: bool,
    /// The clock (now when absent).
    pub now: Option<DateTime<Utc>>,
}

/// One criterion of an archive run and how many memories it selected.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RuleCount {
    /// The type it applies to (every type when absent).
    pub memory_type: Option<MemoryType>,
    /// The age in days (memories strictly older are archived); absent for explicit ids.
    pub days: Option<u32>,
    /// Memories selected by it.
    pub count: usize,
}

/// A memory archived (or restored).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ArchivedItem {
    /// Its id.
    pub id: MemoryId,
    /// Its type.
    pub memory_type: MemoryType,
    /// Its wing.
    pub wing: String,
    /// Its summary.
    pub summary: String,
    /// When it was created (RFC 3339 in JSON).
    #[serde(serialize_with = "rfc3339")]
    #[schemars(with = "String")]
    pub created_at: DateTime<Utc>,
    /// T0 tokens.
    pub tokens: u32,
}

/// What an archive run did (or, for a dry run, would do).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ArchiveOutcome {
    /// Whether nothing was changed.
    pub dry_run: bool,
    /// The criteria, in order (a memory counts for the first one it matches).
    pub rules: Vec<RuleCount>,
    /// The memories archived, oldest first.
    pub items: Vec<ArchivedItem>,
    /// Ids asked for that were already archived (left as they are).
    pub already_archived: Vec<MemoryId>,
    /// Sum of the T0 tokens of the archived memories (no longer in recall).
    pub tokens_freed: u64,
}

/// What an un-archive did.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct UnarchiveOutcome {
    /// The memories restored to recall and the index.
    pub restored: Vec<ArchivedItem>,
    /// Ids asked for that were not archived (left as they are).
    pub not_archived: Vec<MemoryId>,
}

fn item(m: &Memory) -> ArchivedItem {
    ArchivedItem {
        id: m.id,
        memory_type: m.memory_type,
        wing: m.wing.clone(),
        summary: summary(m),
        created_at: m.created_at,
        tokens: m.token_count,
    }
}

/// Parses and de-duplicates ids; every one must exist, in a wing `allowed` accepts. Returns
/// them with the archived flag.
fn existing(
    app: &App,
    raw: &[String],
    allowed: impl Fn(&str) -> UseCaseResult<()>,
) -> UseCaseResult<Vec<(MemoryId, bool)>> {
    if raw.len() > MAX_IDS {
        return Err(UseCaseError::Invalid(
            format!(
                "{} ids given; the limit is {MAX_IDS} per call: split the list",
                raw.len()
            )
            .into(),
        ));
    }
    let mut out: Vec<(MemoryId, bool)> = Vec::with_capacity(raw.len());
    for r in raw {
        let id = validate::memory_id(&*app.store, r)?;
        if out.iter().any(|(seen, _)| *seen == id) {
            continue;
        }
        let loaded = app.store.load(id)?.ok_or_else(|| {
            validate::unknown_id(
                format!("no memory has id {id}: take ids from "),
                " (nothing was changed)",
            )
        })?;
        allowed(&loaded.memory.wing)?;
        out.push((id, loaded.memory.archived));
    }
    Ok(out)
}

/// The configured age of `t` (of [`AGEING`]; the others never age out).
fn threshold(app: &App, t: MemoryType) -> Option<u32> {
    let a = &app.config.archive_thresholds;
    match t {
        MemoryType::SessionNote => a.session_note,
        MemoryType::DebugLog => a.debug_log,
        MemoryType::Decision | MemoryType::Fact | MemoryType::Preference => None,
    }
}

fn cutoff(now: DateTime<Utc>, days: u32) -> i64 {
    Duration::try_days(i64::from(days))
        .and_then(|d| now.checked_sub_signed(d))
        .map_or(i64::MIN, |t| t.timestamp_millis())
}

/// Archives by thresholds, age or ids (see [`ArchiveRequest`]), then removes the archived
/// memories from the vector index. `access` must be allowed destructive calls; ids must be in
/// wings it writes to, and thresholds and ages apply to those wings only.
pub fn archive(app: &App, access: &Access, req: &ArchiveRequest) -> UseCaseResult<ArchiveOutcome> {
    let now = req.now.unwrap_or_else(Utc::now);
    access.check_destructive("archive memories")?;
    let ids = existing(app, &req.ids, |w| access.check_remove("archive", w))?;
    let mut rules: Vec<(Option<MemoryType>, u32)> = Vec::new();
    if let Some(days) = req.older_than_days {
        if !(1..=MAX_OLDER_THAN_DAYS).contains(&days) {
            return Err(UseCaseError::Invalid(Term::OlderThanDays.then(format!(
                " {days} is out of range: give 1 to {MAX_OLDER_THAN_DAYS} days"
            ))));
        }
        rules.extend(AGEING.into_iter().map(|t| (Some(t), days as u32)));
    } else if ids.is_empty() {
        rules.extend(
            AGEING
                .into_iter()
                .filter_map(|t| threshold(app, t).map(|d| (Some(t), d))),
        );
    }
    let plan = ArchivePlan {
        wings: access.writable_list(),
        rules: rules
            .iter()
            .map(|&(memory_type, days)| ArchiveRule {
                memory_type,
                before_ms: cutoff(now, days),
            })
            .collect(),
        ids: ids
            .iter()
            .filter(|(_, archived)| !archived)
            .map(|(id, _)| *id)
            .collect(),
        now_ms: now.timestamp_millis(),
    };
    let report = app.store.archive(&plan, req.dry_run)?;
    if !req.dry_run {
        if !report.archived.is_empty() {
            access.audit(&format!("archived {} memories", report.archived.len()));
        }
        app.sync_index();
        app.notify_webhooks(|| {
            report
                .archived
                .iter()
                .map(|(m, _)| MemoryEvent::about(EventKind::Archived, m))
                .collect()
        });
    }
    let mut counts: Vec<RuleCount> = rules
        .iter()
        .map(|&(memory_type, days)| RuleCount {
            memory_type,
            days: Some(days),
            count: 0,
        })
        .collect();
    if !ids.is_empty() {
        counts.push(RuleCount {
            memory_type: None,
            days: None,
            count: 0,
        });
    }
    for (_, why) in &report.archived {
        let i = match why {
            ArchiveMatch::Rule(i) => *i,
            ArchiveMatch::Id => rules.len(),
        };
        if let Some(c) = counts.get_mut(i) {
            c.count += 1;
        }
    }
    Ok(ArchiveOutcome {
        dry_run: req.dry_run,
        rules: counts,
        tokens_freed: report
            .archived
            .iter()
            .map(|(m, _)| u64::from(m.token_count))
            .sum(),
        items: report.archived.iter().map(|(m, _)| item(m)).collect(),
        already_archived: ids
            .iter()
            .filter(|(_, archived)| *archived)
            .map(|(id, _)| *id)
            .collect(),
    })
}

/// Un-archives these memories and puts them back in the vector index. Unknown ids are refused
/// (nothing is changed); ids that are not archived are reported and left as they are.
pub fn unarchive(
    app: &App,
    access: &Access,
    raw_ids: &[String],
) -> UseCaseResult<UnarchiveOutcome> {
    if raw_ids.is_empty() {
        return Err(UseCaseError::Invalid(
            Message::from("no id given: pass the ids of archived memories (")
                .then(Term::Timeline)
                .then(" with ")
                .then(Term::IncludeArchived)
                .then(" lists them)"),
        ));
    }
    let ids = existing(app, raw_ids, |w| access.check_write(w))?;
    let targets: Vec<MemoryId> = ids
        .iter()
        .filter(|(_, archived)| *archived)
        .map(|(id, _)| *id)
        .collect();
    let restored = app.store.unarchive(&targets)?;
    for r in restored.iter().filter(|r| r.embedding.is_none()) {
        tracing::warn!(
            "memory {} has no embedding: restored to lexical recall only",
            r.memory.id
        );
    }
    app.sync_index();
    Ok(UnarchiveOutcome {
        restored: restored.iter().map(|r| item(&r.memory)).collect(),
        not_archived: ids
            .iter()
            .filter(|(_, archived)| !archived)
            .map(|(id, _)| *id)
            .collect(),
    })
}

fn type_label(t: MemoryType) -> &'static str {
    match t {
        MemoryType::Decision => "Decisions",
        MemoryType::Fact => "Facts",
        MemoryType::Preference => "Preferences",
        MemoryType::SessionNote => "Session notes",
        MemoryType::DebugLog => "Debug logs",
    }
}

fn item_line(out: &mut String, i: &ArchivedItem) {
    let _ = writeln!(
        out,
        "  {} [{}] {} ({}, {})",
        short_id(i.id),
        i.memory_type,
        i.summary,
        i.wing,
        i.created_at.format("%Y-%m-%d"),
    );
}

/// The text form, as the reference (`Archiving complete:`, `- Session notes > 30d: N`, …,
/// `Total freed: <t> tokens`) followed by the archived memories; a dry run says what would go.
pub fn render_text(o: &ArchiveOutcome) -> String {
    let mut out = String::from(if o.dry_run {
        "Archive dry run (nothing was changed):\n"
    } else {
        "Archiving complete:\n"
    });
    if o.rules.is_empty() {
        out.push_str("- No archive threshold is configured (archive_thresholds)\n");
    }
    for r in &o.rules {
        let label = match (r.memory_type, r.days) {
            (Some(t), Some(d)) => format!("{} > {d}d", type_label(t)),
            _ => "By id".to_owned(),
        };
        let _ = writeln!(out, "- {label}: {}", r.count);
    }
    let _ = writeln!(
        out,
        "{} {}",
        if o.dry_run {
            "Would free:"
        } else {
            "Total freed:"
        },
        plural(o.tokens_freed, "token", "tokens")
    );
    if !o.items.is_empty() {
        out.push_str(if o.dry_run {
            "Would archive:\n"
        } else {
            "Archived:\n"
        });
        for i in &o.items {
            item_line(&mut out, i);
        }
    }
    for id in &o.already_archived {
        let _ = writeln!(out, "Already archived: {}", short_id(*id));
    }
    out
}

/// The text form of an un-archive.
pub fn render_unarchive_text(o: &UnarchiveOutcome) -> String {
    let mut out = format!(
        "Unarchived {}:\n",
        plural(o.restored.len() as u64, "memory", "memories")
    );
    for i in &o.restored {
        item_line(&mut out, i);
    }
    for id in &o.not_archived {
        let _ = writeln!(out, "Not archived (unchanged): {}", short_id(*id));
    }
    out
}
