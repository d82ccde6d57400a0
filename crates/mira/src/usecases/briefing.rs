//! The briefing: what a coding agent should know about its project when a session starts
//! (`mira hook session-start`), within a small budget, from the wing's own records and without
//! the model or the index: the pinned memories, the latest decisions, the open problems (debug
//! logs that nothing resolved) and what the last session asked and concluded.
//!
//! ```text
//! === MIRA · what this project remembers ===
//! Wing: billing (give it to mira_recall and mira_store)
//! Pinned:
//! [0a1b2c3d] Never deploy on Fridays.
//!
//! Latest decisions:
//! 3 May 2026:
//! [1b2c3d4e] We decided to use Redis streams for the job queue, not Kafka.
//!
//! Open problems:
//! …
//! Last session:
//! 4 May 2026:
//! [2c3d4e5f] Request: add retries to the billing client
//! …
//! ```
//!
//! Each section takes a share of what is left of the budget (pinned 40 %, decisions 50 %,
//! problems 40 %, the last session the rest), each memory in the richest mode that fits (the
//! text, its facts, a header; one memory at most a quarter of the budget in full). Section
//! costs were stored with each memory and the frame's are constants (the wing's name counted
//! at a token per byte at most), so the briefing never exceeds the budget and a hook process
//! pays neither for the tokenizer's table nor for the model.

use super::{validate, UseCaseError, UseCaseResult};
use crate::App;
use mira_core::memory::{MemoryId, MemoryType, RelationType};
use mira_core::message::Term;
use mira_core::render::ModeCosts;
use mira_core::render::{self, RenderMode, NOT_OFFERED};
use mira_store::{Parts, Source, StoredMemory, TimelineQuery};
use serde::Serialize;
use std::collections::HashSet;

/// Smallest budget accepted.
pub const MIN_BUDGET: u32 = 100;
/// Pinned memories read.
const PINNED: usize = 20;
/// Latest decisions read.
const DECISIONS: usize = 10;
/// Debug logs read to find the open problems.
const DEBUG_LOGS: usize = 30;
/// Open problems shown at most.
const PROBLEMS: usize = 5;
/// Captured memories read to find the last session.
const CAPTURED: usize = 60;
/// Memories of the last session shown at most.
const SESSION_ITEMS: usize = 16;
/// Most tokens a day line (`9 September 2026:`) costs: measured over every day of 2000–2099
/// by this module's tests.
const DAY_LINE_MAX_TOKENS: u32 = 8;

/// A briefing request.
#[derive(Debug, Clone)]
pub struct BriefingRequest {
    /// The wing (project).
    pub wing: String,
    /// Token budget of the whole briefing.
    pub budget: u32,
    /// The session starting (its own captured memories are not "the last session").
    pub session_id: Option<String>,
}

/// One memory of the briefing.
#[derive(Debug, Clone, Serialize)]
pub struct BriefedItem {
    /// Its id.
    pub id: MemoryId,
    /// The section it is in: `pinned`, `decisions`, `problems` or `last_session`.
    pub section: &'static str,
    /// How it is shown.
    pub mode: &'static str,
}

/// The briefing.
#[derive(Debug, Clone, Serialize)]
pub struct Briefing {
    /// The wing.
    pub wing: String,
    /// The budget.
    pub budget: u32,
    /// An upper bound of its tokens (never above the budget).
    pub tokens: u32,
    /// The memories shown, in order.
    pub items: Vec<BriefedItem>,
    /// The text to put before the agent; empty when the wing has nothing to say.
    pub text: String,
}

/// A section of the briefing: its heading and the heading's tokens, its share of what is
/// left, its memories in order.
struct Section {
    key: &'static str,
    heading: (&'static str, u32),
    share: f64,
    memories: Vec<StoredMemory>,
}

/// Builds the briefing of `req.wing`.
pub fn briefing(app: &App, req: &BriefingRequest) -> UseCaseResult<Briefing> {
    validate::name(Term::Wing, &req.wing)?;
    if req.budget < MIN_BUDGET {
        return Err(UseCaseError::Invalid(
            format!(
                "budget {} is too small for a briefing: give at least {MIN_BUDGET} tokens",
                req.budget
            )
            .into(),
        ));
    }
    let mut shown: HashSet<MemoryId> = HashSet::new();
    let mut take = |list: Vec<StoredMemory>, max: usize| -> Vec<StoredMemory> {
        list.into_iter()
            .filter(|m| shown.insert(m.memory.id))
            .take(max)
            .collect()
    };
    let pinned = take(
        list(app, &req.wing, |q| q.pinned_only = true, PINNED)?,
        PINNED,
    );
    let decisions = take(
        list(
            app,
            &req.wing,
            |q| q.memory_type = Some(MemoryType::Decision),
            DECISIONS,
        )?,
        DECISIONS,
    );
    let problems = take(open_problems(app, &req.wing)?, PROBLEMS);
    let mut session = take(
        last_session(app, &req.wing, req.session_id.as_deref())?,
        SESSION_ITEMS,
    );
    session.reverse();
    let sections = [
        Section {
            key: "pinned",
            heading: PINNED_HEADING,
            share: 0.4,
            memories: pinned,
        },
        Section {
            key: "decisions",
            heading: DECISIONS_HEADING,
            share: 0.5,
            memories: decisions,
        },
        Section {
            key: "problems",
            heading: PROBLEMS_HEADING,
            share: 0.4,
            memories: problems,
        },
        Section {
            key: "last_session",
            heading: SESSION_HEADING,
            share: 1.0,
            memories: session,
        },
    ];
    Ok(render_briefing(&req.wing, req.budget, &sections))
}

/// Live memories of `wing` (not archived, not superseded), newest first, filtered by `filter`.
fn list(
    app: &App,
    wing: &str,
    filter: impl FnOnce(&mut TimelineQuery),
    limit: usize,
) -> UseCaseResult<Vec<StoredMemory>> {
    let mut q = TimelineQuery {
        wing: Some(wing.to_owned()),
        room: None,
        memory_type: None,
        since_ms: None,
        until_ms: None,
        include_archived: false,
        include_superseded: false,
        source: None,
        pinned_only: false,
        wings: None,
        newest_first: true,
        after: None,
        limit,
    };
    filter(&mut q);
    Ok(app.store.timeline(&q)?)
}

/// The wing's debug logs that nothing resolved, newest first: no `resolves` link from them to
/// a later memory, none to them from an earlier one (they are not fixes themselves), and no
/// resolution cue in their text ("fixed by", "resolved").
fn open_problems(app: &App, wing: &str) -> UseCaseResult<Vec<StoredMemory>> {
    let logs = list(
        app,
        wing,
        |q| q.memory_type = Some(MemoryType::DebugLog),
        DEBUG_LOGS,
    )?;
    let ids: Vec<MemoryId> = logs.iter().map(|m| m.memory.id).collect();
    let linked = app.store.get_many(
        &ids,
        Parts {
            causes: true,
            consequences: true,
            ..Parts::NONE
        },
    )?;
    let resolved = |m: &StoredMemory| {
        linked.get(&m.memory.id).is_some_and(|l| {
            l.causes
                .iter()
                .chain(&l.consequences)
                .any(|e| e.relation == RelationType::Resolves)
        }) || mira_core::causal::detect_cues(&m.memory.content)
            .iter()
            .any(|c| c.relation == RelationType::Resolves)
    };
    Ok(logs.into_iter().filter(|m| !resolved(m)).collect())
}

/// The captured memories of the wing's most recent session other than `current`, newest first.
fn last_session(app: &App, wing: &str, current: Option<&str>) -> UseCaseResult<Vec<StoredMemory>> {
    let captured = list(app, wing, |q| q.source = Some(Source::Captured), CAPTURED)?;
    let Some(last) = captured
        .iter()
        .filter_map(|m| m.memory.session_id.as_deref())
        .find(|s| Some(*s) != current)
        .map(str::to_owned)
    else {
        return Ok(Vec::new());
    };
    Ok(captured
        .into_iter()
        .filter(|m| m.memory.session_id.as_deref() == Some(last.as_str()))
        .collect())
}

/// The first line of a briefing.
const TITLE: &str = "=== MIRA · what this project remembers ===\n";
/// Its tokens (checked by this module's tests).
const TITLE_TOKENS: u32 = 10;
/// The wing line: `Wing: <wing>` and what to do with it.
const WING_LABEL: &str = "Wing:";
/// Its tokens.
const WING_LABEL_TOKENS: u32 = 3;
/// The end of the wing line.
const WING_NOTE: &str = " (give it to mira_recall and mira_store)\n";
/// Its tokens.
const WING_NOTE_TOKENS: u32 = 12;

/// The headings of the sections, with their tokens (checked by this module's tests).
const PINNED_HEADING: (&str, u32) = ("Pinned:\n", 3);
const DECISIONS_HEADING: (&str, u32) = ("Latest decisions:\n", 3);
const PROBLEMS_HEADING: (&str, u32) = ("Open problems:\n", 3);
const SESSION_HEADING: (&str, u32) = ("Last session:\n", 3);

/// The most tokens the frame of a briefing for `wing` costs: the title and the wing line, each
/// piece counted apart (the tokenizer splits at the space before the wing and at the space
/// after it, so the pieces add up), the wing at one token per byte at most (a cl100k token
/// is at least one byte).
fn frame_tokens(wing: &str) -> u32 {
    let wing = u32::try_from(wing.len() + 1).unwrap_or(u32::MAX);
    TITLE_TOKENS + WING_LABEL_TOKENS + wing + WING_NOTE_TOKENS
}

/// The costs of a memory's sections: stored with it, else computed.
fn costs(m: &StoredMemory) -> ModeCosts {
    m.bookkeeping
        .costs
        .unwrap_or_else(|| render::mode_costs(&m.memory))
}

/// The richest mode of `costs` within `room` tokens (the text only up to `full_max`).
fn fitting(c: &ModeCosts, room: u32, full_max: u32) -> Option<(RenderMode, u32)> {
    let verbatim = if c.verbatim <= full_max {
        c.verbatim
    } else {
        NOT_OFFERED
    };
    [
        (RenderMode::Verbatim, verbatim),
        (RenderMode::Fingerprint, c.fingerprint),
        (RenderMode::Header, c.header),
    ]
    .into_iter()
    .find(|&(_, cost)| cost != NOT_OFFERED && cost <= room)
}

/// The briefing of `sections` within `budget`.
fn render_briefing(wing: &str, budget: u32, sections: &[Section]) -> Briefing {
    let mut left = budget.saturating_sub(frame_tokens(wing));
    let full_max = budget / 4;
    let mut body = String::new();
    let mut items = Vec::new();
    for s in sections {
        let (heading, heading_tokens) = s.heading;
        let allowance = (f64::from(left) * s.share) as u32;
        if s.memories.is_empty() || allowance <= heading_tokens {
            continue;
        }
        let mut room = allowance - heading_tokens;
        let mut text = String::new();
        let mut last_day = None;
        for m in &s.memories {
            let day = render::day_number(m.memory.created_at);
            let day_cost = if last_day == Some(day) {
                0
            } else {
                DAY_LINE_MAX_TOKENS
            };
            let Some((mode, cost)) = fitting(&costs(m), room.saturating_sub(day_cost), full_max)
            else {
                break;
            };
            if day_cost > 0 {
                text.push_str(&render::day_line(m.memory.created_at));
                last_day = Some(day);
            }
            text.push_str(&render::section_text(mode, &m.memory, false));
            room -= cost + day_cost;
            items.push(BriefedItem {
                id: m.memory.id,
                section: s.key,
                mode: mode.as_str(),
            });
        }
        if !text.is_empty() {
            body.push_str(heading);
            body.push_str(&text);
            left -= allowance - room;
        }
    }
    let text = if items.is_empty() {
        String::new()
    } else {
        format!("{TITLE}{WING_LABEL} {wing}{WING_NOTE}{}", body.trim_end())
    };
    Briefing {
        wing: wing.to_owned(),
        budget,
        tokens: if items.is_empty() { 0 } else { budget - left },
        items,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_frame_costs_what_its_constants_say() {
        let count = |s: &str| mira_core::tokens::count(s) as u32;
        assert_eq!(
            [TITLE_TOKENS, WING_LABEL_TOKENS, WING_NOTE_TOKENS],
            [count(TITLE), count(WING_LABEL), count(WING_NOTE)]
        );
        let headings = [
            PINNED_HEADING,
            DECISIONS_HEADING,
            PROBLEMS_HEADING,
            SESSION_HEADING,
        ];
        assert_eq!(
            headings.map(|(_, tokens)| tokens),
            headings.map(|(heading, _)| count(heading))
        );
        for wing in ["billing-service", "a", "x.y_z-9", "Über"] {
            let line = format!("{TITLE}{WING_LABEL} {wing}{WING_NOTE}");
            assert!(count(&line) <= frame_tokens(wing), "{wing}");
        }
    }

    #[test]
    fn day_lines_cost_at_most_the_bound() {
        let mut day = chrono::Utc.with_ymd_and_hms(2000, 1, 1, 12, 0, 0).unwrap();
        let end = chrono::Utc.with_ymd_and_hms(2100, 1, 1, 0, 0, 0).unwrap();
        let mut worst = 0;
        while day < end {
            worst = worst.max(render::day_line_cost(day));
            day += chrono::Duration::days(1);
        }
        assert!(worst <= DAY_LINE_MAX_TOKENS, "{worst}");
    }
}
