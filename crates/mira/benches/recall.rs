//! Recall latency, p50 and p99, at 1K, 10K and 100K memories, with the query embedding
//! uncached (first time a question is asked) and cached (asked again).
//!
//! The memories are LoCoMo turns (real texts with their real all-MiniLM-L6-v2 embeddings,
//! computed once and cached under the target directory); beyond the ~6K real turns, copies
//! carry a suffix and a slightly perturbed embedding, so the index sees realistic
//! neighbourhoods. The queries are LoCoMo questions, embedded by the real model at recall time.
//! `MIRA_BENCH_SIZES=1000,10000` chooses the sizes; `MIRA_BENCH_QUERIES` the number of queries.
//!
//! Run: `cargo bench -p mira --bench recall` (a store per size is built first: minutes at 100K).

use mira::usecases::recall::{recall, RecallRequest};
use mira::usecases::store::{store_batch, StoreRequest};
use mira_embed::{EmbedError, Embedder, MiniLm};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/locomo-dev"
);

/// Memory texts with precomputed vectors; anything else (the queries) goes to the real model.
struct Lookup {
    known: HashMap<String, Vec<f32>>,
    model: Arc<MiniLm>,
}

impl Embedder for Lookup {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some(v) = texts
            .iter()
            .map(|t| self.known.get(*t).cloned())
            .collect::<Option<Vec<_>>>()
        {
            return Ok(v);
        }
        self.model.embed_batch(texts)
    }
    fn dimension(&self) -> usize {
        self.model.dimension()
    }
    fn model_name(&self) -> &str {
        self.model.model_name()
    }
}

/// The turns and questions of every dev conversation.
fn corpus() -> (Vec<String>, Vec<String>) {
    let mut turns = Vec::new();
    let mut questions = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(DATA)
        .expect("LoCoMo dev data in ../shared/data/locomo-dev")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for f in files {
        let conv = mira::eval::parse_conversation(&f).expect("conversation parses");
        turns.extend(conv.turns.into_iter().map(|t| t.content));
        questions.extend(conv.questions.into_iter().map(|q| q.text));
    }
    turns.sort();
    turns.dedup();
    (turns, questions)
}

/// Real embeddings of `texts`, cached in the target directory (little-endian f32, 384 per text).
fn real_embeddings(model: &MiniLm, texts: &[String]) -> Vec<Vec<f32>> {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "recall-bench-{}-{}.f32",
        texts.len(),
        texts.iter().map(String::len).sum::<usize>()
    ));
    let dim = model.dimension();
    if let Ok(bytes) = std::fs::read(&cache) {
        if bytes.len() == texts.len() * dim * 4 {
            return bytes
                .chunks_exact(dim * 4)
                .map(|c| {
                    c.chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect()
                })
                .collect();
        }
    }
    eprintln!(
        "embedding {} turns once (cached afterwards)...",
        texts.len()
    );
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = model.embed_batch(&refs).expect("embedding works");
    let bytes: Vec<u8> = vectors
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(&cache, bytes).expect("cache written");
    vectors
}

/// A unit vector near `v`: deterministic noise of amplitude `eps` per component.
fn perturb(v: &[f32], seed: usize, eps: f32) -> Vec<f32> {
    let mut state = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out: Vec<f32> = v
        .iter()
        .map(|x| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            x + eps * ((state % 2001) as f32 / 1000.0 - 1.0)
        })
        .collect();
    let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
    out.iter_mut().for_each(|x| *x /= norm);
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn measure(app: &mira::App, queries: &[String]) -> (f64, f64) {
    let mut ms: Vec<f64> = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            recall(
                app,
                &RecallRequest {
                    query: q.clone(),
                    wing: Some("bench".into()),
                    ..RecallRequest::default()
                },
            )
            .expect("recall works");
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (percentile(&ms, 0.5), percentile(&ms, 0.99))
}

fn env_list(name: &str, default: &str) -> Vec<usize> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().parse().expect("a list of numbers"))
        .collect()
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument (a filter) is ignored.
    let model = Arc::new(MiniLm::load(&mira_embed::resolve_model_dir(None)).expect("model"));
    let (turns, questions) = corpus();
    let vectors = real_embeddings(&model, &turns);
    let n_queries = env_list("MIRA_BENCH_QUERIES", "200")[0];
    let queries: Vec<String> = questions.into_iter().take(n_queries).collect();
    println!("size\tindex\tuncached p50\tuncached p99\tcached p50\tcached p99\t(ms, {} queries, budget 4000)", queries.len());
    for size in env_list("MIRA_BENCH_SIZES", "1000,10000,100000") {
        let mut known = HashMap::new();
        let texts: Vec<String> = (0..size)
            .map(|i| {
                let base = i % turns.len();
                let copy = i / turns.len();
                let (text, v) = if copy == 0 {
                    (turns[base].clone(), vectors[base].clone())
                } else {
                    (
                        format!("{} (retold {copy})", turns[base]),
                        perturb(&vectors[base], i, 0.02),
                    )
                };
                known.insert(text.clone(), v);
                text
            })
            .collect();
        let embedder = Arc::new(Lookup {
            known,
            model: model.clone(),
        });
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cfg = mira::Config::default();
        cfg.storage.path = Some(dir.path().to_path_buf());
        let app = mira::App::open_with_embedder(cfg, embedder).expect("app");
        let built = Instant::now();
        for chunk in texts.chunks(2_000) {
            let reqs = chunk
                .iter()
                .map(|t| StoreRequest {
                    content: t.clone(),
                    wing: "bench".into(),
                    memory_type: Some("fact".into()),
                    ..StoreRequest::default()
                })
                .collect();
            for r in store_batch(&app, reqs) {
                r.expect("stored");
            }
        }
        app.index.wait_idle(Duration::from_secs(3_600));
        eprintln!(
            "{size} memories stored and indexed in {:.0?}",
            built.elapsed()
        );
        let (u50, u99) = measure(&app, &queries);
        let (c50, c99) = measure(&app, &queries);
        println!(
            "{size}\t{}\t{u50:.1}\t{u99:.1}\t{c50:.1}\t{c99:.1}",
            app.index.state().kind
        );
    }
}
