//! The bad-input table: hostile or broken input through the public surfaces (MCP over stdio and
//! the CLI). Every case must get an error that says what is wrong, and nothing may be stored.

use crate::common;
use crate::mcp_common::{is_error, serial, text, StdioClient};
use serde_json::{json, Value};
use std::path::Path;

/// One tool call that must fail with a message containing every one of `expect`.
struct Case {
    what: &'static str,
    tool: &'static str,
    args: Value,
    expect: &'static [&'static str],
}

fn case(
    what: &'static str,
    tool: &'static str,
    args: Value,
    expect: &'static [&'static str],
) -> Case {
    Case {
        what,
        tool,
        args,
        expect,
    }
}

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

fn store_cases() -> Vec<Case> {
    let store = |what: &'static str, content: Value, expect: &'static [&'static str]| {
        case(
            what,
            "mira_store",
            json!({"content": content, "wing": "w"}),
            expect,
        )
    };
    vec![
        store("empty content", json!(""), &["content is empty"]),
        store(
            "whitespace-only content",
            json!(" \n\t  "),
            &["content is empty"],
        ),
        store(
            "64 KiB + 1 byte",
            json!("x".repeat(64 * 1024 + 1)),
            &["65537 bytes", "64 KiB"],
        ),
        store("NUL byte", json!("before\0after"), &["U+0000"]),
        store("escape sequence", json!("red \u{1b}[31m text"), &["U+001B"]),
        store("bell", json!("ding\u{7}"), &["U+0007"]),
        store("DEL", json!("rub\u{7f}out"), &["U+007F"]),
        store("content is a number", json!(42), &["content"]),
        store(
            "deeply nested content (within the JSON depth limit)",
            serde_json::from_str(&nested(100)).unwrap(),
            &["content"],
        ),
        case(
            "unknown memory type",
            "mira_store",
            json!({"content": "a fact", "wing": "w", "type": "rumour"}),
            &[
                "rumour",
                "decision, fact, preference, session_note, debug_log",
            ],
        ),
        case(
            "wing with a path separator",
            "mira_store",
            json!({"content": "a fact", "wing": "../etc/passwd"}),
            &["wing '../etc/passwd' is invalid"],
        ),
        case(
            "wing with a backslash",
            "mira_store",
            json!({"content": "a fact", "wing": "a\\b"}),
            &["is invalid"],
        ),
        case(
            "wing with SQL metacharacters",
            "mira_store",
            json!({"content": "a fact", "wing": "w'; DROP TABLE verbatims;--"}),
            &["is invalid", "ASCII letters"],
        ),
        case(
            "room with SQL metacharacters",
            "mira_store",
            json!({"content": "a fact", "wing": "w", "room": "r\" OR 1=1"}),
            &["room", "is invalid"],
        ),
        case(
            "supersedes is not a UUID",
            "mira_store",
            json!({"content": "a fact", "wing": "w", "supersedes": "1234"}),
            &["invalid ID '1234'"],
        ),
        case(
            "supersedes is an unknown UUID",
            "mira_store",
            json!({"content": "a fact", "wing": "w", "supersedes": "T0:3f2c0d1e-0000-4000-8000-000000000000"}),
            &["no memory has id"],
        ),
        case(
            "unknown argument",
            "mira_store",
            json!({"content": "a fact", "wing": "w", "wings": "x"}),
            &["wings"],
        ),
    ]
}

fn read_cases() -> Vec<Case> {
    let budget = |what: &'static str, b: Value| {
        case(
            what,
            "mira_recall",
            json!({"query": "postgres", "budget": b}),
            &["budget"],
        )
    };
    vec![
        budget("negative budget", json!(-5)),
        budget("zero budget", json!(0)),
        budget("huge budget", json!(1_000_000_000_000_i64)),
        budget("budget beyond i64", json!(1e300)),
        budget("budget is text", json!("lots")),
        budget("budget is a bool", json!(true)),
        case(
            "empty query",
            "mira_recall",
            json!({"query": "  "}),
            &["query is empty"],
        ),
        case(
            "recall wing with a path separator",
            "mira_recall",
            json!({"query": "x", "wing": "a/b"}),
            &["wing 'a/b' is invalid"],
        ),
        case(
            "load id that is not a UUID",
            "mira_load",
            json!({"id": "T0:not-a-uuid"}),
            &["invalid ID 'T0:not-a-uuid'"],
        ),
        case(
            "load id with SQL metacharacters",
            "mira_load",
            json!({"id": "' OR 1=1 --"}),
            &["invalid ID"],
        ),
        case(
            "causal chain id that is not a UUID",
            "mira_causal_chain",
            json!({"id": "42"}),
            &["invalid ID '42'"],
        ),
        case(
            "forget id that is not a UUID",
            "mira_forget",
            json!({"id": "../../mira.db"}),
            &["invalid ID"],
        ),
        case(
            "timeline since that does not parse",
            "mira_timeline",
            json!({"since": "2025-13-45"}),
            &["since", "2025-13-45"],
        ),
        case(
            "timeline until that does not parse",
            "mira_timeline",
            json!({"until": "next tuesday"}),
            &["until", "next tuesday"],
        ),
        case(
            "timeline unknown type",
            "mira_timeline",
            json!({"type": "gossip"}),
            &["gossip"],
        ),
        case(
            "timeline wing with SQL metacharacters",
            "mira_timeline",
            json!({"wing": "%' OR '1'='1"}),
            &["is invalid"],
        ),
    ]
}

fn memories(c: &mut StdioClient) -> u64 {
    let s = c.call_tool("mira_status", json!({}));
    assert!(!is_error(&s), "{s}");
    s["structuredContent"]["memories"]
        .as_u64()
        .unwrap_or_else(|| panic!("no memory count in {s}"))
}

#[test]
fn mcp_bad_input_gets_clear_errors_and_stores_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(dir.path(), &["serve"]);
    c.initialize();

    for k in store_cases().into_iter().chain(read_cases()) {
        let r = c.call_tool(k.tool, k.args);
        assert!(is_error(&r), "{}: expected a tool error, got {r}", k.what);
        let t = text(&r);
        for e in k.expect {
            assert!(t.contains(e), "{}: error lacks {e:?}: {t}", k.what);
        }
    }

    // A 10 MB frame gets an error (or nothing), and the server stays alive.
    c.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{{"name":"mira_store","arguments":{{"wing":"w","content":"{}"}}}}}}"#,
        "a".repeat(10 * 1024 * 1024)
    ));
    let (_, big) = c.wait_for("the oversized frame's error", |v| {
        v["error"]["code"] == json!(-32600)
    });
    let msg = big["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("limit"), "{big}");

    // JSON nested beyond the parser's depth limit: a parse error, not a stack overflow.
    c.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":901,"method":"tools/call","params":{{"name":"mira_store","arguments":{{"wing":"w","content":{}}}}}}}"#,
        nested(200_000)
    ));
    let (_, deep) = c.wait_for("the deep frame's error", |v| {
        v["error"]["code"] == json!(-32700)
    });
    assert!(deep["error"]["message"].is_string(), "{deep}");

    assert_eq!(memories(&mut c), 0, "a bad input was stored");
    // The server still works.
    let ok = c.call_tool(
        "mira_store",
        json!({"content": "The API runs on port 8080.", "wing": "w"}),
    );
    assert!(!is_error(&ok), "{ok}");
    assert_eq!(memories(&mut c), 1);
    let (status, _) = c.close();
    assert!(status.success(), "{status:?}");
}

/// `mira_supersede`'s bad input, over two memories `a` and `b` of wing `w`, `c` of wing `x`.
fn supersede_cases(
    a: &str,
    b: &str,
    c: &str,
) -> Vec<(&'static str, Value, &'static [&'static str])> {
    let needs: &[&str] = &["mira_supersede needs `old`", "and `new`", "mira_timeline"];
    vec![
        ("no ids", json!({}), needs),
        ("new missing", json!({"old": a}), needs),
        ("old blank", json!({"old": "  ", "new": b}), needs),
        ("old is null", json!({"old": null, "new": b}), needs),
        ("old is a number", json!({"old": 7, "new": b}), &["old"]),
        ("ids in a list", json!({"old": [a], "new": b}), &["old"]),
        (
            "malformed id",
            json!({"old": "not-an-id", "new": b}),
            &["invalid ID 'not-an-id'"],
        ),
        (
            "a path for an id",
            json!({"old": a, "new": "../../mira.db"}),
            &["invalid ID"],
        ),
        (
            "SQL in an id",
            json!({"old": "' OR 1=1 --", "new": b}),
            &["invalid ID"],
        ),
        (
            "unknown short id",
            json!({"old": "deadbeef", "new": b}),
            &[
                "no memory has an id starting with deadbeef",
                "mira_recall or mira_timeline",
            ],
        ),
        (
            "unknown UUID",
            json!({"old": a, "new": "T0:3f2c0d1e-0000-4000-8000-000000000000"}),
            &[
                "no memory has id 3f2c0d1e-0000-4000-8000-000000000000",
                "mira_recall",
            ],
        ),
        (
            "the same id twice",
            json!({"old": a, "new": a}),
            &["the same memory", "give the earlier memory as old"],
        ),
        (
            "the same memory by its short and full id",
            json!({"old": &a[..8], "new": format!("T0:{a}")}),
            &["the same memory"],
        ),
        (
            "a memory of another wing",
            json!({"old": a, "new": c}),
            &["wing 'w'", "wing 'x'", "one of its own wing"],
        ),
        (
            "reason too long",
            json!({"old": a, "new": b, "reason": "why ".repeat(251)}),
            &[
                "reason is 1003 bytes",
                "longer than 1000",
                "say it in a sentence",
            ],
        ),
        (
            "reason is a number",
            json!({"old": a, "new": b, "reason": 42}),
            &["reason"],
        ),
        (
            "reason is an object",
            json!({"old": a, "new": b, "reason": {"why": "moved"}}),
            &["reason"],
        ),
        (
            "undo is not a boolean",
            json!({"old": a, "new": b, "undo": "maybe"}),
            &["undo must be true or false"],
        ),
        (
            "undo is a number",
            json!({"old": a, "new": b, "undo": 1}),
            &["undo must be true or false, not a number"],
        ),
        (
            "unknown argument",
            json!({"old": a, "new": b, "supersedes": a}),
            &["supersedes"],
        ),
    ]
}

/// The `superseded_by` of memory `id`, as mira_load answers it.
fn superseded_by(c: &mut StdioClient, id: &str) -> Value {
    let r = c.call_tool("mira_load", json!({"id": id}));
    assert!(!is_error(&r), "{r}");
    r["structuredContent"]["superseded_by"].clone()
}

#[test]
fn mcp_supersede_bad_input_gets_clear_errors_and_changes_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(dir.path(), &["serve"]);
    c.initialize();
    let mut store = |content: &str, wing: &str| {
        let r = c.call_tool("mira_store", json!({"content": content, "wing": wing}));
        assert!(!is_error(&r), "{r}");
        crate::mcp_common::stored_id(&r)
    };
    let a = store("The build server runs Jenkins.", "w");
    let b = store("The staging database lives in eu-west-1.", "w");
    let other = store("Deploys happen on Tuesdays.", "w");
    let x = store("The office closes at six.", "x");

    for (what, args, expect) in supersede_cases(&a, &b, &x) {
        let r = c.call_tool("mira_supersede", args);
        assert!(is_error(&r), "{what}: expected a tool error, got {r}");
        let t = text(&r);
        for e in expect {
            assert!(t.contains(e), "{what}: error lacks {e:?}: {t}");
        }
    }
    assert_eq!(
        superseded_by(&mut c, &a),
        Value::Null,
        "a bad input changed a"
    );

    // An undo of a memory that is not superseded: nothing to do, said so, nothing changed.
    let r = c.call_tool("mira_supersede", json!({"old": a, "new": b, "undo": true}));
    assert!(!is_error(&r), "{r}");
    assert!(text(&r).contains("Nothing to undo"), "{r}");
    assert_eq!(r["structuredContent"]["changed"], json!(false), "{r}");

    // Superseded: an undo naming another memory, or the reverse, is refused with the way out.
    let r = c.call_tool("mira_supersede", json!({"old": a, "new": b}));
    assert!(!is_error(&r), "{r}");
    for (what, args, expect) in [
        (
            "undo by a memory that does not supersede it",
            json!({"old": a, "new": other, "undo": true}),
            "undo that one instead",
        ),
        (
            "the reverse",
            json!({"old": b, "new": a}),
            "undo that first (mira_supersede old=",
        ),
        (
            "superseded again by another",
            json!({"old": a, "new": other}),
            "undo that first (mira_supersede old=",
        ),
    ] {
        let r = c.call_tool("mira_supersede", args);
        assert!(is_error(&r), "{what}: expected a tool error, got {r}");
        assert!(text(&r).contains(expect), "{what}: {}", text(&r));
    }
    assert_eq!(superseded_by(&mut c, &a), json!(b));
    let (status, _) = c.close();
    assert!(status.success(), "{status:?}");
}

/// `mira ARGS` on the store in `dir/store`; returns (exit code, stdout, stderr).
fn run(dir: &Path, args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = common::mira(&dir.join("store"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(Into::into).collect()
}

fn run_str(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let owned = os(args);
    let refs: Vec<&std::ffi::OsStr> = owned.iter().map(|a| a.as_os_str()).collect();
    run(dir, &refs)
}

fn cli_memories(dir: &Path) -> u64 {
    let (code, out, err) = run_str(dir, &["status", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["memories"].as_u64().unwrap()
}

#[cfg(unix)]
#[test]
fn cli_rejects_invalid_utf8_and_bad_files() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let bad = std::ffi::OsStr::from_bytes(b"caf\xe9 au lait");
    let arg = std::ffi::OsStr::new;
    let (code, _, err) = run(d, &[arg("store"), bad, arg("--wing"), arg("w")]);
    assert_ne!(code, 0);
    assert!(err.contains("invalid UTF-8"), "{err}");

    let file = d.join("latin1.txt");
    std::fs::write(&file, b"na\xefve text").unwrap();
    let f = file.to_str().unwrap();
    let (code, _, err) = run_str(d, &["store", "--file", f, "--wing", "w"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("not valid UTF-8") && err.contains("offset 2") && err.contains("latin1.txt"),
        "{err}"
    );

    let (code, _, err) = run_str(d, &["store", "--file", d.to_str().unwrap(), "--wing", "w"]);
    assert_ne!(code, 0);
    assert!(err.contains("cannot read"), "{err}");

    let (code, _, err) = run_str(d, &["store", "with\u{1}control", "--wing", "w"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("U+0001"), "{err}");

    let (code, _, err) = run_str(d, &["store", "   ", "--wing", "w"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("TEXT is empty"), "{err}");

    let (code, _, err) = run_str(d, &["store", "ok", "--wing", "a/b"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--wing 'a/b' is invalid"), "{err}");

    let (code, _, err) = run_str(d, &["timeline", "--since", "31/31/2025"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--since '31/31/2025' is not a date"), "{err}");

    let (code, _, err) = run_str(d, &["recall", "x", "--budget", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--budget 0 is out of range"), "{err}");

    let (code, _, err) = run_str(d, &["load", "not-an-id"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid ID 'not-an-id'"), "{err}");

    assert_eq!(cli_memories(d), 0);
}

#[test]
fn config_that_is_a_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, _, err) = run_str(d, &["--config", d.to_str().unwrap(), "status"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("is a directory") && err.contains(d.to_str().unwrap()),
        "{err}"
    );
    let out = common::mira(&d.join("store"))
        .env("MIRA_CONFIG", d)
        .arg("status")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("is a directory"),
        "{err}"
    );
}

#[test]
fn database_that_is_not_sqlite_is_named_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("store").join("mira.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let junk = "these are my notes, not a database\n".repeat(200);
    std::fs::write(&db, &junk).unwrap();
    for args in [&["status"][..], &["store", "a fact", "--wing", "w"]] {
        let (code, _, err) = run_str(d, args);
        assert_ne!(code, 0, "{args:?}");
        assert!(
            err.contains("is not a mira database") && err.contains(db.to_str().unwrap()),
            "{args:?}: {err}"
        );
    }
    // The file is left as it was: never overwrite what might be someone's data.
    assert_eq!(std::fs::read_to_string(&db).unwrap(), junk);
}

#[cfg(unix)]
#[test]
fn read_only_database_still_recalls_and_store_names_the_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, _, err) = run_str(
        d,
        &[
            "store",
            "We deploy the API with blue-green releases.",
            "--wing",
            "ops",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let db = d.join("store").join("mira.db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();

    let (code, out, err) = run_str(d, &["recall", "how do we deploy the API?"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("blue-green"), "{out}");

    let (code, _, err) = run_str(
        d,
        &["store", "The API listens on port 8080.", "--wing", "ops"],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("read-only") && err.contains(db.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(cli_memories(d), 1);

    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, _, err) = run_str(
        d,
        &["store", "The API listens on port 8080.", "--wing", "ops"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(cli_memories(d), 2);
}

/// A PostgreSQL backend without a URL, with one that is not a URL, or with an unknown backend
/// name: mira stops with a message naming the setting, and nothing else starts.
#[test]
fn a_broken_postgres_setting_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[("MIRA_STORAGE_BACKEND", "postgres")],
            "storage.postgres.url: must be set",
        ),
        (
            &[
                ("MIRA_STORAGE_BACKEND", "postgres"),
                ("MIRA_DATABASE_URL", "not a url"),
            ],
            "storage.postgres.url is not a PostgreSQL URL",
        ),
        (
            &[("MIRA_STORAGE_BACKEND", "mysql")],
            "MIRA_STORAGE_BACKEND=mysql: expected sqlite or postgres",
        ),
    ];
    for (env, expect) in cases {
        let out = common::mira(dir.path())
            .envs(env.iter().copied())
            .arg("status")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{env:?}");
        assert!(stderr.contains(expect), "{env:?}: {stderr}");
    }
}
