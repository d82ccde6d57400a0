//! The Prometheus series of one process, in a private registry (no process or Go-style
//! collectors): tool calls, store, recall and embedding latency, index and memory gauges,
//! budget utilisation and webhook deliveries.

use anyhow::{Context, Result};
use mira_embed::{EmbedError, Embedder};
use prometheus::core::Collector;
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Why a webhook delivery ended in the dead-letter table (the `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadLetterReason {
    /// Every retry failed.
    RetriesExhausted,
    /// The queue was full when the event was emitted.
    QueueFull,
    /// The endpoint's circuit breaker was open.
    CircuitOpen,
    /// The process stopped before it could be delivered.
    Shutdown,
}

impl DeadLetterReason {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            DeadLetterReason::RetriesExhausted => "retries_exhausted",
            DeadLetterReason::QueueFull => "queue_full",
            DeadLetterReason::CircuitOpen => "circuit_open",
            DeadLetterReason::Shutdown => "shutdown",
        }
    }
}

/// What this process did since it started, in a few numbers (the memory browser's health view).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricsSummary {
    /// Successful recalls.
    pub recalls: u64,
    /// Their mean latency in milliseconds.
    pub recall_mean_ms: f64,
    /// Successful stores.
    pub stores: u64,
    /// Their mean latency in milliseconds.
    pub store_mean_ms: f64,
    /// Embedding batches.
    pub embed_batches: u64,
    /// Their mean latency in milliseconds.
    pub embed_mean_ms: f64,
    /// Mean fraction of the token budget a recall used.
    pub budget_used_mean: f64,
    /// MCP tool calls.
    pub tool_calls: u64,
    /// Of which failed.
    pub tool_errors: u64,
}

/// Every series mira exports.
pub struct Metrics {
    registry: Registry,
    tool_calls: IntCounterVec,
    tool_duration: HistogramVec,
    store_duration: Histogram,
    recall_duration: Histogram,
    embed_duration: Histogram,
    embed_batch: Histogram,
    budget_utilisation: Histogram,
    index_vectors: IntGauge,
    index_state: IntGaugeVec,
    memories: IntGaugeVec,
    webhook_deliveries: IntCounter,
    webhook_failures: IntCounter,
    webhook_dead_letters: IntCounterVec,
    webhook_dead_letters_pending: IntGauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn register<C: Collector + Clone + 'static>(r: &Registry, c: C) -> prometheus::Result<C> {
    r.register(Box::new(c.clone()))?;
    Ok(c)
}

fn histogram(
    r: &Registry,
    name: &str,
    help: &str,
    buckets: Vec<f64>,
) -> prometheus::Result<Histogram> {
    register(
        r,
        Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets))?,
    )
}

const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

impl Metrics {
    /// Creates and registers every series (all at zero).
    pub fn new() -> Result<Metrics> {
        Self::build().context("cannot set up the Prometheus metrics")
    }

    fn build() -> prometheus::Result<Metrics> {
        let r = Registry::new();
        let lat = LATENCY_BUCKETS.to_vec();
        Ok(Metrics {
            tool_calls: register(
                &r,
                IntCounterVec::new(
                    Opts::new("mira_tool_calls_total", "MCP tool calls by tool and outcome (ok, error)."),
                    &["tool", "outcome"],
                )?,
            )?,
            tool_duration: register(
                &r,
                HistogramVec::new(
                    HistogramOpts::new("mira_tool_duration_seconds", "MCP tool call latency by tool.")
                        .buckets(lat.clone()),
                    &["tool"],
                )?,
            )?,
            store_duration: histogram(&r, "mira_store_duration_seconds", "Latency of successful stores.", lat.clone())?,
            recall_duration: histogram(&r, "mira_recall_duration_seconds", "Latency of successful recalls.", lat.clone())?,
            embed_duration: histogram(&r, "mira_embed_duration_seconds", "Latency of one embedding batch.", lat)?,
            embed_batch: histogram(
                &r,
                "mira_embed_batch_size",
                "Texts per embedding batch.",
                vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0],
            )?,
            budget_utilisation: histogram(
                &r,
                "mira_recall_budget_utilisation",
                "Fraction of the token budget a recall used.",
                vec![0.1, 0.25, 0.5, 0.75, 0.9, 1.0],
            )?,
            index_vectors: register(&r, IntGauge::new("mira_index_vectors", "Vectors in the index.")?)?,
            index_state: register(
                &r,
                IntGaugeVec::new(
                    Opts::new("mira_index_state", "1 for the index's current state (ready: HNSW graph in use or not needed; building: graph being built; exact: exact scan only)."),
                    &["state"],
                )?,
            )?,
            memories: register(
                &r,
                IntGaugeVec::new(Opts::new("mira_memories", "Memories by type."), &["type"])?,
            )?,
            webhook_deliveries: register(
                &r,
                IntCounter::new("mira_webhook_deliveries_total", "Webhook events delivered (2xx).")?,
            )?,
            webhook_failures: register(
                &r,
                IntCounter::new("mira_webhook_failures_total", "Failed webhook delivery attempts.")?,
            )?,
            webhook_dead_letters: register(
                &r,
                IntCounterVec::new(
                    Opts::new("mira_webhook_dead_letters_total", "Webhook events dead-lettered, by reason."),
                    &["reason"],
                )?,
            )?,
            webhook_dead_letters_pending: register(
                &r,
                IntGauge::new("mira_webhook_dead_letters", "Dead letters waiting for a replay.")?,
            )?,
            registry: r,
        })
    }

    /// Counts one MCP tool call and its latency.
    pub fn observe_tool(&self, tool: &str, ok: bool, seconds: f64) {
        let outcome = if ok { "ok" } else { "error" };
        self.tool_calls.with_label_values(&[tool, outcome]).inc();
        self.tool_duration
            .with_label_values(&[tool])
            .observe(seconds);
    }

    /// Records a successful store's latency.
    pub fn observe_store(&self, seconds: f64) {
        self.store_duration.observe(seconds);
    }

    /// Records a successful recall's latency and how much of its budget it used.
    pub fn observe_recall(&self, seconds: f64, used: u32, budget: u32) {
        self.recall_duration.observe(seconds);
        if budget > 0 {
            self.budget_utilisation
                .observe(f64::from(used) / f64::from(budget));
        }
    }

    /// Records one embedding batch.
    pub fn observe_embed(&self, seconds: f64, batch: usize) {
        self.embed_duration.observe(seconds);
        self.embed_batch.observe(batch as f64);
    }

    /// Counts a delivered webhook event.
    pub fn webhook_delivered(&self) {
        self.webhook_deliveries.inc();
    }

    /// Counts a failed delivery attempt.
    pub fn webhook_failed(&self) {
        self.webhook_failures.inc();
    }

    /// Counts a dead-lettered event.
    pub fn webhook_dead_lettered(&self, reason: DeadLetterReason) {
        self.webhook_dead_letters
            .with_label_values(&[reason.as_str()])
            .inc();
    }

    /// Counts and mean latencies since the process started.
    pub fn summary(&self) -> MetricsSummary {
        let mean_ms = |h: &Histogram| {
            let n = h.get_sample_count();
            if n == 0 {
                0.0
            } else {
                h.get_sample_sum() * 1e3 / n as f64
            }
        };
        let (mut tool_calls, mut tool_errors) = (0, 0);
        for family in self.tool_calls.collect() {
            for m in family.get_metric() {
                let n = m.get_counter().get_value() as u64;
                tool_calls += n;
                if m.get_label()
                    .iter()
                    .any(|l| l.name() == "outcome" && l.value() == "error")
                {
                    tool_errors += n;
                }
            }
        }
        let used = &self.budget_utilisation;
        MetricsSummary {
            recalls: self.recall_duration.get_sample_count(),
            recall_mean_ms: mean_ms(&self.recall_duration),
            stores: self.store_duration.get_sample_count(),
            store_mean_ms: mean_ms(&self.store_duration),
            embed_batches: self.embed_duration.get_sample_count(),
            embed_mean_ms: mean_ms(&self.embed_duration),
            budget_used_mean: if used.get_sample_count() == 0 {
                0.0
            } else {
                used.get_sample_sum() / used.get_sample_count() as f64
            },
            tool_calls,
            tool_errors,
        }
    }

    /// The text exposition, with the gauges set from `gauges`.
    pub fn render(&self, gauges: &Gauges) -> Result<String> {
        self.index_vectors
            .set(i64::try_from(gauges.index_vectors).unwrap_or(i64::MAX));
        for s in ["ready", "building", "exact"] {
            self.index_state
                .with_label_values(&[s])
                .set(i64::from(s == gauges.index_state));
        }
        for t in mira_core::memory::MemoryType::ALL {
            let n = gauges.memories.get(t.as_str()).copied().unwrap_or(0);
            self.memories
                .with_label_values(&[t.as_str()])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
        self.webhook_dead_letters_pending
            .set(i64::try_from(gauges.dead_letters).unwrap_or(i64::MAX));
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .context("cannot encode the metrics")?;
        String::from_utf8(out).context("the metrics are not UTF-8")
    }
}

/// What the gauges show, gathered from the store and the index when `/metrics` is read (by
/// [`super::gauges`]).
#[derive(Debug, Clone, Default)]
pub struct Gauges {
    /// Vectors in the index.
    pub index_vectors: usize,
    /// The index's state: `ready`, `building` or `exact`.
    pub index_state: &'static str,
    /// Memories of each type, by the type's name.
    pub memories: BTreeMap<String, u64>,
    /// Webhook events in the dead-letter table.
    pub dead_letters: u64,
}

/// An embedder that records each batch's latency and size.
pub struct TimedEmbedder {
    inner: Arc<dyn Embedder>,
    metrics: Arc<Metrics>,
}

impl TimedEmbedder {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Embedder>, metrics: Arc<Metrics>) -> TimedEmbedder {
        TimedEmbedder { inner, metrics }
    }
}

impl Embedder for TimedEmbedder {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let started = Instant::now();
        let out = self.inner.embed_batch(texts)?;
        self.metrics
            .observe_embed(started.elapsed().as_secs_f64(), texts.len());
        Ok(out)
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let started = Instant::now();
        let out = self.inner.embed(text)?;
        self.metrics
            .observe_embed(started.elapsed().as_secs_f64(), 1);
        Ok(out)
    }
}
