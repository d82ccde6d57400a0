//! The recall use case: the hybrid retrieval pipeline and the Context Budget Allocator.
//!
//! query → embedding (LRU cache, expansion variants averaged) → dense search (vector index) and
//! FTS5 BM25 search, concurrently → RRF fusion → relevance → near-duplicate clustering → tag
//! boost → adaptive threshold → optional reranker → fallback wings when the scope is empty →
//! CBA (relevance × density × recency, then overlap, causal penalty and session boost, greedy
//! with render-mode downgrade) → the context block. The budget is never exceeded.
//!
//! Two measured departures from the reference (LoCoMo dev, 997 questions, see README):
//! - **Relevance blends cosine and fused rank** (`recall.fusion_weight`): the reference used RRF
//!   only to pick candidates and ranked them by cosine alone, so the hybrid ranked like dense
//!   search and below BM25 (evidence recall@10 0.553 vs 0.568).
//! - **Recency has a floor** (`allocator.recency_floor`): with λ = 0.1/day a two-month-old
//!   session note weighed e^−6 ≈ 0.002, so the budget went to recent, barely relevant turns
//!   (evidence within the budget 0.455 → 0.798 with the floor at 0.3).

mod context;
mod retrieve;

pub use retrieve::query_vector;

use super::{validate, UseCaseError, UseCaseResult};
use crate::App;
use chrono::Utc;
use context::allocate_and_render;
use mira_core::memory::MemoryId;
use mira_core::render;
use mira_store::{LoadedMemory, Scope};
use retrieve::{load_candidates, refine, resolve_superseded, search};
use serde::Serialize;
use std::collections::HashMap;
use std::time::Instant;

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 10_000;
/// Largest budget accepted, in tokens.
pub const MAX_BUDGET: u32 = 100_000;

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
    /// The clock for recency (now when absent; evaluations replay the past).
    pub now: Option<chrono::DateTime<Utc>>,
}

/// One memory in the recalled context.
#[derive(Debug, Clone, Serialize)]
pub struct RecalledItem {
    /// Its id (printed `T0:<id>`).
    pub id: MemoryId,
    /// How it was rendered.
    pub mode: &'static str,
    /// Tokens of its section.
    pub tokens: u32,
    /// Final allocator score.
    pub score: f64,
    /// Relevance to the query in [0, 1].
    pub relevance: f32,
    /// Its type.
    pub memory_type: String,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// The rendered section body.
    pub text: String,
}

/// The result of a recall.
#[derive(Debug, Clone, Serialize)]
pub struct RecallOutcome {
    /// The query.
    pub query: String,
    /// The budget in tokens.
    pub budget: u32,
    /// The wing asked for.
    pub wing: Option<String>,
    /// The fallback wing that answered, when the primary scope was empty.
    pub fallback_wing: Option<String>,
    /// Tokens used by the sections (never more than the budget).
    pub used: u32,
    /// Candidates considered after fusion.
    pub candidates: usize,
    /// The selected memories, best first.
    pub items: Vec<RecalledItem>,
    /// Ranked candidate ids after thresholding (before the budget), for evaluation.
    #[serde(skip)]
    pub ranking: Vec<MemoryId>,
    /// The context block.
    pub text: String,
    /// Time spent, in milliseconds.
    pub millis: f64,
}

/// Which retrieval stages run (the full pipeline, or a baseline for evaluation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retrieval {
    /// Dense + lexical + every stage.
    Hybrid,
    /// FTS5 BM25 alone, ranked by BM25.
    LexicalOnly,
    /// Dense search alone, ranked by cosine.
    DenseOnly,
}

/// A memory retrieved for the query, with its relevance.
struct Candidate {
    loaded: LoadedMemory,
    embedding: Vec<f32>,
    relevance: f32,
}

fn validate_request(app: &App, req: &RecallRequest) -> UseCaseResult<u32> {
    if req.query.trim().is_empty() {
        return Err(UseCaseError::Invalid(
            "query is empty: say what you are looking for".into(),
        ));
    }
    let n = req.query.chars().count();
    if n > MAX_QUERY_CHARS {
        return Err(UseCaseError::Invalid(format!(
            "query is {n} characters; the limit is {MAX_QUERY_CHARS}: shorten it to the key words"
        )));
    }
    if req.query.contains('\0') {
        return Err(UseCaseError::Invalid(
            "query contains a NUL character: remove it".into(),
        ));
    }
    for w in req.wing.iter().chain(&req.fallback_wings) {
        validate::name("wing", w)?;
    }
    if let Some(r) = &req.room {
        validate::name("room", r)?;
    }
    let budget = req
        .budget
        .unwrap_or(app.config.allocator.default_budget as i64);
    if !(1..=MAX_BUDGET as i64).contains(&budget) {
        return Err(UseCaseError::Invalid(format!(
            "budget {budget} is out of range: give a number of tokens from 1 to {MAX_BUDGET} (default {})",
            app.config.allocator.default_budget
        )));
    }
    Ok(budget as u32)
}

/// Brings the vector index in step with rows other processes (another `mira serve` on the same
/// database) committed, added, archived or deleted since the last call: one `PRAGMA
/// data_version` when nothing changed. A failure only delays dense visibility of those rows
/// (the lexical half reads SQLite directly), so it is logged and recall goes on.
pub fn sync_index(app: &App) {
    match app.index.sync_from_store() {
        Ok(r) if r.added + r.removed > 0 => tracing::debug!(
            "vector index: picked up {} new and {} removed rows written elsewhere",
            r.added,
            r.removed
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!("vector index not synchronised with the database: {e}"),
    }
}

/// Recalls the best context for a query within its budget.
pub fn recall(app: &App, req: &RecallRequest) -> UseCaseResult<RecallOutcome> {
    let out = recall_with(app, req, Retrieval::Hybrid)?;
    app.metrics
        .observe_recall(out.millis / 1e3, out.used, out.budget);
    Ok(out)
}

/// Recall with a chosen retrieval mode (baselines are used by `mira eval`).
pub fn recall_with(
    app: &App,
    req: &RecallRequest,
    mode: Retrieval,
) -> UseCaseResult<RecallOutcome> {
    let started = Instant::now();
    let budget = validate_request(app, req)?;
    if mode != Retrieval::LexicalOnly {
        sync_index(app);
    }
    let qvec = if mode == Retrieval::LexicalOnly {
        Vec::new()
    } else {
        query_vector(app, &req.query)?
    };
    let mut scopes = vec![(
        None,
        Scope {
            wing: req.wing.clone(),
            room: req.room.clone(),
        },
    )];
    for w in &req.fallback_wings {
        scopes.push((
            Some(w.clone()),
            Scope {
                wing: Some(w.clone()),
                room: req.room.clone(),
            },
        ));
    }
    let mut fallback_wing = None;
    let mut ids = Vec::new();
    for (fallback, scope) in scopes {
        ids = search(app, &req.query, &qvec, &scope, mode)?;
        if !ids.is_empty() {
            fallback_wing = fallback;
            break;
        }
    }
    let qvec_for_relevance = if qvec.is_empty() {
        query_vector(app, &req.query)?
    } else {
        qvec
    };
    let mut cands = load_candidates(app, &ids, &qvec_for_relevance)?;
    let candidates = cands.len();
    if mode == Retrieval::Hybrid {
        cands = refine(app, &req.query, cands)?;
        cands = resolve_superseded(app, &qvec_for_relevance, cands)?;
    } else {
        // Baselines keep their own ranking.
        let order: HashMap<MemoryId, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (*id, i))
            .collect();
        cands.sort_by_key(|c| {
            order
                .get(&c.loaded.memory.id)
                .copied()
                .unwrap_or(usize::MAX)
        });
        let n = cands.len() as f32;
        for (rank, c) in cands.iter_mut().enumerate() {
            c.relevance = 1.0 - rank as f32 / (n + 1.0);
        }
    }
    let ranking = cands.iter().map(|c| c.loaded.memory.id).collect();
    let (items, used) = allocate_and_render(
        app,
        budget,
        req.now.unwrap_or_else(Utc::now).timestamp(),
        &cands,
    )?;
    let sections: Vec<String> = items.iter().map(|i| i.text.clone()).collect();
    let text = render::context_block(&req.query, budget, req.wing.as_deref(), &sections, used);
    Ok(RecallOutcome {
        query: req.query.clone(),
        budget,
        wing: req.wing.clone(),
        fallback_wing,
        used,
        candidates,
        items,
        ranking,
        text,
        millis: started.elapsed().as_secs_f64() * 1000.0,
    })
}
