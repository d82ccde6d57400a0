//! The archive use case: thresholds (session notes after 30 days, debug logs after 7,
//! decisions never), dry run, explicit age and ids, recall and index
//! exclusion, un-archive.

use crate::common;
use crate::common::hash_app;
use chrono::{Duration, Utc};
use mira::usecases::access::Access;
use mira::usecases::archive::{
    archive, render_text, render_unarchive_text, unarchive, ArchiveRequest,
};
use mira::usecases::load::load;
use mira::usecases::recall::{recall, RecallRequest};
use mira::usecases::store::{store, StoreRequest};
use mira::usecases::UseCaseError;
use mira::App;
use mira_core::memory::MemoryId;
use mira_core::render::short_id;
use mira_core::MemoryType;
use mira_store::Scope;

const NOTE: &str = "We had a long discussion about the roadmap and the hiring plan today.";
const DEBUG: &str =
    "Fixed the panic in the HTTP handler: the body was nil because the client closed early.";
const DECISION: &str = "We decided to use PostgreSQL for the main database.";
const RECENT: &str = "Today we paired on the onboarding checklist for new contributors.";

fn put(app: &App, content: &str, ty: &str) -> (MemoryId, u32) {
    let out = store(
        app,
        &Access::local(),
        StoreRequest {
            content: content.into(),
            wing: "w".into(),
            memory_type: Some(ty.into()),
            ..StoreRequest::default()
        },
    )
    .unwrap();
    (out.id, out.tokens)
}

/// Moves `created_at` back by `days` with SQL (a test cannot wait for a memory to age).
fn backdate(app: &App, id: MemoryId, days: i64) {
    let ms = (Utc::now() - Duration::days(days)).timestamp_millis();
    let n = common::sql(
        app,
        "UPDATE verbatims SET created_at = ?1 WHERE id = ?2",
        (ms, id.to_string()),
    );
    assert_eq!(n, 1);
}

struct Fixture {
    note: (MemoryId, u32),
    debug: (MemoryId, u32),
    decision: (MemoryId, u32),
    recent: (MemoryId, u32),
}

fn fixture(app: &App) -> Fixture {
    let f = Fixture {
        note: put(app, NOTE, "session_note"),
        debug: put(app, DEBUG, "debug_log"),
        decision: put(app, DECISION, "decision"),
        recent: put(app, RECENT, "session_note"),
    };
    backdate(app, f.note.0, 31);
    backdate(app, f.debug.0, 8);
    backdate(app, f.decision.0, 400);
    f
}

fn recalled(app: &App, query: &str) -> Vec<MemoryId> {
    let req = RecallRequest {
        query: query.into(),
        wing: Some("w".into()),
        ..RecallRequest::default()
    };
    recall(app, &Access::local(), &req)
        .unwrap()
        .items
        .iter()
        .map(|i| i.id)
        .collect()
}

fn indexed(app: &App, id: MemoryId) -> bool {
    let v = common::embedding(app, id);
    app.index()
        .unwrap()
        .search(&v, 100, &Scope::all())
        .iter()
        .any(|h| h.id == id)
}

fn lexical(app: &App, text: &str) -> Vec<MemoryId> {
    app.store
        .lexical_search(text, 50, &Scope::default())
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

fn archived(app: &App, id: MemoryId) -> bool {
    load(app, &Access::local(), &id.to_string())
        .unwrap()
        .memory
        .archived
}

#[test]
fn thresholds_archive_old_notes_and_logs_but_keep_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let f = fixture(&app);
    assert!(recalled(&app, NOTE).contains(&f.note.0));
    assert_eq!(app.index().unwrap().len(), 4);

    // Dry run: reports, changes nothing.
    let dry = archive(
        &app,
        &Access::local(),
        &ArchiveRequest {
            dry_run: true,
            ..ArchiveRequest::default()
        },
    )
    .unwrap();
    assert!(dry.dry_run);
    assert_eq!(
        dry.items.iter().map(|i| i.id).collect::<Vec<_>>(),
        vec![f.note.0, f.debug.0]
    );
    let text = render_text(&dry);
    assert!(text.starts_with("Archive dry run (nothing was changed):\n- Session notes > 30d: 1\n- Debug logs > 7d: 1\n"), "{text}");
    assert!(
        text.contains(&format!("Would free: {} tokens", f.note.1 + f.debug.1)),
        "{text}"
    );
    assert!(!archived(&app, f.note.0) && !archived(&app, f.debug.0));
    assert_eq!(app.index().unwrap().len(), 4);
    assert_eq!(app.store.stats().unwrap().archived, 0);

    let out = archive(&app, &Access::local(), &ArchiveRequest::default()).unwrap();
    let text = render_text(&out);
    let expected = format!(
        "Archiving complete:\n- Session notes > 30d: 1\n- Debug logs > 7d: 1\nTotal freed: {} tokens\nArchived:\n",
        f.note.1 + f.debug.1
    );
    assert!(text.starts_with(&expected), "{text}");
    assert!(
        text.contains(&format!("\n  {} [session_note] ", short_id(f.note.0)))
            && text.contains(&format!("\n  {} [debug_log] ", short_id(f.debug.0))),
        "{text}"
    );
    assert_eq!(out.tokens_freed, u64::from(f.note.1 + f.debug.1));
    assert_eq!(
        out.rules
            .iter()
            .map(|r| (r.memory_type, r.days, r.count))
            .collect::<Vec<_>>(),
        vec![
            (Some(MemoryType::SessionNote), Some(30), 1),
            (Some(MemoryType::DebugLog), Some(7), 1),
        ]
    );

    // Archived: still loadable, out of recall, lexical search and the index.
    for id in [f.note.0, f.debug.0] {
        assert!(archived(&app, id));
        assert!(!indexed(&app, id));
    }
    assert!(!archived(&app, f.decision.0) && !archived(&app, f.recent.0));
    assert!(indexed(&app, f.decision.0));
    assert_eq!(app.index().unwrap().len(), 2);
    assert_eq!(app.store.stats().unwrap().archived, 2);
    assert!(!recalled(&app, NOTE).contains(&f.note.0));
    assert!(!recalled(&app, DEBUG).contains(&f.debug.0));
    assert!(recalled(&app, DECISION).contains(&f.decision.0));
    assert!(!lexical(&app, "roadmap hiring").contains(&f.note.0));

    // A second run finds nothing; the archive survives a restart (the index stays without them).
    let again = archive(&app, &Access::local(), &ArchiveRequest::default()).unwrap();
    assert!(render_text(&again).starts_with("Archiving complete:\n- Session notes > 30d: 0\n- Debug logs > 7d: 0\nTotal freed: 0 tokens\n"));
    drop(app);
    let app = hash_app(dir.path());
    assert!(!indexed(&app, f.note.0) && archived(&app, f.note.0));
    assert_eq!(app.index().unwrap().len(), 2);

    // Un-archive brings it back to recall and the index.
    let back = unarchive(&app, &Access::local(), &[format!("T0:{}", f.note.0)]).unwrap();
    assert_eq!(
        back.restored.iter().map(|i| i.id).collect::<Vec<_>>(),
        vec![f.note.0]
    );
    assert!(render_unarchive_text(&back).starts_with("Unarchived 1 memory:\n"));
    assert!(!archived(&app, f.note.0) && indexed(&app, f.note.0));
    assert!(recalled(&app, NOTE).contains(&f.note.0));
    assert!(lexical(&app, "roadmap hiring").contains(&f.note.0));
    let twice = unarchive(&app, &Access::local(), &[f.note.0.to_string()]).unwrap();
    assert!(twice.restored.is_empty());
    assert_eq!(twice.not_archived, vec![f.note.0]);
    assert!(render_unarchive_text(&twice)
        .contains(&format!("Not archived (unchanged): {}", short_id(f.note.0))));
}

#[test]
fn explicit_age_and_ids_replace_the_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let f = fixture(&app);
    // 20 days: the 31-day-old note, never the 400-day-old decision (decisions do not age out).
    let out = archive(
        &app,
        &Access::local(),
        &ArchiveRequest {
            older_than_days: Some(20),
            ..ArchiveRequest::default()
        },
    )
    .unwrap();
    assert_eq!(
        out.items.iter().map(|i| i.id).collect::<Vec<_>>(),
        vec![f.note.0]
    );
    assert!(render_text(&out)
        .starts_with("Archiving complete:\n- Session notes > 20d: 1\n- Debug logs > 20d: 0\n"));
    assert!(archived(&app, f.note.0) && !archived(&app, f.decision.0));
    // By id: the recent note, and the note again (already archived: reported, unchanged).
    let req = ArchiveRequest {
        ids: vec![
            f.recent.0.to_string(),
            format!("T0:{}", f.note.0),
            f.recent.0.to_string(),
        ],
        ..ArchiveRequest::default()
    };
    let out = archive(&app, &Access::local(), &req).unwrap();
    assert_eq!(
        out.items.iter().map(|i| i.id).collect::<Vec<_>>(),
        vec![f.recent.0]
    );
    assert_eq!(out.already_archived, vec![f.note.0]);
    let text = render_text(&out);
    assert!(
        text.starts_with("Archiving complete:\n- By id: 1\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Already archived: {}", short_id(f.note.0))),
        "{text}"
    );
    assert!(
        archived(&app, f.recent.0) && !archived(&app, f.decision.0) && !archived(&app, f.debug.0)
    );
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["items"][0]["id"], f.recent.0.to_string());
    assert_eq!(json["rules"][0]["days"], serde_json::Value::Null);
}

#[test]
fn bad_requests_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let f = fixture(&app);
    let unknown = ArchiveRequest {
        ids: vec![f.note.0.to_string(), uuid::Uuid::new_v4().to_string()],
        ..ArchiveRequest::default()
    };
    match archive(&app, &Access::local(), &unknown) {
        Err(UseCaseError::NotFound(msg)) => assert!(
            msg.contains("mira_timeline") && msg.contains("nothing was changed"),
            "{msg}"
        ),
        other => panic!("{other:?}"),
    }
    for days in [0, -5, 36_501] {
        match archive(
            &app,
            &Access::local(),
            &ArchiveRequest {
                older_than_days: Some(days),
                ..ArchiveRequest::default()
            },
        ) {
            Err(UseCaseError::Invalid(msg)) => assert!(msg.contains("1 to 36500"), "{msg}"),
            other => panic!("{days}: {other:?}"),
        }
    }
    assert!(matches!(
        archive(
            &app,
            &Access::local(),
            &ArchiveRequest {
                ids: vec!["T0:nope".into()],
                ..ArchiveRequest::default()
            }
        ),
        Err(UseCaseError::Invalid(_))
    ));
    assert!(matches!(
        unarchive(&app, &Access::local(), &[]),
        Err(UseCaseError::Invalid(_))
    ));
    assert!(matches!(
        unarchive(&app, &Access::local(), &[uuid::Uuid::new_v4().to_string()]),
        Err(UseCaseError::NotFound(_))
    ));
    assert_eq!(app.store.stats().unwrap().archived, 0);
    assert_eq!(app.index().unwrap().len(), 4);
}

#[test]
fn configured_thresholds_apply() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::config_in(dir.path());
    cfg.archive_thresholds.decision = Some(365);
    cfg.archive_thresholds.session_note = None;
    let app = App::open_with_embedder(cfg, std::sync::Arc::new(mira_embed::HashEmbedder::new(384)))
        .unwrap();
    let f = fixture(&app);
    // The decision's threshold (set here past the config's validation) is not applied.
    let out = archive(&app, &Access::local(), &ArchiveRequest::default()).unwrap();
    let text = render_text(&out);
    assert!(
        text.starts_with("Archiving complete:\n- Debug logs > 7d: 1\n"),
        "{text}"
    );
    assert!(!text.contains("overlap"), "{text}");
    assert_eq!(
        out.items.iter().map(|i| i.id).collect::<Vec<_>>(),
        vec![f.debug.0]
    );
    assert!(!archived(&app, f.note.0));
}

#[test]
fn a_fact_a_preference_and_a_decision_of_any_age_survive_mira_archive() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let old = "2010-01-05T09:00:00Z";
    let id = |text: &str, ty: &str| {
        let out = common::stdout(common::mira(d).args([
            "store",
            text,
            "--wing",
            "w",
            "--type",
            ty,
            "--created-at",
            old,
            "--json",
        ]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        // Every human output prints the short id.
        v["id"].as_str().unwrap()[..8].to_owned()
    };
    let kept = [
        id("The staging cluster runs in eu-west-1.", "fact"),
        id("I prefer short commit messages.", "preference"),
        id("We decided to release every second Tuesday.", "decision"),
    ];
    let note = id("We talked about the offsite agenda.", "session_note");
    // Without arguments: what it would take, and how to go ahead; nothing changes.
    let shown = common::stdout(common::mira(d).args(["archive"]));
    assert!(
        shown.starts_with("Archive dry run (nothing was changed):\n- Session notes > 30d: 1\n"),
        "{shown}"
    );
    assert!(
        shown.contains(&note) && shown.contains("mira archive --yes"),
        "{shown}"
    );
    assert!(kept.iter().all(|k| !shown.contains(k.as_str())), "{shown}");
    let timeline = || common::stdout(common::mira(d).args(["timeline", "--wing", "w"]));
    assert!(timeline().contains(&note));
    let done = common::stdout(common::mira(d).args(["archive", "--yes"]));
    assert!(done.starts_with("Archiving complete:\n"), "{done}");
    let aged = common::stdout(common::mira(d).args(["archive", "--older-than", "1"]));
    assert!(aged.starts_with("Archiving complete:\n"), "{aged}");
    let t = timeline();
    assert!(!t.contains(&note), "{t}");
    for k in &kept {
        assert!(t.contains(k.as_str()), "{k} was archived:\n{t}");
    }
    // A configuration that would age them out is refused.
    std::fs::write(d.join("c.yaml"), "archive_thresholds:\n  fact: 90\n").unwrap();
    let refused = common::mira(d)
        .args(["--config", "c.yaml", "archive"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("never age out"),
        "{refused:?}"
    );
}
