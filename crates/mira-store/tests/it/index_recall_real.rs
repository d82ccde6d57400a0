//! HNSW against exact search on real sentence embeddings: LoCoMo turns, events and sentences
//! embedded by all-MiniLM-L6-v2 (through `mira-embed`), queried with the LoCoMo questions.
//!
//! The embeddings are cached under `CARGO_TARGET_TMPDIR` so re-runs do not re-embed. The model
//! must be installed (`scripts/fetch-model.sh`).

use mira_core::memory::MemoryId;
use mira_embed::Embedder;
use mira_store::index::{
    ExactIndex, HnswIndex, IndexEntry, IndexParams, VectorIndex, VectorIndexManager,
};
use mira_store::{Scope, SqliteOptions, SqliteStore};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Indexed texts (LoCoMo turns first, then events, then sentences of turns).
const CORPUS: usize = 6000;
/// Queries (LoCoMo questions, never indexed).
const QUERIES: usize = 400;

/// The LoCoMo development set, `data/locomo-dev` of the project's data folder (`mira_testkit::shared_path`).
fn data_dir() -> PathBuf {
    mira_testkit::shared_path("data/locomo-dev")
}

/// `(corpus, queries)`: distinct texts in a fixed order.
fn texts() -> (Vec<String>, Vec<String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap_or_else(|e| panic!("LoCoMo data missing at {}: {e}", data_dir().display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let (mut turns, mut events, mut sentences, mut questions) = (vec![], vec![], vec![], vec![]);
    for f in files {
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        let Some(obj) = doc.as_object() else { continue };
        let mut keys: Vec<&String> = obj.keys().collect();
        keys.sort_by_key(|k| {
            (
                k.trim_start_matches(|c: char| !c.is_ascii_digit())
                    .parse::<u32>()
                    .unwrap_or(0),
                *k,
            )
        });
        for k in keys {
            let v = &obj[k];
            let is_session = k
                .strip_prefix("session_")
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
            if is_session {
                for turn in v.as_array().into_iter().flatten() {
                    if let Some(t) = turn["text"].as_str() {
                        turns.push(t.to_owned());
                        sentences.extend(
                            t.split_inclusive(['.', '!', '?'])
                                .map(str::trim)
                                .filter(|s| s.split_whitespace().count() >= 4)
                                .map(str::to_owned),
                        );
                    }
                }
            } else if k.starts_with("events_session_") {
                for (speaker, list) in v.as_object().into_iter().flatten() {
                    if speaker != "date" {
                        events.extend(
                            list.as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(|e| e.as_str().map(str::to_owned)),
                        );
                    }
                }
            } else if k == "qa" {
                questions.extend(
                    v.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|q| q["question"].as_str().map(str::to_owned)),
                );
            }
        }
    }
    let mut seen = HashSet::new();
    let queries: Vec<String> = questions
        .into_iter()
        .filter(|q| seen.insert(q.clone()))
        .take(QUERIES)
        .collect();
    let corpus: Vec<String> = turns
        .into_iter()
        .chain(events)
        .chain(sentences)
        .filter(|t| !t.trim().is_empty() && seen.insert(t.clone()))
        .take(CORPUS)
        .collect();
    (corpus, queries)
}

/// Embeds `texts` with the real model, cached in a file keyed by the texts' sha256.
fn embed_cached(texts: &[String]) -> Vec<Vec<f32>> {
    let mut h = Sha256::new();
    for t in texts {
        h.update(t.as_bytes());
        h.update([0]);
    }
    let tag: String = h
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("locomo-minilm-{tag}.f32"));
    if let Ok(bytes) = std::fs::read(&cache) {
        let dim = mira_embed::DIMENSION;
        if bytes.len() == texts.len() * dim * 4 {
            let floats: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            return floats.chunks_exact(dim).map(<[f32]>::to_vec).collect();
        }
    }
    let dir = mira_embed::resolve_model_dir(None);
    let model = mira_embed::MiniLm::load(&dir).unwrap_or_else(|e| {
        panic!("the real-embedding test needs the model (scripts/fetch-model.sh): {e}")
    });
    let started = Instant::now();
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(64) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        out.extend(model.embed_batch(&refs).unwrap());
    }
    eprintln!(
        "embedded {} texts in {:.1} s",
        texts.len(),
        started.elapsed().as_secs_f64()
    );
    let bytes: Vec<u8> = out.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    let _ = std::fs::write(&cache, bytes);
    out
}

/// Corpus texts, their embeddings and the query embeddings.
type Embedded = (Vec<String>, Vec<Vec<f32>>, Vec<Vec<f32>>);

/// The corpus and queries embedded, computed once per test binary.
fn embedded() -> &'static Embedded {
    static DATA: OnceLock<Embedded> = OnceLock::new();
    DATA.get_or_init(|| {
        let (corpus, queries) = texts();
        let vectors = embed_cached(&corpus);
        let qvecs = embed_cached(&queries);
        (corpus, vectors, qvecs)
    })
}

fn recall_at(truth: &[MemoryId], got: &[MemoryId]) -> f64 {
    let t: HashSet<_> = truth.iter().collect();
    got.iter().filter(|id| t.contains(id)).count() as f64 / truth.len().max(1) as f64
}

#[test]
fn hnsw_recall_on_real_embeddings_at_default_params() {
    let (corpus, vectors, qvecs) = embedded();
    assert!(
        corpus.len() >= 5000,
        "only {} distinct LoCoMo texts",
        corpus.len()
    );
    let distinct: BTreeSet<&String> = corpus.iter().collect();
    assert_eq!(distinct.len(), corpus.len());
    let wings = ["conv-a", "conv-b", "conv-c"];
    let entries: Vec<IndexEntry> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| IndexEntry {
            key: i as u64 + 1,
            id: MemoryId::new_v4(),
            wing: wings[i % 3].into(),
            room: "turns".into(),
            vector: v.clone(),
        })
        .collect();
    let exact = ExactIndex::from_entries(entries.clone()).unwrap();
    let params = IndexParams::default();
    let started = Instant::now();
    let hnsw = HnswIndex::build(384, params, &entries, 0, &Default::default())
        .unwrap()
        .unwrap();
    eprintln!(
        "HNSW over {} real embeddings built in {:.1} s",
        entries.len(),
        started.elapsed().as_secs_f64()
    );
    let ids = |h: Vec<mira_store::index::Hit>| h.into_iter().map(|h| h.id).collect::<Vec<_>>();
    let mean =
        |f: &dyn Fn(&[f32]) -> f64| qvecs.iter().map(|q| f(q)).sum::<f64>() / qvecs.len() as f64;
    let all = Scope::all();
    let r10 = mean(&|q| {
        recall_at(
            &ids(exact.search(q, 10, &all)),
            &ids(hnsw.search(q, 10, &all)),
        )
    });
    let r100 = mean(&|q| {
        recall_at(
            &ids(exact.search(q, 100, &all)),
            &ids(hnsw.search(q, 100, &all)),
        )
    });
    let wing = Scope::wing("conv-b");
    let rw = mean(&|q| {
        recall_at(
            &ids(exact.search(q, 10, &wing)),
            &ids(hnsw.search(q, 10, &wing)),
        )
    });
    eprintln!("real embeddings, default params: recall@10 {r10:.4}, recall@100 {r100:.4}, filtered recall@10 {rw:.4}");
    assert!(r10 >= 0.98, "recall@10 {r10}");
    assert!(rw >= 0.98, "filtered recall@10 {rw}");
    assert!(r100 >= 0.95, "recall@100 {r100}");
}

#[test]
fn restart_loads_the_persisted_index_without_re_embedding() {
    let (corpus, vectors, _) = embedded();
    let (corpus, vectors) = (&corpus[..2000], &vectors[..2000]);
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("mira.db");
    let store = Arc::new(SqliteStore::open(&db, &SqliteOptions::default()).unwrap());
    store
        .write(|tx| {
            for (text, v) in corpus.iter().zip(vectors) {
                let id = MemoryId::new_v4().to_string();
                tx.execute(
                    "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count, created_at, stored_at)
                     VALUES (?1, 'locomo', 'turns', 'fact', ?2, ?1, 1, 0, 0)",
                    rusqlite::params![id, text],
                )?;
                let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                tx.execute(
                    "INSERT INTO embeddings (memory_id, model, dim, vector) VALUES (?1, 'all-MiniLM-L6-v2', 384, ?2)",
                    rusqlite::params![id, blob],
                )?;
            }
            Ok(())
        })
        .unwrap();
    let dir = tmp.path().join("index");
    let params = IndexParams {
        exact_threshold: 0,
        ..IndexParams::default()
    };
    let m = VectorIndexManager::open(store.clone(), &dir, params).unwrap();
    assert!(m.wait_idle(Duration::from_secs(300)));
    assert!(m.state().persisted);
    let q = &vectors[42];
    let before = m.search(q, 10, &Scope::all());
    drop(m);
    // The restart reads vectors from SQLite only: no embedder exists in this scope.
    let started = Instant::now();
    let m = VectorIndexManager::open(store, &dir, params).unwrap();
    assert!(m.wait_idle(Duration::from_secs(60)));
    let s = m.state();
    eprintln!(
        "restart with 2000 real embeddings: ready in {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    assert!(s.loaded && s.rebuilds == 0 && s.size == 2000, "{s:?}");
    assert_eq!(m.search(q, 10, &Scope::all()), before);
}
