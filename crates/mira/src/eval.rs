//! `mira eval locomo DIR`: evidence recall of the recall pipeline on LoCoMo conversations,
//! side by side with three baselines (BM25 alone, dense alone, plain RRF of the two) in the
//! same run, per conversation if asked, and leave-one-conversation-out over a declared grid of
//! ranking parameters (`--loco`): for each conversation, the grid point that ranks best on the
//! others is scored on it, so the figure says how the choice generalises.
//!
//! Protocol: each conversation goes into a fresh temporary store (one wing per conversation,
//! one memory per turn, content `speaker: text`, created_at from the session date, turns one
//! second apart). Every question of categories 1-4 is asked with the conversation's wing and
//! the budget; category 5 (adversarial: the answer is not in the conversation) only measures the
//! tokens returned. Malformed evidence ids (LoCoMo has a few) are split on `;`, and ids naming no
//! turn are skipped and counted. The clock of recall is set to one day after the last session.
//! Embeddings are cached on disk between runs ([`EmbeddingCache`]; the same vectors, computed
//! once), so latencies are those of a recall with a cached query embedding.

pub mod updates;

use crate::config::Config;
use crate::usecases::recall::{
    configured_rank_params, ranking, recall_with, RecallRequest, Retrieval,
};
use crate::usecases::store::{store_batch_reporting, StoreRequest};
use crate::App;
use anyhow::{bail, Context, Result};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use mira_core::memory::MemoryId;
use mira_core::rank::RankParams;
use mira_embed::{EmbedError, Embedder};
use mira_store::TextRank;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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
    /// Questions counted.
    pub questions: usize,
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
    /// Mean share of BM25's top 10 also in this system's top 10 (1 for BM25 itself).
    #[serde(rename = "bm25_overlap@10")]
    pub bm25_overlap_at_10: f64,
    /// Questions whose block shows evidence turns of two or more times.
    pub dated_evidence: usize,
    /// Of those, the questions whose block shows the newest evidence turn above the others.
    pub newest_first: usize,
    /// Mean memories per block marked as an earlier statement of a newer one.
    pub marked: f64,
}

/// What one system did on one question.
#[derive(Debug, Clone)]
struct Record {
    conversation: usize,
    /// Index in the systems of the run.
    system: usize,
    category: u8,
    r5: f64,
    r10: f64,
    s10: f64,
    /// Share of BM25's top 10 in this system's top 10.
    o10: f64,
    budget: f64,
    tokens: f64,
    ms: f64,
    /// Whether the newest evidence turn is shown above the older ones (evidence of two or more
    /// times shown).
    newest_first: Option<bool>,
    /// Memories of the block marked as an earlier statement.
    marked: usize,
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (n, sum) = v.fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
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

fn metrics<'a>(records: impl Iterator<Item = &'a Record> + Clone) -> Metrics {
    let ms: Vec<f64> = records.clone().map(|r| r.ms).collect();
    Metrics {
        questions: ms.len(),
        recall_at_5: mean(records.clone().map(|r| r.r5)),
        recall_at_10: mean(records.clone().map(|r| r.r10)),
        session_recall_at_10: mean(records.clone().map(|r| r.s10)),
        budget_recall: mean(records.clone().map(|r| r.budget)),
        mean_tokens: mean(records.clone().map(|r| r.tokens)),
        p50_ms: percentile(&ms, 50.0),
        p95_ms: percentile(&ms, 95.0),
        bm25_overlap_at_10: mean(records.clone().map(|r| r.o10)),
        dated_evidence: records.clone().filter(|r| r.newest_first.is_some()).count(),
        newest_first: records
            .clone()
            .filter(|r| r.newest_first == Some(true))
            .count(),
        marked: mean(records.clone().map(|r| r.marked as f64)),
    }
}

/// Whether the block (`items`, in order) shows the newest of the evidence turns it shows
/// above the others; `None` unless it shows evidence of two or more times.
fn newest_first(
    evidence: &[String],
    items: &[crate::usecases::recall::RecalledItem],
    by_id: &HashMap<MemoryId, Vec<&Turn>>,
) -> Option<bool> {
    let shown: Vec<(usize, DateTime<Utc>)> = items
        .iter()
        .enumerate()
        .flat_map(|(i, item)| {
            by_id
                .get(&item.id)
                .into_iter()
                .flatten()
                .filter(|t| evidence.contains(&t.dia_id))
                .map(move |t| (i, t.at))
        })
        .collect();
    let newest = shown.iter().map(|s| s.1).max()?;
    if shown.iter().all(|s| s.1 == newest) {
        return None;
    }
    let first_newest = shown.iter().filter(|s| s.1 == newest).map(|s| s.0).min()?;
    Some(
        shown
            .iter()
            .filter(|s| s.1 < newest)
            .all(|s| s.0 > first_newest),
    )
}

/// Results of one system: overall (categories 1-4) and per category (5: tokens only).
#[derive(Debug, Clone, Serialize)]
pub struct SystemReport {
    /// Over categories 1-4.
    pub overall: Metrics,
    /// Per category, keyed "1".."5".
    pub by_category: BTreeMap<String, Metrics>,
}

/// The results on one conversation.
#[derive(Debug, Clone, Serialize)]
pub struct ConversationReport {
    /// The conversation (file stem).
    pub id: String,
    /// Per system, over categories 1-4.
    pub systems: BTreeMap<String, Metrics>,
}

/// One fold of the leave-one-conversation-out evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct LocoFold {
    /// The conversation held out.
    pub held_out: String,
    /// The grid point that ranked best on the other conversations.
    pub chosen: String,
    /// Its recall@10 on the held-out conversation.
    #[serde(rename = "recall@10")]
    pub recall_at_10: f64,
    /// The configured parameters' recall@10 on the held-out conversation.
    #[serde(rename = "configured_recall@10")]
    pub configured_recall_at_10: f64,
    /// Questions of the held-out conversation.
    pub questions: usize,
}

/// Leave-one-conversation-out over the ranking grid (`--loco`).
#[derive(Debug, Clone, Serialize)]
pub struct LocoReport {
    /// The grid points, as `name=value` lists.
    pub grid: Vec<String>,
    /// One fold per conversation.
    pub folds: Vec<LocoFold>,
    /// Held-out recall@10, weighted by questions.
    #[serde(rename = "recall@10")]
    pub recall_at_10: f64,
    /// The configured parameters' recall@10 over the same questions.
    #[serde(rename = "configured_recall@10")]
    pub configured_recall_at_10: f64,
}

/// The whole report (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// Per system: `mira`, `bm25`, `dense`, `rrf`, `fts` (and PostgreSQL's rankings with
    /// `--text-ranks`).
    pub systems: BTreeMap<String, SystemReport>,
    /// Per conversation, in file order (printed with `--per-conversation`).
    pub conversations: Vec<ConversationReport>,
    /// Leave-one-conversation-out (`--loco`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loco: Option<LocoReport>,
    /// Questions asked (all categories).
    pub questions: usize,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Turns stored.
    pub turns: usize,
    /// Evidence ids skipped because they name no turn.
    pub skipped_evidence: usize,
    /// Budget used for every question.
    pub budget: u32,
}

/// Options of `mira eval locomo`.
#[derive(Debug, Clone, Default)]
pub struct EvalOptions {
    /// Folder with LoCoMo JSON files (or one file).
    pub path: PathBuf,
    /// Token budget per question.
    pub budget: u32,
    /// At most this many questions per conversation (all when None).
    pub max_questions: Option<usize>,
    /// Candidates per recall; the configured `allocator.max_candidates` when None.
    pub k: Option<usize>,
    /// Run the leave-one-conversation-out evaluation over [`loco_grid`].
    pub loco: bool,
    /// Write each question's best memories per system to this file (JSON lines).
    pub questions: Option<PathBuf>,
    /// Also rank by each of PostgreSQL's full-text rankings ([`TextRank::ALL`]; PostgreSQL
    /// backend only).
    pub text_ranks: bool,
}

/// Memories listed per system and question in the `--questions` file.
const LISTED: usize = 50;

/// One line of the `--questions` file: a question and the best [`LISTED`] memories of each
/// system, as (turn id, relevance) pairs.
#[derive(Debug, Serialize)]
struct QuestionLine<'a> {
    conversation: &'a str,
    question: &'a str,
    category: u8,
    evidence: &'a [String],
    /// Per system, its best memories as (turn id, relevance), best first.
    ranked: BTreeMap<&'a str, Vec<(&'a str, f32)>>,
}

/// The systems compared: the pipeline, the baselines (`fts`: the database's own full-text
/// search, as [`mira_store::MemoryStore::lexical_search`] ranks it) and with `text_ranks` each
/// of PostgreSQL's rankings (`fts:ts_rank_cd/0`, …).
fn systems(text_ranks: bool) -> Vec<(String, Retrieval)> {
    let mut out: Vec<(String, Retrieval)> = [
        ("mira", Retrieval::Hybrid),
        ("bm25", Retrieval::LexicalOnly),
        ("dense", Retrieval::DenseOnly),
        ("rrf", Retrieval::Rrf),
        ("fts", Retrieval::FullText(None)),
    ]
    .into_iter()
    .map(|(name, mode)| (name.to_owned(), mode))
    .collect();
    if text_ranks {
        out.extend(
            TextRank::ALL
                .into_iter()
                .map(|r| (format!("fts:{}", r.name()), Retrieval::FullText(Some(r)))),
        );
    }
    out
}

/// The declared grid of `--loco`: lexical weight × propagation weight × entity boost around
/// `base` (the configured parameters), each point named by its values.
pub fn loco_grid(base: RankParams) -> Vec<(String, RankParams)> {
    let mut out = Vec::new();
    for w in [0.3, 0.4, 0.5, 0.6] {
        for prop in [0.0, 0.5, 0.7, 0.9] {
            for boost in [0.0, 0.2] {
                out.push((
                    format!("lexical_weight={w} propagation={prop} entity_boost={boost}"),
                    RankParams {
                        lexical_weight: w,
                        propagation: prop,
                        entity_boost: boost,
                        ..base
                    },
                ));
            }
        }
    }
    out
}

/// The LoCoMo files of `path`: the file itself, or the folder's `.json` files in name order.
pub(crate) fn files(path: &Path) -> Result<Vec<PathBuf>> {
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

/// Fraction of `evidence` found among the turns of `ids`.
fn found(evidence: &[String], ids: &[MemoryId], by_id: &HashMap<MemoryId, Vec<&Turn>>) -> f64 {
    let turns: HashSet<&str> = ids
        .iter()
        .flat_map(|id| by_id.get(id).into_iter().flatten())
        .map(|t| t.dia_id.as_str())
        .collect();
    evidence
        .iter()
        .filter(|e| turns.contains(e.as_str()))
        .count() as f64
        / evidence.len().max(1) as f64
}

/// The session part of a turn id (`D3` of `D3:7`).
fn session_of(dia_id: &str) -> &str {
    dia_id.split(':').next().unwrap_or("")
}

/// Runs the evaluation with `base` as the configuration of every temporary store.
pub fn run(base: &Config, embedder: Arc<dyn Embedder>, opts: &EvalOptions) -> Result<EvalReport> {
    let started = Instant::now();
    let convs: Vec<Conversation> = files(&opts.path)?
        .iter()
        .map(|f| parse_conversation(f))
        .collect::<Result<_>>()?;
    let mut records: Vec<Record> = Vec::new();
    // Per conversation, per grid point: recall@10 of each question (categories 1-4).
    let mut grid_scores: Vec<Vec<Vec<f64>>> = Vec::new();
    let mut grid = Vec::new();
    let (mut questions, mut turns, mut skipped) = (0, 0, 0);
    let mut question_file = match &opts.questions {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => None,
    };
    if opts.text_ranks && base.storage.backend != crate::config::StorageBackend::Postgres {
        bail!("--text-ranks compares PostgreSQL's full-text rankings: run it with storage.backend: postgres");
    }
    let systems = systems(opts.text_ranks);
    let bm25 = systems
        .iter()
        .position(|(_, mode)| *mode == Retrieval::LexicalOnly)
        .context("BM25 is among the systems")?;
    let progress = crate::progress::Progress::new();
    let conv_bar = progress.bar("eval", Some(convs.len() as u64), "conversations");
    let item_bar = progress.bar("", Some(0), "turns stored");
    for (ci, conv) in convs.iter().enumerate() {
        let tmp = tempfile::tempdir().context("cannot create a temporary store")?;
        let mut cfg = base.clone();
        cfg.storage.path = Some(tmp.path().to_path_buf());
        if let Some(k) = opts.k {
            cfg.allocator.max_candidates = k;
        }
        let app = App::open_with_embedder(cfg, embedder.clone())?;
        if opts.loco && grid.is_empty() {
            let configured = configured_rank_params(&app);
            grid.push(("configured".to_owned(), configured));
            grid.extend(loco_grid(configured));
        }
        let wing = conv.wing();
        let reqs = conv.store_requests(&wing);
        let mut by_id: HashMap<MemoryId, Vec<&Turn>> = HashMap::new();
        item_bar.reset();
        item_bar.set_prefix(format!("  {}", conv.name));
        item_bar.set_message("turns stored");
        item_bar.set_length(reqs.len() as u64);
        let stored =
            store_batch_reporting(&app, reqs, &mut |done| item_bar.set_position(done as u64));
        for (t, r) in conv.turns.iter().zip(stored) {
            let out = r.map_err(|e| anyhow::anyhow!("storing turn {}: {e}", t.dia_id))?;
            by_id.entry(out.id).or_default().push(t);
        }
        turns += conv.turns.len();
        skipped += conv.skipped_evidence;
        let mut point_scores = vec![Vec::new(); grid.len()];
        let asked = conv
            .questions
            .iter()
            .take(opts.max_questions.unwrap_or(usize::MAX));
        item_bar.reset();
        item_bar.set_message("questions");
        item_bar.set_length(asked.clone().count() as u64);
        for q in asked {
            item_bar.inc(1);
            if q.category != 5 && q.evidence.is_empty() {
                continue;
            }
            questions += 1;
            let req = RecallRequest {
                query: q.text.clone(),
                budget: Some(opts.budget as i64),
                wing: Some(wing.clone()),
                ..RecallRequest::default()
            };
            let mut listed = BTreeMap::new();
            // Per system, its record and its top 10.
            let mut asked: Vec<(Record, Vec<MemoryId>)> = Vec::with_capacity(systems.len());
            for (si, (name, mode)) in systems.iter().enumerate() {
                let out = recall_with(&app, &req, *mode)
                    .map_err(|e| anyhow::anyhow!("recall '{}': {e}", q.text))?;
                listed.insert(
                    name.as_str(),
                    out.ranking
                        .iter()
                        .zip(&out.relevances)
                        .take(LISTED)
                        .flat_map(|(id, r)| {
                            let turns = by_id.get(id).into_iter().flatten();
                            turns.map(move |t| (t.dia_id.as_str(), *r))
                        })
                        .collect(),
                );
                let mut rec = Record {
                    conversation: ci,
                    system: si,
                    category: q.category,
                    r5: 0.0,
                    r10: 0.0,
                    s10: 0.0,
                    o10: 0.0,
                    budget: 0.0,
                    tokens: out.used as f64,
                    ms: out.millis,
                    newest_first: None,
                    marked: out.items.iter().filter(|i| i.newer.is_some()).count(),
                };
                if q.category != 5 {
                    let top = |n: usize| &out.ranking[..out.ranking.len().min(n)];
                    let rendered: Vec<MemoryId> = out
                        .items
                        .iter()
                        .filter(|i| i.mode != "header")
                        .map(|i| i.id)
                        .collect();
                    rec.r5 = found(&q.evidence, top(5), &by_id);
                    rec.r10 = found(&q.evidence, top(10), &by_id);
                    rec.budget = found(&q.evidence, &rendered, &by_id);
                    rec.newest_first = newest_first(&q.evidence, &out.items, &by_id);
                    let want: HashSet<&str> = q.evidence.iter().map(|e| session_of(e)).collect();
                    let got: HashSet<&str> = top(10)
                        .iter()
                        .flat_map(|id| by_id.get(id).into_iter().flatten())
                        .map(|t| session_of(&t.dia_id))
                        .collect();
                    rec.s10 = want.intersection(&got).count() as f64 / want.len() as f64;
                }
                asked.push((rec, out.ranking.iter().take(10).copied().collect()));
            }
            let bm25_top: HashSet<MemoryId> = asked[bm25].1.iter().copied().collect();
            for (mut rec, top) in asked {
                let shared = top.iter().filter(|id| bm25_top.contains(id)).count();
                rec.o10 = if bm25_top.is_empty() {
                    f64::from(u8::from(top.is_empty()))
                } else {
                    shared as f64 / bm25_top.len() as f64
                };
                records.push(rec);
            }
            if let Some(w) = question_file.as_mut() {
                let line = QuestionLine {
                    conversation: &conv.name,
                    question: &q.text,
                    category: q.category,
                    evidence: &q.evidence,
                    ranked: listed,
                };
                serde_json::to_writer(&mut *w, &line)?;
                std::io::Write::write_all(w, b"\n")?;
            }
            if q.category == 5 {
                continue;
            }
            for (i, (_, params)) in grid.iter().enumerate() {
                let req = RecallRequest {
                    rank: Some(*params),
                    ..req.clone()
                };
                let ids = ranking(&app, &req, Retrieval::Hybrid)
                    .map_err(|e| anyhow::anyhow!("ranking '{}': {e}", q.text))?;
                point_scores[i].push(found(&q.evidence, &ids[..ids.len().min(10)], &by_id));
            }
        }
        grid_scores.push(point_scores);
        conv_bar.inc(1);
    }
    item_bar.finish_and_clear();
    conv_bar.finish_and_clear();
    let answered = |r: &&Record| r.category != 5;
    let mut reports = BTreeMap::new();
    for (si, (name, _)) in systems.iter().enumerate() {
        let of = records.iter().filter(|r| r.system == si);
        let mut by_category = BTreeMap::new();
        for cat in 1..=5u8 {
            let m = metrics(of.clone().filter(|r| r.category == cat));
            if m.questions > 0 {
                by_category.insert(cat.to_string(), m);
            }
        }
        reports.insert(
            name.clone(),
            SystemReport {
                overall: metrics(of.clone().filter(answered)),
                by_category,
            },
        );
    }
    let conversations = convs
        .iter()
        .enumerate()
        .map(|(ci, c)| ConversationReport {
            id: c.name.clone(),
            systems: systems
                .iter()
                .enumerate()
                .map(|(si, (name, _))| {
                    let of = records
                        .iter()
                        .filter(|r| r.conversation == ci && r.system == si)
                        .filter(answered);
                    (name.clone(), metrics(of))
                })
                .collect(),
        })
        .collect();
    let loco = opts
        .loco
        .then(|| leave_one_out(&convs, &grid, &grid_scores));
    if let Some(mut w) = question_file {
        std::io::Write::flush(&mut w).context("cannot write the questions file")?;
    }
    Ok(EvalReport {
        systems: reports,
        conversations,
        loco,
        questions,
        seconds: started.elapsed().as_secs_f64(),
        turns,
        skipped_evidence: skipped,
        budget: opts.budget,
    })
}

/// For each conversation, the grid point with the best recall@10 over the questions of the
/// others, scored on it. Point 0 of `grid` is the configured parameters.
fn leave_one_out(
    convs: &[Conversation],
    grid: &[(String, RankParams)],
    scores: &[Vec<Vec<f64>>],
) -> LocoReport {
    let sum = |ci: usize, p: usize| scores[ci][p].iter().sum::<f64>();
    let count = |ci: usize| scores[ci].first().map_or(0, Vec::len);
    let mut folds = Vec::new();
    for (held, conv) in convs.iter().enumerate() {
        let mut best: Option<(usize, f64)> = None;
        for p in 0..grid.len() {
            let (s, n) = (0..convs.len())
                .filter(|&c| c != held)
                .fold((0.0, 0usize), |(s, n), c| (s + sum(c, p), n + count(c)));
            let r = s / n.max(1) as f64;
            // Ties keep the earlier point (the configured one first).
            if best.is_none_or(|(_, b)| r > b + 1e-12) {
                best = Some((p, r));
            }
        }
        let (chosen, _) = best.unwrap_or((0, 0.0));
        let n = count(held);
        folds.push(LocoFold {
            held_out: conv.name.clone(),
            chosen: grid.get(chosen).map(|g| g.0.clone()).unwrap_or_default(),
            recall_at_10: sum(held, chosen) / n.max(1) as f64,
            configured_recall_at_10: sum(held, 0) / n.max(1) as f64,
            questions: n,
        });
    }
    let total = folds.iter().map(|f| f.questions).sum::<usize>().max(1) as f64;
    let weighted = |f: fn(&LocoFold) -> f64| {
        folds.iter().map(|x| f(x) * x.questions as f64).sum::<f64>() / total
    };
    LocoReport {
        grid: grid.iter().map(|g| g.0.clone()).collect(),
        recall_at_10: weighted(|f| f.recall_at_10),
        configured_recall_at_10: weighted(|f| f.configured_recall_at_10),
        folds,
    }
}

/// The report as tables: every system by category, then per conversation and the
/// leave-one-conversation-out folds when they were run.
pub fn render_table(r: &EvalReport, per_conversation: bool) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "LoCoMo evaluation: {} conversations, {} turns, {} questions, budget {} tokens, {:.0}s ({} malformed evidence ids skipped)\n\n",
        r.conversations.len(), r.turns, r.questions, r.budget, r.seconds, r.skipped_evidence
    );
    let width = r.systems.keys().map(String::len).max().unwrap_or(0).max(6);
    let _ = writeln!(
        out,
        "{:<width$} {:<8} {:>6} {:>8} {:>9} {:>11} {:>10} {:>8} {:>8} {:>8} {:>12}",
        "system",
        "category",
        "n",
        "recall@5",
        "recall@10",
        "sess_rec@10",
        "budget_rec",
        "tokens",
        "p50_ms",
        "p95_ms",
        "bm25_ovl@10"
    );
    let row = |out: &mut String, name: &str, cat: &str, m: &Metrics| {
        let _ = writeln!(
            out,
            "{:<width$} {:<8} {:>6} {:>8.3} {:>9.3} {:>11.3} {:>10.3} {:>8.0} {:>8.1} {:>8.1} {:>12.3}",
            name,
            cat,
            m.questions,
            m.recall_at_5,
            m.recall_at_10,
            m.session_recall_at_10,
            m.budget_recall,
            m.mean_tokens,
            m.p50_ms,
            m.p95_ms,
            m.bm25_overlap_at_10
        );
    };
    for (name, s) in &r.systems {
        for (cat, m) in &s.by_category {
            row(&mut out, name, cat, m);
        }
        row(&mut out, name, "all 1-4", &s.overall);
    }
    let _ = writeln!(
        out,
        "\nNewest evidence first (questions whose block shows evidence of two or more times) and earlier statements marked per block:"
    );
    for (name, s) in &r.systems {
        let cats: Vec<String> = s
            .by_category
            .iter()
            .filter(|(_, m)| m.dated_evidence > 0)
            .map(|(c, m)| format!("cat {c} {}/{}", m.newest_first, m.dated_evidence))
            .collect();
        let _ = writeln!(
            out,
            "{name:<width$} {}  marked {:.2}",
            if cats.is_empty() {
                "-".to_owned()
            } else {
                cats.join(", ")
            },
            s.overall.marked
        );
    }
    if per_conversation {
        let _ = writeln!(out, "\nPer conversation (categories 1-4):");
        for c in &r.conversations {
            for (name, m) in &c.systems {
                row(&mut out, name, &c.id, m);
            }
        }
    }
    if let Some(l) = &r.loco {
        let _ = writeln!(
            out,
            "\nLeave one conversation out ({} grid points): recall@10 {:.3} (configured parameters: {:.3})",
            l.grid.len(),
            l.recall_at_10,
            l.configured_recall_at_10
        );
        for f in &l.folds {
            let _ = writeln!(
                out,
                "  {:<6} {:>4} q  held-out recall@10 {:.3} (configured {:.3})  chosen: {}",
                f.held_out, f.questions, f.recall_at_10, f.configured_recall_at_10, f.chosen
            );
        }
    }
    out
}

/// An embedder that remembers every vector it computed, in memory and in a file, so that a
/// second evaluation of the same conversations embeds nothing. Keys are SHA-256 digests of the
/// model name and the text; [`EmbeddingCache::save`] rewrites the file.
pub struct EmbeddingCache {
    inner: Arc<dyn Embedder>,
    path: Option<PathBuf>,
    vectors: Mutex<HashMap<[u8; 32], Vec<f32>>>,
}

impl EmbeddingCache {
    /// Wraps `inner`, loading the vectors saved in `path` (if it exists and is readable).
    pub fn open(inner: Arc<dyn Embedder>, path: Option<PathBuf>) -> Self {
        let dim = inner.dimension();
        let mut vectors = HashMap::new();
        if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
            for chunk in bytes.chunks_exact(32 + 4 * dim) {
                let mut key = [0u8; 32];
                key.copy_from_slice(&chunk[..32]);
                let v = chunk[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                vectors.insert(key, v);
            }
        }
        EmbeddingCache {
            inner,
            path,
            vectors: Mutex::new(vectors),
        }
    }

    /// The default file: `~/.cache/mira/eval/<model>.vectors`.
    pub fn default_path(model: &str) -> Option<PathBuf> {
        let home = std::env::var_os("HOME")?;
        Some(
            PathBuf::from(home)
                .join(".cache/mira/eval")
                .join(format!("{model}.vectors")),
        )
    }

    fn key(&self, text: &str) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.inner.model_name().as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.finalize().into()
    }

    /// Writes every vector to the file (a temporary file renamed over it).
    pub fn save(&self) -> Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let vectors = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        let mut bytes = Vec::with_capacity(vectors.len() * (32 + 4 * self.inner.dimension()));
        for (k, v) in vectors.iter() {
            bytes.extend_from_slice(k);
            bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

impl Embedder for EmbeddingCache {
    fn embed_batch(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| self.key(t)).collect();
        let missing: Vec<usize> = {
            let v = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
            (0..texts.len())
                .filter(|&i| !v.contains_key(&keys[i]))
                .collect()
        };
        if !missing.is_empty() {
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let computed = self.inner.embed_batch(&batch)?;
            let mut v = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
            for (i, vec) in missing.into_iter().zip(computed) {
                v.insert(keys[i], vec);
            }
        }
        let v = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        Ok(keys.iter().map(|k| v[k].clone()).collect())
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn model_name(&self) -> &str {
        self.inner.model_name()
    }
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
