//! A memory's page: what the load use case returns, with what a person needs around it (its
//! pin, when it was stored, the memories it links to, its supersession chain, the newer memories
//! that may replace it), each linked memory with its one-line summary.

use crate::usecases::access::Access;
use crate::usecases::timeline::summary;
use crate::usecases::{load, supersede, UseCaseResult};
use crate::App;
use mira_core::memory::{Memory, MemoryId};
use mira_store::Parts;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet, VecDeque};

/// Most versions listed on each side of a supersession chain.
const MAX_CHAIN: usize = 20;

/// What a page reads about each version besides its row.
const SUPERSEDES: Parts = Parts {
    supersedes: true,
    ..Parts::NONE
};

/// One memory as a line on another memory's page.
fn line(m: &Memory) -> Value {
    json!({
        "id": m.id,
        "short_id": mira_core::render::short_id(m.id),
        "type": m.memory_type,
        "wing": m.wing,
        "created_at": m.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "summary": summary(m),
        "archived": m.archived,
        "superseded_by": m.superseded_by,
    })
}

/// The memories `id` replaced, directly or through earlier versions, nearest first.
fn earlier_versions(app: &App, id: MemoryId) -> UseCaseResult<Vec<MemoryId>> {
    let mut seen = HashSet::from([id]);
    let mut queue = VecDeque::from([id]);
    let mut out = Vec::new();
    while let Some(next) = queue.pop_front() {
        let Some(meta) = app.store.get(next, SUPERSEDES)? else {
            continue;
        };
        for old in meta.supersedes.into_iter().rev() {
            if out.len() < MAX_CHAIN && seen.insert(old) {
                out.push(old);
                queue.push_back(old);
            }
        }
    }
    Ok(out)
}

/// The memories that replaced `m`, in order (its successor, then the successor's …).
fn later_versions(app: &App, m: &Memory) -> UseCaseResult<Vec<Memory>> {
    let mut seen = HashSet::from([m.id]);
    let mut out = Vec::new();
    let mut next = m.superseded_by;
    while let Some(id) = next.filter(|id| out.len() < MAX_CHAIN && seen.insert(*id)) {
        let Some(successor) = app.store.memories(&[id])?.remove(&id) else {
            break;
        };
        next = successor.superseded_by;
        out.push(successor);
    }
    Ok(out)
}

/// The page of memory `raw_id` (any printed id form or unique prefix), with the memories
/// around it that `access` may read.
pub fn memory_page(app: &App, access: &Access, raw_id: &str) -> UseCaseResult<Value> {
    let loaded = load::load(app, access, raw_id)?;
    let m = &loaded.memory;
    let meta = &loaded.bookkeeping;
    let earlier = earlier_versions(app, m.id)?;
    let mut later = later_versions(app, m)?;
    later.retain(|v| access.may_read(&v.wing));
    let linked: Vec<MemoryId> = loaded
        .causes
        .iter()
        .chain(&loaded.consequences)
        .map(|e| e.other)
        .chain(earlier.iter().copied())
        .collect();
    let mut others: HashMap<MemoryId, Memory> = app.store.memories(&linked)?;
    others.retain(|_, o| access.may_read(&o.wing));
    let lines = |ids: &mut dyn Iterator<Item = MemoryId>| -> Vec<Value> {
        ids.filter_map(|id| others.get(&id).map(line)).collect()
    };
    let mut page = load::to_json(&loaded);
    let stored_at = chrono::DateTime::from_timestamp_millis(meta.stored_at)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let extra = json!({
        "short_id": mira_core::render::short_id(m.id),
        "pinned": meta.pinned,
        "stored_at": stored_at,
        "fingerprint_text": mira_core::render::fingerprint_text(m),
        "replaced_slot": load::replaced_slot(app, access, &loaded)?,
        "linked": lines(&mut linked.iter().copied()),
        "earlier_versions": lines(&mut earlier.iter().copied()),
        "later_versions": later.iter().map(line).collect::<Vec<_>>(),
        "may_replace": supersede::candidates(app, m)?.iter().map(line).collect::<Vec<_>>(),
    });
    if let (Some(page), Value::Object(extra)) = (page.as_object_mut(), extra) {
        page.extend(extra);
    }
    Ok(page)
}
