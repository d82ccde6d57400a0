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

use super::{validate, UseCaseError, UseCaseResult};
use crate::App;
use anyhow::Context;
use chrono::Utc;
use mira_core::allocate::{self, AllocCandidate, AllocParams};
use mira_core::memory::{Memory, MemoryId};
use mira_core::threshold::ThresholdMethod;
use mira_core::{cluster, expand, fusion, render, rerank, score, text};
use mira_store::index::SearchFilter;
use mira_store::{LoadedMemory, Scope};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 10_000;
/// Largest budget accepted, in tokens.
pub const MAX_BUDGET: u32 = 100_000;

/// Largest candidate-pair count for which the overlap cache table is read and written.
const MAX_CACHED_PAIRS: usize = 2_000;

/// Score factor of a superseded memory, so that its successor always ranks first.
const SUPERSEDED_FACTOR: f64 = 0.01;

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

/// The query's embedding: cached; with expansion, the normalised mean of the variants' embeddings.
pub fn query_vector(app: &App, query: &str) -> anyhow::Result<Vec<f32>> {
    if let Some(v) = app.query_cache_get(query) {
        return Ok(v);
    }
    let qe = &app.config.recall.query_expansion;
    let variants = if qe.enabled {
        expand::expand_query(query, qe.num_variants)
    } else {
        vec![query.to_owned()]
    };
    let refs: Vec<&str> = variants.iter().map(String::as_str).collect();
    let vectors = app
        .embedder()?
        .embed_batch(&refs)
        .context("embedding the query failed")?;
    let v = expand::average(&vectors);
    app.query_cache_put(query, v.clone());
    Ok(v)
}

/// Dense and lexical candidate ids for one scope, fused (or one of them, for baselines).
fn search(
    app: &App,
    query: &str,
    qvec: &[f32],
    scope: &Scope,
    mode: Retrieval,
) -> anyhow::Result<Vec<(MemoryId, Option<f32>)>> {
    let cfg = &app.config;
    let filter = SearchFilter {
        wing: scope.wing.clone(),
        room: scope.room.clone(),
    };
    let dense = || -> Vec<MemoryId> {
        app.index
            .search(qvec, cfg.allocator.max_candidates, &filter)
            .into_iter()
            .map(|h| h.id)
            .collect()
    };
    let lexical = || -> anyhow::Result<Vec<MemoryId>> {
        Ok(app
            .store
            .lexical_search(query, cfg.recall.fts5_limit, scope)?
            .into_iter()
            .map(|(id, _)| id)
            .collect())
    };
    let alone = |ids: Vec<MemoryId>| ids.into_iter().map(|id| (id, None)).collect();
    match mode {
        Retrieval::DenseOnly => Ok(alone(dense())),
        Retrieval::LexicalOnly => Ok(alone(lexical()?)),
        Retrieval::Hybrid if !cfg.recall.enable_fts5 => Ok(alone(dense())),
        Retrieval::Hybrid => {
            let (d, l) = std::thread::scope(|s| {
                let l = s.spawn(lexical);
                (dense(), l.join())
            });
            let l = l.map_err(|_| anyhow::anyhow!("lexical search thread failed"))??;
            let k = cfg.recall.rrf_k;
            Ok(fusion::rrf(&[&d, &l], k)
                .into_iter()
                .map(|(id, s)| (id, Some(fusion::rrf_relevance(s, 2, k))))
                .collect())
        }
    }
}

fn load_candidates(
    app: &App,
    hits: &[(MemoryId, Option<f32>)],
    qvec: &[f32],
) -> anyhow::Result<Vec<Candidate>> {
    let ids: Vec<MemoryId> = hits.iter().map(|(id, _)| *id).collect();
    let fused: HashMap<MemoryId, f32> = hits
        .iter()
        .filter_map(|(id, f)| f.map(|f| (*id, f)))
        .collect();
    let w = app.config.recall.fusion_weight;
    let mut embeddings = app.store.embeddings_by_ids(&ids)?;
    let mut out = Vec::with_capacity(ids.len());
    for loaded in app.store.memories_by_ids(&ids)? {
        if loaded.memory.archived {
            continue;
        }
        let Some(embedding) = embeddings.remove(&loaded.memory.id) else {
            continue;
        };
        let mut relevance = score::relevance_from_cosine(score::cosine(&embedding, qvec));
        if let Some(f) = fused.get(&loaded.memory.id) {
            relevance = score::hybrid_relevance(relevance, *f, w);
        }
        out.push(Candidate {
            loaded,
            embedding,
            relevance,
        });
    }
    Ok(out)
}

/// Brings in the successor of every superseded candidate and demotes the superseded one
/// (`recall.superseded`: `header` keeps it as a header only, `exclude` drops it).
fn resolve_superseded(
    app: &App,
    qvec: &[f32],
    mut cands: Vec<Candidate>,
) -> anyhow::Result<Vec<Candidate>> {
    let present: HashSet<MemoryId> = cands.iter().map(|c| c.loaded.memory.id).collect();
    let mut missing: Vec<MemoryId> = Vec::new();
    for c in &cands {
        // Follow the chain to the newest version (bounded: chains are short, cycles are impossible
        // in practice but must not loop).
        let mut next = c.loaded.memory.superseded_by;
        let mut hops = 0;
        while let Some(s) = next.filter(|_| hops < 8) {
            hops += 1;
            if !present.contains(&s) && !missing.contains(&s) {
                missing.push(s);
            }
            next = app.store.load(s)?.and_then(|m| m.memory.superseded_by);
        }
    }
    let missing: Vec<(MemoryId, Option<f32>)> = missing.into_iter().map(|id| (id, None)).collect();
    cands.extend(load_candidates(app, &missing, qvec)?);
    if app.config.recall.superseded == "exclude" {
        cands.retain(|c| c.loaded.memory.superseded_by.is_none());
    }
    Ok(cands)
}

/// Collapses near duplicates (keeping the most relevant), boosts tag matches, applies the
/// adaptive threshold and the optional reranker. Returns candidates ranked by relevance.
fn refine(app: &App, query: &str, mut cands: Vec<Candidate>) -> anyhow::Result<Vec<Candidate>> {
    let rc = &app.config.recall;
    if rc.search_time_clustering.enabled && cands.len() > 1 {
        let vectors: Vec<&[f32]> = cands.iter().map(|c| c.embedding.as_slice()).collect();
        let scores: Vec<f32> = cands.iter().map(|c| c.relevance).collect();
        let keep: HashSet<usize> = cluster::cluster(
            &vectors,
            &scores,
            rc.search_time_clustering.similarity_threshold,
        )
        .into_iter()
        .map(|c| c.representative)
        .collect();
        cands = cands
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, c)| c)
            .collect();
    }
    let query_tags = text::keywords(query, 4);
    let ids: Vec<MemoryId> = cands.iter().map(|c| c.loaded.memory.id).collect();
    let matched = app.store.tag_matches(&ids, &query_tags)?;
    for c in &mut cands {
        c.relevance = score::tag_boost(c.relevance, matched.contains_key(&c.loaded.memory.id));
    }
    let method: ThresholdMethod = rc
        .adaptive_threshold_method
        .parse()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let relevances: Vec<f32> = cands.iter().map(|c| c.relevance).collect();
    let threshold = mira_core::threshold::adaptive_threshold(
        &relevances,
        method,
        rc.adaptive_threshold_floor,
        rc.adaptive_threshold_ceiling,
    );
    let kept: HashSet<usize> = mira_core::threshold::prune(
        &relevances,
        threshold,
        mira_core::threshold::DEFAULT_KEEP_AT_LEAST,
    )
    .into_iter()
    .collect();
    let mut cands: Vec<Candidate> = cands
        .into_iter()
        .enumerate()
        .filter(|(i, _)| kept.contains(i))
        .map(|(_, c)| c)
        .collect();
    sort_by_relevance(&mut cands);
    if rc.reranker.enabled {
        for c in cands.iter_mut().take(rc.reranker.top_k) {
            c.relevance = rerank::blend(
                c.relevance,
                rerank::rerank_score(query, &c.loaded.memory.content),
            );
        }
        sort_by_relevance(&mut cands);
    }
    Ok(cands)
}

fn sort_by_relevance(cands: &mut [Candidate]) {
    cands.sort_by(|a, b| {
        b.relevance
            .total_cmp(&a.relevance)
            .then(a.loaded.memory.id.cmp(&b.loaded.memory.id))
    });
}

fn alloc_params(app: &App) -> AllocParams {
    let a = &app.config.allocator;
    AllocParams {
        session_window_secs: a.session_window_seconds,
        session_boost_beta: a.session_boost_beta,
        session_boost_max: a.session_boost_max,
        causal_penalty_alpha: a.causal_penalty_alpha,
        ..AllocParams::default()
    }
}

fn base_score(app: &App, m: &Memory, fact_count: u32, relevance: f32, now_secs: i64) -> f64 {
    let a = &app.config.allocator;
    let rate = app.config.decay_rates.rate(m.memory_type);
    let density = score::density(
        fact_count,
        m.token_count,
        a.density_sigmoid.k,
        a.density_sigmoid.mu,
    );
    let age = score::age_days(now_secs, m.created_at.timestamp());
    let recency = score::recency_with_floor(age, rate, a.recency_floor);
    score::initial_score(relevance, density, recency)
}

/// Pairwise similarity for the allocator, through the overlap cache table.
struct Overlaps<'a> {
    app: &'a App,
    cands: &'a [Candidate],
    cached: HashMap<(MemoryId, MemoryId), f32>,
    fresh: Vec<((MemoryId, MemoryId), f32)>,
}

impl Overlaps<'_> {
    fn get(&mut self, i: usize, j: usize) -> f32 {
        let (a, b) = (
            self.cands[i].loaded.memory.id,
            self.cands[j].loaded.memory.id,
        );
        let key = if a <= b { (a, b) } else { (b, a) };
        if let Some(s) = self.cached.get(&key) {
            return *s;
        }
        let s = score::cosine(&self.cands[i].embedding, &self.cands[j].embedding).max(0.0);
        self.cached.insert(key, s);
        self.fresh.push((key, s));
        s
    }

    /// Writes newly computed similarities to the cache (best effort: a read-only store skips it).
    fn persist(self) {
        let oc = &self.app.config.overlap_cache;
        if let Err(e) =
            self.app
                .store
                .overlap_put(&self.fresh, Utc::now().timestamp_millis(), oc.max_entries)
        {
            tracing::debug!("overlap cache not updated: {e}");
        }
    }
}

fn allocate_and_render(
    app: &App,
    budget: u32,
    now: i64,
    cands: &[Candidate],
) -> anyhow::Result<(Vec<RecalledItem>, u32)> {
    let alloc: Vec<AllocCandidate> = cands
        .iter()
        .map(|c| {
            let m = &c.loaded.memory;
            let mut costs = app.mode_costs(m);
            let mut base = base_score(app, m, c.loaded.fact_count, c.relevance, now);
            if m.superseded_by.is_some() {
                // Outdated: only a header, ranked below what replaced it.
                costs.fingerprint = u32::MAX;
                costs.verbatim = u32::MAX;
                base *= SUPERSEDED_FACTOR;
            }
            AllocCandidate {
                base_score: base,
                created_at_secs: m.created_at.timestamp(),
                costs,
            }
        })
        .collect();
    let ids: Vec<MemoryId> = cands.iter().map(|c| c.loaded.memory.id).collect();
    let edges: HashSet<(MemoryId, MemoryId)> = app.store.edges_among(&ids)?.into_iter().collect();
    let ttl_ms = app.config.overlap_cache.ttl_days as i64 * 86_400_000;
    let mut pairs = Vec::new();
    for (i, a) in ids.iter().enumerate() {
        for b in &ids[i + 1..] {
            pairs.push(if a <= b { (*a, *b) } else { (*b, *a) });
        }
    }
    // The cache pays only for small candidate sets: one SQLite read of a few thousand pairs
    // beats recomputing them, while tens of thousands of rows would cost more than the cosines.
    let use_cache = pairs.len() <= MAX_CACHED_PAIRS;
    let cached = if use_cache {
        app.store
            .overlap_get(&pairs, Utc::now().timestamp_millis() - ttl_ms)?
    } else {
        HashMap::new()
    };
    let mut overlaps = Overlaps {
        app,
        cands,
        cached,
        fresh: Vec::new(),
    };
    let linked =
        |i: usize, j: usize| edges.contains(&(ids[i], ids[j])) || edges.contains(&(ids[j], ids[i]));
    let selections = allocate::allocate(
        &alloc,
        budget,
        &alloc_params(app),
        &mut |i, j| overlaps.get(i, j),
        &linked,
    );
    if use_cache {
        overlaps.persist();
    }
    let mut used = 0;
    let items = selections
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let c = &cands[s.index];
            let m = &c.loaded.memory;
            let (section, cost) = render::section(n + 1, s.mode, m);
            used += cost;
            RecalledItem {
                id: m.id,
                mode: s.mode.as_str(),
                tokens: cost,
                score: s.score,
                relevance: c.relevance,
                memory_type: m.memory_type.to_string(),
                wing: m.wing.clone(),
                room: m.room.clone(),
                created_at: m
                    .created_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                text: section,
            }
        })
        .collect();
    Ok((items, used))
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
