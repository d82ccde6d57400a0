//! `mira eval locomo DIR [DIR…]`: evidence recall of the recall pipeline on data sets of
//! conversations in the LoCoMo format, side by side with four baselines (BM25 alone, dense
//! alone, plain RRF of the two, the database's full-text search) in the same run, one table per
//! data set (and per conversation if asked), and with `--loco` the choice of ranking parameters
//! scored where it was not made (`loco`: leave one conversation out, leave one data set out).
//!
//! Protocol: each conversation goes into a fresh temporary store (one wing per conversation,
//! one memory per turn, content `speaker: text`, created_at from the session date, turns one
//! second apart). Every question of categories 1-4 is asked with the conversation's wing and
//! the budget; category 5 (adversarial: the answer is not in the conversation) only measures the
//! tokens returned, and so do questions of the next conversation of the same data set asked of
//! this one (category `other`: nothing in the store answers them). Malformed evidence ids
//! (LoCoMo has a few) are split on `;`, and ids naming no turn are skipped and counted.
//! Embeddings are cached on disk between runs ([`EmbeddingCache`]; the same vectors, computed
//! once), so latencies are those of a recall with a cached query embedding.

mod cache;
mod loco;
mod metrics;
mod table;
pub mod types;
pub mod updates;

use crate::locomo::{files, parse_conversation, Conversation, Question};
pub use cache::EmbeddingCache;
pub use loco::{grid, stages, GridPoint, HeldOut, LocoFold, LocoReport, StageGain};
pub use metrics::{Metrics, FOREIGN};
pub use table::render_table;

use crate::config::Config;
use crate::usecases::recall::{
    configured_rank_params, ranking, recall_with, RecallOutcome, RecallRequest, Retrieval,
};
use crate::usecases::store::store_batch_reporting;
use crate::App;
use anyhow::{bail, Context, Result};
use loco::GridScores;
use metrics::{metrics, Found, Record, TurnsOf};
use mira_core::memory::MemoryId;
use mira_embed::Embedder;
use mira_store::TextRank;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Questions of the next conversation asked of each conversation (category `other`).
pub const FOREIGN_QUESTIONS: usize = 20;

/// Results of one system: overall (categories 1-4) and per category (5 and `other`: tokens
/// only).
#[derive(Debug, Clone, Serialize)]
pub struct SystemReport {
    /// Over categories 1-4.
    pub overall: Metrics,
    /// Per category, keyed "1".."5", and "other" for questions of another conversation.
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

/// The results on one data set.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetReport {
    /// The data set (its folder's name).
    pub name: String,
    /// Per system: `mira`, `bm25`, `dense`, `rrf`, `fts` (and PostgreSQL's rankings with
    /// `--text-ranks`).
    pub systems: BTreeMap<String, SystemReport>,
    /// Per conversation, in file order (printed with `--per-conversation`).
    pub conversations: Vec<ConversationReport>,
    /// Questions asked of their own conversation (all categories).
    pub questions: usize,
    /// Questions asked of another conversation.
    pub foreign_questions: usize,
    /// Turns stored.
    pub turns: usize,
    /// Evidence ids skipped because they name no turn.
    pub skipped_evidence: usize,
    /// Wall time of the data set in seconds (storing, asking, the grid).
    pub seconds: f64,
}

/// The whole report (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// Per data set, in the order given.
    pub datasets: Vec<DatasetReport>,
    /// Leave one conversation out, leave one data set out (`--loco`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loco: Option<LocoReport>,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Budget used for every question.
    pub budget: u32,
}

/// Options of `mira eval locomo`.
#[derive(Debug, Clone, Default)]
pub struct EvalOptions {
    /// The data sets: each a folder of LoCoMo JSON files (or one file).
    pub paths: Vec<PathBuf>,
    /// Token budget per question.
    pub budget: u32,
    /// At most this many questions per conversation (all when None).
    pub max_questions: Option<usize>,
    /// Candidates per recall; the configured `allocator.max_candidates` when None.
    pub k: Option<usize>,
    /// Score the choice of ranking parameters where it was not made, over [`grid`].
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
    dataset: &'a str,
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

/// One data set read from disk.
struct Dataset {
    name: String,
    conversations: Vec<Conversation>,
}

fn read_dataset(path: &std::path::Path) -> Result<Dataset> {
    let conversations = files(path)?
        .iter()
        .map(|f| parse_conversation(f))
        .collect::<Result<_>>()?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok(Dataset {
        name,
        conversations,
    })
}

/// A question asked of a conversation: its own, or another's (`foreign`).
struct Asked<'a> {
    question: &'a Question,
    foreign: bool,
}

impl Asked<'_> {
    fn category(&self) -> u8 {
        if self.foreign {
            FOREIGN
        } else {
            self.question.category
        }
    }

    /// Whether its evidence is in the conversation asked.
    fn answerable(&self) -> bool {
        !self.foreign && self.question.category != 5
    }
}

/// The questions asked of conversation `ci` of `convs`: its own (categories 1-4 with evidence,
/// and 5), then [`FOREIGN_QUESTIONS`] answerable ones of the next conversation.
fn asked_of(convs: &[Conversation], ci: usize, max: Option<usize>) -> Vec<Asked<'_>> {
    let own = convs[ci]
        .questions
        .iter()
        .take(max.unwrap_or(usize::MAX))
        .filter(|q| q.category == 5 || !q.evidence.is_empty())
        .map(|question| Asked {
            question,
            foreign: false,
        });
    let next = (convs.len() > 1).then(|| &convs[(ci + 1) % convs.len()]);
    let foreign = next
        .into_iter()
        .flat_map(|c| &c.questions)
        .filter(|q| q.category != 5 && !q.evidence.is_empty())
        .take(FOREIGN_QUESTIONS.min(max.unwrap_or(usize::MAX)))
        .map(|question| Asked {
            question,
            foreign: true,
        });
    own.chain(foreign).collect()
}

/// What is shared by every conversation of a run.
struct Run<'a> {
    base: &'a Config,
    embedder: Arc<dyn Embedder>,
    opts: &'a EvalOptions,
    systems: Vec<(String, Retrieval)>,
    /// Index of BM25 among the systems.
    bm25: usize,
    grid: Vec<GridPoint>,
    question_file: Option<std::io::BufWriter<std::fs::File>>,
    progress: crate::progress::Progress,
}

/// Runs the evaluation with `base` as the configuration of every temporary store.
pub fn run(base: &Config, embedder: Arc<dyn Embedder>, opts: &EvalOptions) -> Result<EvalReport> {
    let started = Instant::now();
    if opts.paths.is_empty() {
        bail!("no data set: give one or more folders of LoCoMo JSON files");
    }
    if opts.text_ranks && base.storage.backend != crate::config::StorageBackend::Postgres {
        bail!("--text-ranks compares PostgreSQL's full-text rankings: run it with storage.backend: postgres");
    }
    let datasets: Vec<Dataset> = opts
        .paths
        .iter()
        .map(|p| read_dataset(p))
        .collect::<Result<_>>()?;
    let systems = systems(opts.text_ranks);
    let bm25 = systems
        .iter()
        .position(|(_, mode)| *mode == Retrieval::LexicalOnly)
        .context("BM25 is among the systems")?;
    let question_file = match &opts.questions {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => None,
    };
    let mut run = Run {
        base,
        embedder,
        opts,
        systems,
        bm25,
        grid: Vec::new(),
        question_file,
        progress: crate::progress::Progress::new(),
    };
    let mut reports = Vec::new();
    let mut scores: GridScores = Vec::new();
    for d in &datasets {
        let (report, dataset_scores) = run.dataset(d)?;
        reports.push(report);
        scores.push(dataset_scores);
    }
    if let Some(mut w) = run.question_file.take() {
        std::io::Write::flush(&mut w).context("cannot write the questions file")?;
    }
    let loco = opts.loco.then(|| {
        let names: Vec<String> = datasets.iter().map(|d| d.name.clone()).collect();
        let convs: Vec<Vec<String>> = datasets
            .iter()
            .map(|d| d.conversations.iter().map(|c| c.name.clone()).collect())
            .collect();
        loco::leave_one_out(&names, &convs, &run.grid, &scores)
    });
    Ok(EvalReport {
        datasets: reports,
        loco,
        seconds: started.elapsed().as_secs_f64(),
        budget: opts.budget,
    })
}

impl Run<'_> {
    /// Every conversation of `d`: its report, and per conversation the grid's scores.
    fn dataset(&mut self, d: &Dataset) -> Result<(DatasetReport, Vec<Vec<Vec<f64>>>)> {
        let started = Instant::now();
        let conv_bar =
            self.progress
                .bar(&d.name, Some(d.conversations.len() as u64), "conversations");
        let mut records: Vec<Record> = Vec::new();
        let mut scores = Vec::new();
        let (mut questions, mut foreign, mut turns, mut skipped) = (0, 0, 0, 0);
        for ci in 0..d.conversations.len() {
            let asked = asked_of(&d.conversations, ci, self.opts.max_questions);
            questions += asked.iter().filter(|a| !a.foreign).count();
            foreign += asked.iter().filter(|a| a.foreign).count();
            turns += d.conversations[ci].turns.len();
            skipped += d.conversations[ci].skipped_evidence;
            scores.push(self.conversation(d, ci, &asked, &mut records)?);
            conv_bar.inc(1);
        }
        conv_bar.finish_and_clear();
        let answerable = |r: &&Record| r.category != 5 && r.category != FOREIGN;
        let mut systems = BTreeMap::new();
        for (si, (name, _)) in self.systems.iter().enumerate() {
            let of = records.iter().filter(|r| r.system == si);
            let mut by_category = BTreeMap::new();
            for cat in [1, 2, 3, 4, 5, FOREIGN] {
                let m = metrics(of.clone().filter(|r| r.category == cat));
                if m.questions > 0 {
                    by_category.insert(table::category_name(cat), m);
                }
            }
            systems.insert(
                name.clone(),
                SystemReport {
                    overall: metrics(of.clone().filter(answerable)),
                    by_category,
                },
            );
        }
        let conversations = d
            .conversations
            .iter()
            .enumerate()
            .map(|(ci, c)| ConversationReport {
                id: c.name.clone(),
                systems: self
                    .systems
                    .iter()
                    .enumerate()
                    .map(|(si, (name, _))| {
                        let of = records
                            .iter()
                            .filter(|r| r.conversation == ci && r.system == si)
                            .filter(answerable);
                        (name.clone(), metrics(of))
                    })
                    .collect(),
            })
            .collect();
        let report = DatasetReport {
            name: d.name.clone(),
            systems,
            conversations,
            questions,
            foreign_questions: foreign,
            turns,
            skipped_evidence: skipped,
            seconds: started.elapsed().as_secs_f64(),
        };
        Ok((report, scores))
    }

    /// Stores conversation `ci` of `d` in a fresh store and asks it `asked`: a record per
    /// question and system, and per grid point the recall@10 of each answerable question.
    fn conversation(
        &mut self,
        d: &Dataset,
        ci: usize,
        asked: &[Asked<'_>],
        records: &mut Vec<Record>,
    ) -> Result<Vec<Vec<f64>>> {
        let conv = &d.conversations[ci];
        let tmp = tempfile::tempdir().context("cannot create a temporary store")?;
        let mut cfg = self.base.clone();
        cfg.storage.path = Some(tmp.path().to_path_buf());
        if let Some(k) = self.opts.k {
            cfg.allocator.max_candidates = k;
        }
        let app = App::open_with_embedder(cfg, self.embedder.clone())?;
        if self.opts.loco && self.grid.is_empty() {
            self.grid = grid(configured_rank_params(&app));
        }
        let wing = conv.wing();
        let reqs = conv.store_requests(&wing);
        let bar = self.progress.bar(
            &format!("  {}", conv.name),
            Some(reqs.len() as u64),
            "turns stored",
        );
        let stored = store_batch_reporting(&app, reqs, &mut |done| bar.set_position(done as u64));
        let mut turns: TurnsOf<'_> = TurnsOf::new();
        for (t, r) in conv.turns.iter().zip(stored) {
            let out = r.map_err(|e| anyhow::anyhow!("storing turn {}: {e}", t.dia_id))?;
            turns.entry(out.id).or_default().push(t);
        }
        bar.reset();
        bar.set_message("questions");
        bar.set_length(asked.len() as u64);
        let mut grid_scores = vec![Vec::new(); self.grid.len()];
        for a in asked {
            bar.inc(1);
            let q = a.question;
            let req = RecallRequest {
                query: q.text.clone(),
                budget: Some(self.opts.budget as i64),
                wing: Some(wing.clone()),
                ..RecallRequest::default()
            };
            let mut listed = BTreeMap::new();
            // Per system, its record and its top 10.
            let mut per_system: Vec<(Record, Vec<MemoryId>)> = Vec::new();
            for (si, (name, mode)) in self.systems.iter().enumerate() {
                let out = recall_with(&app, &req, *mode)
                    .map_err(|e| anyhow::anyhow!("recall '{}': {e}", q.text))?;
                listed.insert(name.as_str(), best_turns(&out, &turns));
                let found = a.answerable().then(|| {
                    let rendered: Vec<MemoryId> = out
                        .items
                        .iter()
                        .filter(|i| i.mode != "header")
                        .map(|i| i.id)
                        .collect();
                    Found::of(&q.evidence, &out.ranking, &rendered, &turns)
                });
                let rec = Record {
                    conversation: ci,
                    system: si,
                    category: a.category(),
                    found,
                    o10: 0.0,
                    tokens: out.used as f64,
                    nothing_relevant: *mode == Retrieval::Hybrid && !out.standout.relevant,
                    ms: out.millis,
                    newest_first: a
                        .answerable()
                        .then(|| metrics::newest_first(&q.evidence, &out.items, &turns))
                        .flatten(),
                    marked: out.items.iter().filter(|i| i.newer.is_some()).count(),
                };
                per_system.push((rec, out.ranking.iter().take(10).copied().collect()));
            }
            let bm25_top: HashSet<MemoryId> = per_system[self.bm25].1.iter().copied().collect();
            for (mut rec, top) in per_system {
                let shared = top.iter().filter(|id| bm25_top.contains(id)).count();
                rec.o10 = if bm25_top.is_empty() {
                    f64::from(u8::from(top.is_empty()))
                } else {
                    shared as f64 / bm25_top.len() as f64
                };
                records.push(rec);
            }
            if let Some(w) = self.question_file.as_mut() {
                let line = QuestionLine {
                    dataset: &d.name,
                    conversation: &conv.name,
                    question: &q.text,
                    category: a.category(),
                    evidence: if a.foreign { &[] } else { &q.evidence },
                    ranked: listed,
                };
                serde_json::to_writer(&mut *w, &line)?;
                std::io::Write::write_all(w, b"\n")?;
            }
            if !a.answerable() {
                continue;
            }
            for (i, (_, params)) in self.grid.iter().enumerate() {
                let req = RecallRequest {
                    rank: Some(*params),
                    ..req.clone()
                };
                let ids = ranking(&app, &req, Retrieval::Hybrid)
                    .map_err(|e| anyhow::anyhow!("ranking '{}': {e}", q.text))?;
                grid_scores[i].push(metrics::found(
                    &q.evidence,
                    &ids[..ids.len().min(10)],
                    &turns,
                ));
            }
        }
        bar.finish_and_clear();
        // The index's background work ends before its temporary folder goes (a graph saved
        // into a removed folder only warns, but on every run).
        if let Some(index) = app.index_if_open() {
            index.wait_idle(Duration::from_secs(60));
        }
        Ok(grid_scores)
    }
}

/// The best [`LISTED`] memories of a recall as (turn id, relevance).
fn best_turns<'a>(out: &RecallOutcome, turns: &TurnsOf<'a>) -> Vec<(&'a str, f32)> {
    out.ranking
        .iter()
        .zip(&out.relevances)
        .take(LISTED)
        .flat_map(|(id, r)| {
            let of = turns.get(id).into_iter().flatten();
            of.map(move |t| (t.dia_id.as_str(), *r))
        })
        .collect()
}
