//! Links made and removed by hand: the causal edges mira finds when a memory is stored (a cue
//! and a similar earlier memory) can miss a bug and its fix, or join two memories that have
//! nothing to do with each other. A link goes from the earlier memory (the cause) to the later
//! one it led to, within one wing, as the links mira finds do.

use super::access::Access;
use super::timeline::summary;
use super::{validate, UseCaseError, UseCaseResult};
use crate::App;
use chrono::Utc;
use mira_core::memory::{Memory, MemoryId, RelationType};
use mira_core::message::{Message, Term};
use mira_core::render::short_id;
use mira_store::Link;
use serde::Serialize;
use std::fmt::Write as _;

/// The relations a link made by hand may have (`updates` and `contradicts` supersede the older
/// memory, which is a store's `supersedes`, not a link).
pub const RELATIONS: [RelationType; 3] = [
    RelationType::Because,
    RelationType::Triggered,
    RelationType::Resolves,
];

/// The confidence of a link made by hand.
const BY_HAND: f64 = 1.0;

/// A link to add or remove.
#[derive(Debug, Clone, Default)]
pub struct LinkRequest {
    /// The earlier memory, the cause (any printed id form).
    pub from: String,
    /// The later memory it led to.
    pub to: String,
    /// `because` (the default when linking), `triggered` or `resolves`; when unlinking, only
    /// links of this relation (all when absent).
    pub relation: Option<String>,
}

/// One end of a link, as its outcome shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LinkEnd {
    /// Its id.
    pub id: MemoryId,
    /// Its type.
    pub memory_type: String,
    /// Its one-line summary.
    pub summary: String,
}

impl LinkEnd {
    fn of(m: &Memory) -> LinkEnd {
        LinkEnd {
            id: m.id,
            memory_type: m.memory_type.to_string(),
            summary: summary(m),
        }
    }

    /// `<short id> [<type>] <summary>`.
    fn text(&self) -> String {
        format!(
            "{} [{}] {}",
            short_id(self.id),
            self.memory_type,
            self.summary
        )
    }
}

/// What a link did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LinkOutcome {
    /// The cause.
    pub from: LinkEnd,
    /// What it led to.
    pub to: LinkEnd,
    /// The relation.
    pub relation: RelationType,
    /// False when that link was there already (nothing changed).
    pub added: bool,
}

/// One link removed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Unlinked {
    /// The cause.
    pub from: MemoryId,
    /// What it led to.
    pub to: MemoryId,
    /// The relation.
    pub relation: RelationType,
    /// Its confidence (1 for a link made by hand).
    pub confidence: f64,
}

/// What an unlink removed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct UnlinkOutcome {
    /// The links removed.
    pub removed: Vec<Unlinked>,
}

/// The relation `raw` names, when it names one, among `allowed`.
fn relation(raw: Option<&str>, allowed: &[RelationType]) -> UseCaseResult<Option<RelationType>> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let names = allowed
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    match raw.to_ascii_lowercase().parse::<RelationType>() {
        Ok(r) if allowed.contains(&r) => Ok(Some(r)),
        Ok(r) => Err(UseCaseError::Invalid(
            Term::Relation.then(format!(
                " '{r}' marks the older memory superseded, which a link does not do: to replace it, store the new memory as superseding the old one ("
            ))
            .then(Term::Store)
            .then(format!("); to link them, give one of {names}")),
        )),
        Err(_) => Err(UseCaseError::Invalid(Term::Relation.then(format!(
            " '{}' is not known: give one of {names} (the later memory happened because of the earlier one, was triggered by it, or resolves it)",
            raw.escape_debug()
        )))),
    }
}

/// The two memories of a request, checked: both exist and are two, and `allowed` lets the
/// caller change the links of each one's wing.
fn ends(
    app: &App,
    req: &LinkRequest,
    allowed: impl Fn(&str) -> UseCaseResult<()>,
) -> UseCaseResult<(Memory, Memory)> {
    let from = validate::memory_id(&*app.store, &req.from)?;
    let to = validate::memory_id(&*app.store, &req.to)?;
    if from == to {
        return Err(UseCaseError::Invalid(
            format!(
                "from and to are the same memory ({}): a link joins two memories",
                short_id(from)
            )
            .into(),
        ));
    }
    let mut found = app.store.memories(&[from, to])?;
    let missing = |id: MemoryId| {
        validate::unknown_id(
            format!("no memory has id {id}: take ids from "),
            " (it may have been forgotten)",
        )
    };
    let a = found.remove(&from).ok_or_else(|| missing(from))?;
    let b = found.remove(&to).ok_or_else(|| missing(to))?;
    allowed(&a.wing)?;
    allowed(&b.wing)?;
    Ok((a, b))
}

/// Links `req.from` to `req.to` (the later memory follows from the earlier one). Refused when
/// `from` happened after `to` (the link would point back in time) or the two are in different
/// wings. `access` must write to the wing.
pub fn link(app: &App, access: &Access, req: &LinkRequest) -> UseCaseResult<LinkOutcome> {
    let relation = relation(req.relation.as_deref(), &RELATIONS)?.unwrap_or(RelationType::Because);
    let (from, to) = ends(app, req, |w| access.check_write(w))?;
    if from.wing != to.wing {
        return Err(UseCaseError::Invalid(
            format!(
                "{} is in wing '{}' and {} in wing '{}': a link joins two memories of one wing",
                short_id(from.id),
                from.wing,
                short_id(to.id),
                to.wing
            )
            .into(),
        ));
    }
    if from.created_at > to.created_at {
        return Err(UseCaseError::Invalid(format!(
            "{} ({}) happened after {} ({}): a link goes from the earlier memory, the cause, to the later one it led to: swap the two ids",
            short_id(from.id),
            from.created_at.format("%Y-%m-%d %H:%M"),
            short_id(to.id),
            to.created_at.format("%Y-%m-%d %H:%M")
        ).into()));
    }
    let link = Link {
        from: from.id,
        to: to.id,
        relation,
        confidence: BY_HAND,
    };
    let added = app
        .store
        .add_link(&link, Utc::now().timestamp_millis())?
        .ok_or_else(|| {
            UseCaseError::NotFound(
                "one of the two memories was forgotten meanwhile: nothing was linked".into(),
            )
        })?;
    Ok(LinkOutcome {
        from: LinkEnd::of(&from),
        to: LinkEnd::of(&to),
        relation,
        added,
    })
}

/// Removes the links between `req.from` and `req.to` (either way; only those of
/// `req.relation` when given). Not finding one is [`UseCaseError::NotFound`]. `access` must
/// remove in the wings (destructive).
pub fn unlink(app: &App, access: &Access, req: &LinkRequest) -> UseCaseResult<UnlinkOutcome> {
    let relation = relation(req.relation.as_deref(), &RelationType::ALL)?;
    let (a, b) = ends(app, req, |w| access.check_remove("unlink", w))?;
    let removed = app.store.remove_links(a.id, b.id, relation)?;
    if !removed.is_empty() {
        access.audit(&format!(
            "unlinked {} and {} ({} links)",
            short_id(a.id),
            short_id(b.id),
            removed.len()
        ));
    }
    if removed.is_empty() {
        return Err(UseCaseError::NotFound(
            Message::from(format!(
                "{} and {} are not linked{}: ",
                short_id(a.id),
                short_id(b.id),
                relation.map(|r| format!(" by '{r}'")).unwrap_or_default()
            ))
            .then(Term::CausalChain)
            .then(" with ")
            .then(Term::IncludeConsequences)
            .then(" lists a memory's links"),
        ));
    }
    Ok(UnlinkOutcome {
        removed: removed
            .into_iter()
            .map(|l| Unlinked {
                from: l.from,
                to: l.to,
                relation: l.relation,
                confidence: super::load::rounded(l.confidence),
            })
            .collect(),
    })
}

/// `Linked <from> → <to> (<relation>)` with both memories' summaries.
pub fn render_link_text(o: &LinkOutcome) -> String {
    format!(
        "{} ({}):\n  {}\n→ {}\n",
        if o.added {
            "Linked"
        } else {
            "Already linked, unchanged"
        },
        o.relation,
        o.from.text(),
        o.to.text()
    )
}

/// One `Unlinked <from> → <to> (<relation>)` line per link removed.
pub fn render_unlink_text(o: &UnlinkOutcome) -> String {
    let mut out = String::new();
    for l in &o.removed {
        let _ = writeln!(
            out,
            "Unlinked {} → {} ({}, confidence {:.2})",
            short_id(l.from),
            short_id(l.to),
            l.relation,
            l.confidence
        );
    }
    out
}
