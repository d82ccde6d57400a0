//! Retrieval: the query vector, dense and lexical search, fusion, candidates and their
//! refinement (clustering, tag boost, threshold, reranker, supersession), ranked by relevance.

use super::{Candidate, Retrieval};
use crate::App;
use anyhow::Context;
use mira_core::memory::MemoryId;
use mira_core::threshold::ThresholdMethod;
use mira_core::{cluster, expand, fusion, rerank, score, text};
use mira_store::index::SearchFilter;
use mira_store::Scope;
use std::collections::{HashMap, HashSet};

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
pub(super) fn search(
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

pub(super) fn load_candidates(
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
pub(super) fn resolve_superseded(
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
pub(super) fn refine(
    app: &App,
    query: &str,
    mut cands: Vec<Candidate>,
) -> anyhow::Result<Vec<Candidate>> {
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
