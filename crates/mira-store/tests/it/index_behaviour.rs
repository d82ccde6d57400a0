//! Behaviour of the vector index against a real SQLite store: filtering, removal, persistence,
//! corruption, reopening and synchronisation between processes. Vectors are synthetic but
//! clustered (a Gaussian mixture, normalised), written with plain SQL.

use mira_core::memory::MemoryId;
use mira_store::index::{
    ExactIndex, HnswIndex, IndexEntry, IndexParams, VectorIndex, VectorIndexManager,
};
use mira_store::{Scope, SqliteOptions, SqliteStore};
use mira_testkit::Rng;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const DIM: usize = 64;
const WAIT: Duration = Duration::from_secs(120);

fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// `n` vectors from a mixture of 40 centroids (sigma 1/sqrt(DIM)).
fn clustered(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut r = Rng::new(1);
    let cents: Vec<Vec<f32>> = (0..40)
        .map(|_| normalise((0..DIM).map(|_| r.gauss()).collect()))
        .collect();
    let mut r = Rng::new(seed);
    let s = 1.0 / (DIM as f32).sqrt();
    (0..n)
        .map(|_| {
            let c = &cents[(r.next_u64() % 40) as usize];
            normalise(c.iter().map(|x| x + s * r.gauss()).collect())
        })
        .collect()
}

struct Fixture {
    _tmp: tempfile::TempDir,
    db: PathBuf,
    store: Arc<SqliteStore>,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("mira.db");
        let store = Arc::new(SqliteStore::open(&db, &SqliteOptions::default()).unwrap());
        Fixture {
            _tmp: tmp,
            db,
            store,
        }
    }

    fn index_dir(&self) -> PathBuf {
        self.db.parent().unwrap().join("index")
    }

    fn open(&self, params: IndexParams) -> Arc<VectorIndexManager> {
        let m = VectorIndexManager::open(self.store.clone(), &self.index_dir(), params).unwrap();
        assert!(m.wait_idle(WAIT), "background build did not finish");
        m
    }
}

/// Writes a memory row and its embedding; returns the index entry for it.
fn add_row(store: &SqliteStore, wing: &str, room: &str, vector: &[f32]) -> IndexEntry {
    let id = MemoryId::new_v4();
    let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    let seq = store
        .write(|tx| {
            tx.execute(
                "INSERT INTO verbatims (id, wing, room, memory_type, content, content_hash, token_count, created_at, stored_at)
                 VALUES (?1, ?2, ?3, 'fact', ?4, ?5, 1, 0, 0)",
                rusqlite::params![id.to_string(), wing, room, format!("memory {id}"), id.to_string()],
            )?;
            let seq = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO embeddings (memory_id, model, dim, vector) VALUES (?1, 'test', ?2, ?3)",
                rusqlite::params![id.to_string(), vector.len() as i64, blob],
            )?;
            Ok(seq)
        })
        .unwrap();
    IndexEntry {
        key: seq as u64,
        id,
        wing: wing.into(),
        room: room.into(),
        vector: vector.to_vec(),
    }
}

fn archive_row(store: &SqliteStore, id: MemoryId) {
    store
        .write(|tx| {
            tx.execute(
                "UPDATE verbatims SET archived_at = 1 WHERE id = ?1",
                [id.to_string()],
            )?;
            Ok(())
        })
        .unwrap();
}

fn delete_row(store: &SqliteStore, id: MemoryId) {
    store
        .write(|tx| {
            tx.execute("DELETE FROM verbatims WHERE id = ?1", [id.to_string()])?;
            Ok(())
        })
        .unwrap();
}

const WINGS: [(&str, usize); 3] = [("alpha", 70), ("beta", 25), ("gamma", 5)];

/// Fills the store with `n` rows over three wings (70 / 25 / 5 %) and two rooms each.
fn fill(store: &SqliteStore, n: usize, seed: u64) -> Vec<IndexEntry> {
    clustered(n, seed)
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = i % 100;
            let wing = if p < WINGS[0].1 {
                WINGS[0].0
            } else if p < WINGS[0].1 + WINGS[1].1 {
                WINGS[1].0
            } else {
                WINGS[2].0
            };
            add_row(
                store,
                wing,
                if i % 2 == 0 { "decisions" } else { "facts" },
                v,
            )
        })
        .collect()
}

/// Parameters that route every search through the graph (no exact threshold).
fn hnsw_params() -> IndexParams {
    IndexParams {
        exact_threshold: 0,
        ..IndexParams::default()
    }
}

fn recall(truth: &[MemoryId], got: &[MemoryId]) -> f64 {
    let t: HashSet<_> = truth.iter().collect();
    got.iter().filter(|id| t.contains(id)).count() as f64 / truth.len().max(1) as f64
}

fn ids(hits: &[mira_store::index::Hit]) -> Vec<MemoryId> {
    hits.iter().map(|h| h.id).collect()
}

#[test]
fn exact_index_is_exact_ordered_and_rejects_bad_input() {
    let vs = clustered(500, 3);
    let mut idx = ExactIndex::new();
    for (i, v) in vs.iter().enumerate() {
        idx.insert(IndexEntry {
            key: i as u64,
            id: MemoryId::new_v4(),
            wing: "w".into(),
            room: "r".into(),
            vector: v.clone(),
        })
        .unwrap();
    }
    let q = &vs[7];
    let hits = idx.search(q, 50, &Scope::all());
    assert_eq!(hits.len(), 50);
    assert!(hits.windows(2).all(|w| w[0].similarity >= w[1].similarity));
    assert!((hits[0].similarity - 1.0).abs() < 1e-5);
    // Brute force agrees on the similarities.
    let mut all: Vec<f32> = vs
        .iter()
        .map(|v| v.iter().zip(q).map(|(a, b)| a * b).sum())
        .collect();
    all.sort_by(|a, b| b.total_cmp(a));
    for (h, s) in hits.iter().zip(&all) {
        assert!((h.similarity - s).abs() < 1e-4);
    }
    // Ties are broken by key: two copies of one vector.
    let mut tie = ExactIndex::new();
    let (a, b) = (MemoryId::new_v4(), MemoryId::new_v4());
    tie.insert(IndexEntry {
        key: 9,
        id: a,
        wing: "w".into(),
        room: "r".into(),
        vector: vs[0].clone(),
    })
    .unwrap();
    tie.insert(IndexEntry {
        key: 3,
        id: b,
        wing: "w".into(),
        room: "r".into(),
        vector: vs[0].clone(),
    })
    .unwrap();
    assert_eq!(ids(&tie.search(&vs[0], 2, &Scope::all())), vec![b, a]);
    // Bad input: wrong dimension, NaN, zero vector; queries of those kinds find nothing.
    let e = |v: Vec<f32>| IndexEntry {
        key: 1000,
        id: MemoryId::new_v4(),
        wing: "w".into(),
        room: "r".into(),
        vector: v,
    };
    assert!(idx.insert(e(vec![0.5; DIM + 1])).is_err());
    assert!(idx.insert(e(vec![f32::NAN; DIM])).is_err());
    assert!(idx.insert(e(vec![0.0; DIM])).is_err());
    assert!(idx.search(&[0.5; 3], 10, &Scope::all()).is_empty());
    assert!(idx.search(&[f32::NAN; DIM], 10, &Scope::all()).is_empty());
    assert!(idx.search(q, 0, &Scope::all()).is_empty());
    assert!(idx.search(q, 10, &Scope::wing("nowhere")).is_empty());
    assert_eq!(idx.len(), 500);
    // Non-normalised input is normalised.
    idx.insert(e(vs[1].iter().map(|x| x * 3.0).collect()))
        .unwrap();
    let top = idx.search(&vs[1], 1, &Scope::all());
    assert!((top[0].similarity - 1.0).abs() < 1e-5);
}

#[test]
fn hnsw_index_matches_exact_on_clustered_data_and_supports_removal() {
    let vs = clustered(3000, 5);
    let entries: Vec<IndexEntry> = vs
        .iter()
        .enumerate()
        .map(|(i, v)| IndexEntry {
            key: i as u64,
            id: MemoryId::new_v4(),
            wing: "w".into(),
            room: "r".into(),
            vector: v.clone(),
        })
        .collect();
    let exact = ExactIndex::from_entries(entries.clone()).unwrap();
    let mut hnsw = HnswIndex::build(
        DIM,
        IndexParams::default(),
        &entries,
        0,
        &Default::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(hnsw.len(), 3000);
    let queries = clustered(100, 77);
    let r: f64 = queries
        .iter()
        .map(|q| {
            recall(
                &ids(&exact.search(q, 10, &Scope::all())),
                &ids(&hnsw.search(q, 10, &Scope::all())),
            )
        })
        .sum::<f64>()
        / queries.len() as f64;
    assert!(r >= 0.98, "recall@10 {r}");
    // Removal: the removed entries never come back.
    let removed: HashSet<MemoryId> = entries.iter().step_by(3).map(|e| e.id).collect();
    for id in &removed {
        assert!(hnsw.remove(*id));
    }
    assert!(!hnsw.remove(*removed.iter().next().unwrap()));
    for e in entries.iter().step_by(3).take(50) {
        assert!(hnsw
            .search(&e.vector, 100, &Scope::all())
            .iter()
            .all(|h| !removed.contains(&h.id)));
    }
    assert_eq!(hnsw.len(), 2000);
    // Re-inserting under the same key replaces.
    hnsw.insert(entries[0].clone()).unwrap();
    assert_eq!(
        hnsw.search(&entries[0].vector, 1, &Scope::all())[0].id,
        entries[0].id
    );
}

#[test]
fn filtered_search_returns_only_the_wing_and_loses_no_recall() {
    let f = Fixture::new();
    let entries = fill(&f.store, 4000, 11);
    for params in [
        hnsw_params(),
        IndexParams {
            exact_threshold: 500,
            ..IndexParams::default()
        },
    ] {
        let m = f.open(params);
        assert!(m.state().ready);
        let exact = ExactIndex::from_entries(entries.clone()).unwrap();
        let queries = clustered(60, 99);
        for (wing, _) in WINGS {
            let filter = Scope::wing(wing);
            let mut total = 0.0;
            for q in &queries {
                let hits = m.search(q, 10, &filter);
                let truth = exact.search(q, 10, &filter);
                assert_eq!(hits.len(), truth.len());
                let wing_ids: HashSet<MemoryId> = entries
                    .iter()
                    .filter(|e| e.wing == wing)
                    .map(|e| e.id)
                    .collect();
                assert!(
                    hits.iter().all(|h| wing_ids.contains(&h.id)),
                    "a hit outside wing {wing}"
                );
                total += recall(&ids(&truth), &ids(&hits));
            }
            let r = total / queries.len() as f64;
            assert!(
                r >= 0.98,
                "filtered recall@10 for {wing} with {params:?}: {r}"
            );
        }
        // Wing and room together; a room alone; an unknown wing.
        let filter = Scope {
            wing: Some("beta".into()),
            room: Some("facts".into()),
        };
        for h in m.search(&queries[0], 20, &filter) {
            let e = entries.iter().find(|e| e.id == h.id).unwrap();
            assert_eq!((e.wing.as_str(), e.room.as_str()), ("beta", "facts"));
        }
        let room_only = Scope {
            wing: None,
            room: Some("decisions".into()),
        };
        assert_eq!(m.search(&queries[0], 20, &room_only).len(), 20);
        assert!(m
            .search(&queries[0], 10, &Scope::wing("nowhere"))
            .is_empty());
        drop(m);
    }
}

#[test]
fn removed_and_archived_memories_never_come_back() {
    let f = Fixture::new();
    let entries = fill(&f.store, 1500, 21);
    let m = f.open(hnsw_params());
    assert_eq!(m.state().kind, "hnsw");
    let (archived, deleted) = (&entries[10], &entries[20]);
    archive_row(&f.store, archived.id);
    delete_row(&f.store, deleted.id);
    let r = m.sync_from_store().unwrap();
    assert!(r.changed && r.removed == 2 && r.added == 0, "{r:?}");
    assert_eq!(m.sync_from_store().unwrap(), Default::default());
    let gone = [archived.id, deleted.id];
    let check = |m: &VectorIndexManager| {
        for e in [archived, deleted] {
            let hits = m.search(&e.vector, 100, &Scope::all());
            assert_eq!(hits.len(), 100);
            assert!(hits.iter().all(|h| !gone.contains(&h.id)));
            let hits = m.search(&e.vector, 100, &Scope::wing(e.wing.clone()));
            assert!(hits.iter().all(|h| !gone.contains(&h.id)));
        }
        assert_eq!(m.len(), 1498);
    };
    check(&m);
    // After save and reopen (loaded graph) ...
    assert!(m.save().unwrap());
    drop(m);
    let m = f.open(hnsw_params());
    assert!(m.state().loaded);
    check(&m);
    // ... and after a reopen where SQLite changed behind the files (patched graph), or where the
    // index never heard of the archive (a crash before `remove`).
    archive_row(&f.store, entries[30].id);
    drop(m);
    let m = f.open(hnsw_params());
    let s = m.state();
    assert!(s.loaded && s.patched == 1, "{s:?}");
    assert!(m
        .search(&entries[30].vector, 100, &Scope::all())
        .iter()
        .all(|h| h.id != entries[30].id));
    assert_eq!(m.len(), 1497);
}

#[test]
fn consistent_files_are_loaded_without_rebuilding() {
    let f = Fixture::new();
    let entries = fill(&f.store, 1200, 31);
    let m = f.open(hnsw_params());
    let s = m.state();
    assert!(
        s.ready && !s.loaded && s.rebuilds == 1 && s.persisted,
        "{s:?}"
    );
    let built = s.last_rebuilt;
    let before = m.search(&entries[5].vector, 10, &Scope::all());
    drop(m);
    let m = f.open(hnsw_params());
    let s = m.state();
    assert!(
        s.ready && s.loaded && s.rebuilds == 0 && s.patched == 0 && s.persisted,
        "{s:?}"
    );
    assert_eq!(
        s.last_rebuilt.map(|t| t.timestamp_millis()),
        built.map(|t| t.timestamp_millis())
    );
    assert_eq!(m.search(&entries[5].vector, 10, &Scope::all()), before);
    // Rows written after the last save are patched in, not rebuilt.
    let extra: Vec<IndexEntry> = clustered(5, 32)
        .iter()
        .map(|v| add_row(&f.store, "alpha", "facts", v))
        .collect();
    drop(m);
    let m = f.open(hnsw_params());
    let s = m.state();
    assert!(
        s.loaded && s.patched == 5 && s.rebuilds == 0 && !s.persisted,
        "{s:?}"
    );
    for e in &extra {
        assert_eq!(m.search(&e.vector, 1, &Scope::all())[0].id, e.id);
    }
    assert!(m.save().unwrap());
    assert!(m.state().persisted);
    // Other graph parameters: rebuilt.
    drop(m);
    let m = f.open(IndexParams {
        m: 16,
        ..hnsw_params()
    });
    let s = m.state();
    assert!(!s.loaded && s.rebuilds == 1, "{s:?}");
    // An explicit rebuild.
    let n = m.rebuild_blocking().unwrap();
    assert_eq!(n, 1205);
    let s = m.state();
    assert!(
        s.rebuilds == 2 && s.persisted && s.last_rebuilt.is_some(),
        "{s:?}"
    );
}

fn corrupt_and_reopen(damage: impl Fn(&Path)) {
    let f = Fixture::new();
    let entries = fill(&f.store, 1000, 41);
    let m = f.open(hnsw_params());
    assert!(m.state().persisted);
    drop(m);
    damage(&f.index_dir());
    let m = f.open(hnsw_params());
    let s = m.state();
    assert!(s.ready && !s.loaded && s.rebuilds == 1, "{s:?}");
    for e in entries.iter().step_by(97) {
        assert_eq!(m.search(&e.vector, 1, &Scope::all())[0].id, e.id);
    }
    // The rebuilt graph was saved and loads next time.
    drop(m);
    let m = f.open(hnsw_params());
    assert!(m.state().loaded);
}

fn flip(path: &Path, at: impl Fn(usize) -> usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let i = at(bytes.len());
    bytes[i] ^= 0x5A;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn truncated_graph_file_is_rebuilt() {
    corrupt_and_reopen(|dir| {
        let p = dir.join("hnsw.usearch");
        let len = std::fs::metadata(&p).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
    });
}

#[test]
fn flipped_bytes_in_graph_file_are_rebuilt() {
    corrupt_and_reopen(|dir| flip(&dir.join("hnsw.usearch"), |n| n / 3));
    corrupt_and_reopen(|dir| flip(&dir.join("hnsw.usearch"), |_| 0));
}

#[test]
fn damaged_key_list_or_meta_is_rebuilt() {
    corrupt_and_reopen(|dir| flip(&dir.join("hnsw.keys"), |n| n - 5));
    corrupt_and_reopen(|dir| std::fs::remove_file(dir.join("hnsw.keys")).unwrap());
    corrupt_and_reopen(|dir| std::fs::write(dir.join("hnsw.meta.json"), b"{ not json").unwrap());
    corrupt_and_reopen(|dir| {
        let p = dir.join("hnsw.meta.json");
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        meta["schema_version"] = serde_json::json!(999);
        std::fs::write(&p, serde_json::to_vec(&meta).unwrap()).unwrap();
    });
    corrupt_and_reopen(|dir| {
        let p = dir.join("hnsw.meta.json");
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        meta["count"] = serde_json::json!(3);
        std::fs::write(&p, serde_json::to_vec(&meta).unwrap()).unwrap();
    });
}

#[test]
fn rows_written_by_another_process_show_up_after_sync() {
    let f = Fixture::new();
    let entries = fill(&f.store, 800, 51);
    let m = f.open(hnsw_params());
    assert_eq!(
        m.sync_from_store().unwrap(),
        Default::default(),
        "nothing changed yet"
    );
    // "Another process": a second connection set on the same file.
    let other = SqliteStore::open(&f.db, &SqliteOptions::default()).unwrap();
    let v = clustered(3, 52);
    let new: Vec<IndexEntry> = v
        .iter()
        .map(|v| add_row(&other, "gamma", "facts", v))
        .collect();
    archive_row(&other, entries[1].id);
    delete_row(&other, entries[2].id);
    assert!(m.search(&new[0].vector, 1, &Scope::all())[0].id != new[0].id);
    let r = m.sync_from_store().unwrap();
    assert!(r.changed && r.added == 3 && r.removed == 2, "{r:?}");
    for e in &new {
        assert_eq!(m.search(&e.vector, 1, &Scope::all())[0].id, e.id);
        assert_eq!(m.search(&e.vector, 1, &Scope::wing("gamma"))[0].id, e.id);
    }
    for e in &entries[1..3] {
        assert!(m
            .search(&e.vector, 50, &Scope::all())
            .iter()
            .all(|h| h.id != e.id));
    }
    assert_eq!(m.len(), 801);
    // Our own writes are picked up once.
    let mine = add_row(&f.store, "alpha", "facts", &clustered(1, 53)[0]);
    let r = m.sync_from_store().unwrap();
    assert!(r.added == 1 && r.removed == 0, "{r:?}");
    assert_eq!(m.sync_from_store().unwrap(), Default::default());
    // SQLite reuses the highest rowid once it is deleted: a new memory under an old key.
    delete_row(&other, mine.id);
    let reused = add_row(&other, "beta", "facts", &clustered(1, 54)[0]);
    assert_eq!(reused.key, mine.key);
    let r = m.sync_from_store().unwrap();
    assert!(r.changed && r.added == 1 && !r.reloaded, "{r:?}");
    let top = m.search(&reused.vector, 1, &Scope::all());
    assert_eq!(top[0].id, reused.id);
    assert!(m
        .search(&mine.vector, 50, &Scope::all())
        .iter()
        .all(|h| h.id != mine.id));
    assert_eq!(m.sync_from_store().unwrap(), Default::default());
}

#[test]
fn an_empty_store_grows_a_graph_and_inserts_during_a_build_are_kept() {
    let f = Fixture::new();
    let m = f.open(hnsw_params());
    let s = m.state();
    assert!(!s.ready && s.size == 0 && s.kind == "exact", "{s:?}");
    assert!(m.search(&[0.1; DIM], 10, &Scope::all()).is_empty());
    assert!(!m.save().unwrap());
    let vs = clustered(300, 61);
    let mut entries = Vec::new();
    for v in &vs {
        entries.push(add_row(&f.store, "alpha", "facts", v));
    }
    m.sync_from_store().unwrap();
    // The first vectors start a background build of the graph.
    assert!(m.wait_idle(WAIT));
    assert!(m.state().ready);
    // A row whose vector has another dimension is left out of the vector index.
    add_row(&f.store, "alpha", "facts", &[0.1; DIM + 2]);
    m.sync_from_store().unwrap();
    assert_eq!(m.len(), 300);
    assert!(m.search(&[0.1; 3], 10, &Scope::all()).is_empty());
    // Inserts racing the background build of a reopen are reconciled when it swaps in.
    assert!(m.save().unwrap());
    std::fs::remove_file(f.index_dir().join("hnsw.usearch")).unwrap();
    drop(m);
    let m = VectorIndexManager::open(f.store.clone(), &f.index_dir(), hnsw_params()).unwrap();
    let late: Vec<IndexEntry> = clustered(20, 62)
        .iter()
        .map(|v| add_row(&f.store, "beta", "facts", v))
        .collect();
    m.sync_from_store().unwrap();
    assert!(m.wait_idle(WAIT));
    let s = m.state();
    assert!(s.ready && s.size == 320, "{s:?}");
    for e in late.iter().chain(&entries) {
        assert_eq!(m.search(&e.vector, 1, &Scope::all())[0].id, e.id);
    }
}

#[test]
fn the_manager_is_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<VectorIndexManager>();
    assert_send_sync::<HnswIndex>();
    assert_send_sync::<ExactIndex>();
    let f = Fixture::new();
    let entries = fill(&f.store, 300, 71);
    let m = f.open(hnsw_params());
    std::thread::scope(|s| {
        for t in 0..4 {
            let (m, entries) = (&m, &entries);
            s.spawn(move || {
                for e in entries.iter().skip(t).step_by(4) {
                    assert_eq!(m.search(&e.vector, 1, &Scope::all())[0].id, e.id);
                }
            });
        }
    });
}
