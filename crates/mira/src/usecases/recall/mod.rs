//! The recall use case: the relevance ranking and the Context Budget Allocator.
//!
//! query → embedding (LRU cache, expansion variants averaged) → the memories of the scope ranked
//! by relevance from the in-memory catalog (`retrieve`: BM25 and cosine fused by z-scores,
//! session-neighbour propagation, entity boost, session diversity; see `mira_core::rank`), with
//! how far the best stands above the scope's background → fallback wings when the scope is
//! empty → the successors of superseded memories, and the scope's pinned memories →
//! the allocator walks down the relevance order (pinned first, relevance floor, redundancy,
//! richest mode that fits; `mira_core::allocate`) → newer first within a subject
//! (`newer_first`, off by default: of two chosen memories about the same thing, the newer
//! above, the older marked as an earlier statement) → the context block, shown by relevance or
//! in time order; when nothing stands out, a short block that says so. The whole answer, frame
//! included, never exceeds the budget. Recall never writes to the database.

mod context;
mod newer_first;
mod retrieve;
mod why;

pub use retrieve::query_vector;

use super::access::{Access, Wings};
use super::{validate, UseCaseError, UseCaseResult};
use crate::config::SupersededPolicy;
use crate::App;
use mira_core::lexical::Bm25Params;
use mira_core::memory::MemoryId;
use mira_core::message::{Message, Term};
use mira_core::rank::{RankParams, Standout, StandoutLevels};
use mira_core::render::Frame;
pub use mira_core::render::Surface;
use mira_store::index::VectorIndexManager;
use mira_store::Card;
use mira_store::Scope;
use retrieve::{rank, RankInput, Ranking};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 10_000;
/// Largest budget accepted, in tokens.
pub const MAX_BUDGET: u32 = 100_000;
/// Below this budget the block leaves out its instructions line: every token goes to memories.
pub const INSTRUCTIONS_MIN_BUDGET: u32 = 500;

/// The line a recall ranked without the model adds under the query.
pub const LEXICAL_ONLY_NOTICE: &str =
    "Note: ranked by words only (no embedding model installed: run scripts/fetch-model.sh).";

/// The line a recall adds under the query when no memory stands out.
pub const NOTHING_RELEVANT_NOTICE: &str =
    "Note: nothing in memory closely matches this query; the nearest memories follow.";

/// A recall request.
#[derive(Debug, Clone, Default)]
pub struct RecallRequest {
    /// What the agent is looking for.
    pub query: String,
    /// Token budget of the rendered context; `allocator.default_budget` when absent.
    pub budget: Option<i64>,
    /// Only this wing.
    pub wing: Option<String>,
    /// Only this room.
    pub room: Option<String>,
    /// Wings tried in order when the primary scope has no memory at all.
    pub fallback_wings: Vec<String>,
    /// Ranking parameters instead of the configured ones (evaluations compare settings).
    pub rank: Option<RankParams>,
    /// The order of the memories in the block.
    pub order: Order,
    /// Who reads the block (its closing line names their way to load a memory).
    pub surface: Surface,
}

/// The order of the memories in the context block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Grouped by day, the day of the most relevant memory first (pinned memories before
    /// all), each day's memories most relevant first.
    #[default]
    Relevance,
    /// Oldest first.
    Time,
}

impl std::str::FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "relevance" => Ok(Order::Relevance),
            "time" => Ok(Order::Time),
            other => Err(format!(
                "order '{other}' is not known: use relevance (the most relevant day first) or time (oldest first)"
            )),
        }
    }
}

/// One memory in the recalled context.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecalledItem {
    /// Its id.
    pub id: MemoryId,
    /// The short id printed in the block (accepted wherever an id is).
    pub short_id: String,
    /// How it was rendered: `verbatim`, `fingerprint` or `header`.
    pub mode: &'static str,
    /// Tokens of its section.
    pub tokens: u32,
    /// Relevance to the query in [0, 1], relative to the most relevant memory.
    pub relevance: f32,
    /// Its type.
    pub memory_type: String,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// When it happened (RFC 3339).
    pub created_at: String,
    /// The memory that replaced it, if any.
    pub superseded_by: Option<MemoryId>,
    /// A newer memory of the block about the same thing, shown above it: this one is marked as
    /// an earlier statement.
    pub newer: Option<MemoryId>,
    /// Whether it is pinned.
    pub pinned: bool,
    /// The rendered section.
    pub text: String,
    /// Why it was picked and rendered so (for people reading a recall).
    pub why: String,
}

/// The result of a recall.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecallOutcome {
    /// The query.
    pub query: String,
    /// The budget in tokens.
    pub budget: u32,
    /// The wing asked for.
    pub wing: Option<String>,
    /// The fallback wing that answered, when the primary scope was empty.
    pub fallback_wing: Option<String>,
    /// Tokens of the whole answer, frame included (never more than the budget).
    pub used: u32,
    /// Candidates considered after fusion.
    pub candidates: usize,
    /// The selected memories, in the block's order.
    pub items: Vec<RecalledItem>,
    /// Ranked candidate ids (before the budget), for evaluation.
    #[serde(skip)]
    pub ranking: Vec<MemoryId>,
    /// The relevance of each id of `ranking`.
    #[serde(skip)]
    pub relevances: Vec<f32>,
    /// The context block.
    pub text: String,
    /// Whether the ranking had no query embedding (no model installed): BM25 alone, and the
    /// block says so under the query.
    pub lexical_only: bool,
    /// How far the best memory stands above the scope's background: when nothing does
    /// (`relevant` false), the block is short and says so under the query.
    pub standout: StandoutReport,
    /// Time spent, in milliseconds (to the microsecond).
    pub millis: f64,
}

/// How far the best memory of a recall stands above the rest of its scope: the absolute signal
/// that tells a query with something relevant in memory from one with nothing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StandoutReport {
    /// The best cosine above the scope's mean cosine with the query, as a share of what
    /// separates that mean from a perfect match (`null`: ranked without the model).
    pub dense: Option<f32>,
    /// The largest share of the query's information (the IDF of its words) one memory holds.
    pub lexical: f32,
    /// Whether either reaches its level (`recall.nothing_relevant`): something relevant stands
    /// out.
    pub relevant: bool,
}

impl StandoutReport {
    fn new(standout: Standout, levels: &StandoutLevels) -> StandoutReport {
        StandoutReport {
            dense: standout.dense,
            lexical: standout.lexical,
            relevant: standout.stands_out(levels),
        }
    }
}

/// Which retrieval stages run (the full pipeline, or a baseline for evaluation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retrieval {
    /// Lexical + dense fused by scores, propagation, entity boost.
    Hybrid,
    /// BM25 alone.
    LexicalOnly,
    /// Dense search alone, ranked by cosine.
    DenseOnly,
    /// Plain reciprocal rank fusion (k = 60) of the BM25 and dense lists.
    Rrf,
    /// The database's own full-text search ([`mira_store::MemoryStore::lexical_search`]:
    /// FTS5's BM25, or PostgreSQL's ranking), or on PostgreSQL the given ranking of it.
    FullText(Option<mira_store::TextRank>),
}

impl Retrieval {
    /// Whether it ranks by words alone (no query embedding needed).
    fn lexical(self) -> bool {
        matches!(self, Retrieval::LexicalOnly | Retrieval::FullText(_))
    }
}

/// A memory retrieved for the query, with its relevance.
struct Candidate {
    card: Card,
    /// Its embedding (empty when it has none).
    embedding: Vec<f32>,
    relevance: f32,
}

/// The configured ranking parameters (`recall.ranking`).
pub fn configured_rank_params(app: &App) -> RankParams {
    let r = &app.config.recall.ranking;
    RankParams {
        lexical_weight: r.lexical_weight,
        propagation: r.propagation,
        propagation_decay: r.propagation_decay,
        propagation_reach: r.propagation_reach,
        propagation_tokens: r.propagation_tokens,
        session_diversity: r.session_diversity,
        entity_boost: r.entity_boost,
        bm25: Bm25Params {
            k1: r.bm25_k1,
            b: r.bm25_b,
        },
    }
}

fn validate_request(app: &App, req: &RecallRequest) -> UseCaseResult<u32> {
    if req.query.trim().is_empty() {
        return Err(UseCaseError::Invalid(
            "query is empty: say what you are looking for".into(),
        ));
    }
    let n = req.query.chars().count();
    if n > MAX_QUERY_CHARS {
        return Err(UseCaseError::Invalid(
            format!(
            "query is {n} characters; the limit is {MAX_QUERY_CHARS}: shorten it to the key words"
        )
            .into(),
        ));
    }
    if req.query.contains('\0') {
        return Err(UseCaseError::Invalid(
            "query contains a NUL character: remove it".into(),
        ));
    }
    for w in req.wing.iter().chain(&req.fallback_wings) {
        validate::name(Term::Wing, w)?;
    }
    if let Some(r) = &req.room {
        validate::name(Term::Room, r)?;
    }
    let budget = req
        .budget
        .unwrap_or(app.config.allocator.default_budget as i64);
    if !(1..=MAX_BUDGET as i64).contains(&budget) {
        return Err(UseCaseError::Invalid(Term::Budget.then(format!(
            " {budget} is out of range: give a number of tokens from 1 to {MAX_BUDGET} (default {})",
            app.config.allocator.default_budget
        ))));
    }
    Ok(budget as u32)
}

/// Adds the current version of every superseded candidate (following chains of updates) with
/// at least the relevance of what it replaced, and ranks each superseded memory just below its
/// successor; `recall.superseded: exclude` drops superseded memories instead.
fn with_successors(
    app: &App,
    index: &VectorIndexManager,
    mut cands: Vec<Candidate>,
) -> Vec<Candidate> {
    let mut present: HashSet<MemoryId> = cands.iter().map(|c| c.card.id).collect();
    let mut added = Vec::new();
    index.view(|view| {
        let catalog = view.catalog();
        for c in &mut cands {
            let mut next = c.card.superseded_by;
            let mut hops = 0;
            while let Some(id) = next.filter(|_| hops < 8) {
                hops += 1;
                let Some(card) = catalog.slot_of(id).and_then(|s| catalog.card(s)) else {
                    break;
                };
                if present.insert(id) {
                    added.push(Candidate {
                        card: card.clone(),
                        embedding: view
                            .vector(card.key)
                            .map(<[f32]>::to_vec)
                            .unwrap_or_default(),
                        relevance: c.relevance,
                    });
                }
                next = card.superseded_by;
            }
        }
    });
    cands.extend(added);
    // A successor is at least as relevant as what it replaces (chains: a few passes), and each
    // superseded memory comes right below its successor.
    for _ in 0..3 {
        let mut lift: HashMap<MemoryId, f32> = HashMap::new();
        for c in &cands {
            if let Some(s) = c.card.superseded_by {
                let e = lift.entry(s).or_default();
                *e = e.max(c.relevance);
            }
        }
        for c in &mut cands {
            if let Some(r) = lift.get(&c.card.id) {
                c.relevance = c.relevance.max(*r);
            }
        }
    }
    let relevance: HashMap<MemoryId, f32> =
        cands.iter().map(|c| (c.card.id, c.relevance)).collect();
    for c in &mut cands {
        if let Some(r) = c.card.superseded_by.and_then(|s| relevance.get(&s)) {
            c.relevance = c.relevance.min(r * 0.999);
        }
    }
    if app.config.recall.superseded == SupersededPolicy::Exclude {
        cands.retain(|c| c.card.superseded_by.is_none());
    }
    sort_by_relevance(&mut cands);
    cands
}

/// Adds the pinned memories of `scope` that the ranking left out (relevance 0: they are shown
/// for being pinned, within `allocator.pinned_share`).
fn with_pinned(index: &VectorIndexManager, cands: &mut Vec<Candidate>, scope: &Scope) {
    let present: HashSet<MemoryId> = cands.iter().map(|c| c.card.id).collect();
    index.view(|view| {
        let catalog = view.catalog();
        for card in catalog.pinned(scope) {
            if !present.contains(&card.id) {
                cands.push(Candidate {
                    card: card.clone(),
                    embedding: view
                        .vector(card.key)
                        .map(<[f32]>::to_vec)
                        .unwrap_or_default(),
                    relevance: 0.0,
                });
            }
        }
    });
}

fn sort_by_relevance(cands: &mut [Candidate]) {
    cands.sort_by(|a, b| {
        b.relevance
            .total_cmp(&a.relevance)
            .then(a.card.key.cmp(&b.card.key))
    });
}

/// The ranking of a request.
struct Ranked {
    /// The candidates in relevance order (the successors of superseded ones brought in).
    cands: Vec<Candidate>,
    /// How many the ranking returned.
    candidates: usize,
    /// The fallback wing that answered when the primary scope was empty.
    fallback_wing: Option<String>,
    /// Whether a mode that wants the query's embedding had none (no model installed).
    lexical_only: bool,
    /// The query's embedding (empty for the lexical modes or without a model).
    question: Vec<f32>,
    /// How far the best stands out.
    standout: Standout,
}

fn ranked(app: &App, req: &RecallRequest, mode: Retrieval) -> UseCaseResult<Ranked> {
    let index = app.synced_index()?;
    let qvec = if mode.lexical() {
        Vec::new()
    } else {
        query_vector(app, &req.query)?
    };
    let lexical_only = !mode.lexical() && qvec.is_empty();
    let r = &app.config.recall.ranking;
    let scopes = std::iter::once((None, req.wing.clone())).chain(
        req.fallback_wings
            .iter()
            .map(|w| (Some(w.clone()), Some(w.clone()))),
    );
    let mut fallback_wing = None;
    let mut cands = Vec::new();
    let mut standout = Standout::default();
    for (fallback, wing) in scopes {
        let input = RankInput {
            query: &req.query,
            qvec: &qvec,
            filter: Scope {
                wing,
                room: req.room.clone(),
            },
            mode,
            params: req.rank.unwrap_or_else(|| configured_rank_params(app)),
            exhaustive_below: r.exhaustive_below,
            k: app.config.allocator.max_candidates,
        };
        let Ranking {
            candidates,
            standout: found,
        } = rank(app, index, &input)?;
        (cands, standout) = (candidates, found);
        if !cands.is_empty() {
            fallback_wing = fallback;
            break;
        }
    }
    let candidates = cands.len();
    if mode == Retrieval::Hybrid {
        cands = with_successors(app, index, cands);
        let scope = Scope {
            wing: fallback_wing.clone().or_else(|| req.wing.clone()),
            room: req.room.clone(),
        };
        with_pinned(index, &mut cands, &scope);
    }
    Ok(Ranked {
        cands,
        candidates,
        fallback_wing,
        lexical_only,
        question: qvec,
        standout,
    })
}

/// The ids of a request's memories in relevance order, without allocating a budget (what
/// `mira eval` scores when it compares ranking parameters).
pub fn ranking(app: &App, req: &RecallRequest, mode: Retrieval) -> UseCaseResult<Vec<MemoryId>> {
    validate_request(app, req)?;
    Ok(ranked(app, req, mode)?
        .cands
        .iter()
        .map(|c| c.card.id)
        .collect())
}

/// Recalls the best context for a query within its budget, from the wings `access` may read:
/// the wing and fallback wings asked for must be among them; without a wing, a caller that
/// reads one wing only recalls from it, and one that reads several must name one.
pub fn recall(app: &App, access: &Access, req: &RecallRequest) -> UseCaseResult<RecallOutcome> {
    for w in req.wing.iter().chain(&req.fallback_wings) {
        access.check_read(w)?;
    }
    let scoped;
    let req = match (&req.wing, access.reads()) {
        (None, Wings::Only(wings)) => {
            let wing = match wings.len() {
                1 => wings.iter().next().cloned(),
                0 => {
                    return Err(UseCaseError::Forbidden(
                        format!("{} may not recall: it reads no wing", access.who()).into(),
                    ))
                }
                _ => {
                    return Err(UseCaseError::Invalid(
                        Message::from(format!(
                            "{} reads {}: name one of them as ",
                            access.who(),
                            access.reads()
                        ))
                        .then(Term::Wing)
                        .then(" (and others as ")
                        .then(Term::FallbackWings)
                        .then(")"),
                    ))
                }
            };
            scoped = RecallRequest {
                wing,
                ..req.clone()
            };
            &scoped
        }
        _ => req,
    };
    let out = recall_with(app, req, Retrieval::Hybrid)?;
    app.metrics
        .observe_recall(out.millis / 1e3, out.used, out.budget);
    Ok(out)
}

/// The frame of a recall's block, with `notices` under the query.
fn frame_of<'a>(
    app: &App,
    req: &'a RecallRequest,
    budget: u32,
    fallback_wing: Option<&'a str>,
    notices: &'a [String],
) -> Frame<'a> {
    Frame {
        query: &req.query,
        budget,
        wing: fallback_wing.or(req.wing.as_deref()),
        fallback: fallback_wing.is_some(),
        instructions: (app.config.recall.instructions && budget >= INSTRUCTIONS_MIN_BUDGET)
            .then_some(req.surface),
        notices,
    }
}

/// Recall with a chosen retrieval mode (baselines are used by `mira eval`).
pub fn recall_with(
    app: &App,
    req: &RecallRequest,
    mode: Retrieval,
) -> UseCaseResult<RecallOutcome> {
    let started = Instant::now();
    let budget = validate_request(app, req)?;
    let Ranked {
        cands,
        candidates,
        fallback_wing,
        lexical_only,
        question,
        standout,
    } = ranked(app, req, mode)?;
    let ranking = cands.iter().map(|c| c.card.id).collect();
    let relevances = cands.iter().map(|c| c.relevance).collect();
    let nothing = &app.config.recall.nothing_relevant;
    let standout = StandoutReport::new(standout, &nothing.levels());
    // Only the full pipeline measures both signals; baselines keep their whole block.
    let quiet = mode == Retrieval::Hybrid && !standout.relevant && !cands.is_empty();
    let notices_with = |quiet: bool| -> Vec<String> {
        [
            lexical_only.then_some(LEXICAL_ONLY_NOTICE),
            quiet.then_some(NOTHING_RELEVANT_NOTICE),
        ]
        .into_iter()
        .flatten()
        .map(str::to_owned)
        .collect()
    };
    // The line that says nothing stands out is left out when it alone would not fit.
    let fallback = fallback_wing.as_deref();
    let mut notices = notices_with(quiet);
    if quiet && frame_of(app, req, budget, fallback, &notices).reserve(1) > budget {
        notices = notices_with(false);
    }
    // A small scope is shown whole (as when something stands out), the line saying so.
    let limit = (quiet && cands.len() > context::SMALL_SCOPE).then_some(nothing.memories);
    let build = |notices: &[String]| {
        let frame = frame_of(app, req, budget, fallback, notices);
        context::build(app, &frame, &cands, &question, req.order, limit)
    };
    // The line that says nothing stands out is also left out when, with it, no memory fits.
    let context::Context { items, text, used } = match build(&notices) {
        Err(UseCaseError::Invalid(_)) if quiet => build(&notices_with(false)),
        built => built,
    }?;
    Ok(RecallOutcome {
        query: req.query.clone(),
        budget,
        wing: req.wing.clone(),
        fallback_wing,
        used,
        candidates,
        items,
        ranking,
        relevances,
        text,
        lexical_only,
        standout,
        millis: (started.elapsed().as_secs_f64() * 1e6).round() / 1e3,
    })
}
