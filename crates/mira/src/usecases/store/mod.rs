//! The store use case: validate, classify, extract the fingerprint, count tokens, embed, detect
//! causal links and duplicates, tag, and write everything in one transaction; [`store_batch`]
//! does the same for many memories, with the model and the database working side by side.

mod batch;
mod relate;

pub(crate) use batch::WINDOW;
pub use batch::{store_batch, store_batch_reporting};

use super::access::Access;
use super::{validate, UseCaseResult};
use crate::webhooks::{EventKind, MemoryEvent};
use crate::App;
use anyhow::Context;
use chrono::{DateTime, Utc};
use mira_core::memory::{Fingerprint, Memory, MemoryId, MemoryType, RelationType};
use mira_core::message::Term;
use mira_core::tags::Tag;
use mira_core::{classify, fingerprint, render, tags, tokens, type_model};
use mira_store::{Bookkeeping, Edge, Embedding, MemoryReads, NewMemory, Parts, Source};
use relate::{relate, retraction_targets, Unwritten};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::time::Instant;

/// The line a store without an embedding adds to its answer.
pub const NO_VECTOR_WARNING: &str = "Warning: stored without a vector (no embedding model installed): recall finds it by its words only until scripts/fetch-model.sh installs the model and `mira index embed-missing` runs";

/// A request to store one memory.
#[derive(Debug, Clone, Default)]
pub struct StoreRequest {
    /// The text to remember (T0).
    pub content: String,
    /// The wing (project).
    pub wing: String,
    /// The room; defaults to the type's room.
    pub room: Option<String>,
    /// The type name; classified from the text when absent.
    pub memory_type: Option<String>,
    /// When it happened (imports and evaluations); now when absent.
    pub created_at: Option<DateTime<Utc>>,
    /// The session it belongs to; the process's session when absent.
    pub session_id: Option<String>,
    /// An earlier memory this one explicitly replaces.
    pub supersedes: Option<String>,
    /// Show it in every recall of its wing, before anything else.
    pub pinned: bool,
    /// Where it comes from (`stored` unless a client hook captured it). A captured memory
    /// records what was said in a session: it supersedes and retracts nothing.
    pub source: Source,
    /// Earlier memories this one follows from, with the relation (earlier → this one), linked
    /// whatever the cues and similarity say (a captured fix resolves the error it follows).
    pub causes: Vec<(MemoryId, RelationType)>,
    /// Store nothing when the wing already holds a near duplicate (cosine at or above
    /// `extraction.near_duplicate_threshold` among the memories relating looks at): the outcome
    /// is that memory's, with `stored: false` and `near_duplicate_of` set. Needs the model.
    pub skip_near_duplicate: bool,
}

/// Confidence of a causal link the request named ([`StoreRequest::causes`]).
const EXPLICIT_LINK_CONFIDENCE: f32 = 1.0;

/// A causal link created by a store.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LinkOutcome {
    /// The earlier memory.
    pub target: MemoryId,
    /// The relation (earlier → new).
    pub relation: RelationType,
    /// Confidence in [0, 1].
    pub confidence: f32,
}

/// An earlier memory a store may update: about the same thing, and not marked as superseded.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MayUpdate {
    /// Its id.
    pub id: MemoryId,
    /// The start of its text, on one line.
    pub text: String,
}

/// Characters of an earlier memory's text a "May update" line shows.
const MAY_UPDATE_CHARS: usize = 100;

impl MayUpdate {
    fn new(id: MemoryId, content: &str) -> Self {
        let line: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut text: String = line.chars().take(MAY_UPDATE_CHARS).collect();
        if text.len() < line.len() {
            text.push('…');
        }
        MayUpdate { id, text }
    }
}

/// What a store did.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StoreOutcome {
    /// The memory's id (the existing one for an exact duplicate).
    pub id: MemoryId,
    /// False when the content was an exact duplicate in the wing and nothing was written.
    pub stored: bool,
    /// The type (given or classified).
    pub memory_type: MemoryType,
    /// The wing.
    pub wing: String,
    /// The room (given or the type's default).
    pub room: String,
    /// Facts found in the fingerprint.
    pub facts: u32,
    /// Those facts on one line (what recall shows of the memory when its text does not fit),
    /// when there are any.
    pub facts_text: Option<String>,
    /// cl100k tokens of the content.
    pub tokens: u32,
    /// The most similar earlier memory when it is a near duplicate.
    pub near_duplicate_of: Option<MemoryId>,
    /// Causal links to earlier memories.
    pub links: Vec<LinkOutcome>,
    /// Earlier memories this one supersedes.
    pub superseded: Vec<MemoryId>,
    /// Earlier memories about the same thing it may update (not marked as superseded): the
    /// caller confirms with `mira_supersede`.
    pub may_update: Vec<MayUpdate>,
    /// Earlier memories it asked to forget ("please forget …"): archived, restorable.
    pub retracted: Vec<MemoryId>,
    /// Secrets replaced by `[REDACTED:<kind>]` before storing (`storage.redact_secrets`).
    pub redacted: u32,
    /// Whether this call computed and stored the memory's embedding; false when it was stored
    /// without one (no model installed: recall finds it by its words until
    /// `mira index embed-missing` computes it) or was a duplicate.
    pub embedded: bool,
}

/// A validated request with its derived parts, before embedding.
struct Prepared {
    memory: Memory,
    content_hash: String,
    fingerprint_tokens: u32,
    tags: Vec<Tag>,
    supersedes: Option<MemoryId>,
    redacted: u32,
    pinned: bool,
    source: Source,
    causes: Vec<(MemoryId, RelationType)>,
    skip_near_duplicate: bool,
    /// Whether the caller gave the type (else it is classified).
    type_given: bool,
    /// Whether the caller gave the room (else it is the type's).
    room_given: bool,
}

/// SHA-256 (hex) of the trimmed content: the exact-duplicate key within a wing.
pub fn content_hash(content: &str) -> String {
    Sha256::digest(content.trim().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The content as it will be stored: with obvious secrets replaced when
/// `storage.redact_secrets` is on (the default), and how many were replaced.
pub fn stored_content(app: &App, content: &str) -> UseCaseResult<(String, u32)> {
    validate::content(content)?;
    if !app.config.storage.redact_secrets {
        return Ok((content.to_owned(), 0));
    }
    let r = mira_core::redact::redact(content);
    // Markers can be longer than the secrets they replace.
    validate::content(&r.text)?;
    let total = r.total() as u32;
    Ok((r.text, total))
}

/// The tags stored with a memory: from its content and its fingerprint.
pub fn stored_tags(content: &str, fp: &Fingerprint) -> Vec<Tag> {
    tags::extract_tags(content, fp)
}

fn prepare(app: &App, req: &StoreRequest) -> UseCaseResult<Prepared> {
    let (content, redacted) = stored_content(app, &req.content)?;
    validate::name(Term::Wing, &req.wing)?;
    if let Some(room) = &req.room {
        validate::name(Term::Room, room)?;
    }
    validate::when_and_session(req.created_at, req.session_id.as_deref())?;
    let given_type = req.memory_type.as_deref().filter(|t| !t.trim().is_empty());
    let memory_type = match given_type {
        Some(t) => validate::memory_type(t)?,
        None => classify::classify(&content),
    };
    let supersedes = req
        .supersedes
        .as_deref()
        .map(|s| validate::memory_id(&*app.store, s))
        .transpose()?;
    let hash = content_hash(&content);
    let memory = Memory {
        id: uuid::Uuid::new_v4(),
        wing: req.wing.clone(),
        room: req.room.clone().unwrap_or_default(),
        memory_type,
        token_count: tokens::count(&content) as u32,
        content,
        fingerprint: Fingerprint::default(),
        created_at: req.created_at.unwrap_or_else(Utc::now),
        session_id: Some(
            req.session_id
                .clone()
                .unwrap_or_else(|| app.session_id.clone()),
        ),
        archived: false,
        superseded_by: None,
    };
    let mut p = Prepared {
        pinned: req.pinned,
        source: req.source,
        causes: req.causes.clone(),
        skip_near_duplicate: req.skip_near_duplicate,
        content_hash: hash,
        memory,
        fingerprint_tokens: 0,
        tags: Vec::new(),
        supersedes,
        redacted,
        type_given: given_type.is_some(),
        room_given: req.room.is_some(),
    };
    p.file_under(app, memory_type);
    Ok(p)
}

impl Prepared {
    /// Files the memory under `memory_type`, with what follows from the type: the default room
    /// (unless one was given), the fingerprint, the tags and the fingerprint's tokens.
    fn file_under(&mut self, app: &App, memory_type: MemoryType) {
        let m = &mut self.memory;
        m.memory_type = memory_type;
        if !self.room_given {
            m.room = memory_type.default_room().to_owned();
        }
        m.fingerprint = fingerprint::extract(
            &m.content,
            memory_type,
            app.config.extraction.min_entity_length,
        );
        self.tags = stored_tags(&m.content, &m.fingerprint);
        self.fingerprint_tokens = tokens::count(&render::fingerprint_text(m)) as u32;
    }

    /// When the caller gave no type: the type the learned classifier reads from the memory's
    /// embedding and the rules' answer ([`type_model`]); without an embedding the rules'
    /// answer stays.
    fn classify_with(&mut self, app: &App, embedding: &[f32]) {
        if self.type_given || embedding.is_empty() {
            return;
        }
        let rules = self.memory.memory_type;
        let learned = type_model::refine(rules, embedding, app.model_name());
        if learned != rules {
            self.file_under(app, learned);
        }
    }
}

/// The row of a new memory and what the store did: relations to earlier memories (stored, as
/// `reads` sees them: the write transaction that will write it, or earlier in the same
/// `batch`; and the `nearest` of its wing, for "may update"), supersessions, retraction.
fn new_memory(
    app: &App,
    reads: &dyn MemoryReads,
    p: Prepared,
    embedding: Vec<f32>,
    batch: &Unwritten,
    nearest: &[MemoryId],
) -> UseCaseResult<(NewMemory, StoreOutcome)> {
    let mut p = p;
    p.classify_with(app, &embedding);
    let relate::Related {
        mut links,
        near,
        may_update,
    } = relate(app, reads, &p, &embedding, batch, nearest)?;
    if p.source == Source::Captured {
        // A captured sentence is a record of a session ("the retries are now logged"), not a
        // statement meant to replace what memory holds: it never hides another memory.
        links.retain(|l| !l.relation.supersedes());
    }
    for &(target, relation) in &p.causes {
        if reads.get(target, Parts::NONE)?.is_none() && !batch.holds(target) {
            return Err(validate::unknown_id(
                format!("causes: no memory has id {target}; take ids from "),
                "",
            ));
        }
        links.retain(|l| l.target != target);
        links.push(LinkOutcome {
            target,
            relation,
            confidence: EXPLICIT_LINK_CONFIDENCE,
        });
    }
    let mut superseded: Vec<MemoryId> = links
        .iter()
        .filter(|l| l.relation.supersedes())
        .map(|l| l.target)
        .collect();
    if let Some(explicit) = p.supersedes {
        if reads.get(explicit, Parts::NONE)?.is_none() {
            return Err(validate::unknown_id(
                format!("supersedes: no memory has id {explicit}; take ids from "),
                "",
            ));
        }
        superseded.push(explicit);
    }
    superseded.sort();
    superseded.dedup();
    // Candidates the agent may confirm; a captured memory offers none (it never supersedes).
    let may_update: Vec<MayUpdate> = may_update
        .into_iter()
        .filter(|m| p.source == Source::Stored && !superseded.contains(&m.id))
        .collect();
    // What a client hook captured records what was said in a session; a "forget …" in it
    // was addressed to the agent, not to mira.
    let retracted = match p.source {
        Source::Captured => Vec::new(),
        Source::Stored => retraction_targets(app, reads, &p.memory, &embedding, batch)?,
    };
    let mut metadata = serde_json::Map::new();
    if let Some(n) = near {
        metadata.insert("near_duplicate_of".into(), n.to_string().into());
    }
    let outcome = StoreOutcome {
        id: p.memory.id,
        stored: true,
        memory_type: p.memory.memory_type,
        wing: p.memory.wing.clone(),
        room: p.memory.room.clone(),
        facts: p.memory.fingerprint.fact_count(),
        facts_text: render::facts_line(&p.memory),
        tokens: p.memory.token_count,
        near_duplicate_of: near,
        links: links.clone(),
        superseded: superseded.clone(),
        may_update,
        retracted: retracted.clone(),
        redacted: p.redacted,
        embedded: !embedding.is_empty(),
    };
    let stored_at = Utc::now().timestamp_millis();
    let new = NewMemory {
        bookkeeping: Bookkeeping {
            content_hash: p.content_hash,
            stored_at,
            archived_at: None,
            metadata: serde_json::Value::Object(metadata).to_string(),
            fingerprint_tokens: p.fingerprint_tokens,
            pinned: p.pinned,
            source: p.source,
            costs: Some(render::mode_costs(&p.memory)),
        },
        tags: p.tags,
        embedding: (!embedding.is_empty()).then(|| Embedding {
            model: app.model_name().to_owned(),
            vector: embedding,
        }),
        causes: links
            .iter()
            .map(|l| Edge {
                other: l.target,
                relation: l.relation,
                confidence: f64::from(l.confidence),
                detected_at: stored_at,
            })
            .collect(),
        supersedes: superseded,
        retracts: retracted,
        memory: p.memory,
    };
    Ok((new, outcome))
}

/// The answer to a store of `p` when its wing already has its content: the existing memory,
/// nothing written (and nothing pinned: [`duplicate`] does that).
fn existing_copy(reads: &dyn MemoryReads, p: &Prepared) -> UseCaseResult<Option<StoreOutcome>> {
    let Some(id) = reads.find_by_hash(&p.memory.wing, &p.content_hash)? else {
        return Ok(None);
    };
    let existing = reads
        .get(id, Parts::NONE)?
        .with_context(|| format!("memory {id} vanished during a store"))?;
    let facts = existing.fact_count();
    let facts_text = render::facts_line(&existing.memory);
    let m = existing.memory;
    Ok(Some(StoreOutcome {
        id,
        stored: false,
        memory_type: m.memory_type,
        wing: m.wing,
        room: m.room,
        facts,
        facts_text,
        tokens: m.token_count,
        near_duplicate_of: None,
        links: vec![],
        superseded: vec![],
        may_update: vec![],
        retracted: vec![],
        redacted: p.redacted,
        embedded: false,
    }))
}

/// [`existing_copy`] from the committed data, pinning the existing memory when `p` asks for a
/// pin.
fn duplicate(app: &App, p: &Prepared) -> UseCaseResult<Option<StoreOutcome>> {
    let dup = existing_copy(&*app.store, p)?;
    if let Some(d) = &dup {
        if p.pinned && app.store.set_pinned(d.id, true)? {
            app.sync_index();
        }
    }
    Ok(dup)
}

/// Stores one memory. An exact duplicate of a memory of the same wing returns that memory's id
/// with `stored: false` and writes nothing (but pins it when `pinned` is asked for).
///
/// Relating and writing are one transaction holding the wing's write lock, so two stores into
/// one wing, from any process or server, relate in one order or the other and never both
/// against the same older state.
///
/// `access` must write to the wing, and to the wing of the memory `supersedes` names.
pub fn store(app: &App, access: &Access, req: StoreRequest) -> UseCaseResult<StoreOutcome> {
    let started = Instant::now();
    let mut p = prepare(app, &req)?;
    access.check_write(&p.memory.wing)?;
    if let Some(old) = p
        .supersedes
        .map(|id| app.store.load(id))
        .transpose()?
        .flatten()
    {
        access.check_write(&old.memory.wing)?;
    }
    if let Some(dup) = duplicate(app, &p)? {
        return Ok(dup);
    }
    let embedding = match app.embedder_if_installed()? {
        Some(e) => e.embed(&p.memory.content).context("embedding failed")?,
        None => Vec::new(),
    };
    let nearest = match p.source {
        Source::Stored => relate::nearest_in_wing(app, &p.memory.wing, &embedding),
        Source::Captured => Vec::new(),
    };
    let mut tx = app.store.begin_store(&[p.memory.wing.as_str()])?;
    if req.created_at.is_none() {
        // Stamped under the lock: a store that relates later is also later in time, so it
        // sees (and may supersede) every memory stored before it.
        p.memory.created_at = Utc::now();
        p.fingerprint_tokens = tokens::count(&render::fingerprint_text(&p.memory)) as u32;
    }
    if let Some(dup) = existing_copy(&*tx, &p)? {
        // Stored by another process since the check above.
        drop(tx);
        if p.pinned && app.store.set_pinned(dup.id, true)? {
            app.sync_index();
        }
        return Ok(dup);
    }
    let mut earlier = Unwritten::default();
    earlier.read_committed(app, &*tx, [&p])?;
    let skip_near = p.skip_near_duplicate;
    let (new, outcome) = new_memory(app, &*tx, p, embedding, &earlier, &nearest)?;
    if let Some(near) = near_copy(skip_near, &outcome) {
        return Ok(near);
    }
    tx.insert(std::slice::from_ref(&new))?;
    tx.commit()?;
    app.sync_index();
    announce(app, &new);
    app.metrics.observe_store(started.elapsed().as_secs_f64());
    Ok(outcome)
}

/// The answer to a store that asked to skip near duplicates ([`StoreRequest::skip_near_duplicate`])
/// when relating found one: that memory, nothing written.
fn near_copy(skip_near_duplicate: bool, outcome: &StoreOutcome) -> Option<StoreOutcome> {
    let near = outcome.near_duplicate_of.filter(|_| skip_near_duplicate)?;
    Some(StoreOutcome {
        id: near,
        stored: false,
        links: Vec::new(),
        superseded: Vec::new(),
        retracted: Vec::new(),
        embedded: false,
        ..outcome.clone()
    })
}

/// The webhook events of a written memory: stored, and superseded for each memory it replaces.
fn announce(app: &App, new: &NewMemory) {
    app.notify_webhooks(|| {
        let mut events = vec![MemoryEvent::about(EventKind::Stored, &new.memory)];
        events.extend(
            new.supersedes
                .iter()
                .filter_map(|id| app.store.load(*id).ok().flatten())
                .map(|old| MemoryEvent::superseded(&old.memory, new.memory.id)),
        );
        events
    });
}

/// The text form of a store outcome (the reference's lines, plus links).
pub fn render_text(o: &StoreOutcome) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{}: {}\nType: {}\nWing: {}\nRoom: {}\n",
        if o.stored {
            "Stored"
        } else {
            "Duplicate (already stored)"
        },
        render::short_id(o.id),
        o.memory_type,
        o.wing,
        o.room,
    );
    match &o.facts_text {
        Some(f) => {
            let _ = writeln!(out, "Facts: {} extracted\n  {f}", o.facts);
        }
        None => out.push_str(
            "Facts: 0 (none extracted: recall shows the text itself, or a one-line header when it does not fit)\n",
        ),
    }
    let _ = writeln!(out, "Tokens: {}", o.tokens);
    if let Some(n) = o.near_duplicate_of {
        let _ = writeln!(out, "Near duplicate of: {}", render::short_id(n));
    }
    for l in &o.links {
        let _ = writeln!(
            out,
            "Link: {} --{}--> this ({:.2})",
            render::short_id(l.target),
            l.relation,
            l.confidence
        );
    }
    for s in &o.superseded {
        let _ = writeln!(out, "Supersedes: {}", render::short_id(*s));
    }
    for m in &o.may_update {
        let _ = writeln!(out, "May update: [{}] {}", render::short_id(m.id), m.text);
    }
    if let Some(first) = o.may_update.first() {
        let _ = writeln!(
            out,
            "If this replaces one of them, confirm: mira_supersede old={} new={} (undo=true reverses it)",
            render::short_id(first.id),
            render::short_id(o.id)
        );
    }
    for r in &o.retracted {
        let short = render::short_id(*r);
        let _ = writeln!(
            out,
            "Retracted: {short} (archived: hidden from recall; `mira restore {short}` brings it back)",
        );
    }
    if o.redacted > 0 {
        let _ = writeln!(
            out,
            "Redacted: {} replaced by [REDACTED:<kind>] (storage.redact_secrets)",
            mira_core::text::plural(u64::from(o.redacted), "secret", "secrets")
        );
    }
    if o.stored && !o.embedded {
        out.push_str(NO_VECTOR_WARNING);
        out.push('\n');
    }
    out
}
