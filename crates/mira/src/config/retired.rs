//! Keys mira accepts and ignores.

/// Keys that the reference or earlier versions used and that mira accepts but ignores, with
/// why: recall ranks by relevance and the allocator walks down that ranking (README, "Recall
/// quality"), so the reference's scoring stages have no setting left, and a few informational
/// keys of the reference's file have no use here. Each one found is warned about once, when
/// the application opens.
pub const RETIRED_KEYS: &[(&str, &str)] = &[
    ("system", "informational in the reference; mira reports its own version"),
    ("embeddings.model_hash", "each embedding records the model that computed it"),
    ("overlap_cache", "recall ranks by relevance and reads no pairwise similarities: the overlap cache is gone"),
    ("hnsw.Ml", "the HNSW library derives the level multiplier from hnsw.M"),
    ("recall.query_expansion.temperature", "query variants are cleaned forms of the query, not sampled"),
    ("metrics.report_interval_seconds", "/metrics is read when scraped, nothing is reported on a timer"),
    ("decay_rates", "recall no longer weighs memories by age"),
    ("allocator.recency_floor", "recall no longer weighs memories by age"),
    ("allocator.density_sigmoid", "recall no longer weighs memories by fact density"),
    ("allocator.session_window_seconds", "the session boost is replaced by session-neighbour propagation (recall.ranking.propagation)"),
    ("allocator.session_boost_beta", "the session boost is replaced by session-neighbour propagation (recall.ranking.propagation)"),
    ("allocator.session_boost_max", "the session boost is replaced by session-neighbour propagation (recall.ranking.propagation)"),
    ("allocator.causal_penalty_alpha", "the causal penalty is gone: relevance decides"),
    ("allocator.early_pruning_threshold", "unused by the reference too; see allocator.relevance_floor"),
    ("recall.adaptive_threshold_method", "replaced by allocator.relevance_floor"),
    ("recall.adaptive_threshold_floor", "replaced by allocator.relevance_floor"),
    ("recall.adaptive_threshold_ceiling", "replaced by allocator.relevance_floor"),
    ("recall.enable_fts5", "recall keeps its own BM25 index (recall.ranking)"),
    ("recall.fts5_limit", "recall keeps its own BM25 index (recall.ranking)"),
    ("recall.rrf_k", "lexical and dense scores are fused by z-scores (recall.ranking.lexical_weight)"),
    ("recall.fusion_weight", "replaced by recall.ranking.lexical_weight"),
    ("recall.search_time_clustering", "near duplicates are shown as headers (allocator.redundancy_threshold)"),
    ("recall.reranker", "the heuristic reranker is gone: the ranking is recall.ranking"),
    ("embeddings.current_model", "mira runs all-MiniLM-L6-v2 from embeddings.model_dir, and each embedding records the model that computed it"),
];

/// Removes the [`RETIRED_KEYS`] present in a parsed file; returns those it found.
pub(super) fn remove_retired(value: &mut serde_norway::Value) -> Vec<String> {
    let mut found = Vec::new();
    for (key, _) in RETIRED_KEYS {
        let mut path: Vec<&str> = key.split('.').collect();
        let leaf = path.pop().unwrap_or(key);
        let mut map = value.as_mapping_mut();
        for part in path {
            map = map
                .and_then(|m| m.get_mut(part))
                .and_then(serde_norway::Value::as_mapping_mut);
        }
        if map.and_then(|m| m.remove(leaf)).is_some() {
            found.push((*key).to_string());
        }
    }
    found
}
