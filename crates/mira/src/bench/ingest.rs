//! Ingest and embedding figures of `mira bench`: how fast memories go in, against the limit the
//! model alone sets on these cores.

use super::place::Place;
use crate::usecases::store::{store_batch, StoreRequest, WINDOW};
use crate::{App, Config};
use anyhow::Result;
use mira_core::expand;
use mira_embed::Embedder;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Ingest throughput of one batch of memories with the real model.
#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    /// The embedding model (its name says the precision).
    pub model: String,
    /// Memories stored (a fresh store, one wing).
    pub memories: usize,
    /// Memories per second of wall time, through `store_batch` (as `mira import --format locomo`).
    pub per_s: f64,
    /// CPU milliseconds (every thread) per memory.
    pub cpu_ms_per_memory: f64,
    /// Texts per second when the same texts are only embedded (same windows).
    pub embed_per_s: f64,
    /// CPU milliseconds per text when only embedding.
    pub embed_cpu_ms_per_text: f64,
    /// `per_s / embed_per_s`: the share of the model's speed the whole ingest keeps.
    pub ratio_to_embedding: f64,
    /// Median milliseconds to embed one short text (a store).
    pub single_p50_ms: f64,
    /// Median milliseconds to embed a question's expansion variants together (a fresh recall).
    pub query_variants_p50_ms: f64,
    /// Variants embedded per question (the original included).
    pub query_variants: usize,
}

/// Process CPU time (user + system, all threads).
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Duration::ZERO;
        }
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Wall and CPU time of `f`.
fn measured<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Duration, Duration)> {
    let (wall, cpu) = (Instant::now(), cpu_time());
    let out = f()?;
    Ok((out, wall.elapsed(), cpu_time().saturating_sub(cpu)))
}

/// Stores `requests` into a fresh store at `place` with `model` (removed afterwards), then
/// embeds the same texts alone, and times single and query-variant embeddings on `questions`
/// (expanded as `base` says).
pub fn measure(
    base: &Config,
    model: Arc<dyn Embedder>,
    place: &Place,
    requests: Vec<StoreRequest>,
    questions: &[String],
) -> Result<IngestReport> {
    place.reset()?;
    let app = App::open_with_embedder(place.config.clone(), model.clone())?;
    let texts: Vec<String> = requests.iter().map(|r| r.content.clone()).collect();
    // Warm the model (first passes allocate) outside the timings.
    model.embed_batch(
        &texts
            .iter()
            .take(32)
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )?;

    let n = requests.len();
    let (stored, wall, cpu) = measured(|| {
        let results = store_batch(&app, requests);
        let stored = results
            .iter()
            .filter(|r| matches!(r, Ok(o) if o.stored))
            .count();
        match results.into_iter().find_map(Result::err) {
            Some(e) => Err(anyhow::Error::from(e)),
            None => Ok(stored),
        }
    })?;
    drop(app);
    place.remove()?;

    let ((), embed_wall, embed_cpu) = measured(|| {
        for window in texts.chunks(WINDOW) {
            let refs: Vec<&str> = window.iter().map(String::as_str).collect();
            model.embed_batch(&refs)?;
        }
        Ok(())
    })?;

    let expansion = &base.recall.query_expansion;
    let variants = if expansion.enabled {
        expansion.num_variants + 1
    } else {
        1
    };
    let mut single = Vec::new();
    let mut query = Vec::new();
    for q in questions {
        let t = Instant::now();
        model.embed(q)?;
        single.push(t.elapsed().as_secs_f64() * 1000.0);
        let expanded = if expansion.enabled {
            expand::expand_query(q, expansion.num_variants)
        } else {
            vec![q.clone()]
        };
        let refs: Vec<&str> = expanded.iter().map(String::as_str).collect();
        let t = Instant::now();
        model.embed_batch(&refs)?;
        query.push(t.elapsed().as_secs_f64() * 1000.0);
    }

    let per_s = stored as f64 / wall.as_secs_f64();
    let embed_per_s = n as f64 / embed_wall.as_secs_f64();
    Ok(IngestReport {
        model: model.model_name().to_owned(),
        memories: stored,
        per_s,
        cpu_ms_per_memory: cpu.as_secs_f64() * 1000.0 / stored.max(1) as f64,
        embed_per_s,
        embed_cpu_ms_per_text: embed_cpu.as_secs_f64() * 1000.0 / n.max(1) as f64,
        ratio_to_embedding: per_s / embed_per_s,
        single_p50_ms: super::Latency::of(single).p50_ms,
        query_variants_p50_ms: super::Latency::of(query).p50_ms,
        query_variants: variants,
    })
}

/// The lines printed without `--json`.
pub fn render(r: &IngestReport) -> String {
    format!(
        "ingest ({}, {} memories): {:.0} memories/s, {:.2} ms CPU per memory; embedding alone {:.0} texts/s, {:.2} ms CPU per text; ratio {:.2}\n\
         embedding latency p50: one text {:.1} ms, {} query variants {:.1} ms\n",
        r.model,
        r.memories,
        r.per_s,
        r.cpu_ms_per_memory,
        r.embed_per_s,
        r.embed_cpu_ms_per_text,
        r.ratio_to_embedding,
        r.single_p50_ms,
        r.query_variants,
        r.query_variants_p50_ms,
    )
}
