//! The lifecycle commands through the real binary: timeline, causal, archive, clear, forget.

use assert_cmd::Command;

use crate::common::{mira, stdout};
use std::path::Path;

/// Runs a command expected to fail with `code`; returns its stderr.
fn fails(cmd: &mut Command, code: i32) -> String {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// The short id of a UUID, as human output prints it.
fn short(id: &str) -> String {
    id.replace('-', "")[..8].to_owned()
}

fn store(dir: &Path, text: &str, wing: &str, ty: &str) -> String {
    let out = stdout(mira(dir).args(["store", text, "--wing", wing, "--type", ty, "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["id"].as_str().unwrap().to_owned()
}

#[test]
fn timeline_causal_archive_clear_and_forget() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = store(
        d,
        "We decided to use PostgreSQL for the main database.",
        "db",
        "decision",
    );
    let b = store(
        d,
        "Following the PostgreSQL decision, we chose pgAdmin for monitoring.",
        "db",
        "session_note",
    );
    let other = store(d, "The cache TTL is 300 seconds.", "ops", "fact");

    let (sa, sb, so) = (short(&a), short(&b), short(&other));
    let tl = stdout(mira(d).args(["timeline", "--wing", "db"]));
    assert!(tl.starts_with("=== TIMELINE: db ===\n\n["), "{tl}");
    assert!(
        tl.find(&format!("] {sb} ")) < tl.find(&format!("] {sa} ")),
        "newest first: {tl}"
    );
    assert!(!tl.contains(&so));
    let page: serde_json::Value = serde_json::from_str(&stdout(
        mira(d).args(["timeline", "--limit", "1", "--order", "oldest", "--json"]),
    ))
    .unwrap();
    assert_eq!(page["items"][0]["id"], a.as_str());
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let next = stdout(mira(d).args([
        "timeline", "--limit", "1", "--order", "oldest", "--cursor", &cursor,
    ]));
    assert!(next.contains(&format!("] {sb} db | ")), "{next}");
    assert!(fails(mira(d).args(["timeline", "--limit", "0"]), 2).contains("1 to 1000"));
    assert!(fails(mira(d).args(["timeline", "--since", "last tuesday"]), 2).contains("7d"));

    let chain = stdout(mira(d).args(["causal", &format!("T0:{b}"), "--consequences"]));
    assert!(
        chain.starts_with("=== CAUSAL CHAIN (Upstream) ===\n"),
        "{chain}"
    );
    assert!(
        chain.contains("— triggered ") && chain.contains(&format!("→ {sa} [decision]")),
        "{chain}"
    );
    assert!(
        chain.contains("=== CONSEQUENCES (Downstream) ==="),
        "{chain}"
    );
    let missing = uuid::Uuid::new_v4();
    assert!(fails(mira(d).args(["causal", &missing.to_string()]), 3).contains("`mira timeline`"));
    assert!(fails(mira(d).args(["causal", &a, "--max-depth", "11"]), 2).contains("1 to 10"));

    let dry = stdout(mira(d).args(["archive", "--dry-run"]));
    assert!(dry.starts_with("Archive dry run (nothing was changed):\n- Session notes > 30d: 0\n- Debug logs > 7d: 0\n"), "{dry}");
    let arch = stdout(mira(d).args(["archive", "--id", &a]));
    assert!(
        arch.starts_with("Archiving complete:\n- By id: 1\n"),
        "{arch}"
    );
    assert!(!stdout(mira(d).args(["timeline", "--wing", "db"])).contains(&sa));
    assert!(
        stdout(mira(d).args(["timeline", "--wing", "db", "--include-archived"]))
            .contains(&format!("] {sa} decision: "))
    );
    assert!(
        stdout(mira(d).args(["timeline", "--wing", "db", "--include-archived"]))
            .lines()
            .any(|l| l.contains(&sa) && l.ends_with(" [archived]"))
    );
    assert!(stdout(mira(d).args(["load", &a])).contains("Archived: yes"));
    let back = stdout(mira(d).args(["archive", "--restore", &format!("T0:{a}")]));
    assert!(back.starts_with("Unarchived 1 memory:\n"), "{back}");
    assert!(fails(mira(d).args(["archive", "--older-than", "0"]), 2).contains("1 to 36500"));
    assert!(
        fails(mira(d).args(["archive", "--id", &missing.to_string()]), 3)
            .contains("nothing was changed")
    );

    // Without --yes, a preview: what would go, in the command line's terms, and success.
    let preview = stdout(mira(d).args(["clear", "--wing", "db"]));
    assert!(
        preview.starts_with("Clearing wing 'db' (all rooms) would permanently delete 2 memories (")
            && preview.ends_with(
                "Nothing was deleted: run the same command with --yes to delete them.\n"
            ),
        "{preview}"
    );
    let preview: serde_json::Value =
        serde_json::from_str(&stdout(mira(d).args(["clear", "--all", "--json"]))).unwrap();
    assert_eq!(
        (&preview["memories"], &preview["dry_run"]),
        (&3.into(), &true.into())
    );
    fails(mira(d).arg("clear"), 2);
    fails(mira(d).args(["clear", "--all", "--wing", "db"]), 2);
    fails(mira(d).args(["clear", "--room", "decisions"]), 2);
    let cleared = stdout(mira(d).args(["clear", "--wing", "db", "--room", "decisions", "--yes"]));
    assert!(
        cleared.starts_with("Cleared 1 memory in wing 'db' / room 'decisions'.\n"),
        "{cleared}"
    );
    let gone = fails(mira(d).args(["load", &a]), 3);
    assert!(
        gone.contains("`mira recall` or `mira timeline`") && !gone.contains("mira_"),
        "{gone}"
    );

    let forgot = stdout(mira(d).args(["forget", &format!("T0:{other}"), "--yes"]));
    assert!(forgot.starts_with(&format!("Forgot {so} (")), "{forgot}");
    fails(mira(d).args(["load", &other]), 3);
    fails(mira(d).args(["forget", &other, "--yes"]), 3);
    let recall = stdout(mira(d).args(["recall", "cache TTL seconds", "--json"]));
    assert!(!recall.contains(&other), "{recall}");

    let all: serde_json::Value =
        serde_json::from_str(&stdout(mira(d).args(["clear", "--all", "--yes", "--json"]))).unwrap();
    assert_eq!(all["memories"], 1);
    assert_eq!(all["ids"][0], b.as_str());
    let status: serde_json::Value =
        serde_json::from_str(&stdout(mira(d).args(["status", "--json"]))).unwrap();
    assert_eq!(status["memories"], 0);
    assert_eq!(
        stdout(mira(d).args(["timeline"])),
        "=== TIMELINE: all wings ===\n\n(no memories)\n"
    );
}

/// Commands that never search leave the index unread (reading it means every live memory:
/// ~2 s at 100,000); the next command that reads it brings the saved graph in step with what
/// they changed.
#[test]
fn commands_that_never_search_leave_the_index_unread() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    store(
        d,
        "The billing service runs on PostgreSQL 16.",
        "ops",
        "fact",
    );
    let gone = store(
        d,
        "The billing service used to run on MySQL 5.7.",
        "ops",
        "fact",
    );
    // A saved graph holding both.
    assert!(stdout(mira(d).args(["index", "rebuild"])).contains("2 vectors"));
    let run = |args: &[&str]| {
        let out = mira(d).args(["--log", "info"]).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let log = String::from_utf8(out.stderr).unwrap();
        (String::from_utf8(out.stdout).unwrap(), log)
    };
    for args in [
        vec!["timeline"],
        vec!["load", &gone],
        vec!["pin", &gone],
        vec!["forget", &gone, "--yes"],
    ] {
        let (_, log) = run(&args);
        assert!(!log.contains("read from the database"), "{args:?}: {log}");
    }
    let (status, log) = run(&["status", "--json"]);
    assert!(log.contains("read from the database"), "{log}");
    assert!(log.contains("(1 vectors, 1 patched)"), "{log}");
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["index"]["size"], serde_json::json!(1));
    let (recalled, _) = run(&["recall", "which database runs billing", "--wing", "ops"]);
    assert!(
        recalled.contains("PostgreSQL 16") && !recalled.contains("MySQL"),
        "{recalled}"
    );
}
