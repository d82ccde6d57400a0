//! Retrieval: the query vector, then the ranking of the memories of a scope by relevance, read
//! from the in-memory catalog (no SQLite row is read here):
//! BM25 and cosine → z-scores → fused score F (min-max to [0, 1]) → propagation from the
//! neighbouring memories of each session, less for long memories → entity boost → the best
//! `allocator.max_candidates`, taken so that they reach more sessions; and how far the best
//! stands above the scope's background ([`Standout`]). Baselines for `mira eval` rank by one
//! signal alone, or by plain RRF of the two lists.

use super::{Candidate, Retrieval};
use crate::usecases::{UseCaseError, UseCaseResult};
use crate::App;
use anyhow::Context;
use mira_core::lexical;
use mira_core::memory::MemoryId;
use mira_core::rank::{self, Moments, RankParams, Standout};
use mira_core::{expand, fusion};
use mira_store::index::{unit_cosine, Catalog, IndexView, VectorIndexManager};
use mira_store::{Database, Scope, TextRank};
use std::collections::HashSet;

/// The query's embedding: cached; with expansion, the normalised mean of the variants'
/// embeddings. Empty when no model is installed: recall then ranks by words alone.
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
    let Some(embedder) = app.embedder_if_installed()? else {
        return Ok(Vec::new());
    };
    let vectors = embedder
        .embed_batch(&refs)
        .context("embedding the query failed")?;
    let v = expand::average(&vectors);
    app.query_cache_put(query, v.clone());
    Ok(v)
}

/// Memories whose cosines estimate the mean and spread of a large scope's.
const MOMENT_SAMPLE: usize = 2048;

/// The first places of a ranking that session diversity reorders (the memories an agent reads
/// first); below them the order is the relevance's, so that the evidence further down keeps
/// its place in the budget.
const DIVERSE_PLACES: usize = 20;

/// What ranking needs besides the index: the query, its vector (empty: lexical only) and the
/// parameters.
pub(super) struct RankInput<'a> {
    pub query: &'a str,
    pub qvec: &'a [f32],
    pub filter: Scope,
    pub mode: Retrieval,
    pub params: RankParams,
    /// Scopes up to this size are scored whole; larger ones from the best `k` of each search
    /// and their session neighbours.
    pub exhaustive_below: usize,
    /// Candidates returned (and taken from each search in a large scope).
    pub k: usize,
}

/// The best cosine of a ranking's pool and the mean cosine of its scope with the query.
type BestAndMean = (f32, f32);

/// The memories of a scope ranked by relevance, and how far the best stands out.
pub(super) struct Ranking {
    /// Best first, at most `k`.
    pub candidates: Vec<Candidate>,
    /// How far the best candidate stands above the scope's background (the full pipeline
    /// measures meaning and words; baselines words at most).
    pub standout: Standout,
}

/// The memories of the scope ranked by relevance (best first, at most `k`).
pub(super) fn rank(
    app: &App,
    index: &VectorIndexManager,
    input: &RankInput<'_>,
) -> UseCaseResult<Ranking> {
    if let Retrieval::FullText(variant) = input.mode {
        return Ok(Ranking {
            candidates: full_text(app, index, input, variant)?,
            standout: Standout::default(),
        });
    }
    let dense = database_dense_hits(app, index, input);
    Ok(index.view(|view| Ranker::new(view, input, dense).ranked()))
}

/// The best `k` of the scope by the database's own full-text search (a baseline for
/// `mira eval`): the store's lexical search, or PostgreSQL's ranking `variant`; relevance is
/// the score over the best one's.
fn full_text(
    app: &App,
    index: &VectorIndexManager,
    input: &RankInput<'_>,
    variant: Option<TextRank>,
) -> UseCaseResult<Vec<Candidate>> {
    let hits = match variant {
        None => app
            .store
            .lexical_search(input.query, input.k, &input.filter)?,
        Some(rank) => match app.store.database() {
            Database::Postgres(pg) => pg.text_search(input.query, input.k, &input.filter, rank)?,
            Database::Sqlite(_) => {
                return Err(UseCaseError::Invalid(
                    format!(
                        "the ranking {} is PostgreSQL's: use storage.backend: postgres",
                        rank.name()
                    )
                    .into(),
                ))
            }
        },
    };
    let top = hits.first().map_or(1.0, |h| h.1);
    Ok(index.view(|view| {
        let catalog = view.catalog();
        hits.into_iter()
            .filter_map(|(id, score)| {
                let card = catalog.slot_of(id).and_then(|s| catalog.card(s))?.clone();
                let embedding = view
                    .vector(card.key)
                    .map(<[f32]>::to_vec)
                    .unwrap_or_default();
                let relevance = if top > 0.0 { score / top } else { 0.0 };
                Some(Candidate {
                    card,
                    embedding,
                    relevance: relevance.clamp(0.0, 1.0) as f32,
                })
            })
            .collect()
    }))
}

/// The database's own dense search (pgvector's HNSW index on PostgreSQL, filtered by the scope
/// in the same query) for a scope too large to score whole; `None` when the in-memory index
/// answers instead: SQLite, a small scope, no query vector, or a failing query (logged).
fn database_dense_hits(
    app: &App,
    index: &VectorIndexManager,
    input: &RankInput<'_>,
) -> Option<Vec<(MemoryId, f32)>> {
    if input.qvec.is_empty() {
        return None;
    }
    let n = index.view(|v| v.catalog().scope_size(&input.filter));
    if n <= input.exhaustive_below {
        return None;
    }
    app.store
        .dense_search(input.qvec, input.k, &input.filter)
        .unwrap_or_else(|e| {
            tracing::warn!("dense search in the database failed, the index answers: {e}");
            None
        })
}

/// One ranking over a view of the index.
struct Ranker<'v, 'a> {
    view: &'v IndexView<'v>,
    /// The database's dense hits, when it searched ([`database_dense_hits`]).
    database_dense: Option<Vec<(MemoryId, f32)>>,
    catalog: &'v Catalog,
    input: &'a RankInput<'a>,
    /// The BM25 hits (slot, score) of the scope, unsorted.
    lexical_hits: Vec<(u32, f32)>,
    /// The share of the query's information the best-covering memory holds.
    lexical_coverage: f32,
    /// BM25 score per slot (0: no query term).
    lexical: Vec<f32>,
    lexical_moments: Moments,
    dense_moments: Moments,
    /// Per slot, NaN until computed (memoised: moments, fusion and neighbours share them).
    cosines: Vec<f32>,
    fused: Vec<f32>,
    /// Min-max scaling of F: (lowest, span).
    scale: (f32, f32),
}

impl<'v, 'a> Ranker<'v, 'a> {
    fn new(
        view: &'v IndexView<'v>,
        input: &'a RankInput<'a>,
        database_dense: Option<Vec<(MemoryId, f32)>>,
    ) -> Self {
        let catalog = view.catalog();
        let terms = lexical::query_terms(input.query);
        let found = catalog.lexical_scores(&terms, input.params.bm25, &input.filter);
        let lexical_hits = found.hits;
        let slots = catalog.slot_count();
        let mut lexical = vec![0.0; slots];
        for &(s, v) in &lexical_hits {
            lexical[s as usize] = v;
        }
        let n = catalog.scope_size(&input.filter);
        Ranker {
            view,
            database_dense,
            catalog,
            input,
            lexical_moments: Moments::of_sparse(lexical_hits.iter().map(|h| h.1), n),
            lexical_hits,
            lexical_coverage: found.coverage,
            lexical,
            dense_moments: Moments::default(),
            cosines: vec![f32::NAN; slots],
            fused: vec![f32::NAN; slots],
            scale: (0.0, 1.0),
        }
    }

    /// The cosine of `slot`'s vector with the query's (`None`: no vector, or no query vector).
    fn cosine(&mut self, slot: u32) -> Option<f32> {
        let memo = *self.cosines.get(slot as usize)?;
        if !memo.is_nan() {
            return Some(memo);
        }
        let card = self.catalog.card(slot)?;
        let v = self.view.vector(card.key)?;
        let c = (!self.input.qvec.is_empty()).then(|| unit_cosine(v, self.input.qvec))?;
        self.cosines[slot as usize] = c;
        Some(c)
    }

    /// The fused score F of `slot`, scaled to [0, 1] over the pool.
    fn fused(&mut self, slot: u32) -> f32 {
        let raw = match self.fused.get(slot as usize) {
            Some(&f) if !f.is_nan() => f,
            _ => {
                let f = self.raw_fused(slot);
                if let Some(m) = self.fused.get_mut(slot as usize) {
                    *m = f;
                }
                f
            }
        };
        let (lo, span) = self.scale;
        // A pool of equal scores (one memory, say) is equally and fully relevant.
        if span > 1e-9 {
            (raw - lo) / span
        } else {
            1.0
        }
    }

    fn raw_fused(&mut self, slot: u32) -> f32 {
        let lz = self
            .lexical_moments
            .z(self.lexical.get(slot as usize).copied().unwrap_or(0.0));
        let dz = self.cosine(slot).map_or(0.0, |c| self.dense_moments.z(c));
        rank::fuse(lz, dz, self.input.params.lexical_weight)
    }

    /// The slots scored: the whole scope when it is small, else the best of each search.
    fn pool(&mut self) -> Vec<u32> {
        let input = self.input;
        let n = self.catalog.scope_size(&input.filter);
        if n <= input.exhaustive_below {
            let scope = self.catalog.scope(&input.filter);
            let cosines: Vec<f32> = scope.iter().filter_map(|&s| self.cosine(s)).collect();
            self.dense_moments = Moments::of(cosines);
            return scope;
        }
        let mut pool: Vec<u32> = self.best_lexical(input.k);
        if !input.qvec.is_empty() {
            pool.extend(self.dense_hits().into_iter().map(|(s, _)| s));
            // Moments of the cosines over an even sample of the scope.
            let sample: Vec<f32> = self
                .catalog
                .sample(&input.filter, MOMENT_SAMPLE)
                .into_iter()
                .filter_map(|s| self.cosine(s))
                .collect();
            self.dense_moments = Moments::of(sample);
        }
        pool.sort_unstable();
        pool.dedup();
        pool
    }

    fn best_lexical(&self, k: usize) -> Vec<u32> {
        let mut hits = self.lexical_hits.clone();
        self.keep_best(&mut hits, k);
        hits.into_iter().map(|(s, _)| s).collect()
    }

    /// Keeps the best `k` of `hits`, sorted by score descending, ties by key (a selection
    /// first, so only the kept ones are sorted).
    fn keep_best(&self, hits: &mut Vec<(u32, f32)>, k: usize) {
        let key = |s: u32| self.catalog.card(s).map_or(u64::MAX, |c| c.key);
        let order =
            |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(key(a.0).cmp(&key(b.0)));
        if k == 0 {
            hits.clear();
            return;
        }
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, order);
            hits.truncate(k);
        }
        hits.sort_by(order);
    }

    fn ranked(mut self) -> Ranking {
        let input = self.input;
        let mut standout = Standout::new(None, self.lexical_coverage);
        let mut scored: Vec<(u32, f32)> = match input.mode {
            Retrieval::Hybrid => {
                let (scored, dense) = self.hybrid();
                standout = Standout::new(dense, self.lexical_coverage);
                scored
            }
            Retrieval::LexicalOnly => self.lexical_hits.clone(),
            Retrieval::DenseOnly => self.dense_only(),
            Retrieval::Rrf => self.rrf(),
            // Ranked by the database instead (`rank` hands it to `full_text`).
            Retrieval::FullText(_) => Vec::new(),
        };
        self.keep_best(&mut scored, input.k);
        let diversity = input.params.session_diversity;
        if input.mode == Retrieval::Hybrid && diversity > 0.0 {
            let catalog = self.catalog;
            let params = &input.params;
            // A memory stands alone in the share its exchange (it and its neighbours) is long:
            // a short question beside a long answer repeats the session as much as the answer.
            let alone = |slot: u32| {
                catalog
                    .card(slot)
                    .map_or(0.0, |c| 1.0 - rank::receptivity(c.token_count, params))
            };
            let session = |slot: u32| {
                let card = catalog.card(slot)?;
                let exchange = catalog
                    .neighbours(slot, 1)
                    .flat_map(|(before, after)| before.into_iter().chain(after))
                    .map(alone)
                    .fold(alone(slot), f32::max);
                Some(((card.wing.clone(), card.session.clone()?), exchange))
            };
            scored = rank::diversify(&scored, session, diversity, DIVERSE_PLACES, input.k);
        }
        let top = scored.first().map_or(1.0, |s| s.1);
        let candidates = scored
            .into_iter()
            .filter_map(|(slot, g)| {
                let card = self.catalog.card(slot)?.clone();
                let embedding = self
                    .view
                    .vector(card.key)
                    .map(<[f32]>::to_vec)
                    .unwrap_or_default();
                Some(Candidate {
                    card,
                    embedding,
                    relevance: if top > 0.0 {
                        (g / top).clamp(0.0, 1.0)
                    } else {
                        0.0
                    },
                })
            })
            .collect();
        Ranking {
            candidates,
            standout,
        }
    }

    /// The best `k` of the scope by cosine (slot, similarity): the database's hits when it
    /// searched, else the vector index's.
    fn dense_hits(&self) -> Vec<(u32, f32)> {
        let input = self.input;
        let hits: Vec<(MemoryId, f32)> = match &self.database_dense {
            Some(hits) => hits.clone(),
            None => self
                .view
                .search(input.qvec, input.k, &input.filter)
                .iter()
                .map(|h| (h.id, h.similarity))
                .collect(),
        };
        hits.into_iter()
            .filter_map(|(id, similarity)| Some((self.catalog.slot_of(id)?, similarity)))
            .collect()
    }

    fn dense_only(&self) -> Vec<(u32, f32)> {
        if self.input.qvec.is_empty() {
            return Vec::new();
        }
        self.dense_hits()
    }

    fn rrf(&self) -> Vec<(u32, f32)> {
        let key_of = |s: u32| self.catalog.card(s).map(|c| c.id);
        let lexical: Vec<_> = self
            .best_lexical(self.input.k)
            .into_iter()
            .filter_map(key_of)
            .collect();
        let dense: Vec<_> = self
            .dense_only()
            .into_iter()
            .filter_map(|(s, _)| key_of(s))
            .collect();
        fusion::rrf(&[&dense, &lexical], fusion::DEFAULT_K)
            .into_iter()
            .filter_map(|(id, score)| Some((self.catalog.slot_of(id)?, score as f32)))
            .collect()
    }

    /// F over the pool, then G with neighbours and the entity boost; with the best cosine of
    /// the pool and the mean cosine of the scope, when the query has a vector.
    fn hybrid(&mut self) -> (Vec<(u32, f32)>, Option<BestAndMean>) {
        let p = self.input.params;
        let pool = self.pool();
        if pool.is_empty() {
            return (Vec::new(), None);
        }
        let best_cosine = pool
            .iter()
            .filter_map(|&s| self.cosine(s))
            .fold(None, |best: Option<f32>, c| {
                Some(best.map_or(c, |b| b.max(c)))
            });
        let dense = best_cosine.map(|best| (best, self.dense_moments.mean));
        let raw: Vec<f32> = pool.iter().map(|&s| self.raw_fused(s)).collect();
        let lo = raw.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = raw.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        self.scale = (lo, hi - lo);
        for (&s, &f) in pool.iter().zip(&raw) {
            self.fused[s as usize] = f;
        }
        // In a large scope the memories next to the pool are ranked too.
        let mut ranked = pool.clone();
        if self.catalog.scope_size(&self.input.filter) > self.input.exhaustive_below {
            for &s in &pool {
                for (b, a) in self.catalog.neighbours(s, p.propagation_reach) {
                    ranked.extend(b);
                    ranked.extend(a);
                }
            }
            ranked.sort_unstable();
            ranked.dedup();
        }
        // The one person the query names, and the memories that mention them.
        let entity = self.entity().map(|(name, term)| {
            let with: HashSet<u32> = self.catalog.slots_with_term(&term).into_iter().collect();
            (name, with)
        });
        let mut sides: Vec<(Option<f32>, Option<f32>)> = Vec::with_capacity(p.propagation_reach);
        let scored = ranked
            .into_iter()
            .map(|s| {
                sides.clear();
                if p.propagation > 0.0 {
                    let catalog = self.catalog;
                    for (b, a) in catalog.neighbours(s, p.propagation_reach) {
                        sides.push((b.map(|x| self.fused(x)), a.map(|x| self.fused(x))));
                    }
                }
                let tokens = self.catalog.card(s).map_or(0, |c| c.token_count);
                let mut g = rank::propagate(self.fused(s), &sides, tokens, &p);
                if let Some((name, with)) = &entity {
                    let by = self
                        .catalog
                        .card(s)
                        .and_then(|c| c.speaker.as_deref())
                        .is_some_and(|sp| sp == name.as_str());
                    if by || with.contains(&s) {
                        g += p.entity_boost;
                    }
                }
                (s, g)
            })
            .collect();
        (scored, dense)
    }

    /// The one person the query names among the scope's speakers, with their analysed term.
    fn entity(&self) -> Option<(String, String)> {
        if self.input.params.entity_boost == 0.0 {
            return None;
        }
        let speakers = self.catalog.speakers(&self.input.filter);
        let named = rank::named_entities(self.input.query, |n| {
            speakers.iter().any(|s| s.as_ref() == n)
        });
        let [name] = named.as_slice() else {
            return None;
        };
        let term = lexical::terms(name).into_iter().next()?;
        Some((name.clone(), term))
    }
}
