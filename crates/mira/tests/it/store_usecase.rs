//! The store and load use cases, driven through the crate API.

use crate::common;
use crate::common::{app, hash_app, SEED};
use mira::usecases::access::Access;
use mira::usecases::load::load;
use mira::usecases::store::{store, store_batch, StoreRequest};
use mira::usecases::UseCaseError;
use mira_core::{MemoryType, RelationType};

fn req(content: &str, wing: &str) -> StoreRequest {
    StoreRequest {
        content: content.into(),
        wing: wing.into(),
        ..StoreRequest::default()
    }
}

#[test]
fn seed_decision_gives_the_expected_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let out = store(&app, &Access::local(), req(SEED, "proj")).unwrap();
    assert!(out.stored);
    assert_eq!(out.memory_type, MemoryType::Decision);
    assert_eq!(out.room, "decisions");
    let m = load(&app, &Access::local(), &format!("T0:{}", out.id)).unwrap();
    let fp = &m.memory.fingerprint;
    assert_eq!(fp.decision.as_deref(), Some("PostgreSQL"));
    assert_eq!(fp.rejected, vec!["MySQL", "MongoDB"]);
    let reasons = fp.reasons.join(" | ");
    assert!(
        reasons.contains("ACID") && reasons.contains("team expertise"),
        "{reasons}"
    );
    assert_eq!(fp.assignee.as_deref(), Some("Jean"));
    assert_eq!(fp.approvals, vec!["CTO"]);
    assert!(out.facts >= 6, "facts {}", out.facts);
    assert_eq!(m.fact_count(), out.facts);
    let tags: Vec<&str> = m.tags.iter().map(|t| t.tag.as_str()).collect();
    assert!(
        tags.contains(&"postgresql") && tags.contains(&"mysql"),
        "{tags:?}"
    );
}

#[test]
fn types_are_classified() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let cases = [
        ("Fixed the panic in the HTTP handler: the body was nil because the client closed early.", MemoryType::DebugLog, "debug"),
        ("I prefer tabs", MemoryType::Preference, "preferences"),
        ("The database connection pool max is 100 connections.", MemoryType::Fact, "facts"),
        ("We had a good discussion about the roadmap today.", MemoryType::SessionNote, "session"),
    ];
    for (text, ty, room) in cases {
        let out = store(&app, &Access::local(), req(text, "w")).unwrap();
        assert_eq!((out.memory_type, out.room.as_str()), (ty, room), "{text}");
    }
    let forced = StoreRequest {
        memory_type: Some("fact".into()),
        room: Some("misc".into()),
        ..req("whatever happened", "w")
    };
    let out = store(&app, &Access::local(), forced).unwrap();
    assert_eq!(
        (out.memory_type, out.room.as_str()),
        (MemoryType::Fact, "misc")
    );
}

#[test]
fn follow_up_creates_a_causal_edge_to_the_decision() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let decision = store(&app, &Access::local(), req(SEED, "proj")).unwrap();
    let unrelated = store(
        &app,
        &Access::local(),
        req("The office coffee machine is broken again.", "proj"),
    )
    .unwrap();
    let follow = store(
        &app,
        &Access::local(),
        req(
            "We reverted the PostgreSQL migration because of replication lag in production.",
            "proj",
        ),
    )
    .unwrap();
    assert!(
        follow.links.iter().any(|l| l.target == decision.id),
        "links: {:?}",
        follow.links
    );
    assert!(
        follow.links.iter().all(|l| l.target != unrelated.id),
        "links: {:?}",
        follow.links
    );
    let loaded = load(&app, &Access::local(), &decision.id.to_string()).unwrap();
    let edge = loaded
        .consequences
        .iter()
        .find(|e| e.other == follow.id)
        .expect("edge stored");
    assert!(edge.confidence > 0.0 && edge.confidence <= 1.0);
    assert!(
        matches!(
            edge.relation,
            RelationType::Because | RelationType::Contradicts
        ),
        "{:?}",
        edge.relation
    );
    // The same cue in another wing links nothing: detection stays within a wing.
    let other = store(
        &app,
        &Access::local(),
        req(
            "We reverted the PostgreSQL migration because of lag.",
            "elsewhere",
        ),
    )
    .unwrap();
    assert!(other.links.is_empty());
}

#[test]
fn exact_duplicates_return_the_existing_id() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let first = store(
        &app,
        &Access::local(),
        req("The API listens on port 8080.", "w"),
    )
    .unwrap();
    let again = store(
        &app,
        &Access::local(),
        req("  The API listens on port 8080.\n", "w"),
    )
    .unwrap();
    assert_eq!(again.id, first.id);
    assert!(!again.stored);
    let other_wing = store(
        &app,
        &Access::local(),
        req("The API listens on port 8080.", "w2"),
    )
    .unwrap();
    assert_ne!(other_wing.id, first.id);
    assert_eq!(app.store.stats().unwrap().memories, 2);
}

#[test]
fn near_duplicates_are_stored_and_linked() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let first = store(
        &app,
        &Access::local(),
        req("The API listens on port 8080.", "w"),
    )
    .unwrap();
    let near = store(
        &app,
        &Access::local(),
        req("The API listens on port 8080!", "w"),
    )
    .unwrap();
    assert!(near.stored);
    assert_ne!(near.id, first.id);
    assert_eq!(near.near_duplicate_of, Some(first.id));
}

#[test]
fn invalid_input_is_rejected_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let too_long = "x".repeat(64 * 1024 + 1);
    let cases: Vec<(StoreRequest, &str)> = vec![
        (req("", "w"), "content is empty"),
        (req("   \n\t ", "w"), "content is empty"),
        (req(&too_long, "w"), "64 KiB"),
        (req("nul\0byte", "w"), "U+0000"),
        (req("ok", ""), "wing ''"),
        (req("ok", "bad wing"), "wing 'bad wing'"),
        (req("ok", "../etc"), "wing '../etc'"),
        (req("ok", "w'; DROP TABLE verbatims;--"), "wing 'w"),
        (
            StoreRequest {
                room: Some("a/b".into()),
                ..req("ok", "w")
            },
            "room 'a/b'",
        ),
        (
            StoreRequest {
                memory_type: Some("bogus".into()),
                ..req("ok", "w")
            },
            "decision, fact, preference, session_note, debug_log",
        ),
        (
            StoreRequest {
                supersedes: Some("not-an-id".into()),
                ..req("ok", "w")
            },
            "invalid ID",
        ),
    ];
    for (r, expected) in cases {
        match store(&app, &Access::local(), r) {
            Err(UseCaseError::Invalid(msg)) => {
                assert!(msg.contains(expected), "{msg} (expected {expected})")
            }
            other => panic!("expected an invalid-input error containing {expected}, got {other:?}"),
        }
    }
    assert_eq!(app.store.stats().unwrap().memories, 0);
}

#[test]
fn batch_store_embeds_in_batches_and_reports_each_item() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::config_in(dir.path());
    cfg.embeddings.batch_size = 3;
    let app = mira::App::open_with_embedder(cfg, common::model()).unwrap();
    let mut reqs: Vec<StoreRequest> = (0..8)
        .map(|i| req(&format!("Fact number {i}: the limit is {i}00."), "b"))
        .collect();
    reqs.push(req("", "b"));
    reqs.push(req("Fact number 1: the limit is 100.", "b"));
    let results = store_batch(&app, reqs);
    assert_eq!(results.len(), 10);
    assert!(results[..8]
        .iter()
        .all(|r| r.as_ref().is_ok_and(|o| o.stored)));
    assert!(matches!(results[8], Err(UseCaseError::Invalid(_))));
    let dup = results[9].as_ref().unwrap();
    assert!(!dup.stored);
    assert_eq!(dup.id, results[1].as_ref().unwrap().id);
    assert_eq!(app.store.stats().unwrap().memories, 8);
    // Batched embeddings equal one-by-one embeddings.
    let one = store(
        &app,
        &Access::local(),
        req("A single memory stored alone.", "b"),
    )
    .unwrap();
    let stored = common::embedding(&app, one.id);
    let direct = common::model()
        .embed("A single memory stored alone.")
        .unwrap();
    let cos: f32 = stored.iter().zip(&direct).map(|(a, b)| a * b).sum();
    assert!(cos > 0.9999, "{cos}");
}

#[test]
fn load_accepts_printed_ids_and_explains_unknown_ones() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let out = store(
        &app,
        &Access::local(),
        req("The cache TTL is 300 seconds.", "w"),
    )
    .unwrap();
    for form in [
        out.id.to_string(),
        format!("T0:{}", out.id),
        format!(" ID: t0:{} ", out.id),
    ] {
        assert_eq!(
            load(&app, &Access::local(), &form).unwrap().memory.id,
            out.id
        );
    }
    match load(&app, &Access::local(), "T0:abc") {
        Err(UseCaseError::Invalid(m)) => assert!(m.contains("mira_recall"), "{m}"),
        other => panic!("{other:?}"),
    }
    match load(&app, &Access::local(), &uuid::Uuid::new_v4().to_string()) {
        Err(UseCaseError::NotFound(m)) => {
            assert!(m.contains("mira_recall or mira_timeline"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}
