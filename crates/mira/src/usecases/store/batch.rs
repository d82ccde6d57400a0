//! Many stores at once (`mira import --format locomo`, `mira eval`, the MCP batch): three
//! threads in a pipeline, one window of requests at a time.
//!
//! 1. **prepare** (own thread): validation, redaction, type, fingerprint, tags, token counts;
//! 2. **embed** (the calling thread, and one thread per window in flight): skips what the
//!    database already has, then embeds the window's texts in one call, which sorts them by
//!    token count so that each forward pass pads little; the next window is submitted while
//!    this one is still embedding, so the model threads do not idle between windows;
//! 3. **write** (own thread): relates each memory in input order to the earlier ones, those of
//!    the database and those of the batch not yet written ([`Unwritten`]), then writes the
//!    window in one transaction.
//!
//! So the model embeds window k+1 while window k is written and window k+2 prepared, and the
//! outcome (links, near duplicates, supersessions) is that of the same stores one by one.

use super::relate::Unwritten;
use super::{
    announce, duplicate, existing_copy, near_copy, new_memory, prepare, Prepared, StoreOutcome,
    StoreRequest,
};
use crate::usecases::{UseCaseError, UseCaseResult};
use crate::App;
use anyhow::Context;
use mira_embed::Embedder;
use mira_store::NewMemory;
use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle};

/// Requests per window: the texts sorted together for embedding, and written in one
/// transaction.
pub(crate) const WINDOW: usize = 256;

/// The result of request `.0`.
type Answer = (usize, UseCaseResult<StoreOutcome>);

/// A window's memories to write, in input order, with their embeddings.
type Embedded = Vec<(usize, Prepared, Vec<f32>)>;

/// Stores many memories: invalid ones get their error, exact duplicates (in the database or
/// earlier in the batch) the id of the memory they repeat, the others are written one window
/// per transaction. Results are in input order. A failure of the model or the database stops
/// the batch: what was not written gets that error. Without a model installed, memories are
/// written without an embedding.
pub fn store_batch(app: &App, reqs: Vec<StoreRequest>) -> Vec<UseCaseResult<StoreOutcome>> {
    store_batch_reporting(app, reqs, &mut |_| {})
}

/// [`store_batch`], calling `progress` with the number of requests handled (embedded or
/// answered) after each window, for a progress bar.
pub fn store_batch_reporting(
    app: &App,
    reqs: Vec<StoreRequest>,
    progress: &mut dyn FnMut(usize),
) -> Vec<UseCaseResult<StoreOutcome>> {
    let n = reqs.len();
    let mut results: Vec<Option<UseCaseResult<StoreOutcome>>> = (0..n).map(|_| None).collect();
    let failure = std::thread::scope(|s| {
        let (prepared_tx, prepared_rx) = sync_channel(1);
        let (embedded_tx, embedded_rx) = sync_channel(1);
        s.spawn(|| prepare_windows(app, &reqs, prepared_tx));
        let writer = s.spawn(|| write_windows(app, embedded_rx));
        let (mut answers, embed_failure) = embed_windows(app, prepared_rx, embedded_tx, progress);
        let (written, write_failure) = writer.join().unwrap_or_else(|_| {
            (
                Vec::new(),
                Some(anyhow::anyhow!("the writer thread panicked")),
            )
        });
        answers.extend(written);
        for (i, r) in answers {
            results[i] = Some(r);
        }
        embed_failure.or(write_failure)
    });
    let failure = failure.map(|e| format!("{e:#}"));
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                let why = failure.as_deref().unwrap_or("not stored");
                Err(UseCaseError::Internal(anyhow::anyhow!("{why}")))
            })
        })
        .collect()
}

/// Stage 1: prepares each window and hands it on; stops when the next stage has.
fn prepare_windows(
    app: &App,
    reqs: &[StoreRequest],
    out: SyncSender<Vec<(usize, UseCaseResult<Prepared>)>>,
) {
    for (w, window) in reqs.chunks(WINDOW).enumerate() {
        let prepared = window
            .iter()
            .enumerate()
            .map(|(k, req)| (w * WINDOW + k, prepare(app, req)))
            .collect();
        if out.send(prepared).is_err() {
            return;
        }
    }
}

/// A window whose embedding is under way: the answers already known (invalid requests, copies
/// of stored memories), the requests handled once it is done, the thread embedding the rest.
struct Started<'s> {
    answers: Vec<Answer>,
    handled: usize,
    embedding: ScopedJoinHandle<'s, anyhow::Result<Embedded>>,
}

/// Stage 2: answers invalid requests and duplicates of stored memories, embeds the rest (no
/// vector without a model installed) and hands the windows on in order; reports the requests
/// handled after each window. The next window's embedding starts before this one's ends, so
/// the model threads never wait for a window's tokenization or for its last, longest pass.
fn embed_windows(
    app: &App,
    input: Receiver<Vec<(usize, UseCaseResult<Prepared>)>>,
    out: SyncSender<Embedded>,
    progress: &mut dyn FnMut(usize),
) -> (Vec<Answer>, Option<anyhow::Error>) {
    let mut answers = Vec::new();
    let embedder = match app.embedder_if_installed() {
        Ok(e) => e,
        Err(e) => return (answers, Some(e)),
    };
    std::thread::scope(|s| {
        let (started_tx, started) = sync_channel(1);
        s.spawn(move || start_windows(app, s, embedder, input, started_tx));
        for window in started {
            answers.extend(window.answers);
            let embedded = match window.embedding.join() {
                Ok(Ok(embedded)) => embedded,
                Ok(Err(e)) => return (answers, Some(e)),
                Err(_) => {
                    let e = anyhow::anyhow!("an embedding thread panicked");
                    return (answers, Some(e));
                }
            };
            if out.send(embedded).is_err() {
                break;
            }
            progress(window.handled);
        }
        (answers, None)
    })
}

/// Starts embedding each window on a thread of its own, in order; stops when the next stage
/// has.
fn start_windows<'s>(
    app: &'s App,
    s: &'s Scope<'s, '_>,
    embedder: Option<Arc<dyn Embedder>>,
    input: Receiver<Vec<(usize, UseCaseResult<Prepared>)>>,
    out: SyncSender<Started<'s>>,
) {
    let mut handled = 0;
    for window in input {
        handled += window.len();
        let mut answers = Vec::new();
        let mut fresh = Vec::with_capacity(window.len());
        for (i, prepared) in window {
            match prepared.and_then(|p| Ok((duplicate(app, &p)?, p))) {
                Ok((Some(dup), _)) => answers.push((i, Ok(dup))),
                Ok((None, p)) => fresh.push((i, p)),
                Err(e) => answers.push((i, Err(e))),
            }
        }
        let embedder = embedder.clone();
        let embedding = s.spawn(move || embed(embedder.as_deref(), fresh));
        let started = Started {
            answers,
            handled,
            embedding,
        };
        if out.send(started).is_err() {
            return;
        }
    }
}

/// The vectors of `fresh` (empty ones without a model), each beside its request.
fn embed(
    embedder: Option<&dyn Embedder>,
    fresh: Vec<(usize, Prepared)>,
) -> anyhow::Result<Embedded> {
    let texts: Vec<&str> = fresh
        .iter()
        .map(|(_, p)| p.memory.content.as_str())
        .collect();
    let vectors = match embedder {
        Some(e) => e.embed_batch(&texts).context("embedding failed")?,
        None => vec![Vec::new(); texts.len()],
    };
    Ok(fresh
        .into_iter()
        .zip(vectors)
        .map(|((i, p), v)| (i, p, v))
        .collect())
}

/// Stage 3: relates and writes each window in input order, one transaction per window holding
/// the write lock of its wings (so it relates against what is committed, and nothing else
/// writes those wings meanwhile).
fn write_windows(app: &App, input: Receiver<Embedded>) -> (Vec<Answer>, Option<anyhow::Error>) {
    let mut answers = Vec::new();
    let mut writer = Writer::default();
    for window in input {
        if let Err(e) = writer.write(app, window, &mut answers) {
            return (answers, Some(e));
        }
    }
    (answers, None)
}

/// What the write stage keeps between windows.
#[derive(Default)]
struct Writer {
    /// The memories of the window being written.
    unwritten: Unwritten,
    /// Every memory written by this batch, by (wing, content hash): later copies in the batch
    /// are its duplicates.
    written: HashMap<(String, String), StoreOutcome>,
}

impl Writer {
    fn write(
        &mut self,
        app: &App,
        window: Embedded,
        answers: &mut Vec<Answer>,
    ) -> anyhow::Result<()> {
        let mut rows = Vec::with_capacity(window.len());
        let mut outcomes = Vec::with_capacity(window.len());
        // Copies of memories written by earlier windows, pinned once this window is committed.
        let mut pins = Vec::new();
        let mut wings: Vec<String> = window
            .iter()
            .map(|(_, p, _)| p.memory.wing.clone())
            .collect();
        wings.sort_unstable();
        wings.dedup();
        let mut tx = app
            .store
            .begin_store(&wings.iter().map(String::as_str).collect::<Vec<_>>())?;
        self.unwritten
            .read_committed(app, &*tx, window.iter().map(|(_, p, _)| p))?;
        for (i, p, v) in window {
            let key = (p.memory.wing.clone(), p.content_hash.clone());
            if let Some(first) = self.written.get(&key) {
                // As a store of a copy answers: the first's id, nothing written but a pin.
                if p.pinned {
                    match rows
                        .iter_mut()
                        .find(|r: &&mut NewMemory| r.memory.id == first.id)
                    {
                        Some(row) => row.bookkeeping.pinned = true,
                        None => pins.push(first.id),
                    }
                }
                let copy = StoreOutcome {
                    stored: false,
                    embedded: false,
                    near_duplicate_of: None,
                    links: Vec::new(),
                    superseded: Vec::new(),
                    may_update: Vec::new(),
                    retracted: Vec::new(),
                    redacted: p.redacted,
                    ..first.clone()
                };
                answers.push((i, Ok(copy)));
                continue;
            }
            // Stored by another process since the embedding stage looked.
            match existing_copy(&*tx, &p) {
                Ok(Some(dup)) => {
                    if p.pinned {
                        pins.push(dup.id);
                    }
                    answers.push((i, Ok(dup)));
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    answers.push((i, Err(e)));
                    continue;
                }
            }
            let skip_near = p.skip_near_duplicate;
            match new_memory(app, &*tx, p, v, &self.unwritten, &[]) {
                Ok((new, outcome)) => match near_copy(skip_near, &outcome) {
                    Some(near) => answers.push((i, Ok(near))),
                    None => {
                        self.unwritten.add(&new);
                        self.written.insert(key, outcome.clone());
                        outcomes.push((i, Ok(outcome)));
                        rows.push(new);
                    }
                },
                Err(e) => answers.push((i, Err(e))),
            }
        }
        tx.insert(&rows)?;
        tx.commit()?;
        for id in pins {
            app.store.set_pinned(id, true)?;
        }
        self.unwritten.clear();
        app.sync_index();
        for row in &rows {
            announce(app, row);
        }
        answers.extend(outcomes);
        Ok(())
    }
}
