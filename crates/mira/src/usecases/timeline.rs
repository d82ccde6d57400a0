//! The timeline use case: what happened, in order, filtered by wing, room, type and date range,
//! paginated by an exact cursor.
//!
//! Newest first by default (as the reference prints it); `order: oldest` reads it forwards.
//! Times are printed in UTC. Archived and superseded memories appear only when asked for, and
//! are then marked.

use super::access::Access;
use super::{validate, UseCaseError, UseCaseResult};
use crate::App;
use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use mira_core::memory::{Memory, MemoryId, MemoryType};
use mira_core::message::{Message, Term};
use mira_core::render::short_id;
use mira_store::{Source, StoredMemory, TimelineQuery};
use serde::Serialize;
use std::fmt::Write;

/// Default number of memories per page.
pub const DEFAULT_LIMIT: i64 = 100;
/// Largest page.
pub const MAX_LIMIT: i64 = 1000;
/// Characters of a memory's one-line summary (its headline).
const SUMMARY_CHARS: usize = 100;
/// Largest relative age accepted (`36500d`, about a century).
const MAX_RELATIVE_HOURS: i64 = 36_500 * 24;

/// A timeline request. Blank strings count as absent.
#[derive(Debug, Clone, Default)]
pub struct TimelineRequest {
    /// Only this wing (every wing when absent).
    pub wing: Option<String>,
    /// Only this room.
    pub room: Option<String>,
    /// Only this type (decision, fact, preference, session_note, debug_log).
    pub memory_type: Option<String>,
    /// Created at or after: `YYYY-MM-DD`, RFC 3339, or relative `Nh`, `Nd`, `Nw` (ago).
    pub since: Option<String>,
    /// Created at or before: same forms (a bare date includes that whole day).
    pub until: Option<String>,
    /// Page size, 1-1000 (default 100).
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// `newest` (default) or `oldest` first.
    pub order: Option<String>,
    /// Show archived memories too (marked `[archived]`).
    pub include_archived: bool,
    /// Show superseded memories too (marked `[superseded by <short id>]`).
    pub include_superseded: bool,
    /// Only memories from this source: `stored` or `captured` (kept by a client hook).
    pub source: Option<String>,
    /// Only pinned memories.
    pub pinned_only: bool,
    /// The clock for relative dates (now when absent).
    pub now: Option<DateTime<Utc>>,
}

/// One memory of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TimelineItem {
    /// Its id (printed as its short id).
    pub id: MemoryId,
    /// When it was created (RFC 3339 in JSON).
    #[serde(serialize_with = "rfc3339")]
    #[schemars(with = "String")]
    pub created_at: DateTime<Utc>,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// Its type.
    pub memory_type: MemoryType,
    /// Its first subject, else its decision, else the start of its content.
    pub summary: String,
    /// Whether it is archived.
    pub archived: bool,
    /// The memory that replaces it, when superseded.
    pub superseded_by: Option<MemoryId>,
    /// Whether it is pinned.
    pub pinned: bool,
    /// Where it came from: `stored`, or `captured` by a client hook (marked `[captured]`).
    #[schemars(with = "String")]
    pub source: Source,
}

/// One page of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TimelineOutcome {
    /// The wing asked for (all wings when absent).
    pub wing: Option<String>,
    /// The room asked for.
    pub room: Option<String>,
    /// `newest` or `oldest`.
    pub order: &'static str,
    /// The memories of this page, in order.
    pub items: Vec<TimelineItem>,
    /// Pass it as `cursor` to get the next page; absent when this page is the last.
    pub next_cursor: Option<String>,
}

fn invalid(msg: impl Into<Message>) -> UseCaseError {
    UseCaseError::Invalid(msg.into())
}

/// Serialises a time as RFC 3339 with milliseconds (chrono is built without serde).
pub(crate) fn rfc3339<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

fn present(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// A memory's headline, on one line of at most 100 characters, cut between words (`…` where
/// cut): for a decision, what was decided, what it is about and what was rejected, from its
/// fingerprint (`write the API: Rust, axum (not Go)`); otherwise the start of its text.
pub fn summary(m: &Memory) -> String {
    let line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let decided = m
        .fingerprint
        .decision
        .as_deref()
        .map(line)
        .filter(|d| !d.is_empty());
    let text = match decided {
        Some(d) => decision_headline(&d, m),
        None => line(&m.content),
    };
    let short = mira_core::text::cut_words(&text, SUMMARY_CHARS);
    if short.is_empty() {
        format!("Memory {}", short_id(m.id))
    } else {
        mira_core::sanitize::sanitize(&short)
    }
}

/// `<decision>: <its other subjects> (not <rejected>)`, each part only when there is one.
fn decision_headline(decision: &str, m: &Memory) -> String {
    let fp = &m.fingerprint;
    let known = decision.to_lowercase();
    let subjects: Vec<&str> = fp
        .subjects
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty() && !known.contains(&s.to_lowercase()))
        .collect();
    let mut out = decision.to_owned();
    if !subjects.is_empty() {
        out = format!("{out}: {}", subjects.join(", "));
    }
    let rejected: Vec<&str> = fp
        .rejected
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if !rejected.is_empty() {
        out = format!("{out} (not {})", rejected.join(", "));
    }
    out
}

/// Parses a date bound: `YYYY-MM-DD` (start of that day, or its end when `end_of_day`), RFC 3339,
/// `YYYY-MM-DDTHH:MM[:SS]` (UTC), or `N` followed by `h`, `d` or `w` (that long before `now`).
pub fn parse_time(
    what: Term,
    raw: &str,
    end_of_day: bool,
    now: DateTime<Utc>,
) -> UseCaseResult<DateTime<Utc>> {
    let s = raw.trim();
    let bad = || {
        invalid(what.then(format!(
            " '{}' is not a date: use YYYY-MM-DD (2024-01-15), RFC 3339 (2024-01-15T09:30:00Z) \
             or a relative age such as 7d, 12h or 2w",
            raw.escape_debug()
        )))
    };
    if let Some(unit) = s
        .chars()
        .last()
        .filter(|c| matches!(c, 'h' | 'd' | 'w' | 'H' | 'D' | 'W'))
    {
        let n: i64 = s[..s.len() - 1].trim().parse().map_err(|_| bad())?;
        let hours = match unit.to_ascii_lowercase() {
            'h' => Some(n),
            'd' => n.checked_mul(24),
            _ => n.checked_mul(24 * 7),
        };
        let hours = hours
            .filter(|h| (0..=MAX_RELATIVE_HOURS).contains(h))
            .ok_or_else(|| {
                invalid(what.then(format!(
                    " '{}' is out of range: give an age from 0h to 36500d",
                    raw.escape_debug()
                )))
            })?;
        return now
            .checked_sub_signed(Duration::hours(hours))
            .ok_or_else(bad);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(t.and_utc());
        }
    }
    let day = NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| bad())?;
    let t = if end_of_day {
        day.succ_opt()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc() - Duration::milliseconds(1))
    } else {
        day.and_hms_opt(0, 0, 0).map(|t| t.and_utc())
    };
    t.ok_or_else(bad)
}

/// The cursor of a position: opaque to callers, exact (`created_at` in ms and `seq`).
fn encode_cursor(row: &StoredMemory) -> String {
    format!("c{}.{}", row.memory.created_at.timestamp_millis(), row.seq)
}

fn decode_cursor(raw: &str) -> UseCaseResult<(i64, i64)> {
    let parsed = raw
        .trim()
        .strip_prefix('c')
        .and_then(|rest| rest.split_once('.'))
        .and_then(|(ms, seq)| Some((ms.parse().ok()?, seq.parse().ok()?)));
    parsed.ok_or_else(|| {
        invalid(
            Term::Cursor
                .then(format!(" '{}' is not one ", raw.escape_debug()))
                .then(Term::Timeline)
                .then(
                    " printed: pass the next_cursor value of the previous page unchanged, \
                     or omit it to start from the beginning",
                ),
        )
    })
}

/// Validates a request into the store query (asking for one row more than the page, to know
/// whether another page follows).
fn query(
    access: &Access,
    req: &TimelineRequest,
) -> UseCaseResult<(TimelineQuery, usize, &'static str)> {
    let wing = present(&req.wing).map(str::to_owned);
    let room = present(&req.room).map(str::to_owned);
    if let Some(w) = &wing {
        validate::name(Term::Wing, w)?;
        access.check_read(w)?;
    }
    if let Some(r) = &room {
        validate::name(Term::Room, r)?;
    }
    let memory_type = present(&req.memory_type)
        .map(validate::memory_type)
        .transpose()?;
    let now = req.now.unwrap_or_else(Utc::now);
    let since = present(&req.since)
        .map(|s| parse_time(Term::Since, s, false, now))
        .transpose()?;
    let until = present(&req.until)
        .map(|s| parse_time(Term::Until, s, true, now))
        .transpose()?;
    if let (Some(a), Some(b)) = (since, until) {
        if a > b {
            return Err(invalid(
                Term::Since
                    .then(format!(" ({}) is after ", a.to_rfc3339()))
                    .then(Term::Until)
                    .then(format!(
                        " ({}): swap them or widen the range",
                        b.to_rfc3339()
                    )),
            ));
        }
    }
    let limit = req.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(invalid(Term::Limit.then(format!(
            " {limit} is out of range: give 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}) and page with "
        )).then(Term::Cursor)));
    }
    let (newest_first, order) = match present(&req.order).map(str::to_ascii_lowercase).as_deref() {
        None | Some("newest" | "desc" | "newest_first") => (true, "newest"),
        Some("oldest" | "asc" | "oldest_first" | "chronological") => (false, "oldest"),
        Some(other) => {
            return Err(invalid(format!(
                "order '{}' is invalid: use 'newest' (newest first, the default) or 'oldest'",
                other.escape_debug()
            )))
        }
    };
    let after = present(&req.cursor).map(decode_cursor).transpose()?;
    let source = present(&req.source)
        .map(|s| s.parse::<Source>().map_err(invalid))
        .transpose()?;
    let q = TimelineQuery {
        wings: if wing.is_none() {
            access.readable_list()
        } else {
            None
        },
        wing,
        room,
        memory_type,
        since_ms: since.map(|t| t.timestamp_millis()),
        until_ms: until.map(|t| t.timestamp_millis()),
        include_archived: req.include_archived,
        include_superseded: req.include_superseded,
        source,
        pinned_only: req.pinned_only,
        newest_first,
        after,
        limit: limit as usize + 1,
    };
    Ok((q, limit as usize, order))
}

/// One page of the timeline, of the wings `access` may read.
pub fn timeline(
    app: &App,
    access: &Access,
    req: &TimelineRequest,
) -> UseCaseResult<TimelineOutcome> {
    let (q, limit, order) = query(access, req)?;
    let mut rows = app.store.timeline(&q)?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = if more {
        rows.last().map(encode_cursor)
    } else {
        None
    };
    let items = rows
        .into_iter()
        .map(|r| {
            let (m, f) = (r.memory, r.bookkeeping);
            TimelineItem {
                pinned: f.pinned,
                source: f.source,
                id: m.id,
                created_at: m.created_at,
                summary: summary(&m),
                wing: m.wing,
                room: m.room,
                memory_type: m.memory_type,
                archived: m.archived,
                superseded_by: m.superseded_by,
            }
        })
        .collect();
    Ok(TimelineOutcome {
        wing: q.wing,
        room: q.room,
        order,
        items,
        next_cursor,
    })
}

/// The text form: `=== TIMELINE: <wing> ===`, `Room: <room>` when filtered, an empty line, one
/// `[YYYY-MM-DD HH:MM] <short id> <type>: <summary>` line per memory (its wing after the id
/// when no wing was asked for, its marks after the summary: `[captured]`, `[archived]`,
/// `[superseded by <short id>]`), then `next_cursor: <c>` when more remain.
pub fn render_text(o: &TimelineOutcome) -> String {
    let mut out = format!(
        "=== TIMELINE: {} ===\n",
        o.wing.as_deref().unwrap_or("all wings")
    );
    if let Some(room) = &o.room {
        let _ = writeln!(out, "Room: {room}");
    }
    out.push('\n');
    if o.items.is_empty() {
        out.push_str("(no memories)\n");
    }
    for i in &o.items {
        let _ = write!(
            out,
            "[{}] {} ",
            i.created_at.format("%Y-%m-%d %H:%M"),
            short_id(i.id)
        );
        if o.wing.is_none() {
            let _ = write!(out, "{} | ", i.wing);
        }
        let _ = write!(out, "{}: {}", i.memory_type, i.summary);
        if i.source == Source::Captured {
            out.push_str(" [captured]");
        }
        out.push_str(&marks(i.archived, i.superseded_by));
        out.push('\n');
    }
    if let Some(c) = &o.next_cursor {
        let _ = write!(out, "\nnext_cursor: {c}\n");
    }
    out
}

/// ` [archived]` and ` [superseded by <short id>]`, as they apply.
pub(crate) fn marks(archived: bool, superseded_by: Option<MemoryId>) -> String {
    let mut out = String::new();
    if archived {
        out.push_str(" [archived]");
    }
    if let Some(s) = superseded_by {
        let _ = write!(out, " [superseded by {}]", short_id(s));
    }
    out
}
