//! The clear and forget use cases: confirmation, scopes, counts, and that nothing deleted comes
//! back from recall, timeline, load, FTS or the index, also after a restart.

use crate::common;
use crate::common::{edge, hash_app};
use mira::usecases::access::Access;
use mira::usecases::clear::{
    clear, forget, render_forget_text, render_text, ClearRequest, ClearScope,
};
use mira::usecases::load::load;
use mira::usecases::recall::{recall, RecallRequest};
use mira::usecases::store::{store, StoreRequest};
use mira::usecases::timeline::{timeline, TimelineRequest};
use mira::usecases::UseCaseError;
use mira::App;
use mira_core::memory::MemoryId;
use mira_store::{Parts, Scope};
use std::path::Path;

struct Mem {
    id: MemoryId,
    content: &'static str,
    vector: Vec<f32>,
}

fn put(app: &App, content: &'static str, wing: &str, room: &str) -> Mem {
    let req = StoreRequest {
        content: content.into(),
        wing: wing.into(),
        room: Some(room.into()),
        ..StoreRequest::default()
    };
    let id = store(app, &Access::local(), req).unwrap().id;
    let vector = common::embedding(app, id);
    Mem {
        id,
        content,
        vector,
    }
}

/// w1/decisions: a; w1/facts: b, c; w2/facts: d. Edges a→b, b→c, c→d (crossing wings).
fn fixture(app: &App) -> [Mem; 4] {
    let m = [
        put(
            app,
            "We decided to use PostgreSQL for the main database.",
            "w1",
            "decisions",
        ),
        put(
            app,
            "The PostgreSQL connection pool max is 100 connections.",
            "w1",
            "facts",
        ),
        put(
            app,
            "The replica lag alert fires above 30 seconds.",
            "w1",
            "facts",
        ),
        put(
            app,
            "The billing service retries webhooks five times.",
            "w2",
            "facts",
        ),
    ];
    edge(app, m[0].id, m[1].id);
    edge(app, m[1].id, m[2].id);
    edge(app, m[2].id, m[3].id);
    // Persist the graph so that the files on disk still hold what is deleted next.
    app.index().unwrap().rebuild_blocking().unwrap();
    assert!(app.index().unwrap().save().unwrap());
    m
}

fn tags_of(app: &App, id: MemoryId) -> u64 {
    load(app, &Access::local(), &id.to_string())
        .unwrap()
        .tags
        .len() as u64
}

/// Asserts that `gone` cannot come back from any read path, and that `kept` still does.
fn assert_gone(app: &App, gone: &[&Mem], kept: &[&Mem]) {
    for m in gone {
        assert!(
            matches!(
                load(app, &Access::local(), &m.id.to_string()),
                Err(UseCaseError::NotFound(_))
            ),
            "{} loadable",
            m.content
        );
        let hits = app.index().unwrap().search(&m.vector, 100, &Scope::all());
        assert!(
            hits.iter().all(|h| h.id != m.id),
            "{} still indexed",
            m.content
        );
        let lex = app
            .store
            .lexical_search(m.content, 100, &Scope::default())
            .unwrap();
        assert!(
            lex.iter().all(|(id, _)| *id != m.id),
            "{} still in FTS",
            m.content
        );
        let rec = recall(
            app,
            &Access::local(),
            &RecallRequest {
                query: m.content.into(),
                ..RecallRequest::default()
            },
        )
        .unwrap();
        assert!(
            rec.items.iter().all(|i| i.id != m.id),
            "{} still recalled",
            m.content
        );
        assert!(!rec.text.contains(&m.id.to_string()));
        let tl = timeline(
            app,
            &Access::local(),
            &TimelineRequest {
                include_archived: true,
                include_superseded: true,
                ..TimelineRequest::default()
            },
        )
        .unwrap();
        assert!(
            tl.items.iter().all(|i| i.id != m.id),
            "{} still in the timeline",
            m.content
        );
        assert!(app.store.get(m.id, Parts::NONE).unwrap().is_none());
    }
    for m in kept {
        assert_eq!(
            load(app, &Access::local(), &m.id.to_string())
                .unwrap()
                .memory
                .id,
            m.id
        );
        assert!(
            app.index()
                .unwrap()
                .search(&m.vector, 100, &Scope::all())
                .iter()
                .any(|h| h.id == m.id),
            "{} lost",
            m.content
        );
    }
    assert_eq!(app.index().unwrap().len(), kept.len());
    assert_eq!(app.store.stats().unwrap().memories, kept.len() as u64);
}

fn reopen(dir: &Path, app: App) -> App {
    drop(app);
    hash_app(dir)
}

#[test]
fn without_confirmation_nothing_is_deleted_and_the_counts_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let m = fixture(&app);
    let req = ClearRequest {
        scope: ClearScope::Wing { wing: "w1".into() },
        confirm: false,
    };
    match clear(&app, &Access::local(), &req) {
        Err(UseCaseError::Invalid(msg)) => {
            assert!(
                msg.contains(
                    "wing 'w1' (all rooms) would permanently delete 3 memories (3 causal edges"
                ),
                "{msg}"
            );
            assert!(
                msg.contains("confirm: true") && msg.contains("nothing was deleted"),
                "{msg}"
            );
        }
        other => panic!("{other:?}"),
    }
    match clear(
        &app,
        &Access::local(),
        &ClearRequest {
            scope: ClearScope::All,
            confirm: false,
        },
    ) {
        Err(UseCaseError::Invalid(msg)) => assert!(
            msg.contains("every wing would permanently delete 4 memories"),
            "{msg}"
        ),
        other => panic!("{other:?}"),
    }
    assert_gone(&app, &[], &m.iter().collect::<Vec<_>>());
    assert_eq!(app.store.stats().unwrap().edges, 3);
}

#[test]
fn scope_arguments_follow_the_reference_modes() {
    let ok = |mode: Option<&str>, wing: Option<&str>, room: Option<&str>| {
        ClearScope::from_args(mode, wing, room).unwrap()
    };
    assert_eq!(ok(Some("global"), None, None), ClearScope::All);
    assert_eq!(ok(Some("all"), Some(""), Some(" ")), ClearScope::All);
    assert_eq!(
        ok(Some("room"), Some("db"), None),
        ClearScope::Wing { wing: "db".into() }
    );
    assert_eq!(
        ok(Some("wing"), Some("db"), Some("")),
        ClearScope::Wing { wing: "db".into() }
    );
    assert_eq!(
        ok(Some("ROOM"), Some("db"), Some("decisions")),
        ClearScope::Room {
            wing: "db".into(),
            room: "decisions".into()
        }
    );
    let err =
        |mode: Option<&str>, wing: Option<&str>, room: Option<&str>| match ClearScope::from_args(
            mode, wing, room,
        ) {
            Err(UseCaseError::Invalid(m)) => m.to_string(),
            other => panic!("{other:?}"),
        };
    assert!(err(None, None, None)
        .starts_with("mode is required and must be 'global', 'wing' or 'room'"));
    assert!(err(Some("x"), Some("db"), None).starts_with("mode is required"));
    assert_eq!(
        err(Some("room"), None, None),
        "wing is required when mode is 'room' or 'wing'"
    );
    assert!(err(Some("global"), Some("db"), None).contains("takes no wing or room"));
    assert!(err(Some("wing"), Some("db"), Some("r")).contains("takes no room"));
    assert!(err(Some("room"), Some("bad wing"), None).starts_with("wing 'bad wing'"));
    assert!(err(Some("room"), Some("db"), Some("a/b")).starts_with("room 'a/b'"));
}

#[test]
fn room_then_wing_scope_clear_only_what_they_name_also_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let [a, b, c, d] = fixture(&app);
    let tags_a = tags_of(&app, a.id);

    // Room w1/decisions removes a (and its edge a→b) only.
    let out = clear(
        &app,
        &Access::local(),
        &ClearRequest {
            scope: ClearScope::Room {
                wing: "w1".into(),
                room: "decisions".into(),
            },
            confirm: true,
        },
    )
    .unwrap();
    assert_eq!((out.memories, out.edges, out.tags), (1, 1, tags_a));
    assert_eq!(out.ids, vec![a.id]);
    assert!(render_text(&out).starts_with(
        "Cleared 1 memory in wing 'w1' / room 'decisions'.\nDeleted: 1 memory, 1 causal edge"
    ));
    assert_gone(&app, &[&a], &[&b, &c, &d]);
    assert_eq!(app.store.stats().unwrap().edges, 2);

    // The wing scope (the reference's `mode: room` without a room, which cleared nothing)
    // clears the whole wing.
    let tags_bc = tags_of(&app, b.id) + tags_of(&app, c.id);
    let scope = ClearScope::from_args(Some("room"), Some("w1"), None).unwrap();
    let out = clear(
        &app,
        &Access::local(),
        &ClearRequest {
            scope,
            confirm: true,
        },
    )
    .unwrap();
    assert_eq!((out.memories, out.edges, out.tags), (2, 2, tags_bc));
    assert!(render_text(&out).starts_with("Cleared 2 memories in wing 'w1' (all rooms).\n"));
    assert_gone(&app, &[&a, &b, &c], &[&d]);
    let stats = app.store.stats().unwrap();
    assert_eq!((stats.edges, stats.tags), (0, tags_of(&app, d.id)));
    assert!(timeline(
        &app,
        &Access::local(),
        &TimelineRequest {
            wing: Some("w1".into()),
            ..TimelineRequest::default()
        }
    )
    .unwrap()
    .items
    .is_empty());
    let w1 = recall(
        &app,
        &Access::local(),
        &RecallRequest {
            query: a.content.into(),
            wing: Some("w1".into()),
            ..RecallRequest::default()
        },
    )
    .unwrap();
    assert!(w1.items.is_empty(), "{:?}", w1.items);
    // Clearing an empty scope is not an error.
    let empty = clear(
        &app,
        &Access::local(),
        &ClearRequest {
            scope: ClearScope::Wing { wing: "w1".into() },
            confirm: true,
        },
    )
    .unwrap();
    assert_eq!(empty.memories, 0);

    // A restart loads the persisted graph (which still held a, b, c) and reconciles it.
    let app = reopen(dir.path(), app);
    assert_gone(&app, &[&a, &b, &c], &[&d]);
    app.index().unwrap().rebuild_blocking().unwrap();
    assert_gone(&app, &[&a, &b, &c], &[&d]);
}

#[test]
fn clear_all_empties_the_store_and_new_memories_are_found_again() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let m = fixture(&app);
    let out = clear(
        &app,
        &Access::local(),
        &ClearRequest {
            scope: ClearScope::All,
            confirm: true,
        },
    )
    .unwrap();
    assert_eq!((out.memories, out.edges), (4, 3));
    assert!(render_text(&out).starts_with(
        "All memories have been permanently deleted.\nDeleted: 4 memories, 3 causal edges"
    ));
    let stats = app.store.stats().unwrap();
    assert_eq!(
        (stats.memories, stats.edges, stats.tags, stats.embeddings),
        (0, 0, 0, 0)
    );
    let all: Vec<&Mem> = m.iter().collect();
    assert_gone(&app, &all, &[]);
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["scope"]["kind"], "all");
    assert_eq!(json["memories"], 4);

    // A store after a global clear is recalled.
    let new = put(
        &app,
        "The staging cluster runs Kubernetes 1.29.",
        "w3",
        "facts",
    );
    let rec = recall(
        &app,
        &Access::local(),
        &RecallRequest {
            query: new.content.into(),
            ..RecallRequest::default()
        },
    )
    .unwrap();
    assert!(rec.items.iter().any(|i| i.id == new.id));
    let app = reopen(dir.path(), app);
    assert_gone(&app, &all, &[&new]);
}

#[test]
fn forget_removes_one_memory_everywhere_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let [a, b, c, d] = fixture(&app);
    // b supersedes an older memory; forgetting b makes that one current again.
    let old = put(
        &app,
        "The PostgreSQL connection pool max was 50 connections.",
        "w1",
        "facts",
    );
    common::sql(
        &app,
        "UPDATE verbatims SET superseded_by = ?1 WHERE id = ?2",
        (b.id.to_string(), old.id.to_string()),
    );
    let tags_b = tags_of(&app, b.id);
    let out = forget(&app, &Access::local(), &format!("T0:{}", b.id)).unwrap();
    assert_eq!((out.id, out.edges, out.tags), (b.id, 2, tags_b));
    let text = render_forget_text(&out);
    assert!(
        text.starts_with(&format!(
            "Forgot {} ([fact] ",
            mira_core::render::short_id(b.id)
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("{tags_b} tags and 2 causal edges")),
        "{text}"
    );
    assert_gone(&app, &[&b], &[&a, &c, &d, &old]);
    assert_eq!(
        load(&app, &Access::local(), &old.id.to_string())
            .unwrap()
            .memory
            .superseded_by,
        None
    );
    assert_eq!(app.store.stats().unwrap().edges, 1);
    assert!(load(&app, &Access::local(), &a.id.to_string())
        .unwrap()
        .consequences
        .is_empty());

    match forget(&app, &Access::local(), &b.id.to_string()) {
        Err(UseCaseError::NotFound(msg)) => assert!(msg.contains("mira_recall"), "{msg}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        forget(&app, &Access::local(), "not-an-id"),
        Err(UseCaseError::Invalid(_))
    ));

    let app = reopen(dir.path(), app);
    assert_gone(&app, &[&b], &[&a, &c, &d, &old]);
    // The same text stored again is a new memory (the old one is not resurrected by the hash).
    let again = put(&app, b.content, "w1", "facts");
    assert_ne!(again.id, b.id);
}
