//! Export and import: every memory as one JSON line ([`line`](mod@line)), restored exactly (ids,
//! timestamps, archive and supersession state, tags, causal edges), re-embedded in batches when
//! the file has no embedding (or one from another model); and LoCoMo conversations ingested as
//! `mira eval` does.
//!
//! Content goes through the same secret redaction as a store (`storage.redact_secrets`).
//! An import never stops at a bad line: the line is reported with its number and skipped.
//! Memories already in the store (same id, or same content in the same wing) are skipped as
//! duplicates, so importing a file twice changes nothing. Relations wait until both of their
//! memories exist, whatever the order of the lines; those whose other memory is in neither the
//! file nor the store are dropped and counted.

pub mod line;

use super::access::Access;
use super::store::{store_batch_reporting, stored_content};
use super::{validate, UseCaseError, UseCaseResult};
use crate::App;
use anyhow::Context;
use line::{Line, Parsed};
use mira_core::memory::MemoryId;
use mira_core::message::Term;
use mira_store::{Embedding, MemoryStore, NewMemory, Parts, Relation};
use serde::Serialize;
use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender};
use std::thread::Scope;

/// Writes every memory (of `wing`, or of every wing `access` may read) as JSON lines to
/// `out`, oldest first, with the embeddings when `embeddings` is true. Returns how many were
/// written.
pub fn export(
    app: &App,
    access: &Access,
    wing: Option<&str>,
    embeddings: bool,
    out: &mut dyn Write,
) -> UseCaseResult<u64> {
    if let Some(w) = wing {
        validate::name(Term::Wing, w)?;
        access.check_read(w)?;
    }
    let mut written = 0;
    let store: &dyn MemoryStore = &*app.store;
    let n = store.export_memories(wing, Parts::export(embeddings), |m| {
        if !access.may_read(&m.memory.wing) {
            return Ok(());
        }
        written += 1;
        let line = Line::from_stored(m).map_err(anyhow::Error::msg)?;
        writeln!(out, "{}", serde_json::to_string(&line)?)?;
        Ok::<_, anyhow::Error>(())
    });
    let n = n.and_then(|_| Ok(out.flush().map(|_| written)?));
    n.map_err(|e| UseCaseError::Internal(e.context("export failed")))
}

/// A line (or turn) that could not be imported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportError {
    /// Where: `line 7`, or `turn D1:3` for LoCoMo.
    pub at: String,
    /// What is wrong with it.
    pub message: String,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    /// Memories written.
    pub imported: u64,
    /// Of those, how many were embedded here (no usable embedding in the file).
    pub embedded: u64,
    /// Of those, how many were written without an embedding (none usable in the file and no
    /// model installed): `mira index embed-missing` computes them later.
    pub without_vector: u64,
    /// Memories already in the store (same id, or same content in the same wing): skipped.
    pub duplicates: u64,
    /// Causal edges and supersessions written (those already in the store not counted).
    pub links: u64,
    /// Relations dropped because their other memory is in neither the file nor the store.
    pub dangling_links: u64,
    /// Secrets replaced by `[REDACTED:<kind>]` (`storage.redact_secrets`).
    pub redacted: u64,
    /// Lines (or turns) skipped, with the reason.
    pub errors: Vec<ImportError>,
}

/// Imports JSON lines from `input`. `progress` is called with the lines read so far.
/// Fails only when the store or the model does; bad lines end up in the report.
///
/// Lines are read, checked and embedded (in fixed-size windows of memories, sorted by length
/// for the model) on the calling thread while another thread writes the previous window.
pub fn import_jsonl(
    app: &App,
    input: impl BufRead,
    progress: &mut dyn FnMut(u64),
) -> UseCaseResult<ImportReport> {
    std::thread::scope(|s| {
        let (windows, received) = std::sync::mpsc::sync_channel(1);
        let writer = s.spawn(|| restore_windows(app, received));
        let read = read_lines(s, app, input, progress, windows);
        let written = writer.join().unwrap_or_else(|_| {
            Err(UseCaseError::Internal(anyhow::anyhow!(
                "the import's writer thread panicked"
            )))
        });
        // A failed write stops the reading too: its error is the one to report.
        let (imported, links, dangling_links) = written?;
        let mut report = read?;
        report.imported = imported;
        report.links = links;
        report.dangling_links = dangling_links;
        Ok(report)
    })
}

/// Reads, checks and embeds the lines, sending each full window to the writer.
fn read_lines<'s, 'a>(
    scope: &'s Scope<'s, 'a>,
    app: &'a App,
    mut input: impl BufRead,
    progress: &mut dyn FnMut(u64),
    windows: SyncSender<Window>,
) -> UseCaseResult<ImportReport> {
    let mut job = Import::new(scope, app, windows);
    let now = chrono::Utc::now().timestamp_millis();
    let min_entity = app.config.extraction.min_entity_length;
    let (mut buf, mut line_no) = (Vec::new(), 0u64);
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .context("cannot read the import file")?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let parsed = std::str::from_utf8(&buf)
            .map_err(|e| {
                format!(
                    "not valid UTF-8 (first bad byte at column {})",
                    e.valid_up_to() + 1
                )
            })
            .and_then(|text| {
                let text = text.trim();
                if text.is_empty() {
                    return Ok(None);
                }
                let mut line = Line::parse(text)?;
                let (content, redacted) =
                    stored_content(app, &line.content).map_err(|e| e.to_string())?;
                line.content = content;
                job.report.redacted += u64::from(redacted);
                line.check(now, min_entity).map(Some)
            });
        match parsed {
            Ok(None) => {}
            Ok(Some(p)) => job.add(p)?,
            Err(message) => job.report.errors.push(ImportError {
                at: format!("line {line_no}"),
                message,
            }),
        }
        progress(line_no);
    }
    job.flush()?;
    Ok(job.report)
}

/// Imports a LoCoMo conversation file: one session note per turn in `wing` (default
/// `locomo-<file stem>`), dated from its session, as `mira eval locomo` ingests it.
/// `progress` is called with the turns stored so far and their total.
pub fn import_locomo(
    app: &App,
    path: &Path,
    wing: Option<&str>,
    progress: &mut dyn FnMut(u64, u64),
) -> UseCaseResult<ImportReport> {
    let conv = crate::locomo::parse_conversation(path)
        .map_err(|e| UseCaseError::Invalid(format!("{e:#}").into()))?;
    let wing = wing.map_or_else(|| conv.wing(), str::to_owned);
    validate::name(Term::Wing, &wing)?;
    let mut report = ImportReport::default();
    let total = conv.turns.len() as u64;
    progress(0, total);
    let results = store_batch_reporting(app, conv.store_requests(&wing), &mut |done| {
        progress(done as u64, total)
    });
    for (turn, result) in conv.turns.iter().zip(results) {
        match result {
            Ok(o) if o.stored => {
                report.imported += 1;
                report.redacted += u64::from(o.redacted);
                if o.embedded {
                    report.embedded += 1;
                } else {
                    report.without_vector += 1;
                }
                report.links += o.links.len() as u64;
            }
            Ok(_) => report.duplicates += 1,
            Err(UseCaseError::Internal(e)) => return Err(UseCaseError::Internal(e)),
            Err(e) => report.errors.push(ImportError {
                at: format!("turn {}", turn.dia_id),
                message: e.to_string(),
            }),
        }
    }
    Ok(report)
}

/// Memories per window of a JSONL import: embedded in one call (sorted by length there) and
/// written in one transaction.
const WINDOW: usize = crate::usecases::store::WINDOW;

/// A window of the import, ready to write.
struct Window {
    memories: Vec<NewMemory>,
    /// Relations read with these memories (they wait until both of their ends exist).
    relations: Vec<Relation>,
}

/// The reading side of a JSONL import: the window being filled and what was seen.
struct Import<'s, 'a> {
    scope: &'s Scope<'s, 'a>,
    /// Whether the model is loading (or loaded): started by the first line to embed.
    model_asked: bool,
    app: &'a App,
    batch: Vec<Parsed>,
    relations: Vec<Relation>,
    seen_ids: HashSet<MemoryId>,
    seen_content: HashSet<(String, String)>,
    report: ImportReport,
    windows: SyncSender<Window>,
}

impl<'s, 'a> Import<'s, 'a> {
    fn new(scope: &'s Scope<'s, 'a>, app: &'a App, windows: SyncSender<Window>) -> Self {
        Import {
            scope,
            model_asked: false,
            app,
            batch: Vec::new(),
            relations: Vec::new(),
            seen_ids: HashSet::new(),
            seen_content: HashSet::new(),
            report: ImportReport::default(),
            windows,
        }
    }

    fn add(&mut self, p: Parsed) -> UseCaseResult<()> {
        let (r, hash) = (&p.memory.memory, &p.memory.bookkeeping.content_hash);
        for edge in &p.causes {
            self.relations.push(Relation::Edge {
                to: r.id,
                edge: edge.clone(),
            });
        }
        if let Some(by) = p.superseded_by {
            self.relations
                .push(Relation::Supersession { memory: r.id, by });
        }
        let content_key = (r.wing.clone(), hash.clone());
        let duplicate = self.seen_ids.contains(&r.id)
            || self.seen_content.contains(&content_key)
            || self.app.store.contains(r.id)?
            || self.app.store.find_by_hash(&r.wing, hash)?.is_some();
        if duplicate {
            self.report.duplicates += 1;
            return Ok(());
        }
        self.seen_ids.insert(r.id);
        self.seen_content.insert(content_key);
        if !self.model_asked && self.needs_embedding(&p) {
            // The model loads while the window fills (an error comes again from the
            // embedding itself).
            self.model_asked = true;
            let app = self.app;
            self.scope.spawn(move || app.embedder().map(|_| ()));
        }
        self.batch.push(p);
        if self.batch.len() >= WINDOW {
            self.flush()?;
        }
        Ok(())
    }

    /// Whether `p` has no usable embedding: none, an empty one, or one of another model.
    fn needs_embedding(&self, p: &Parsed) -> bool {
        !p.memory
            .embedding
            .as_ref()
            .is_some_and(|e| self.app.is_current_model(&e.model) && !e.vector.is_empty())
    }

    /// Embeds what has no usable embedding (without a model installed, it is written without
    /// one) and hands the window to the writer.
    fn flush(&mut self) -> UseCaseResult<()> {
        let batch = std::mem::take(&mut self.batch);
        let app = self.app;
        let missing: Vec<&str> = batch
            .iter()
            .filter(|p| self.needs_embedding(p))
            .map(|p| p.memory.memory.content.as_str())
            .collect();
        let embedder = match missing.is_empty() {
            true => None,
            false => app.embedder_if_installed()?,
        };
        let mut fresh = match &embedder {
            Some(e) => e.embed_batch(&missing).context("embedding failed")?,
            None => Vec::new(),
        }
        .into_iter();
        self.report.embedded += fresh.len() as u64;
        self.report.without_vector += (missing.len() - fresh.len()) as u64;
        let memories = batch
            .into_iter()
            .map(|p| {
                let needs = self.needs_embedding(&p);
                let mut m = p.memory;
                if needs {
                    let vector = fresh.next().unwrap_or_default();
                    m.embedding = (!vector.is_empty()).then(|| Embedding {
                        model: app.model_name().to_owned(),
                        vector,
                    });
                }
                m
            })
            .collect();
        let window = Window {
            memories,
            relations: std::mem::take(&mut self.relations),
        };
        // A closed channel means the writer failed: `import_jsonl` reports its error.
        let _ = self.windows.send(window);
        Ok(())
    }
}

/// The writing side: each window in one transaction with the relations whose two memories
/// exist, then indexed. Returns (memories written, relations written, relations left).
fn restore_windows(app: &App, windows: Receiver<Window>) -> UseCaseResult<(u64, u64, u64)> {
    let (mut imported, mut links) = (0u64, 0u64);
    let mut relations: Vec<Relation> = Vec::new();
    for window in windows {
        relations.extend(window.relations);
        let out = app
            .store
            .restore_batch(&window.memories, &relations)
            .with_context(|| format!("import stopped after {imported} memories were written"))?;
        imported += window.memories.len() as u64;
        app.sync_index();
        let mut resolved = out.resolved.into_iter();
        relations.retain(|_| !resolved.next().unwrap_or(false));
        links += out.added;
    }
    Ok((imported, links, relations.len() as u64))
}

/// The text summary of an import.
pub fn render_report(r: &ImportReport) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "Imported: {} ({} embedded)\nDuplicates skipped: {}\nLinks restored: {}\n",
        r.imported, r.embedded, r.duplicates, r.links
    );
    if r.without_vector > 0 {
        let _ = writeln!(
            out,
            "Without a vector: {} (no embedding model installed: found by their words only until scripts/fetch-model.sh and `mira index embed-missing`)",
            r.without_vector
        );
    }
    if r.redacted > 0 {
        let _ = writeln!(out, "Secrets redacted: {}", r.redacted);
    }
    if r.dangling_links > 0 {
        let _ = writeln!(
            out,
            "Links dropped: {} (their other memory is in neither the file nor the store)",
            r.dangling_links
        );
    }
    let _ = writeln!(out, "Errors: {}", r.errors.len());
    for e in r.errors.iter().take(REPORTED_ERRORS) {
        let _ = writeln!(out, "  {}: {}", e.at, e.message);
    }
    if r.errors.len() > REPORTED_ERRORS {
        let _ = writeln!(
            out,
            "  … and {} more (--json lists them all)",
            r.errors.len() - REPORTED_ERRORS
        );
    }
    out
}

/// Errors listed one by one in the text report.
const REPORTED_ERRORS: usize = 20;
