//! How a new memory relates to the earlier ones of its wing: causal links, near duplicate,
//! updates by slot, the memory a retraction request names. Earlier memories are those in the
//! database and those of the same batch not yet written ([`Unwritten`]), so a batch relates
//! its memories exactly as the same stores one by one would, whatever its size. The committed
//! ones are read once per write transaction ([`Unwritten::read_committed`]), not once per
//! memory: under the wing's lock nothing but the batch itself changes them.

use super::{LinkOutcome, MayUpdate, Prepared, UseCaseResult};
use crate::usecases::supersede;
use crate::App;
use mira_core::causal::{self, CausalCandidate, CausalParams};
use mira_core::memory::{Memory, MemoryId, RelationType};
use mira_core::tags::{Tag, TagKind};
use mira_core::{lexical, retract, sameness, slots};
use mira_store::index::unit_cosine;
use mira_store::{MemoryReads, NewMemory, Parts, Scope, StoredMemory};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A memory of the batch being written, as relating the next ones needs it.
struct UnwrittenMemory {
    id: MemoryId,
    wing: String,
    content: String,
    created_at: i64,
    embedding: Vec<f32>,
    entities: Vec<String>,
    slots: Vec<slots::Slot>,
}

/// The committed memories of one wing that the memories of a write transaction may relate to:
/// the most recent ones created at or after `since` (the earliest horizon among them), newest
/// first, with their entities.
struct Committed {
    since: i64,
    memories: Vec<(StoredMemory, Vec<String>)>,
}

/// The memories of a batch that are related but not yet committed, and what they did to
/// earlier memories (superseded, retracted); and the committed memories they relate to.
#[derive(Default)]
pub(super) struct Unwritten {
    memories: Vec<UnwrittenMemory>,
    superseded: HashSet<MemoryId>,
    archived: HashSet<MemoryId>,
    committed: HashMap<String, Committed>,
}

impl Unwritten {
    /// Reads, once for all of `prepared`, the committed memories of their wings that relating
    /// them may look at (see [`relate`]); `reads` must be the write transaction they will be
    /// written in, holding their wings' lock.
    pub(super) fn read_committed<'a>(
        &mut self,
        app: &App,
        reads: &dyn MemoryReads,
        prepared: impl IntoIterator<Item = &'a Prepared>,
    ) -> UseCaseResult<()> {
        let mut horizons: BTreeMap<&str, i64> = BTreeMap::new();
        for p in prepared {
            let since = horizon(app, &p.memory);
            horizons
                .entry(&p.memory.wing)
                .and_modify(|h| *h = (*h).min(since))
                .or_insert(since);
        }
        let lookback = app.config.extraction.causal_lookback;
        for (wing, since) in horizons {
            let memories = reads
                .recent_in_wing(wing, since, lookback)?
                .into_iter()
                .map(|r| {
                    let entities = entities(&r.tags);
                    (r, entities)
                })
                .collect();
            self.committed
                .insert(wing.to_owned(), Committed { since, memories });
        }
        Ok(())
    }

    /// The committed memories of `wing` created at or after `since`, newest first, at most the
    /// lookback: a prefix of those read for the transaction, whose horizon is no later.
    fn committed(
        &self,
        wing: &str,
        since: i64,
    ) -> UseCaseResult<impl Iterator<Item = &(StoredMemory, Vec<String>)> + '_> {
        let c = self
            .committed
            .get(wing)
            .filter(|c| c.since <= since)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "the earlier memories of wing '{wing}' were not read before relating"
                )
            })?;
        Ok(c.memories
            .iter()
            .take_while(move |(r, _)| r.memory.created_at.timestamp_millis() >= since))
    }

    /// Records a memory about to be written with the rest of its batch.
    pub(super) fn add(&mut self, new: &NewMemory) {
        let m = &new.memory;
        self.memories.push(UnwrittenMemory {
            id: m.id,
            wing: m.wing.clone(),
            content: m.content.clone(),
            created_at: m.created_at.timestamp_millis(),
            embedding: new
                .embedding
                .as_ref()
                .map(|e| e.vector.clone())
                .unwrap_or_default(),
            entities: entities(&new.tags),
            slots: slots::slots(&m.content),
        });
        self.superseded.extend(new.supersedes.iter().copied());
        self.archived.extend(new.retracts.iter().copied());
    }

    /// Forgets the memories once they are committed (the database has them now), and the
    /// committed ones read for them.
    pub(super) fn clear(&mut self) {
        *self = Unwritten::default();
    }

    /// Whether `id` is a memory of the batch not yet written.
    pub(super) fn holds(&self, id: MemoryId) -> bool {
        self.memories.iter().any(|m| m.id == id)
    }

    /// Whether an earlier memory of the batch superseded or retracted `id`.
    fn replaced(&self, id: MemoryId) -> bool {
        self.superseded.contains(&id) || self.archived.contains(&id)
    }

    /// The unwritten memories of `wing`, most recent store first.
    fn of_wing<'a>(&'a self, wing: &'a str) -> impl Iterator<Item = &'a UnwrittenMemory> + 'a {
        self.memories
            .iter()
            .rev()
            .filter(move |m| m.wing == wing && !self.archived.contains(&m.id))
    }
}

fn entities(tags: &[Tag]) -> Vec<String> {
    tags.iter()
        .filter(|t| t.kind == TagKind::Entity)
        .map(|t| t.tag.clone())
        .collect()
}

/// An earlier memory considered for causal links, near duplicates and "may update".
struct Earlier<'a> {
    id: MemoryId,
    created_at: i64,
    embedding: &'a [f32],
    entities: &'a [String],
    content: &'a str,
    /// Not superseded (nor replaced earlier in the batch).
    current: bool,
}

/// Most "may update" candidates a store offers.
pub(super) const MAX_MAY_UPDATE: usize = 3;

/// The memories of `wing` nearest to `embedding` in the vector index, of any age (a fact may
/// change months after it was stored, hundreds of memories later): what a single store offers
/// the agent beside the recent memories ([`relate`] reads those of them it has not read, under
/// the store's lock). None when this process has not read the index (a one-shot `mira store`
/// does not read it for this; servers read it at start, and keep it in step after each store).
pub(super) fn nearest_in_wing(app: &App, wing: &str, embedding: &[f32]) -> Vec<MemoryId> {
    match app.index_if_open().filter(|_| !embedding.is_empty()) {
        Some(index) => supersede::nearest_ids(index, wing, embedding),
        None => Vec::new(),
    }
}

/// What relating a new memory found.
pub(super) struct Related {
    /// Causal links (with the updates found by slots).
    pub links: Vec<LinkOutcome>,
    /// The most similar earlier memory when it is a near duplicate.
    pub near: Option<MemoryId>,
    /// Current earlier memories the new one may update ([`sameness::same_first`]), at most
    /// [`MAX_MAY_UPDATE`]: the calling agent judges.
    pub may_update: Vec<MayUpdate>,
}

/// The earliest creation time (unix ms) of the memories `m` may be linked to: `causal_max_days`
/// before it.
fn horizon(app: &App, m: &Memory) -> i64 {
    let days = app.config.extraction.causal_max_days as i64;
    (m.created_at - chrono::Duration::days(days)).timestamp_millis()
}

/// Causal links, near-duplicate detection and "may update" candidates against the
/// `causal_lookback` most recent earlier memories of the wing (within `causal_max_days`),
/// written or not; "may update" also against `nearest` ([`nearest_in_wing`]). Without an
/// embedding (no model installed) only the updates found by slots are linked: the others need
/// similarity.
pub(super) fn relate(
    app: &App,
    reads: &dyn MemoryReads,
    p: &Prepared,
    embedding: &[f32],
    batch: &Unwritten,
    nearest: &[MemoryId],
) -> UseCaseResult<Related> {
    if embedding.is_empty() {
        return Ok(Related {
            links: with_slot_updates(reads, &p.memory, Vec::new(), batch)?,
            near: None,
            may_update: Vec::new(),
        });
    }
    let x = &app.config.extraction;
    let since = horizon(app, &p.memory);
    let stored = batch.committed(&p.memory.wing, since)?;
    // Unwritten memories were stored after every row of the database: among equal times they
    // come first, as the database orders by time then by insertion, newest first.
    let mut recent: Vec<Earlier<'_>> = batch
        .of_wing(&p.memory.wing)
        .filter(|m| m.created_at >= since)
        .map(|m| Earlier {
            id: m.id,
            created_at: m.created_at,
            embedding: &m.embedding,
            entities: &m.entities,
            content: &m.content,
            current: !batch.replaced(m.id),
        })
        .chain(
            stored
                .filter(|(r, _)| !batch.archived.contains(&r.memory.id))
                .filter_map(|(r, entities)| {
                    Some(Earlier {
                        id: r.memory.id,
                        created_at: r.memory.created_at.timestamp_millis(),
                        embedding: &r.embedding.as_ref()?.vector,
                        entities,
                        content: &r.memory.content,
                        current: r.memory.superseded_by.is_none() && !batch.replaced(r.memory.id),
                    })
                }),
        )
        .collect();
    recent.sort_by_key(|r| std::cmp::Reverse(r.created_at));
    recent.truncate(x.causal_lookback);

    let now_ms = p.memory.created_at.timestamp_millis();
    let entities = entities(&p.tags);
    let candidates: Vec<CausalCandidate> = recent
        .iter()
        .filter(|r| r.created_at <= now_ms)
        .map(|r| CausalCandidate {
            id: r.id,
            similarity: unit_cosine(r.embedding, embedding),
            age_days: (now_ms - r.created_at) as f64 / 86_400_000.0,
            shared_entities: r.entities.iter().filter(|e| entities.contains(e)).count(),
        })
        .collect();
    let near = candidates
        .iter()
        .filter(|c| c.similarity >= x.near_duplicate_threshold)
        .max_by(|a, b| a.similarity.total_cmp(&b.similarity))
        .map(|c| c.id);
    let params = CausalParams {
        min_similarity: x.causal_min_similarity,
        ..CausalParams::default()
    };
    let links = causal::link(
        &causal::detect_cues(&p.memory.content),
        &candidates,
        &params,
    )
    .into_iter()
    .map(|l| LinkOutcome {
        target: l.target,
        relation: l.relation,
        confidence: l.confidence,
    })
    .collect();
    let links = with_slot_updates(reads, &p.memory, links, batch)?;
    let unread: Vec<MemoryId> = nearest
        .iter()
        .filter(|id| !batch.replaced(**id) && recent.iter().all(|e| e.id != **id))
        .copied()
        .collect();
    let older = supersede::current_with_vectors(reads, &unread)?;
    let nearest: Vec<Earlier<'_>> = older
        .iter()
        .filter_map(|r| {
            Some(Earlier {
                id: r.memory.id,
                created_at: r.memory.created_at.timestamp_millis(),
                embedding: &r.embedding.as_ref()?.vector,
                entities: &[],
                content: &r.memory.content,
                current: true,
            })
        })
        .collect();
    let may_update = may_update(&p.memory, embedding, recent.iter().chain(&nearest), &links);
    Ok(Related {
        links,
        near,
        may_update,
    })
}

/// The current memories of `earlier` that `m` (with its `embedding`) may update and does not
/// already update by `links` ([`sameness::same_first`]), at most [`MAX_MAY_UPDATE`].
fn may_update<'a>(
    m: &Memory,
    embedding: &[f32],
    earlier: impl Iterator<Item = &'a Earlier<'a>>,
    links: &[LinkOutcome],
) -> Vec<MayUpdate> {
    let new = sameness::Statement::new(&m.content, embedding, m.created_at);
    let close: Vec<(&Earlier<'_>, f32)> = earlier
        .filter(|r| {
            r.current
                && r.created_at <= m.created_at.timestamp_millis()
                && !links
                    .iter()
                    .any(|l| l.target == r.id && l.relation.supersedes())
        })
        .map(|r| (r, sameness::cosine(r.embedding, embedding)))
        .collect();
    sameness::same_first(close, MAX_MAY_UPDATE, |r| {
        chrono::DateTime::from_timestamp_millis(r.created_at).is_some_and(|at| {
            let old = sameness::Statement::new(r.content, r.embedding, at);
            sameness::same_thing(&old, &new, None)
        })
    })
    .into_iter()
    .map(|r| MayUpdate::new(r.id, r.content))
    .collect()
}

/// Below this similarity to the request, a memory naming none of its words is not retracted.
const RETRACT_SIMILARITY: f32 = 0.6;
/// Below this similarity, not even a memory sharing a word with the request is retracted.
const RETRACT_MIN_SIMILARITY: f32 = 0.2;
/// Memories most similar to a retraction request that are considered.
const RETRACT_CANDIDATES: usize = 5;

/// The memory a retraction request in `m` names ([`retract::retraction_terms`]): the most
/// similar current memory of the wing among the first five that shares one of its words (or
/// is very similar); none when nothing fits, or without an embedding.
pub(super) fn retraction_targets(
    app: &App,
    reads: &dyn MemoryReads,
    m: &Memory,
    embedding: &[f32],
    batch: &Unwritten,
) -> UseCaseResult<Vec<MemoryId>> {
    let terms: Vec<String> = retract::retraction_terms(&m.content)
        .iter()
        .flat_map(|t| lexical::terms(t))
        .collect();
    if terms.is_empty() || embedding.is_empty() {
        return Ok(Vec::new());
    }
    let hits = app
        .synced_index()?
        .search(embedding, RETRACT_CANDIDATES, &Scope::wing(&m.wing));
    let ids: Vec<MemoryId> = hits.iter().map(|h| h.id).collect();
    let memories = reads.get_many(&ids, Parts::NONE)?;
    // (id, similarity, current, content) of the stored hits and the unwritten memories.
    let mut candidates: Vec<(MemoryId, f32, bool, &str)> = hits
        .iter()
        .filter_map(|h| {
            let old = &memories.get(&h.id)?.memory;
            let current = !old.archived && old.superseded_by.is_none() && !batch.replaced(h.id);
            Some((h.id, h.similarity, current, old.content.as_str()))
        })
        .chain(batch.of_wing(&m.wing).map(|u| {
            let similarity = unit_cosine(&u.embedding, embedding);
            (u.id, similarity, !batch.replaced(u.id), u.content.as_str())
        }))
        .collect();
    candidates.sort_by(|a, b| b.1.total_cmp(&a.1));
    candidates.truncate(RETRACT_CANDIDATES);
    let named = candidates.iter().find(|(_, similarity, current, content)| {
        let shares = lexical::terms(content).iter().any(|w| terms.contains(w));
        *current
            && ((shares && *similarity >= RETRACT_MIN_SIMILARITY)
                || *similarity >= RETRACT_SIMILARITY)
    });
    Ok(named.map(|c| vec![c.0]).unwrap_or_default())
}

/// Confidence of an update found by slots (the same subject and attribute, another value).
const SLOT_UPDATE_CONFIDENCE: f32 = 0.9;

/// Adds an `updates` link to each current memory of the wing whose slots `m` supersedes
/// ([`slots::supersedes`]); a weaker link already there becomes the update.
fn with_slot_updates(
    reads: &dyn MemoryReads,
    m: &Memory,
    mut links: Vec<LinkOutcome>,
    batch: &Unwritten,
) -> UseCaseResult<Vec<LinkOutcome>> {
    let new = slots::slots(&m.content);
    let mut attributes: Vec<String> = new.iter().map(|s| s.attribute.clone()).collect();
    attributes.sort();
    attributes.dedup();
    let until = m.created_at.timestamp_millis();
    let mut held: BTreeMap<MemoryId, Vec<slots::Slot>> = Default::default();
    for (id, slot) in reads.slot_holders(&m.wing, &attributes, until)? {
        if !batch.replaced(id) {
            held.entry(id).or_default().push(slot);
        }
    }
    for u in batch.of_wing(&m.wing) {
        if u.created_at > until || batch.replaced(u.id) {
            continue;
        }
        for slot in u.slots.iter().filter(|s| attributes.contains(&s.attribute)) {
            // As the database keeps them: without the replaced value.
            held.entry(u.id).or_default().push(slots::Slot {
                replaces: None,
                ..slot.clone()
            });
        }
    }
    for (id, old) in held {
        if id == m.id || !slots::supersedes(&new, &old) {
            continue;
        }
        match links.iter_mut().find(|l| l.target == id) {
            Some(l) if l.relation.supersedes() => {}
            Some(l) => {
                l.relation = RelationType::Updates;
                l.confidence = l.confidence.max(SLOT_UPDATE_CONFIDENCE);
            }
            None => links.push(LinkOutcome {
                target: id,
                relation: RelationType::Updates,
                confidence: SLOT_UPDATE_CONFIDENCE,
            }),
        }
    }
    Ok(links)
}
