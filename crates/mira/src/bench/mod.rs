//! `mira bench`: whole-system speed at several store sizes.
//!
//! For each size N a store of N memories is built once and kept under the cache directory
//! (`~/.cache/mira/bench/`): the base texts (LoCoMo turns from `--data`, else a built-in set of
//! agent notes) with their real embeddings, then copies marked `(retold k)` with slightly
//! perturbed vectors, so the index sees realistic neighbourhoods. On that store it measures
//! recall with fresh query embeddings (each distinct question once: the real model runs)
//! and cached ones (the same questions again), single stores with the real model (each timed,
//! relating to a full lookback of similar memories: the "may update" candidates included), and a lower
//! bound: an exact dot-product scan over all N vectors plus one lookup in the store's full-text
//! index (SQLite's FTS5, or PostgreSQL's), which any hybrid recall must at least do. With
//! `storage.backend: postgres` each store is a database of its own on the configured server
//! ([`place`]). Before the sizes, [`ingest`] measures how fast memories go
//! in (the first LoCoMo conversation of `--data`, else 600 built-in notes, into a fresh store)
//! against embedding the same texts alone, and the latency of embedding one text and a
//! question's expansion variants. Figures are medians and percentiles of one run; compare runs
//! of the same command, not across machines.

pub mod hooks;
pub mod ingest;
pub mod place;

use crate::usecases::access::Access;
use crate::usecases::clear::{clear, ClearRequest, ClearScope};
use crate::usecases::recall::{query_vector, recall, RecallRequest};
use crate::usecases::store::{store, store_batch, StoreRequest};
use crate::{App, Config};
use anyhow::{bail, Result};
use mira_embed::{EmbedError, Embedder};
use mira_store::index::unit_cosine;
use mira_store::Scope;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The wing the benchmark memories live in.
const WING: &str = "bench";
/// The wing of the single stores timed at each size (cleared afterwards).
const PROBE_WING: &str = "bench-probe";
/// Single stores timed per size.
const PROBES: usize = 32;

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Store sizes, in memories.
    pub sizes: Vec<usize>,
    /// LoCoMo conversations (a folder of JSON files) to take texts and questions from; `None`
    /// uses the built-in notes.
    pub data: Option<PathBuf>,
    /// Questions asked per pass.
    pub queries: usize,
    /// Recall budget in tokens.
    pub budget: u32,
    /// Where the stores (their folders; on PostgreSQL their index files) and base embeddings
    /// are kept between runs.
    pub cache_dir: PathBuf,
    /// The `mira` binary the hook figures run as the client does (`mira hook …` processes);
    /// `None` measures the briefing in process only.
    pub hook_binary: Option<PathBuf>,
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Latency {
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
}

impl Latency {
    fn of(mut ms: Vec<f64>) -> Latency {
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| {
            ms.get(((ms.len().saturating_sub(1)) as f64 * p).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        Latency {
            p50_ms: at(0.5),
            p95_ms: at(0.95),
            p99_ms: at(0.99),
        }
    }
}

/// The figures of one store size.
#[derive(Debug, Clone, Serialize)]
pub struct SizeReport {
    /// Memories in the store.
    pub n: usize,
    /// Its folder (kept for later runs).
    pub store: PathBuf,
    /// Its database on PostgreSQL (kept for later runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// The vector index in use (`exact` or `hnsw`).
    pub index: String,
    /// Single stores per second (real embedding, one memory per call).
    pub store_per_s: f64,
    /// Milliseconds per single store (each relating to a full lookback of similar memories).
    pub store_ms: Latency,
    /// Recall with the query embedding cached.
    pub recall_cached: Latency,
    /// Recall embedding the query.
    pub recall_fresh: Latency,
    /// Median of the lower bound: exact scan of every vector plus one lookup in the store's
    /// full-text index.
    pub bound_p50_ms: f64,
    /// `recall_cached.p50_ms / bound_p50_ms`.
    pub ratio_to_bound: f64,
    /// The client hooks: the briefing, `mira hook session-start` and `user-prompt`.
    pub hooks: hooks::HookReport,
}

/// Every size measured.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// The storage backend (`sqlite` or `postgres`).
    pub backend: &'static str,
    /// Ingest throughput and embedding latency.
    pub ingest: ingest::IngestReport,
    /// Questions asked per pass.
    pub queries: usize,
    /// Recall budget.
    pub budget: u32,
    /// One entry per size, in the order asked.
    pub sizes: Vec<SizeReport>,
}

/// Parses `--sizes 1000,10000` (each 1..=1,000,000).
pub fn parse_sizes(s: &str) -> Result<Vec<usize>, String> {
    let sizes: Vec<usize> = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=1_000_000).contains(n))
                .ok_or_else(|| {
                    format!("'{p}' is not a store size: give numbers from 1 to 1000000, comma-separated (e.g. 1000,10000)")
                })
        })
        .collect::<Result<_, _>>()?;
    Ok(sizes)
}

/// Runs the benchmark with `model` (the real embedder) and the base configuration.
pub fn run(base: &Config, model: Arc<dyn Embedder>, opts: &BenchOptions) -> Result<BenchReport> {
    if opts.queries == 0 {
        bail!("--queries must be at least 1");
    }
    let (texts, questions) = corpus(opts.data.as_deref())?;
    let questions: Vec<String> = questions.into_iter().cycle().take(opts.queries).collect();
    let ingest = ingest::measure(
        base,
        model.clone(),
        &place::Place::new(base, &opts.cache_dir, "ingest")?,
        ingest_requests(opts.data.as_deref(), &texts)?,
        &questions[..questions.len().min(100)],
    )?;
    let base_vectors = base_embeddings(&model, &texts, &opts.cache_dir)?;
    let mut sizes = Vec::new();
    let mut backend = mira_store::Backend::Sqlite;
    for &n in &opts.sizes {
        let name = format!("store-{n}-{}", corpus_digest(&texts, model.model_name()));
        let place = place::Place::new(base, &opts.cache_dir, &name)?;
        let app = open_store(&place, n, &texts, &base_vectors, &model)?;
        backend = app.store.backend();
        let mut size = measure(&app, &place, n, &questions, opts.budget)?;
        size.hooks = hooks::measure(
            &app,
            &place.config,
            opts.hook_binary.as_deref(),
            &questions[0],
        )?;
        sizes.push(size);
    }
    Ok(BenchReport {
        backend: backend.as_str(),
        ingest,
        queries: questions.len(),
        budget: opts.budget,
        sizes,
    })
}

/// The table printed without `--json`.
pub fn render_table(r: &BenchReport) -> String {
    let mut out = format!("backend: {}\n", r.backend);
    out += &ingest::render(&r.ingest);
    out += &format!(
        "{:>8} {:>6} {:>9} {:>13} {:>22} {:>22} {:>9} {:>6}\n",
        "memories",
        "index",
        "stores/s",
        "store p50/95",
        "recall cached p50/95/99",
        "recall fresh p50/95/99",
        "bound p50",
        "ratio"
    );
    for s in &r.sizes {
        let l = |l: &Latency| format!("{:.1}/{:.1}/{:.1}", l.p50_ms, l.p95_ms, l.p99_ms);
        out.push_str(&format!(
            "{:>8} {:>6} {:>9.1} {:>13} {:>22} {:>22} {:>9.2} {:>6.1}\n",
            s.n,
            s.index,
            s.store_per_s,
            format!("{:.1}/{:.1}", s.store_ms.p50_ms, s.store_ms.p95_ms),
            l(&s.recall_cached),
            l(&s.recall_fresh),
            s.bound_p50_ms,
            s.ratio_to_bound
        ));
    }
    out.push_str(&format!(
        "{:>8} {:>22} {:>26} {:>26}\n",
        "memories", "briefing p50/95/99", "hook session-start p50/95", "hook user-prompt p50/95"
    ));
    for s in &r.sizes {
        let h = &s.hooks;
        let process = |l: &Option<Latency>| match l {
            Some(l) => format!("{:.0}/{:.0}", l.p50_ms, l.p95_ms),
            None => "-".into(),
        };
        out.push_str(&format!(
            "{:>8} {:>22} {:>26} {:>26}\n",
            s.n,
            format!(
                "{:.1}/{:.1}/{:.1}",
                h.briefing.p50_ms, h.briefing.p95_ms, h.briefing.p99_ms
            ),
            process(&h.session_start),
            process(&h.user_prompt),
        ));
    }
    out.push_str(&format!(
        "(ms; {} questions per pass, budget {}; store = one memory per call, relating to a full lookback of similar ones; bound = exact scan of every vector + one {} lookup; ratio = cached p50 / bound p50; hooks: a new process each, session-start without the model, user-prompt loading it)\n",
        r.queries,
        r.budget,
        if r.backend == "postgres" {
            "PostgreSQL full-text"
        } else {
            "FTS5"
        }
    ));
    out
}

/// Base texts and questions: LoCoMo turns and questions, or the built-in notes.
fn corpus(data: Option<&Path>) -> Result<(Vec<String>, Vec<String>)> {
    let Some(dir) = data else {
        return Ok(builtin_corpus());
    };
    let files = crate::locomo::files(dir)?;
    let (mut texts, mut questions) = (Vec::new(), Vec::new());
    for f in &files {
        let conv = crate::locomo::parse_conversation(f)?;
        texts.extend(conv.turns.into_iter().map(|t| t.content));
        questions.extend(conv.questions.into_iter().map(|q| q.text));
    }
    texts.sort();
    texts.dedup();
    if texts.is_empty() || questions.is_empty() {
        bail!(
            "{} holds no LoCoMo turns and questions: give a folder of LoCoMo JSON files, or leave --data out for the built-in notes",
            dir.display()
        );
    }
    Ok((texts, questions))
}

/// Memories built-in notes contribute to the ingest figure.
const BUILTIN_INGEST: usize = 600;

/// What the ingest figure stores: the turns of the first LoCoMo conversation of `data`, in
/// order, as `mira import --format locomo` stores them; else the first built-in notes.
fn ingest_requests(data: Option<&Path>, builtin: &[String]) -> Result<Vec<StoreRequest>> {
    const WING: &str = "bench-ingest";
    let Some(dir) = data else {
        return Ok(builtin
            .iter()
            .take(BUILTIN_INGEST)
            .map(|t| StoreRequest {
                content: t.clone(),
                wing: WING.into(),
                ..StoreRequest::default()
            })
            .collect());
    };
    let first = crate::locomo::files(dir)?.remove(0);
    Ok(crate::locomo::parse_conversation(&first)?.store_requests(WING))
}

/// 2,400 notes an agent could store about a project, and questions about them.
fn builtin_corpus() -> (Vec<String>, Vec<String>) {
    const SUBJECTS: [&str; 12] = [
        "the billing service",
        "the login page",
        "the search API",
        "the nightly backup",
        "the mobile app",
        "the data warehouse",
        "the payment gateway",
        "the CI pipeline",
        "the Kafka cluster",
        "the admin dashboard",
        "the email worker",
        "the staging cluster",
    ];
    const FACTS: [&str; 20] = [
        "runs on PostgreSQL 15 in eu-west-1",
        "was moved to Kubernetes last sprint",
        "times out after 30 seconds under load",
        "is owned by Alice's team",
        "needs a restart after every config change",
        "logs to Loki with a 14 day retention",
        "was rewritten in Rust for latency",
        "depends on Redis for sessions",
        "deploys every Friday at noon",
        "has a flaky integration test on retries",
        "uses feature flags from LaunchDarkly",
        "pages the on-call engineer when errors exceed 2%",
        "stores files in S3 with versioning",
        "was load tested at 5,000 requests per second",
        "must stay behind the VPN",
        "had an outage caused by an expired certificate",
        "is scheduled for decommissioning in March",
        "caches responses for five minutes",
        "reads its secrets from Vault",
        "is monitored by a Grafana dashboard",
    ];
    const FRAMES: [&str; 10] = [
        "Note: {s} {f}.",
        "We learned that {s} {f}.",
        "Bob mentioned {s} {f}.",
        "Reminder for the team: {s} {f}.",
        "During the review we confirmed {s} {f}.",
        "From the incident call: {s} {f}.",
        "Carol says {s} {f}, so plan around it.",
        "Decision log: {s} {f}, agreed by everyone.",
        "Heads up, {s} {f}.",
        "Onboarding fact: {s} {f}.",
    ];
    let mut texts = Vec::new();
    for frame in FRAMES {
        for s in SUBJECTS {
            for f in FACTS {
                texts.push(frame.replace("{s}", s).replace("{f}", f));
            }
        }
    }
    let questions = SUBJECTS
        .iter()
        .flat_map(|s| {
            [
                format!("What do we know about {s}?"),
                format!("Where does {s} run and who owns it?"),
                format!("Why did {s} fail?"),
            ]
        })
        .collect();
    (texts, questions)
}

/// A short digest of the corpus and model, naming the cached stores.
fn corpus_digest(texts: &[String], model: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(model.as_bytes());
    for t in texts {
        h.update([0]);
        h.update(t.as_bytes());
    }
    h.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The real embeddings of the base texts, computed once and kept in the cache directory.
fn base_embeddings(
    model: &Arc<dyn Embedder>,
    texts: &[String],
    cache_dir: &Path,
) -> Result<Vec<Vec<f32>>> {
    let cache = crate::eval::EmbeddingCache::open(
        model.clone(),
        Some(cache_dir.join(format!("{}.vectors", model.model_name().replace('/', "_")))),
    );
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(256) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        out.extend(cache.embed_batch(&refs)?);
    }
    cache.save()?;
    Ok(out)
}

/// Memory texts with known vectors; anything else (questions, probes) goes to the model.
struct Known {
    vectors: HashMap<String, Vec<f32>>,
    model: Arc<dyn Embedder>,
}

impl Embedder for Known {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some(v) = texts
            .iter()
            .map(|t| self.vectors.get(*t).cloned())
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

/// The `i`-th memory of a benchmark store: a base text, or a retold copy with a nearby vector.
fn memory(i: usize, texts: &[String], vectors: &[Vec<f32>]) -> (String, Vec<f32>) {
    let (base, copy) = (i % texts.len(), i / texts.len());
    if copy == 0 {
        (texts[base].clone(), vectors[base].clone())
    } else {
        (
            format!("{} (retold {copy})", texts[base]),
            perturb(&vectors[base], i, 0.02),
        )
    }
}

/// Opens the store of `n` memories at `place`, building it first unless a complete one is
/// there (on PostgreSQL, a database that cannot be opened is built again).
fn open_store(
    place: &place::Place,
    n: usize,
    texts: &[String],
    vectors: &[Vec<f32>],
    model: &Arc<dyn Embedder>,
) -> Result<App> {
    let cfg = place.config.clone();
    if place.is_complete() {
        if let Ok(app) = App::open_with_embedder(cfg.clone(), model.clone()) {
            if app.store.stats()?.memories as usize == n {
                return Ok(app);
            }
        }
    }
    place.reset()?;
    eprintln!(
        "bench: building a store of {n} memories in {} (kept for later runs)",
        place.describe()
    );
    let started = Instant::now();
    let mut known = HashMap::new();
    let all: Vec<String> = (0..n)
        .map(|i| {
            let (text, v) = memory(i, texts, vectors);
            known.insert(text.clone(), v);
            text
        })
        .collect();
    let builder = Arc::new(Known {
        vectors: known,
        model: model.clone(),
    });
    {
        let app = App::open_with_embedder(cfg.clone(), builder)?;
        for chunk in all.chunks(2_000) {
            let reqs = chunk
                .iter()
                .map(|t| StoreRequest {
                    content: t.clone(),
                    wing: WING.into(),
                    memory_type: Some("fact".into()),
                    ..StoreRequest::default()
                })
                .collect();
            for r in store_batch(&app, reqs) {
                r?;
            }
        }
        let index = app.index()?;
        index.wait_idle(Duration::from_secs(3_600));
        index.save()?;
    }
    place.mark_complete()?;
    eprintln!(
        "bench: {n} memories stored and indexed in {:.0?}",
        started.elapsed()
    );
    App::open_with_embedder(cfg, model.clone())
}

/// Milliseconds `f` takes.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<f64> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// Every figure at one size, on the store at `place`.
fn measure(
    app: &App,
    place: &place::Place,
    n: usize,
    questions: &[String],
    budget: u32,
) -> Result<SizeReport> {
    app.index()?.wait_idle(Duration::from_secs(3_600));
    let ask = |q: &String| {
        timed(|| {
            recall(
                app,
                &Access::local(),
                &RecallRequest {
                    query: q.clone(),
                    wing: Some(WING.into()),
                    budget: Some(i64::from(budget)),
                    ..RecallRequest::default()
                },
            )
            .map_err(anyhow::Error::from)
        })
    };
    // Each distinct question once (its embedding computed), then every question again (cached).
    let mut seen = std::collections::HashSet::new();
    let fresh = questions
        .iter()
        .filter(|q| seen.insert(q.as_str()))
        .map(ask)
        .collect::<Result<Vec<_>>>()?;
    let cached = questions.iter().map(ask).collect::<Result<Vec<_>>>()?;
    let bound = lower_bound(app, questions)?;
    let stores = single_stores(app, n)?;
    let store_per_s = stores.len() as f64 * 1000.0 / stores.iter().sum::<f64>().max(1e-6);
    let recall_cached = Latency::of(cached);
    Ok(SizeReport {
        n,
        store: place.dir().to_path_buf(),
        database: place.database().map(str::to_owned),
        index: app.index()?.state().kind.to_string(),
        store_per_s,
        store_ms: Latency::of(stores),
        recall_fresh: Latency::of(fresh),
        bound_p50_ms: bound,
        ratio_to_bound: recall_cached.p50_ms / bound.max(1e-6),
        recall_cached,
        hooks: hooks::HookReport {
            briefing: Latency::of(Vec::new()),
            session_start: None,
            user_prompt: None,
        },
    })
}

/// Median milliseconds of an exact scan of every vector plus one lookup in the store's full-text
/// index (FTS5, or PostgreSQL's `tsvector` index), per question
/// (query embeddings cached, as for the cached recall).
fn lower_bound(app: &App, questions: &[String]) -> Result<f64> {
    let scope = Scope {
        wing: Some(WING.into()),
        room: None,
    };
    let index = app.index()?;
    let mut ms = Vec::with_capacity(questions.len());
    for q in questions {
        let qv = query_vector(app, q)?;
        ms.push(timed(|| {
            let best = index.view(|view| {
                let catalog = view.catalog();
                let mut scores: Vec<f32> = catalog
                    .keys()
                    .filter_map(|k| view.vector(k).map(|v| unit_cosine(v, &qv)))
                    .collect();
                let k = scores.len().min(100);
                if k > 0 {
                    scores.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
                }
                scores.truncate(k);
                scores
            });
            let hits = app.store.lexical_search(q, 100, &scope)?;
            Ok((best, hits))
        })?);
    }
    Ok(Latency::of(ms).p50_ms)
}

/// The `i`-th probe stored at size `n`: notes alike but for their values, as facts that change.
fn probe(i: usize, n: usize) -> StoreRequest {
    StoreRequest {
        content: format!(
            "Probe {i} at {n} memories: the cache of service {i} was warmed at {} UTC.",
            i * 7 % 24
        ),
        wing: PROBE_WING.into(),
        memory_type: Some("fact".into()),
        ..StoreRequest::default()
    }
}

/// Single stores with the real model, each timed (milliseconds), in a wing cleared afterwards.
/// The wing first gets `extraction.causal_lookback` probes (untimed), so that each timed store
/// relates to a full lookback of similar memories: causal links, near duplicates, slots and the
/// "may update" candidates (`core::sameness` against every one) at their steady cost.
fn single_stores(app: &App, n: usize) -> Result<Vec<f64>> {
    let lookback = app.config.extraction.causal_lookback;
    for r in store_batch(
        app,
        (PROBES..PROBES + lookback).map(|i| probe(i, n)).collect(),
    ) {
        r?;
    }
    let timings = (0..PROBES)
        .map(|i| timed(|| store(app, &Access::local(), probe(i, n)).map_err(anyhow::Error::from)))
        .collect::<Result<Vec<_>>>()?;
    clear(
        app,
        &Access::local(),
        &ClearRequest {
            scope: ClearScope::Wing {
                wing: PROBE_WING.into(),
            },
            confirm: true,
        },
    )?;
    Ok(timings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_reject_bad_input() {
        assert_eq!(parse_sizes("1000, 10000").unwrap(), vec![1000, 10000]);
        assert!(parse_sizes("0").unwrap_err().contains("from 1 to 1000000"));
        assert!(parse_sizes("10k").is_err());
    }

    #[test]
    fn latency_percentiles() {
        let l = Latency::of((1..=100).map(f64::from).collect());
        assert_eq!((l.p50_ms, l.p95_ms, l.p99_ms), (51.0, 95.0, 99.0));
    }

    #[test]
    fn builtin_corpus_is_distinct() {
        let (texts, questions) = builtin_corpus();
        let mut unique = texts.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 2_400);
        assert_eq!(questions.len(), 36);
    }
}
