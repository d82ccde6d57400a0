//! `mira export` and `mira import` through the real binary (and the crate API for the setup),
//! on both backends and from one to the other.

use crate::common::{mira, stdout, Db, SEED};
use mira::usecases::access::Access;
use mira::usecases::archive::{archive, ArchiveRequest};
use mira::usecases::store::{store, StoreRequest};
use std::path::Path;

fn req(content: &str, wing: &str) -> StoreRequest {
    StoreRequest {
        content: content.into(),
        wing: wing.into(),
        ..StoreRequest::default()
    }
}

/// A store with a decision, a causal follow-up, a superseded fact, an archived note and a
/// second wing with a memory a client hook captured. Returns the ids of the decision and the
/// follow-up.
fn populate(db: &Db) -> (String, String) {
    let app = db.app();
    let decision = store(&app, &Access::local(), req(SEED, "proj")).unwrap().id;
    let follow = store(
        &app,
        &Access::local(),
        req(
            "We reverted the PostgreSQL migration because the replication lag was too high.",
            "proj",
        ),
    )
    .unwrap();
    assert!(
        !follow.links.is_empty(),
        "the follow-up links to the decision"
    );
    let old = store(
        &app,
        &Access::local(),
        req("The API rate limit is 100 requests per minute.", "proj"),
    )
    .unwrap()
    .id;
    store(
        &app,
        &Access::local(),
        StoreRequest {
            supersedes: Some(old.to_string()),
            ..req("The API rate limit is now 500 requests per minute.", "proj")
        },
    )
    .unwrap();
    let note = store(
        &app,
        &Access::local(),
        req("We had a long call about the roadmap.", "proj"),
    )
    .unwrap()
    .id;
    archive(
        &app,
        &Access::local(),
        &ArchiveRequest {
            ids: vec![note.to_string()],
            ..ArchiveRequest::default()
        },
    )
    .unwrap();
    store(
        &app,
        &Access::local(),
        req("I prefer tabs over spaces.", "other"),
    )
    .unwrap();
    store(
        &app,
        &Access::local(),
        StoreRequest {
            source: mira_store::Source::Captured,
            session_id: Some("a-claude-code-session".into()),
            ..req("Request: indent the YAML files with two spaces.", "other")
        },
    )
    .unwrap();
    (decision.to_string(), follow.id.to_string())
}

fn export(db: &Db, extra: &[&str]) -> String {
    stdout(db.mira().arg("export").args(extra))
}

fn import(db: &Db, file: &Path) -> String {
    stdout(db.mira().arg("import").arg(file))
}

backend_test! {
    fn export_import_export_is_byte_identical_with_and_without_embeddings(src) {
        round_trip(src);
    }
}

/// A store of `src`'s backend exported, imported into fresh stores of that backend, and
/// exported again: the same bytes.
fn round_trip(src: &Db) {
    let (decision, follow) = populate(src);
    let full = export(src, &["--embeddings"]);
    let plain = export(src, &[]);
    assert_eq!(full.lines().count(), 7);
    assert_eq!(
        plain.matches("\"source\":\"captured\"").count(),
        1,
        "the source is exported when a hook captured the memory"
    );
    let model = crate::common::default_model_name();
    assert!(full.contains(&format!(
        "\"embedding\":{{\"model\":\"{model}\",\"dim\":384,"
    )));
    assert!(!plain.contains("\"embedding\""));
    assert!(
        plain.contains("\"archived_at\":\"20"),
        "the archive state is exported"
    );
    assert!(
        plain.contains("\"superseded_by\":\""),
        "supersession is exported"
    );
    let files = tempfile::tempdir().unwrap();
    let (full_file, plain_file) = (
        files.path().join("full.jsonl"),
        files.path().join("p.jsonl"),
    );
    std::fs::write(&full_file, &full).unwrap();
    std::fs::write(&plain_file, &plain).unwrap();

    // With embeddings: nothing to embed, every field back bit for bit.
    let a = src.another();
    let summary = import(&a, &full_file);
    assert!(
        summary.starts_with("Imported: 7 (0 embedded)\nDuplicates skipped: 0\n"),
        "{summary}"
    );
    assert!(summary.contains("Errors: 0"), "{summary}");
    assert_eq!(export(&a, &["--embeddings"]), full);

    // Without embeddings: re-embedded with the model, everything else identical.
    let b = src.another();
    assert!(import(&b, &plain_file).starts_with("Imported: 7 (7 embedded)"));
    assert_eq!(export(&b, &[]), plain);

    // The restored store works: load shows the link, recall finds the memories (index built),
    // the archived note stays out of recall.
    let loaded = stdout(b.mira().args(["load", &follow]));
    assert!(loaded.contains(&decision[..8]), "{loaded}");
    let recalled = stdout(
        b.mira()
            .args(["recall", "PostgreSQL migration", "--wing", "proj"]),
    );
    assert!(
        recalled.contains(&decision[..8]) && recalled.contains(&follow[..8]),
        "{recalled}"
    );
    assert!(!recalled.contains("roadmap"), "{recalled}");

    // Importing again changes nothing.
    let again = import(&a, &full_file);
    assert!(
        again.starts_with("Imported: 0 (0 embedded)\nDuplicates skipped: 7\n"),
        "{again}"
    );
    assert_eq!(export(&a, &["--embeddings"]), full);

    // One wing only.
    assert_eq!(export(src, &["--wing", "other"]).lines().count(), 2);
}

#[test]
fn moving_from_sqlite_to_postgres_and_back_is_lossless() {
    let Some(pg) = Db::postgres() else {
        return;
    };
    let src = Db::sqlite();
    populate(&src);
    let full = export(&src, &["--embeddings"]);
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join("sqlite.jsonl");
    std::fs::write(&file, &full).unwrap();
    assert!(import(&pg, &file).starts_with("Imported: 7 (0 embedded)"));
    let from_pg = export(&pg, &["--embeddings"]);
    assert_eq!(from_pg, full, "SQLite -> PostgreSQL");
    let back = Db::sqlite();
    let file = files.path().join("postgres.jsonl");
    std::fs::write(&file, &from_pg).unwrap();
    assert!(import(&back, &file).starts_with("Imported: 7 (0 embedded)"));
    assert_eq!(
        export(&back, &["--embeddings"]),
        full,
        "PostgreSQL -> SQLite"
    );
}

#[test]
fn a_corrupt_line_in_the_middle_imports_all_the_others() {
    let src = Db::sqlite();
    populate(&src);
    let lines: Vec<String> = export(&src, &["--embeddings"])
        .lines()
        .map(str::to_owned)
        .collect();
    let mut file: Vec<u8> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if i == 3 {
            file.extend_from_slice(b"{\"id\": \"not json at all\n");
            file.extend_from_slice(b"\xff\xfe invalid utf-8\n");
            file.extend_from_slice(
                l.replace("\"wing\":\"proj\"", "\"wing\":\"../etc\"")
                    .as_bytes(),
            );
            file.push(b'\n');
            file.push(b'\n');
        }
        file.extend_from_slice(l.as_bytes());
        file.push(b'\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.jsonl");
    std::fs::write(&path, &file).unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let out = mira(store_dir.path())
        .args(["import", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a skipped line makes the exit code 1"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["imported"], 7, "{report}");
    let errors = report["errors"].as_array().unwrap();
    let at: Vec<&str> = errors.iter().map(|e| e["at"].as_str().unwrap()).collect();
    assert_eq!(at, ["line 4", "line 5", "line 6"], "{report}");
    assert!(errors[1]["message"].as_str().unwrap().contains("UTF-8"));
    assert!(errors[2]["message"].as_str().unwrap().contains("wing"));
    let status = stdout(mira(store_dir.path()).args(["status", "--json"]));
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["memories"], 7, "{status}");
}

#[test]
fn a_locomo_conversation_imports_one_memory_per_turn() {
    let dir = tempfile::tempdir().unwrap();
    let conv = serde_json::json!({
        "conversation": {
            "speaker_a": "Caroline", "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "That sounds brave. How was it?"}
            ],
            "session_2_date_time": "1:14 pm on 25 May, 2023",
            "session_2": [
                {"speaker": "Melanie", "dia_id": "D2:1", "text": "I ran a charity race for mental health."}
            ]
        },
        "qa": []
    });
    let path = dir.path().join("conv 7.json");
    std::fs::write(&path, conv.to_string()).unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let summary = stdout(
        mira(store_dir.path())
            .args(["import", "--format", "locomo"])
            .arg(&path),
    );
    assert!(summary.starts_with("Imported: 3 (3 embedded)"), "{summary}");
    let lines = stdout(mira(store_dir.path()).args(["export", "--wing", "locomo-conv-7"]));
    let rows: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[0]["content"],
        "Caroline: I went to a support group yesterday."
    );
    assert_eq!(rows[0]["created_at"], "2023-05-08T13:56:00.000Z");
    assert_eq!(rows[0]["type"], "session_note");
    assert_eq!(
        rows[2]["content"],
        "Melanie: I ran a charity race for mental health."
    );
    assert_eq!(rows[2]["session_id"], "session-2");
    // Again: duplicates only.
    let again = stdout(
        mira(store_dir.path())
            .args(["import", "--format", "locomo"])
            .arg(&path),
    );
    assert!(again.contains("Duplicates skipped: 3"), "{again}");
    // --wing is only for LoCoMo.
    let out = mira(store_dir.path())
        .args(["import", "--wing", "w"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format locomo"));
}

#[test]
fn a_hand_written_minimal_line_imports_with_secrets_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.jsonl");
    let line = serde_json::json!({
        "id": "7f0c1d52-3a59-4d1e-9c43-0e2b3f0f6a11",
        "wing": "ops",
        "room": "facts",
        "type": "fact",
        "content": "The staging database login is admin with password=Hunter2Secret!",
        "created_at": "2026-01-02T03:04:05Z"
    });
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let db = Db::sqlite();
    let summary = import(&db, &file);
    assert!(summary.starts_with("Imported: 1 (1 embedded)"), "{summary}");
    assert!(summary.contains("Secrets redacted: 1"), "{summary}");
    let out = export(&db, &[]);
    let row: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let content = row["content"].as_str().unwrap();
    assert!(
        !content.contains("Hunter2Secret") && content.contains("[REDACTED"),
        "{content}"
    );
    assert_eq!(row["created_at"], "2026-01-02T03:04:05.000Z");
    assert!(
        !row["tags"].as_array().unwrap().is_empty(),
        "tags extracted"
    );
    assert!(
        row["fingerprint"]["subjects"].is_array(),
        "fingerprint extracted"
    );
}
