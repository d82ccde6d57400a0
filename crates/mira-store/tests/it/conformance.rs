//! What every [`MemoryStore`] does, checked on SQLite and on PostgreSQL: one transaction per
//! write, the read model with its parts, exact restore, lexical search, the lifecycle, dead
//! letters and the change feed. Each check is one test per backend (`<check>::sqlite`,
//! `<check>::postgres`: see `backend_test!`).

use crate::backends::{memory, vector, Backend};
use mira_core::memory::{MemoryId, RelationType};
use mira_core::tags::{Tag, TagKind};
use mira_store::index::{IndexParams, VectorIndexManager};
use mira_store::{
    ArchivePlan, DeadLetter, DeleteScope, Edge, Parts, Relation, Scope, TimelineQuery,
};

const ALL: Parts = Parts {
    tags: true,
    embedding: true,
    causes: true,
    consequences: true,
    supersedes: true,
};

backend_test! {
    fn a_batch_is_one_transaction_and_reads_back_whole(b) {
        let s = &*b.store;
        let first = memory("The pool size is 10.", "w", 1_000, 1);
        s.insert_memory(&first).unwrap();
        // A duplicate id fails the whole batch: nothing of it is written.
        let fresh = memory("Another fact.", "w", 2_000, 2);
        assert!(s.insert_memories(&[fresh.clone(), first.clone()]).is_err());
        assert!(!s.contains(fresh.memory.id).unwrap(), "{}", b.name);
        // An update with an edge, a supersession, and an edge to a memory that does not exist
        // (left out, as when that memory was deleted meanwhile).
        let mut update = memory("The pool size is now 20.", "w", 3_000, 3);
        for other in [first.memory.id, MemoryId::new_v4()] {
            update.causes.push(Edge {
                other,
                relation: RelationType::Updates,
                confidence: 0.1 + 0.2,
                detected_at: 3_005,
            });
        }
        update.supersedes.push(first.memory.id);
        s.insert_memory(&update).unwrap();
        let old = s.get(first.memory.id, ALL).unwrap().unwrap();
        assert_eq!(old.memory.superseded_by, Some(update.memory.id));
        assert_eq!(old.consequences.len(), 1);
        assert_eq!(old.consequences[0].other, update.memory.id);
        assert_eq!(old.memory.fingerprint, first.memory.fingerprint);
        assert_eq!(old.bookkeeping, first.bookkeeping);
        assert_eq!(old.tags, first.tags, "tags keep their order");
        let v = &old.embedding.unwrap().vector;
        assert!(v
            .iter()
            .zip(&vector(1))
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        let new = s.get(update.memory.id, ALL).unwrap().unwrap();
        assert_eq!(new.causes.len(), 1, "{}", b.name);
        assert_eq!(
            new.causes[0].confidence,
            0.1 + 0.2,
            "confidence is bit-exact"
        );
        assert_eq!(new.supersedes, vec![first.memory.id]);
        let bare = s.get(update.memory.id, Parts::NONE).unwrap().unwrap();
        assert!(bare.tags.is_empty() && bare.embedding.is_none() && bare.causes.is_empty());
        let stats = s.stats().unwrap();
        assert_eq!((stats.memories, stats.edges, stats.superseded), (2, 1, 1));
        assert_eq!(
            s.find_by_hash("w", &update.bookkeeping.content_hash).unwrap(),
            Some(update.memory.id)
        );
        assert_eq!(
            s.find_by_hash("v", &update.bookkeeping.content_hash).unwrap(),
            None
        );
        let prefix = &update.memory.id.to_string()[..8];
        assert_eq!(
            s.ids_with_prefix(prefix, 3).unwrap(),
            vec![update.memory.id]
        );
        assert_eq!(s.wings().unwrap(), vec!["w".to_string()]);
    }
}

backend_test! {
    fn a_store_relates_inside_its_transaction(b) {
        let s = &*b.store;
        let older = memory("I live in Paris.", "w", 1_000, 1);
        s.insert_memory(&older).unwrap();
        let mut tagged = memory("My sister lives in Lyon.", "w", 1_500, 3);
        tagged.tags.push(Tag {
            tag: "lyon".into(),
            kind: TagKind::Entity,
        });
        s.insert_memory(&tagged).unwrap();
        let mut tx = s.begin_store(&["w"]).unwrap();
        let recent = tx.recent_in_wing("w", 0, 10).unwrap();
        // Newest first, each with its own tags (in their order) and embedding.
        assert_eq!(recent.len(), 2);
        for (read, written) in recent.iter().zip([&tagged, &older]) {
            assert_eq!(read.memory.id, written.memory.id);
            assert_eq!(read.tags, written.tags);
            assert_eq!(read.embedding, written.embedding);
        }
        let holders = tx.slot_holders("w", &["location".into()], 5_000).unwrap();
        assert!(holders.iter().all(|(id, _)| *id == older.memory.id));
        let newer = memory("I live in Berlin now.", "w", 2_000, 2);
        tx.insert(std::slice::from_ref(&newer)).unwrap();
        assert_eq!(
            tx.recent_in_wing("w", 0, 10).unwrap()[0].memory.id,
            newer.memory.id
        );
        drop(tx);
        assert!(
            !s.contains(newer.memory.id).unwrap(),
            "dropped uncommitted: rolled back"
        );
        let mut tx = s.begin_store(&["w"]).unwrap();
        tx.insert(std::slice::from_ref(&newer)).unwrap();
        tx.commit().unwrap();
        assert!(s.contains(newer.memory.id).unwrap(), "{}", b.name);
    }
}

backend_test! {
    fn relations_wait_for_both_ends_and_restore_exactly(b) {
        let s = &*b.store;
        let (older, newer) = (memory("older", "w", 100, 1), memory("newer", "w", 200, 2));
        let (a, c) = (older.memory.id, newer.memory.id);
        let edge = Relation::Edge {
            to: c,
            edge: Edge {
                other: a,
                relation: RelationType::Updates,
                confidence: 0.1 + 0.2,
                detected_at: 42,
            },
        };
        let sup = Relation::Supersession { memory: a, by: c };
        let out = s
            .restore_batch(std::slice::from_ref(&newer), &[edge.clone(), sup.clone()])
            .unwrap();
        assert_eq!(out.resolved, vec![false, false], "{}", b.name);
        let out = s
            .restore_batch(std::slice::from_ref(&older), &[edge, sup])
            .unwrap();
        assert_eq!(out.resolved, vec![true, true]);
        let mut rows = Vec::new();
        let memories: &dyn mira_store::MemoryStore = s;
        let n = memories
            .export_memories(None, Parts::export(true), |m| {
                rows.push(m);
                Ok::<_, mira_store::StoreError>(())
            })
            .unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            (rows[0].memory.id, rows[1].memory.id),
            (a, c),
            "by created_at"
        );
        assert_eq!(rows[0].memory.superseded_by, Some(c));
        assert_eq!(rows[1].causes[0].confidence, 0.1 + 0.2);
        assert_eq!(rows[1].causes[0].detected_at, 42);
        assert_eq!(rows[0].bookkeeping.stored_at, 105);
        // A second supersession never overwrites the first.
        let third = memory("third", "w", 300, 3);
        let again = Relation::Supersession {
            memory: a,
            by: third.memory.id,
        };
        let out = s
            .restore_batch(std::slice::from_ref(&third), &[again])
            .unwrap();
        assert_eq!(out.resolved, vec![true]);
        assert_eq!(
            s.get(a, Parts::NONE).unwrap().unwrap().memory.superseded_by,
            Some(c)
        );
        // A visitor that stops is not called again.
        let mut seen = 0;
        let stopped = s
            .export_each(Some("w"), Parts::NONE, &mut |_| {
                seen += 1;
                Ok(false)
            })
            .unwrap();
        assert_eq!((stopped, seen), (1, 1));
    }
}

backend_test! {
    fn lexical_search_follows_writes_and_scopes_and_knows_the_day(b) {
        let s = &*b.store;
        let may = memory(
            "Kubernetes runs the staging cluster.",
            "w",
            1_683_554_160_000,
            1,
        );
        let june = memory(
            "Postgres holds the billing data.",
            "v",
            1_686_232_560_000,
            2,
        );
        s.insert_memories(&[may.clone(), june.clone()]).unwrap();
        let ids = |q: &str, scope: &Scope| -> Vec<MemoryId> {
            s.lexical_search(q, 10, scope)
                .unwrap()
                .into_iter()
                .map(|h| h.0)
                .collect()
        };
        assert_eq!(
            ids("where does kubernetes run? (staging)", &Scope::all()),
            vec![may.memory.id]
        );
        assert_eq!(
            ids("kubernetes postgres", &Scope::wing("v")),
            vec![june.memory.id]
        );
        assert_eq!(
            ids("what happened on 8 May 2023?", &Scope::all())[0],
            may.memory.id
        );
        assert_eq!(
            ids("June", &Scope::all()),
            vec![june.memory.id],
            "{}",
            b.name
        );
        assert!(s
            .lexical_search("\"AND OR NOT * ) ( ! :", 10, &Scope::all())
            .is_ok());
        s.delete(&DeleteScope::Memory(may.memory.id)).unwrap();
        assert!(
            ids("kubernetes", &Scope::all()).is_empty(),
            "deletes leave the index"
        );
    }
}

#[test]
fn postgres_dense_search_is_cosine_ordered_and_scoped() {
    let Some(b) = crate::backends::postgres() else {
        return;
    };
    let s = &*b.store;
    let near = memory("Near the query.", "w", 1_000, 1);
    let far = memory("Far from it.", "w", 2_000, 2);
    let elsewhere = memory("Same vector, other wing.", "v", 3_000, 1);
    let archived = memory("Same vector, archived.", "w", 4_000, 1);
    s.insert_memories(&[near.clone(), far.clone(), elsewhere, archived.clone()])
        .unwrap();
    s.archive(
        &ArchivePlan {
            ids: vec![archived.memory.id],
            now_ms: 5_000,
            ..ArchivePlan::default()
        },
        false,
    )
    .unwrap();
    let hits = s
        .dense_search(&vector(1), 10, &Scope::wing("w"))
        .unwrap()
        .expect("PostgreSQL searches itself");
    let ids: Vec<MemoryId> = hits.iter().map(|h| h.0).collect();
    assert_eq!(ids, vec![near.memory.id, far.memory.id]);
    assert!((hits[0].1 - 1.0).abs() < 1e-5, "{hits:?}");
    assert!(hits[1].1 < hits[0].1);
    assert!(
        crate::backends::sqlite()
            .store
            .dense_search(&vector(1), 10, &Scope::all())
            .unwrap()
            .is_none(),
        "SQLite leaves it to the index"
    );
}

backend_test! {
    fn timeline_archive_unarchive_and_delete(b) {
        let s = &*b.store;
        let m: Vec<_> = (0..4)
            .map(|i| memory(&format!("fact number {i}"), "w", 1_000 * (i + 1), i as u64))
            .collect();
        s.insert_memories(&m).unwrap();
        let page = |after| {
            s.timeline(&TimelineQuery {
                wing: Some("w".into()),
                wings: None,
                room: None,
                memory_type: None,
                since_ms: None,
                until_ms: None,
                include_archived: false,
                include_superseded: true,
                source: None,
                pinned_only: false,
                newest_first: true,
                after,
                limit: 2,
            })
            .unwrap()
        };
        let first = page(None);
        assert_eq!(first[0].memory.id, m[3].memory.id);
        let last = first.last().unwrap();
        let second = page(Some((last.memory.created_at.timestamp_millis(), last.seq)));
        assert_eq!(second[0].memory.id, m[1].memory.id, "{}", b.name);
        let plan = ArchivePlan {
            ids: vec![m[0].memory.id, m[1].memory.id],
            now_ms: 9_000,
            ..ArchivePlan::default()
        };
        assert_eq!(s.archive(&plan, true).unwrap().archived.len(), 2);
        assert_eq!(s.stats().unwrap().archived, 0, "a dry run writes nothing");
        assert_eq!(s.archive(&plan, false).unwrap().archived.len(), 2);
        assert_eq!(page(None).len() + page(Some((2_000, i64::MAX))).len(), 2);
        let back = s
            .unarchive(&[m[1].memory.id, m[1].memory.id, m[2].memory.id])
            .unwrap();
        assert_eq!(back.len(), 1, "only archived ones come back, once");
        assert!(back[0].embedding.is_some() && !back[0].memory.archived);
        let preview = s.delete_preview(&DeleteScope::Wing("w".into())).unwrap();
        assert_eq!(preview.ids.len(), 4);
        assert_eq!(preview.tags, 8);
        assert_eq!(s.delete(&DeleteScope::All).unwrap(), preview);
        assert_eq!(s.stats().unwrap().memories, 0);
    }
}

backend_test! {
    fn counts_timeline_and_archive_keep_to_the_wings_asked(b) {
        let s = &*b.store;
        let m = [
            memory("alpha one", "a", 1_000, 1),
            memory("alpha two", "a", 2_000, 2),
            memory("beta one", "b", 3_000, 3),
            memory("gamma one", "c", 4_000, 4),
        ];
        s.insert_memories(&m).unwrap();
        let only = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ab = only(&["a", "b"]);
        let stats = s.stats_in(Some(&ab)).unwrap();
        assert_eq!(stats.memories, 3, "{}", b.name);
        assert_eq!(stats.tags, 6, "{}", b.name);
        assert_eq!(stats.by_wing.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert!(stats.by_room.keys().all(|k| !k.starts_with("c/")));
        assert_eq!(s.stats_in(Some(&[])).unwrap().memories, 0);
        assert_eq!(s.stats().unwrap().memories, 4);
        assert_eq!(
            s.count_without_embedding("other-model", Some(&ab)).unwrap(),
            3
        );
        assert_eq!(s.count_without_embedding("other-model", None).unwrap(), 4);
        let q = TimelineQuery {
            wing: None,
            wings: Some(only(&["a", "c"])),
            room: None,
            memory_type: None,
            since_ms: None,
            until_ms: None,
            include_archived: true,
            include_superseded: true,
            source: None,
            pinned_only: false,
            newest_first: false,
            after: None,
            limit: 10,
        };
        let ids: Vec<_> = s
            .timeline(&q)
            .unwrap()
            .iter()
            .map(|r| r.memory.id)
            .collect();
        assert_eq!(
            ids,
            [m[0].memory.id, m[1].memory.id, m[3].memory.id],
            "{}",
            b.name
        );
        let plan = ArchivePlan {
            rules: vec![mira_store::ArchiveRule {
                memory_type: None,
                before_ms: 10_000,
            }],
            wings: Some(only(&["b"])),
            now_ms: 9_000,
            ..ArchivePlan::default()
        };
        let archived = s.archive(&plan, false).unwrap().archived;
        assert_eq!(archived.len(), 1, "{}", b.name);
        assert_eq!(archived[0].0.id, m[2].memory.id);
    }
}

backend_test! {
    fn pins_costs_and_edits(b) {
        let s = &*b.store;
        let m = memory("We use tabs.", "w", 1_000, 1);
        s.insert_memory(&m).unwrap();
        assert!(s.set_pinned(m.memory.id, true).unwrap());
        assert!(
            s.set_pinned(m.memory.id, true).unwrap(),
            "already pinned: still there"
        );
        assert!(!s.set_pinned(MemoryId::new_v4(), true).unwrap());
        let v = mira_core::render::RENDER_VERSION;
        assert_eq!(s.uncosted(v, 10).unwrap().len(), 1);
        let costs = mira_core::render::mode_costs(&m.memory);
        s.set_costs(&[(m.memory.id, costs)], v).unwrap();
        assert!(s.uncosted(v, 10).unwrap().is_empty());
        let edit = mira_store::MemoryEdit {
            wing: "x".into(),
            room: "style".into(),
            memory_type: mira_core::memory::MemoryType::Preference,
            fingerprint: m.memory.fingerprint.clone(),
            fingerprint_tokens: 9,
            tags: vec![],
            costs,
            cost_version: v,
        };
        assert!(s.edit_memory(m.memory.id, &edit).unwrap());
        let got = s.get(m.memory.id, ALL).unwrap().unwrap();
        assert_eq!(
            (got.memory.wing.as_str(), got.bookkeeping.fingerprint_tokens),
            ("x", 9)
        );
        assert!(got.tags.is_empty() && got.bookkeeping.pinned);
        assert_eq!(got.bookkeeping.costs, Some(costs), "{}", b.name);
    }
}

backend_test! {
    fn a_supersession_is_set_and_undone(b) {
        let s = &*b.store;
        let old = memory("We deploy with Ansible.", "w", 1_000, 1);
        let new = memory("We deploy with Terraform.", "w", 2_000, 2);
        s.insert_memories(&[old.clone(), new.clone()]).unwrap();
        let by = |id| s.load(id).unwrap().unwrap().memory.superseded_by;
        assert!(s
            .set_superseded_by(old.memory.id, Some(new.memory.id))
            .unwrap());
        assert_eq!(by(old.memory.id), Some(new.memory.id), "{}", b.name);
        assert!(
            s.set_superseded_by(old.memory.id, Some(new.memory.id))
                .unwrap(),
            "already so: still there"
        );
        assert!(s.set_superseded_by(old.memory.id, None).unwrap());
        assert_eq!(by(old.memory.id), None, "{}", b.name);
        assert!(!s.set_superseded_by(MemoryId::new_v4(), None).unwrap());
    }
}

backend_test! {
    fn dead_letters_add_list_fail_again_remove(b) {
        let s = &*b.store;
        let letter = |id: &str, at| DeadLetter {
            id: id.into(),
            endpoint: "http://127.0.0.1:1/hook".into(),
            event_type: "memory.stored".into(),
            payload: "{}".into(),
            attempts: 2,
            last_error: Some("webhook returned status 500".into()),
            failed_at: at,
        };
        s.add_dead_letter(&letter("b", 20)).unwrap();
        s.add_dead_letter(&letter("a", 10)).unwrap();
        let all = s.dead_letters(10).unwrap();
        assert_eq!(
            all.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(s.dead_letters(1).unwrap().len(), 1);
        s.add_dead_letter(&letter("a", 30)).unwrap();
        assert_eq!(s.dead_letter("a").unwrap().map(|d| d.attempts), Some(4));
        s.dead_letter_failed_again("b", 1, "connection refused", 40)
            .unwrap();
        let d = s.dead_letter("b").unwrap().unwrap();
        assert_eq!(
            (d.attempts, d.last_error.as_deref(), d.failed_at),
            (3, Some("connection refused"), 40)
        );
        assert_eq!(s.dead_letter_count().unwrap(), 2);
        assert!(s.remove_dead_letter("a").unwrap());
        assert!(!s.remove_dead_letter("a").unwrap(), "{}", b.name);
        assert_eq!(s.dead_letter_count().unwrap(), 1);
    }
}

backend_test! {
    fn a_memory_without_an_embedding_is_listed_until_one_is_set(b) {
        let store = &*b.store;
        let with = memory("The pool size is 10.", "w", 1_000, 1);
        let mut without = memory("Deploys happen on Tuesdays.", "w", 2_000, 2);
        without.embedding = None;
        let mut gone = memory("The old cache was Redis.", "w", 3_000, 3);
        gone.embedding = None;
        store
            .insert_memories(&[with.clone(), without.clone(), gone.clone()])
            .unwrap();
        assert_eq!(store.stats().unwrap().embeddings, 1, "{}", b.name);
        assert_eq!(
            store.count_without_embedding("m2", None).unwrap(),
            3,
            "test is another model"
        );
        assert_eq!(store.count_without_embedding("test", None).unwrap(), 2);
        let listed = store.without_embedding("test", 10).unwrap();
        assert_eq!(
            listed.iter().map(|u| u.id).collect::<Vec<_>>(),
            vec![without.memory.id, gone.memory.id],
            "oldest first"
        );
        assert_eq!(listed[0].content, "Deploys happen on Tuesdays.");
        assert_eq!(store.without_embedding("test", 1).unwrap().len(), 1);
        // The catalog knows the memory without a vector; the vector index gets it once it is set.
        let dir = tempfile::tempdir().unwrap();
        let index =
            VectorIndexManager::open(b.store.clone(), dir.path(), IndexParams::default()).unwrap();
        assert_eq!(index.view(|v| v.catalog().len()), 3);
        assert_eq!(index.len(), 1);

        store.delete(&DeleteScope::Memory(gone.memory.id)).unwrap();
        let vectors = vec![(without.memory.id, vector(2)), (gone.memory.id, vector(3))];
        assert_eq!(
            store.set_embeddings("m2", &vectors).unwrap(),
            1,
            "not the deleted one"
        );
        assert_eq!(store.set_embeddings("m2", &vectors).unwrap(), 0, "once");
        assert_eq!(
            store.count_without_embedding("test", None).unwrap(),
            1,
            "the m2 one"
        );
        assert_eq!(
            store.count_without_embedding("m2", None).unwrap(),
            1,
            "the test one"
        );
        index.sync_from_store().unwrap();
        assert_eq!(index.len(), 2);
        let embedding = store
            .get(without.memory.id, ALL)
            .unwrap()
            .and_then(|m| m.embedding)
            .unwrap();
        assert_eq!(
            (embedding.model.as_str(), embedding.vector),
            ("m2", vector(2))
        );

        // Another model's vector is replaced (a change of precision), the index follows.
        let replaced = vec![(with.memory.id, vector(5))];
        assert_eq!(
            store.set_embeddings("m2", &replaced).unwrap(),
            1,
            "{}",
            b.name
        );
        assert_eq!(store.set_embeddings("m2", &replaced).unwrap(), 0, "once");
        assert_eq!(store.count_without_embedding("m2", None).unwrap(), 0);
        assert_eq!(store.count_without_embedding("test", None).unwrap(), 2);
        index.sync_from_store().unwrap();
        assert_eq!(
            index.search(&vector(5), 1, &Scope::wing("w"))[0].id,
            with.memory.id
        );
        // The spelling of earlier versions names the same model.
        let mut earlier = memory("Releases are tagged on Fridays.", "w", 4_000, 4);
        if let Some(e) = earlier.embedding.as_mut() {
            e.model = "sentence-transformers/m2".into();
        }
        store.insert_memories(&[earlier]).unwrap();
        assert_eq!(
            store.count_without_embedding("m2", None).unwrap(),
            0,
            "{}",
            b.name
        );
    }
}

/// The catalog and vectors of one process follow what another process commits.
fn index_follows(b: &Backend) {
    let dir = tempfile::tempdir().unwrap();
    let mgr =
        VectorIndexManager::open(b.store.clone(), dir.path(), IndexParams::default()).unwrap();
    assert!(mgr.wait_idle(std::time::Duration::from_secs(60)));
    let other = (b.reopen)();
    let m = memory("Recallable at the next sync.", "w", 1_000, 7);
    other.insert_memory(&m).unwrap();
    let r = mgr.sync_from_store().unwrap();
    assert_eq!((r.changed, r.added), (true, 1), "{}", b.name);
    assert_eq!(
        mgr.search(&vector(7), 1, &Scope::wing("w"))[0].id,
        m.memory.id
    );
    assert_eq!(
        mgr.sync_from_store().unwrap(),
        Default::default(),
        "nothing new: nothing done"
    );
    other
        .archive(
            &ArchivePlan {
                ids: vec![m.memory.id],
                now_ms: 2_000,
                ..ArchivePlan::default()
            },
            false,
        )
        .unwrap();
    assert_eq!(mgr.sync_from_store().unwrap().removed, 1);
    assert!(mgr.search(&vector(7), 1, &Scope::all()).is_empty());
}

backend_test! {
    fn the_index_follows_other_processes(b) {
        index_follows(b);
    }
}

#[test]
fn postgres_feed_sees_a_transaction_that_commits_after_a_later_one() {
    let Some(b) = crate::backends::postgres() else {
        return;
    };
    let s = &*b.store;
    let cursor = s.change_cursor().unwrap();
    // A takes its keys first and commits last; B commits in between.
    let a = memory("written first, committed last", "a", 1, 1);
    let mut tx = s.begin_store(&["a"]).unwrap();
    tx.insert(std::slice::from_ref(&a)).unwrap();
    let bm = memory("written second, committed first", "b", 2, 2);
    s.insert_memory(&bm).unwrap();
    let first = s.changes_since(&cursor).unwrap().unwrap();
    assert_eq!(first.keys.len(), 1, "only B is committed");
    tx.commit().unwrap();
    let second = s.changes_since(&first.cursor).unwrap().unwrap();
    let a_seq = s.get(a.memory.id, Parts::NONE).unwrap().unwrap().seq as u64;
    assert!(second.keys.contains(&a_seq), "A is seen after it commits");
    // Later reads may offer A or B again (while older transactions of the cluster run), never
    // anything else.
    let b_seq = s.get(bm.memory.id, Parts::NONE).unwrap().unwrap().seq as u64;
    let again = s.changes_since(&second.cursor).unwrap();
    assert!(again.is_none_or(|c| c.keys.iter().all(|k| [a_seq, b_seq].contains(k))));
}

#[test]
fn postgres_stores_into_one_wing_take_turns() {
    let Some(b) = crate::backends::postgres() else {
        return;
    };
    let other = (b.reopen)();
    let tx = b.store.begin_store(&["w"]).unwrap();
    let waited = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let tx = other.begin_store(&["w"]).unwrap();
        let recent = tx.recent_in_wing("w", 0, 10).unwrap().len();
        (started.elapsed(), recent)
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut tx = tx;
    tx.insert(&[memory("first of the wing", "w", 1, 1)])
        .unwrap();
    tx.commit().unwrap();
    let (waited, recent) = waited.join().unwrap();
    assert!(
        waited >= std::time::Duration::from_millis(250),
        "{waited:?}"
    );
    assert_eq!(recent, 1, "the second store reads what the first committed");
    // Another wing does not wait.
    let _held = b.store.begin_store(&["w"]).unwrap();
    let started = std::time::Instant::now();
    drop((b.reopen)().begin_store(&["v"]).unwrap());
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

backend_test! {
    fn the_source_is_stored_filtered_and_counted(b) {
        let s = &*b.store;
        let stored = memory("We use sqlx for the ledger.", "w", 1_000, 1);
        let mut captured = memory("Request: add retries to the client.", "w", 2_000, 2);
        captured.bookkeeping.source = mira_store::Source::Captured;
        captured.bookkeeping.stored_at = 9_000;
        let mut pinned = memory("Never deploy on Fridays.", "w", 3_000, 3);
        pinned.bookkeeping.pinned = true;
        let mut elsewhere = memory("Request: rename the crate.", "other", 4_000, 4);
        elsewhere.bookkeeping.source = mira_store::Source::Captured;
        s.insert_memories(&[stored, captured.clone(), pinned.clone(), elsewhere])
            .unwrap();
        let query = |source, pinned_only| TimelineQuery {
            wing: Some("w".into()),
            wings: None,
            room: None,
            memory_type: None,
            since_ms: None,
            until_ms: None,
            include_archived: false,
            include_superseded: false,
            source,
            pinned_only,
            newest_first: true,
            after: None,
            limit: 10,
        };
        let ids = |q| -> Vec<MemoryId> {
            s.timeline(&q)
                .unwrap()
                .iter()
                .map(|m| m.memory.id)
                .collect()
        };
        assert_eq!(
            ids(query(Some(mira_store::Source::Captured), false)),
            vec![captured.memory.id],
            "{}",
            b.name
        );
        assert_eq!(ids(query(None, true)), vec![pinned.memory.id], "{}", b.name);
        assert_eq!(ids(query(Some(mira_store::Source::Stored), false)).len(), 2);
        let read = s.get(captured.memory.id, Parts::NONE).unwrap().unwrap();
        assert_eq!(read.bookkeeping.source, mira_store::Source::Captured);
        let stats = s.stats().unwrap();
        assert_eq!(stats.captures.get("w"), Some(&(1, 9_000)), "{}", b.name);
        assert_eq!(stats.captures.len(), 2);
    }
}
