//! `mira eval locomo DIR`: evidence recall of the recall pipeline on LoCoMo conversations,
//! side by side with two baselines (BM25 alone, dense alone) in the same run.
//!
//! Protocol: each conversation goes into a fresh temporary store (one wing per conversation,
//! one memory per turn, content `speaker: text`, created_at from the session date, turns one
//! second apart). Every question of categories 1-4 is asked with the conversation's wing and
//! the budget; category 5 (adversarial: the answer is not in the conversation) only measures the
//! tokens returned. Malformed evidence ids (LoCoMo has a few) are split on `;`, and ids naming no
//! turn are skipped and counted. The clock of recall is set to one day after the last session.

use crate::config::Config;
use crate::usecases::recall::{recall_with, RecallRequest, Retrieval};
use crate::usecases::store::{store_batch, StoreRequest};
use crate::App;
use anyhow::{bail, Context, Result};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use mira_core::memory::MemoryId;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// One turn of a conversation.
#[derive(Debug, Clone)]
pub struct Turn {
    /// `D<session>:<turn>`.
    pub dia_id: String,
    /// Session number.
    pub session: u32,
    /// `speaker: text` (with the image caption when the turn shares an image).
    pub content: String,
    /// When it was said.
    pub at: DateTime<Utc>,
}

/// One question.
#[derive(Debug, Clone)]
pub struct Question {
    /// The question text.
    pub text: String,
    /// LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).
    pub category: u8,
    /// Evidence turn ids that exist in the conversation.
    pub evidence: Vec<String>,
}

/// A parsed LoCoMo conversation.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// File stem, used as the wing name (`locomo-<stem>`).
    pub name: String,
    /// The turns in order.
    pub turns: Vec<Turn>,
    /// The questions.
    pub questions: Vec<Question>,
    /// Evidence ids that named no turn (skipped).
    pub skipped_evidence: usize,
}

/// Parses a LoCoMo session date such as `1:56 pm on 8 May, 2023`.
pub fn parse_session_date(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim().to_ascii_lowercase();
    let (time, date) = s.split_once(" on ")?;
    let (hm, ampm) = time.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (u32, u32) = (h.trim().parse().ok()?, m.trim().parse().ok()?);
    match ampm.trim() {
        "pm" if h < 12 => h += 12,
        "am" if h == 12 => h = 0,
        "am" | "pm" => {}
        _ => return None,
    }
    let date = date.replace(',', " ");
    let parts: Vec<&str> = date.split_whitespace().collect();
    let [day, month, year] = parts.as_slice() else {
        return None;
    };
    let day = NaiveDate::parse_from_str(&format!("{day} {month} {year}"), "%d %B %Y").ok()?;
    Utc.from_local_datetime(&day.and_hms_opt(h, m, 0)?).single()
}

/// Parses one LoCoMo JSON file.
pub fn parse_conversation(path: &Path) -> Result<Conversation> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let conv = v.get("conversation").unwrap_or(&v);
    let mut turns = Vec::new();
    for n in 1.. {
        let Some(session) = conv.get(format!("session_{n}")).and_then(Value::as_array) else {
            if n > 60 {
                break;
            }
            continue;
        };
        let date = conv
            .get(format!("session_{n}_date_time"))
            .and_then(Value::as_str)
            .and_then(parse_session_date)
            .with_context(|| format!("{}: session_{n} has no readable date", path.display()))?;
        for (i, t) in session.iter().enumerate() {
            let (Some(id), Some(speaker), Some(said)) = (
                t.get("dia_id").and_then(Value::as_str),
                t.get("speaker").and_then(Value::as_str),
                t.get("text").and_then(Value::as_str),
            ) else {
                continue;
            };
            let mut content = format!("{speaker}: {said}");
            if let Some(c) = t.get("blip_caption").and_then(Value::as_str) {
                content.push_str(&format!(" [shares an image: {c}]"));
            }
            turns.push(Turn {
                dia_id: id.trim().to_owned(),
                session: n,
                content,
                at: date + chrono::Duration::seconds(i as i64),
            });
        }
    }
    if turns.is_empty() {
        bail!(
            "{}: no session_N turns found (is it a LoCoMo file?)",
            path.display()
        );
    }
    let known: HashSet<&str> = turns.iter().map(|t| t.dia_id.as_str()).collect();
    let mut skipped = 0;
    let mut questions = Vec::new();
    for q in v.get("qa").and_then(Value::as_array).into_iter().flatten() {
        let (Some(text), Some(category)) = (
            q.get("question").and_then(Value::as_str),
            q.get("category").and_then(Value::as_u64),
        ) else {
            continue;
        };
        let mut evidence = Vec::new();
        for e in q
            .get("evidence")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            for id in e.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                if known.contains(id) {
                    if !evidence.iter().any(|x: &String| x == id) {
                        evidence.push(id.to_owned());
                    }
                } else {
                    skipped += 1;
                }
            }
        }
        questions.push(Question {
            text: text.to_owned(),
            category: category.min(255) as u8,
            evidence,
        });
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "conv".into());
    Ok(Conversation {
        name,
        turns,
        questions,
        skipped_evidence: skipped,
    })
}

impl Conversation {
    /// The wing of the conversation: `locomo-<file stem>` (non-alphanumerics as `-`).
    pub fn wing(&self) -> String {
        format!(
            "locomo-{}",
            self.name.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
        )
    }

    /// One store request per turn: a session note of `wing`, dated, in its session.
    pub fn store_requests(&self, wing: &str) -> Vec<StoreRequest> {
        self.turns
            .iter()
            .map(|t| StoreRequest {
                content: t.content.clone(),
                wing: wing.to_owned(),
                memory_type: Some("session_note".into()),
                created_at: Some(t.at),
                session_id: Some(format!("session-{}", t.session)),
                ..StoreRequest::default()
            })
            .collect()
    }
}

/// The metrics of one system over a set of questions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Metrics {
    /// Mean fraction of evidence turns among the top 5.
    #[serde(rename = "recall@5")]
    pub recall_at_5: f64,
    /// Mean fraction of evidence turns among the top 10.
    #[serde(rename = "recall@10")]
    pub recall_at_10: f64,
    /// Mean fraction of evidence sessions with a turn among the top 10.
    #[serde(rename = "session_recall@10")]
    pub session_recall_at_10: f64,
    /// Mean fraction of evidence turns rendered (verbatim or fingerprint) within the budget.
    pub budget_recall: f64,
    /// Mean tokens of the rendered sections.
    pub mean_tokens: f64,
    /// Median recall latency (ms).
    pub p50_ms: f64,
    /// 95th percentile recall latency (ms).
    pub p95_ms: f64,
}

#[derive(Debug, Default)]
struct Acc {
    r5: Vec<f64>,
    r10: Vec<f64>,
    s10: Vec<f64>,
    budget: Vec<f64>,
    tokens: Vec<f64>,
    ms: Vec<f64>,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((p / 100.0) * (s.len() - 1) as f64).round() as usize]
}

impl Acc {
    fn metrics(&self) -> Metrics {
        Metrics {
            recall_at_5: mean(&self.r5),
            recall_at_10: mean(&self.r10),
            session_recall_at_10: mean(&self.s10),
            budget_recall: mean(&self.budget),
            mean_tokens: mean(&self.tokens),
            p50_ms: percentile(&self.ms, 50.0),
            p95_ms: percentile(&self.ms, 95.0),
        }
    }
    fn merge(&mut self, o: &Acc) {
        self.r5.extend(&o.r5);
        self.r10.extend(&o.r10);
        self.s10.extend(&o.s10);
        self.budget.extend(&o.budget);
        self.tokens.extend(&o.tokens);
        self.ms.extend(&o.ms);
    }
}

/// Results of one system: overall (categories 1-4) and per category (5: tokens only).
#[derive(Debug, Clone, Serialize)]
pub struct SystemReport {
    /// Over categories 1-4.
    pub overall: Metrics,
    /// Per category, keyed "1".."5".
    pub by_category: BTreeMap<String, Metrics>,
}

/// The whole report (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// Per system: `mira`, `bm25`, `dense`.
    pub systems: BTreeMap<String, SystemReport>,
    /// Questions asked (all categories).
    pub questions: usize,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Conversations evaluated.
    pub conversations: usize,
    /// Turns stored.
    pub turns: usize,
    /// Evidence ids skipped because they name no turn.
    pub skipped_evidence: usize,
    /// Budget used for every question.
    pub budget: u32,
}

/// Options of `mira eval locomo`.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Folder with LoCoMo JSON files (or one file).
    pub path: PathBuf,
    /// Token budget per question.
    pub budget: u32,
    /// At most this many questions per conversation (all when None).
    pub max_questions: Option<usize>,
    /// Candidates per retriever (dense and BM25); the configured limits when None.
    pub k: Option<usize>,
}

const SYSTEMS: [(&str, Retrieval); 3] = [
    ("mira", Retrieval::Hybrid),
    ("bm25", Retrieval::LexicalOnly),
    ("dense", Retrieval::DenseOnly),
];

fn files(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("cannot read the folder {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    if out.is_empty() {
        bail!("no .json files in {}", path.display());
    }
    Ok(out)
}

/// Runs the evaluation with `base` as the configuration of every temporary store.
pub fn run(
    base: &Config,
    embedder: Arc<dyn mira_embed::Embedder>,
    opts: &EvalOptions,
) -> Result<EvalReport> {
    let started = Instant::now();
    let mut accs: BTreeMap<(&str, u8), Acc> = BTreeMap::new();
    let (mut questions, mut turns, mut skipped) = (0, 0, 0);
    let convs: Vec<Conversation> = files(&opts.path)?
        .iter()
        .map(|f| parse_conversation(f))
        .collect::<Result<_>>()?;
    for conv in &convs {
        let tmp = tempfile::tempdir().context("cannot create a temporary store")?;
        let mut cfg = base.clone();
        cfg.storage.path = Some(tmp.path().to_path_buf());
        if let Some(k) = opts.k {
            cfg.allocator.max_candidates = k;
            cfg.recall.fts5_limit = k;
        }
        let app = App::open_with_embedder(cfg, embedder.clone())?;
        let wing = conv.wing();
        let reqs = conv.store_requests(&wing);
        let mut by_id: HashMap<MemoryId, Vec<&Turn>> = HashMap::new();
        for (t, r) in conv.turns.iter().zip(store_batch(&app, reqs)) {
            let out = r.map_err(|e| anyhow::anyhow!("storing turn {}: {e}", t.dia_id))?;
            by_id.entry(out.id).or_default().push(t);
        }
        turns += conv.turns.len();
        skipped += conv.skipped_evidence;
        let now = conv
            .turns
            .iter()
            .map(|t| t.at)
            .max()
            .unwrap_or_else(Utc::now)
            + chrono::Duration::days(1);
        for q in conv
            .questions
            .iter()
            .take(opts.max_questions.unwrap_or(usize::MAX))
        {
            if q.category != 5 && q.evidence.is_empty() {
                continue;
            }
            questions += 1;
            let req = RecallRequest {
                query: q.text.clone(),
                budget: Some(opts.budget as i64),
                wing: Some(wing.clone()),
                now: Some(now),
                ..RecallRequest::default()
            };
            for (name, mode) in SYSTEMS {
                let out = recall_with(&app, &req, mode)
                    .map_err(|e| anyhow::anyhow!("recall '{}': {e}", q.text))?;
                let acc = accs.entry((name, q.category)).or_default();
                acc.tokens.push(out.used as f64);
                acc.ms.push(out.millis);
                if q.category == 5 {
                    continue;
                }
                let turns_of = |ids: &[MemoryId]| -> HashSet<&str> {
                    ids.iter()
                        .flat_map(|id| by_id.get(id).into_iter().flatten())
                        .map(|t| t.dia_id.as_str())
                        .collect()
                };
                let frac = |found: &HashSet<&str>| {
                    q.evidence
                        .iter()
                        .filter(|e| found.contains(e.as_str()))
                        .count() as f64
                        / q.evidence.len() as f64
                };
                let top5 = turns_of(&out.ranking[..out.ranking.len().min(5)]);
                let top10 = turns_of(&out.ranking[..out.ranking.len().min(10)]);
                let rendered: Vec<MemoryId> = out
                    .items
                    .iter()
                    .filter(|i| i.mode != "HEADER")
                    .map(|i| i.id)
                    .collect();
                acc.r5.push(frac(&top5));
                acc.r10.push(frac(&top10));
                acc.budget.push(frac(&turns_of(&rendered)));
                let session_of = |d: &str| d.split(':').next().unwrap_or("").to_owned();
                let want: HashSet<String> = q.evidence.iter().map(|e| session_of(e)).collect();
                let got: HashSet<String> = top10.iter().map(|d| session_of(d)).collect();
                acc.s10
                    .push(want.intersection(&got).count() as f64 / want.len() as f64);
            }
        }
    }
    let mut systems = BTreeMap::new();
    for (name, _) in SYSTEMS {
        let mut overall = Acc::default();
        let mut by_category = BTreeMap::new();
        for ((_, cat), acc) in accs.iter().filter(|((n, _), _)| *n == name) {
            if *cat != 5 {
                overall.merge(acc);
            }
            by_category.insert(cat.to_string(), acc.metrics());
        }
        systems.insert(
            name.to_owned(),
            SystemReport {
                overall: overall.metrics(),
                by_category,
            },
        );
    }
    Ok(EvalReport {
        systems,
        questions,
        seconds: started.elapsed().as_secs_f64(),
        conversations: convs.len(),
        turns,
        skipped_evidence: skipped,
        budget: opts.budget,
    })
}

/// The report as a table.
pub fn render_table(r: &EvalReport) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "LoCoMo evaluation: {} conversations, {} turns, {} questions, budget {} tokens, {:.0}s ({} malformed evidence ids skipped)\n\n",
        r.conversations, r.turns, r.questions, r.budget, r.seconds, r.skipped_evidence
    );
    let _ = writeln!(
        out,
        "{:<6} {:<8} {:>8} {:>9} {:>11} {:>10} {:>8} {:>8} {:>8}",
        "system",
        "category",
        "recall@5",
        "recall@10",
        "sess_rec@10",
        "budget_rec",
        "tokens",
        "p50_ms",
        "p95_ms"
    );
    for (name, s) in &r.systems {
        let rows = s
            .by_category
            .iter()
            .map(|(c, m)| (c.clone(), m))
            .chain(std::iter::once(("all 1-4".to_owned(), &s.overall)));
        for (cat, m) in rows {
            let _ = writeln!(
                out,
                "{:<6} {:<8} {:>8.3} {:>9.3} {:>11.3} {:>10.3} {:>8.0} {:>8.1} {:>8.1}",
                name,
                cat,
                m.recall_at_5,
                m.recall_at_10,
                m.session_recall_at_10,
                m.budget_recall,
                m.mean_tokens,
                m.p50_ms,
                m.p95_ms
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_dates_parse() {
        let d = parse_session_date("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(d.to_rfc3339(), "2023-05-08T13:56:00+00:00");
        assert_eq!(
            parse_session_date("12:09 am on 13 September, 2023")
                .unwrap()
                .to_rfc3339(),
            "2023-09-13T00:09:00+00:00"
        );
        assert!(parse_session_date("yesterday").is_none());
    }
}
