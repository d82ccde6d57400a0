//! The catalog: what recall needs to know about every live memory, in memory, so that ranking
//! reads no SQLite row and does no work that grows with the matches of a query term.
//!
//! One [`Card`] per live memory (metadata, stored section costs, speaker), the BM25 inverted index
//! of its text and the day it happened ([`mira_core::lexical`]), counts per wing and room, the
//! memories of each session in time order (for neighbour propagation) and the speakers of each
//! wing (for the entity boost). Rows come from SQLite ([`CatalogRow`]); the manager keeps the
//! catalog in step with the database (see the [module docs](super)).

use super::{Labels, Matcher, Scope};
use crate::model::{day_text, Card, CatalogRow};
use mira_core::lexical::{self, Bm25Params, LexicalIndex, LexicalScores};
use mira_core::memory::MemoryId;
use std::collections::HashMap;
use std::sync::Arc;

/// The catalog of live memories. Slots are dense row numbers, reused after removal.
#[derive(Debug, Default)]
pub struct Catalog {
    cards: Vec<Option<Card>>,
    /// Interned wing and room ids per slot (for scope tests without string compares).
    labels_of: Vec<(u32, u32)>,
    free: Vec<u32>,
    by_key: HashMap<u64, u32>,
    by_id: HashMap<MemoryId, u32>,
    labels: Labels,
    names: HashMap<Arc<str>, ()>,
    lexical: LexicalIndex,
    /// The session list of each (wing, session).
    sessions: HashMap<(u32, Arc<str>), u32>,
    /// Slots of each session, sorted by (created_at, key); emptied lists are reused.
    session_lists: Vec<Vec<u32>>,
    free_session_lists: Vec<u32>,
    /// Per slot: its session list and its position in it (neighbours without a lookup).
    placement: Vec<Option<(u32, u32)>>,
    /// Per wing: speaker → number of memories.
    speakers: HashMap<u32, HashMap<Arc<str>, usize>>,
    census: HashMap<(Option<u32>, Option<u32>), usize>,
    /// Slots of the pinned memories.
    pinned: std::collections::BTreeSet<u32>,
    live: usize,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Catalog::default()
    }

    /// Number of live memories.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the catalog is empty.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some((k, _)) = self.names.get_key_value(s) {
            return k.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.names.insert(a.clone(), ());
        a
    }

    /// Adds or replaces the memory of `row` (matched by key, then by id).
    pub fn upsert(&mut self, row: CatalogRow) {
        let CatalogRow { mut card, content } = row;
        self.remove_key(card.key);
        if let Some(&slot) = self.by_id.get(&card.id) {
            let key = self.cards[slot as usize].as_ref().map(|c| c.key);
            if let Some(k) = key {
                self.remove_key(k);
            }
        }
        card.wing = self.intern(&card.wing);
        card.room = self.intern(&card.room);
        card.session = card.session.as_deref().map(|s| self.intern(s));
        card.speaker = mira_core::rank::speaker(&content).map(|s| self.intern(&s));
        let wing = self.labels.intern(&card.wing);
        let room = self.labels.intern(&card.room);
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.cards.push(None);
                self.labels_of.push((0, 0));
                self.placement.push(None);
                (self.cards.len() - 1) as u32
            }
        };
        let mut text = content;
        text.push(' ');
        text.push_str(&day_text(card.created_at_ms));
        self.lexical.insert(slot, &lexical::terms(&text));
        if let Some(session) = &card.session {
            self.place_in_session(slot, wing, session.clone(), (card.created_at_ms, card.key));
        }
        if let Some(sp) = &card.speaker {
            *self
                .speakers
                .entry(wing)
                .or_default()
                .entry(sp.clone())
                .or_default() += 1;
        }
        for k in census_keys(wing, room) {
            *self.census.entry(k).or_default() += 1;
        }
        if card.pinned {
            self.pinned.insert(slot);
        }
        self.by_key.insert(card.key, slot);
        self.by_id.insert(card.id, slot);
        self.labels_of[slot as usize] = (wing, room);
        self.cards[slot as usize] = Some(card);
        self.live += 1;
    }

    /// Inserts `slot` into the session list of (wing, session) at its place in `order`
    /// (created_at, key).
    fn place_in_session(&mut self, slot: u32, wing: u32, session: Arc<str>, order: (i64, u64)) {
        let list = match self.sessions.get(&(wing, session.clone())) {
            Some(&l) => l,
            None => {
                let l = match self.free_session_lists.pop() {
                    Some(l) => l,
                    None => {
                        self.session_lists.push(Vec::new());
                        (self.session_lists.len() - 1) as u32
                    }
                };
                self.sessions.insert((wing, session), l);
                l
            }
        };
        let cards = &self.cards;
        let members = &mut self.session_lists[list as usize];
        let at = members.partition_point(|&s| {
            cards[s as usize]
                .as_ref()
                .is_some_and(|c| (c.created_at_ms, c.key) < order)
        });
        members.insert(at, slot);
        self.renumber(list, at);
    }

    /// Records the positions of the members of session list `list` from `from` on.
    fn renumber(&mut self, list: u32, from: usize) {
        for (pos, &s) in self.session_lists[list as usize]
            .iter()
            .enumerate()
            .skip(from)
        {
            self.placement[s as usize] = Some((list, pos as u32));
        }
    }

    /// Removes the memory stored under `key`; false if there was none.
    pub fn remove_key(&mut self, key: u64) -> bool {
        let Some(slot) = self.by_key.remove(&key) else {
            return false;
        };
        let Some(card) = self.cards[slot as usize].take() else {
            return false;
        };
        let (wing, room) = self.labels_of[slot as usize];
        self.by_id.remove(&card.id);
        self.pinned.remove(&slot);
        self.lexical.remove(slot);
        if let Some((list, at)) = self.placement[slot as usize].take() {
            let members = &mut self.session_lists[list as usize];
            members.remove(at as usize);
            self.renumber(list, at as usize);
            if self.session_lists[list as usize].is_empty() {
                if let Some(session) = &card.session {
                    self.sessions.remove(&(wing, session.clone()));
                }
                self.free_session_lists.push(list);
            }
        }
        if let Some(sp) = &card.speaker {
            if let Some(m) = self.speakers.get_mut(&wing) {
                if let Some(c) = m.get_mut(sp) {
                    *c -= 1;
                    if *c == 0 {
                        m.remove(sp);
                    }
                }
            }
        }
        for k in census_keys(wing, room) {
            if let Some(c) = self.census.get_mut(&k) {
                *c = c.saturating_sub(1);
            }
        }
        self.free.push(slot);
        self.live -= 1;
        true
    }

    /// Every key held.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.by_key.keys().copied()
    }

    /// The slot of memory `id`, if live.
    pub fn slot_of(&self, id: MemoryId) -> Option<u32> {
        self.by_id.get(&id).copied()
    }

    /// The card in `slot`.
    pub fn card(&self, slot: u32) -> Option<&Card> {
        self.cards.get(slot as usize).and_then(Option::as_ref)
    }

    /// The resolved form of `filter` (`None`: it names a wing or room that holds nothing).
    pub(crate) fn matcher(&self, filter: &Scope) -> Option<Matcher> {
        self.labels.matcher(filter)
    }

    /// Whether `slot` holds a memory within `m`.
    pub(crate) fn in_scope(&self, slot: u32, m: &Matcher) -> bool {
        self.cards[slot as usize].is_some() && {
            let (wing, room) = self.labels_of[slot as usize];
            m.matches_labels(wing, room)
        }
    }

    /// The pinned memories within `filter`, oldest first.
    pub fn pinned(&self, filter: &Scope) -> Vec<&Card> {
        let Some(m) = self.matcher(filter) else {
            return Vec::new();
        };
        let mut out: Vec<&Card> = self
            .pinned
            .iter()
            .filter(|&&s| self.in_scope(s, &m))
            .filter_map(|&s| self.card(s))
            .collect();
        out.sort_by_key(|c| (c.created_at_ms, c.key));
        out
    }

    /// Number of live memories within `filter`.
    pub fn scope_size(&self, filter: &Scope) -> usize {
        let Some(m) = self.matcher(filter) else {
            return 0;
        };
        match m.labels() {
            (None, None) => self.live,
            key => self.census.get(&key).copied().unwrap_or(0),
        }
    }

    /// The slots of every live memory within `filter`.
    pub fn scope(&self, filter: &Scope) -> Vec<u32> {
        let Some(m) = self.matcher(filter) else {
            return Vec::new();
        };
        (0..self.cards.len() as u32)
            .filter(|&s| self.in_scope(s, &m))
            .collect()
    }

    /// About `n` slots spread evenly over the memories within `filter` (all of them when the
    /// scope holds fewer), without listing the whole scope when it fills most of the catalog.
    pub fn sample(&self, filter: &Scope, n: usize) -> Vec<u32> {
        let Some(m) = self.matcher(filter) else {
            return Vec::new();
        };
        let size = self.scope_size(filter);
        if n == 0 || size == 0 {
            return Vec::new();
        }
        // Stepping over every slot reaches about `n` of the scope when it is dense enough.
        let step = (self.cards.len() / n).max(1);
        let stepped: Vec<u32> = (0..self.cards.len() as u32)
            .step_by(step)
            .filter(|&s| self.in_scope(s, &m))
            .collect();
        if stepped.len() * 2 >= n.min(size) {
            return stepped;
        }
        let scope = self.scope(filter);
        let step = (scope.len() / n).max(1);
        scope.into_iter().step_by(step).collect()
    }

    /// BM25 scores of the memories within `filter` that share a term with `query` (unsorted),
    /// and how much of the query the best of them covers; IDF is computed over the scope.
    pub fn lexical_scores(
        &self,
        query: &[String],
        params: Bm25Params,
        filter: &Scope,
    ) -> LexicalScores {
        let Some(m) = self.matcher(filter) else {
            return LexicalScores::default();
        };
        let n = self.scope_size(filter);
        self.lexical
            .score(query, params, n, |s| self.in_scope(s, &m))
    }

    /// The slots whose text contains the analysed `term`.
    pub fn slots_with_term(&self, term: &str) -> Vec<u32> {
        self.lexical.slots_with(term)
    }

    /// One more than the highest slot ever used: per-slot tables of this length cover every
    /// memory.
    pub fn slot_count(&self) -> usize {
        self.cards.len()
    }

    /// The memories `1..=reach` steps before and after `slot` in its session, in time order
    /// (`(before_d, after_d)` for d = 1..=reach; nothing when it has no session).
    pub fn neighbours(
        &self,
        slot: u32,
        reach: usize,
    ) -> impl Iterator<Item = (Option<u32>, Option<u32>)> + '_ {
        let placed = self.placement.get(slot as usize).copied().flatten();
        let members: &[u32] = placed.map_or(&[], |(list, _)| &self.session_lists[list as usize]);
        let at = placed.map_or(0, |(_, at)| at as usize);
        let reach = if placed.is_some() { reach } else { 0 };
        (1..=reach).map(move |d| {
            let before = at.checked_sub(d).map(|i| members[i]);
            (before, members.get(at + d).copied())
        })
    }

    /// The speakers of the memories within `filter`'s wing (all wings without one), lower case.
    pub fn speakers(&self, filter: &Scope) -> Vec<Arc<str>> {
        let wings: Vec<u32> = match &filter.wing {
            Some(w) => self.labels.get(w).into_iter().collect(),
            None => self.speakers.keys().copied().collect(),
        };
        let mut out: Vec<Arc<str>> = wings
            .iter()
            .filter_map(|w| self.speakers.get(w))
            .flat_map(|m| m.keys().cloned())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// The census entries a memory of (wing, room) counts in.
fn census_keys(wing: u32, room: u32) -> [(Option<u32>, Option<u32>); 3] {
    [
        (Some(wing), None),
        (Some(wing), Some(room)),
        (None, Some(room)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use mira_core::memory::MemoryType;

    fn row(key: u64, wing: &str, session: Option<&str>, at: i64, content: &str) -> CatalogRow {
        CatalogRow {
            card: Card {
                key,
                id: MemoryId::from_u128(key as u128),
                wing: wing.into(),
                room: "notes".into(),
                memory_type: MemoryType::SessionNote,
                created_at_ms: at,
                session: session.map(Into::into),
                token_count: 5,
                fact_count: 0,
                costs: None,
                superseded_by: None,
                speaker: None,
                pinned: false,
            },
            content: content.into(),
        }
    }

    #[test]
    fn scopes_sessions_speakers_and_lexical_scores() {
        let mut c = Catalog::new();
        c.upsert(row(1, "a", Some("s1"), 30, "Caroline: I went hiking"));
        c.upsert(row(2, "a", Some("s1"), 10, "Melanie: I painted a lake"));
        c.upsert(row(3, "a", Some("s1"), 20, "Caroline: lovely lake"));
        c.upsert(row(4, "b", Some("s1"), 20, "Bob: hiking again"));
        assert_eq!(c.len(), 4);
        let a = Scope::wing("a");
        assert_eq!(c.scope_size(&a), 3);
        assert_eq!(c.scope(&a).len(), 3);
        assert_eq!(c.scope_size(&Scope::wing("zzz")), 0);
        let s3 = c.slot_of(MemoryId::from_u128(3)).unwrap();
        let n: Vec<_> = c.neighbours(s3, 2).collect();
        assert_eq!(n[0].0.and_then(|s| c.card(s)).map(|c| c.key), Some(2));
        assert_eq!(n[0].1.and_then(|s| c.card(s)).map(|c| c.key), Some(1));
        assert_eq!(n[1], (None, None));
        let names: Vec<String> = c.speakers(&a).iter().map(|s| s.to_string()).collect();
        assert_eq!(names, vec!["caroline", "melanie"]);
        let found = c.lexical_scores(&lexical::query_terms("hiking"), Bm25Params::default(), &a);
        assert_eq!(found.coverage, 1.0);
        let hits = found.hits;
        assert_eq!(hits.len(), 1);
        assert_eq!(c.card(hits[0].0).unwrap().key, 1);
        assert!(c.slots_with_term("hike").contains(&hits[0].0));
        let day = c.lexical_scores(
            &lexical::query_terms("January 1970"),
            Bm25Params::default(),
            &a,
        );
        assert_eq!(day.hits.len(), 3, "the day is indexed");
    }

    #[test]
    fn removal_and_replacement() {
        let mut c = Catalog::new();
        c.upsert(row(1, "a", Some("s"), 1, "one"));
        c.upsert(row(2, "a", Some("s"), 2, "two"));
        assert!(c.remove_key(1));
        assert!(!c.remove_key(1));
        assert_eq!(c.len(), 1);
        let s2 = c.slot_of(MemoryId::from_u128(2)).unwrap();
        assert_eq!(c.neighbours(s2, 1).collect::<Vec<_>>(), vec![(None, None)]);
        // Same id under a new key replaces the old entry.
        let mut moved = row(9, "a", None, 3, "two again");
        moved.card.id = MemoryId::from_u128(2);
        c.upsert(moved);
        assert_eq!(c.len(), 1);
        assert_eq!(c.keys().collect::<Vec<_>>(), vec![9]);
        assert_eq!(c.scope_size(&Scope::wing("a")), 1);
    }

    #[test]
    fn sessions_keep_their_order_through_removals_and_reinsertions() {
        let mut c = Catalog::new();
        for (key, at) in [(1, 1), (2, 2), (3, 3), (4, 4)] {
            c.upsert(row(key, "a", Some("s"), at, "text"));
        }
        let slot = |k: u128| c.slot_of(MemoryId::from_u128(k)).unwrap();
        let (s1, s2, s3, s4) = (slot(1), slot(2), slot(3), slot(4));
        let around = |c: &Catalog, s: u32, r: usize| c.neighbours(s, r).collect::<Vec<_>>();
        assert_eq!(
            around(&c, s2, 2),
            vec![(Some(s1), Some(s3)), (None, Some(s4))]
        );
        assert!(c.remove_key(2));
        assert_eq!(around(&c, s3, 2), vec![(Some(s1), Some(s4)), (None, None)]);
        // A memory dated between others goes between them.
        c.upsert(row(5, "a", Some("s"), 2, "text"));
        let s5 = c.slot_of(MemoryId::from_u128(5)).unwrap();
        assert_eq!(around(&c, s3, 1), vec![(Some(s5), Some(s4))]);
        assert_eq!(around(&c, s1, 1), vec![(None, Some(s5))]);
        // An emptied session's list is reused by the next session, which starts afresh.
        for k in [1, 3, 4, 5] {
            assert!(c.remove_key(k));
        }
        c.upsert(row(6, "a", Some("t"), 1, "text"));
        let s6 = c.slot_of(MemoryId::from_u128(6)).unwrap();
        assert_eq!(around(&c, s6, 1), vec![(None, None)]);
        assert!(around(&c, s6, 0).is_empty());
    }

    #[test]
    fn samples_spread_over_the_scope() {
        let mut c = Catalog::new();
        for key in 0..1000u64 {
            let wing = if key % 10 == 0 { "small" } else { "big" };
            c.upsert(row(key, wing, None, key as i64, "text"));
        }
        let all = c.sample(&Scope::default(), 100);
        assert_eq!(all.len(), 100);
        let big = c.sample(&Scope::wing("big"), 100);
        assert!((45..=100).contains(&big.len()), "{}", big.len());
        assert!(big
            .iter()
            .all(|&s| c.card(s).is_some_and(|k| &*k.wing == "big")));
        // A scope too sparse for stepping over the catalog is listed, then stepped.
        let small = c.sample(&Scope::wing("small"), 50);
        assert_eq!(small.len(), 50);
        assert!(small
            .iter()
            .all(|&s| c.card(s).is_some_and(|k| &*k.wing == "small")));
        assert_eq!(c.sample(&Scope::wing("small"), 500).len(), 100);
        assert!(c.sample(&Scope::wing("none"), 10).is_empty());
    }
}
