//! The command line, driven as a user would: the real binary, the real model.

use crate::common;
use assert_cmd::Command;

use crate::common::{mira, stdout};

#[test]
fn version_and_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let v = stdout(mira(dir.path()).arg("--version"));
    assert!(v.starts_with("mira "), "{v}");
    let m = stdout(mira(dir.path()).arg("migrate"));
    assert!(
        m.contains(&format!("schema version {}", mira_store::LATEST_VERSION)),
        "{m}"
    );
    assert!(dir.path().join("mira.db").is_file());
}

#[test]
fn store_then_load_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(mira(dir.path()).args(["store", common::SEED, "--wing", "proj", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["memory_type"], "decision");
    let id = v["id"].as_str().unwrap().to_owned();
    let text = stdout(mira(dir.path()).args(["load", &format!("T0:{id}")]));
    assert!(
        text.contains(common::SEED) && text.contains("Wing: proj"),
        "{text}"
    );
    assert!(
        text.contains("PostgreSQL") && text.contains("rejected: MySQL,MongoDB"),
        "{text}"
    );
    let again = stdout(mira(dir.path()).args(["store", common::SEED, "--wing", "proj"]));
    assert!(
        again.contains("Duplicate") && again.contains(&id.replace('-', "")[..8]),
        "{again}"
    );
    let status: serde_json::Value =
        serde_json::from_str(&stdout(mira(dir.path()).args(["status", "--json"]))).unwrap();
    assert_eq!(status["memories"], 1);
    assert_eq!(status["by_type"]["decision"], 1);
    assert_eq!(status["schema_version"], mira_store::LATEST_VERSION);
    let text = stdout(mira(dir.path()).arg("status"));
    assert!(
        text.contains("Memories: 1") && text.contains("proj: 1"),
        "{text}"
    );
}

#[test]
fn store_from_file_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("note.txt");
    std::fs::write(&file, "The staging server port is 2222.").unwrap();
    let out = stdout(
        mira(dir.path())
            .args(["store", "--wing", "ops", "--file"])
            .arg(&file),
    );
    assert!(out.contains("Type: fact"), "{out}");
    let out = stdout(
        mira(dir.path())
            .args(["store", "--wing", "ops", "--file", "-"])
            .write_stdin("I prefer tabs"),
    );
    assert!(out.contains("Type: preference"), "{out}");
}

#[test]
fn bad_input_fails_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.bin");
    std::fs::write(&bad, [0x66, 0x6f, 0xff, 0xfe]).unwrap();
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec!["store".into(), "   ".into(), "--wing".into(), "w".into()],
            2,
            "TEXT is empty",
        ),
        (
            vec!["store".into(), "x".into(), "--wing".into(), "a/b".into()],
            2,
            "wing 'a/b' is invalid",
        ),
        (
            vec![
                "store".into(),
                "x".into(),
                "--wing".into(),
                "w".into(),
                "--type".into(),
                "nope".into(),
            ],
            2,
            "valid types are",
        ),
        (
            vec![
                "store".into(),
                "--wing".into(),
                "w".into(),
                "--file".into(),
                bad.display().to_string(),
            ],
            1,
            "not valid UTF-8",
        ),
        (vec!["load".into(), "123".into()], 2, "invalid ID"),
        (
            vec!["load".into(), uuid::Uuid::new_v4().to_string()],
            3,
            "`mira recall` or `mira timeline`",
        ),
    ];
    for (args, code, msg) in cases {
        let out = mira(dir.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let status: serde_json::Value =
        serde_json::from_str(&stdout(mira(dir.path()).args(["status", "--json"]))).unwrap();
    assert_eq!(status["memories"], 0);
}

#[test]
fn bad_config_and_storage_fail_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    let cases = [
        ("recall:\n  rrf_kk: 1\n", "rrf_kk"),
        (
            "allocator:\n  default_budget: many\n",
            "allocator.default_budget",
        ),
        ("storage:\n  path: /etc/passwd/mira\n", "/etc/passwd/mira"),
    ];
    for (yaml, needle) in cases {
        std::fs::write(&cfg, yaml).unwrap();
        let out = Command::cargo_bin("mira")
            .unwrap()
            .env("HOME", dir.path())
            .env_remove("MIRA_STORAGE_PATH")
            .arg("--config")
            .arg(&cfg)
            .args(["store", "probe", "--wing", "w"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{yaml}: {err}");
        assert!(err.contains(needle), "{yaml}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = mira(dir.path())
        .arg("--config")
        .arg(dir.path())
        .arg("status")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
    let out = mira(&dir.path().join("c.yaml").join("sub"))
        .args(["store", "probe", "--wing", "w"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn missing_model_names_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let out = mira(dir.path())
        .env("MIRA_MODEL_DIR", dir.path().join("no-model"))
        .args(["store", "hello there", "--wing", "w"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let warning: Vec<&str> = said.lines().filter(|l| l.starts_with("Warning")).collect();
    assert_eq!(warning.len(), 1, "{said}");
    assert!(warning[0].contains("scripts/fetch-model.sh"), "{said}");
}

/// Runs `cmd` with its stdout a pipe whose reader is gone before it writes.
fn with_stdout_closed(cmd: &mut std::process::Command) -> std::process::Output {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = crate::mcp_common::mira_command(dir.path(), &["migrate"]);
    // Like `mira migrate | head -0`: the reader is gone before mira writes.
    let out = with_stdout_closed(&mut cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?} {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_project_store_is_kept_out_of_git() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let run = |args: &[&str]| {
        let mut cmd = crate::mcp_common::mira_command(&repo, args);
        cmd.env_remove("MIRA_STORAGE_PATH")
            .env_remove("MIRA_DATA_PATH")
            .env("HOME", home.path());
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&[
        "store",
        "The repository keeps its memories out of git.",
        "--wing",
        "repo",
    ]);
    let text = run(&["status"]);
    assert!(
        text.contains(".mira"),
        "status names the store in use:\n{text}"
    );
    assert!(!text.contains("Uptime"), "no server, no uptime:\n{text}");
    let ignore = std::fs::read_to_string(repo.join(".mira/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == "*"), "{ignore}");
}

#[test]
fn the_reference_invocations_work() {
    let dir = tempfile::tempdir().unwrap();
    let v = stdout(mira(dir.path()).arg("-version"));
    assert!(v.starts_with("mira "), "{v}");
    let m = stdout(mira(dir.path()).arg("-migrate"));
    assert!(m.contains("schema version"), "{m}");
    let other = dir.path().join("other");
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, format!("storage:\n  path: {}\n", other.display())).unwrap();
    for args in [
        vec![
            "-config".to_string(),
            config.display().to_string(),
            "status".into(),
        ],
        vec![format!("-config={}", config.display()), "status".into()],
    ] {
        let s = stdout(mira(dir.path()).env_remove("MIRA_STORAGE_PATH").args(&args));
        assert!(s.contains(&other.display().to_string()), "{args:?}: {s}");
    }
    // The reference's client configuration: {"command": "mira", "args": ["--with-soul"]}.
    for flag in ["--with-soul", "-with-soul"] {
        let mut c = crate::mcp_common::StdioClient::spawn(dir.path(), &[flag]);
        c.initialize();
        let list = c.request("tools/list", serde_json::json!({}));
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"soul_capture") && names.contains(&"mira_recall"),
            "{flag}: {names:?}"
        );
    }
}

#[test]
fn import_refuses_one_json_document_and_export_ends_quietly_on_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let conv = dir.path().join("conv.json");
    std::fs::write(
        &conv,
        "{\n  \"speaker_a\": \"Caroline\",\n  \"conversation\": {}\n}\n",
    )
    .unwrap();
    let out = mira(dir.path())
        .args(["import", conv.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--format locomo") && err.lines().count() == 1,
        "{err}"
    );
    assert!(out.stdout.is_empty());
    stdout(mira(dir.path()).args(["store", common::SEED, "--wing", "proj"]));
    let mut cmd = crate::mcp_common::mira_command(dir.path(), &["export"]);
    cmd.env("MIRA_STORAGE_PATH", dir.path());
    let out = with_stdout_closed(&mut cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("error"),
        "{:?} {err}",
        out.status
    );
}

#[test]
fn recall_of_an_empty_wing_names_the_wings_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    stdout(mira(dir.path()).args(["store", common::SEED, "--wing", "proj"]));
    let out = mira(dir.path())
        .args(["recall", "PostgreSQL", "--wing", "nowhere"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Existing wings: proj"), "{err}");
    let block = String::from_utf8_lossy(&out.stdout);
    assert!(
        block.starts_with("=== MIRA CONTEXT · 0 memories"),
        "{block}"
    );
}

#[test]
fn logs_have_no_colour_codes_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    // A retired key is accepted with a warning: something is logged.
    std::fs::write(&config, "allocator:\n  recency_floor: 0.3\n").unwrap();
    let out = mira(dir.path())
        .args(["--config", config.to_str().unwrap(), "status"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("recency_floor"), "a warning is logged: {err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn bare_mira_on_a_terminal_says_what_it_waits_for() {
    let dir = tempfile::tempdir().unwrap();
    let mira_bin = env!("CARGO_BIN_EXE_mira");
    // util-linux `script` gives mira a terminal; its stdin is empty, so mira ends at once.
    let out = std::process::Command::new("script")
        .args(["-qec", mira_bin, "/dev/null"])
        .env("MIRA_STORAGE_PATH", dir.path())
        .env("MIRA_METRICS_ENABLED", "false")
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux script (the machine image has it)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("waiting for a client on standard input"),
        "{text}"
    );
    // Off a terminal (an MCP client), nothing but MCP is said.
    let piped = std::process::Command::new(mira_bin)
        .env("MIRA_STORAGE_PATH", dir.path())
        .env("MIRA_METRICS_ENABLED", "false")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        piped.stderr.is_empty() && piped.stdout.is_empty(),
        "{piped:?}"
    );
}

/// Use-case errors name their argument in each surface's words (the CLI's flag, MCP's argument)
/// while the user's own text, even when it spells an argument's name, comes back intact.
#[test]
fn an_error_names_the_argument_in_each_surfaces_words_and_keeps_the_users_text() {
    use crate::mcp_common::{is_error, serial, text, StdioClient};
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let values = [
        "created_at yesterday",
        "session_id max_depth",
        "mira_recall from_model to_model",
    ];
    for value in values {
        let out = mira(dir.path())
            .args(["store", "x", "--wing", "w", "--created-at", value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {err}");
        assert!(
            err.contains(&format!(
                "error: --created-at '{value}' is not an RFC 3339 time"
            )),
            "{value}: {err}"
        );
    }
    // A wing spelled like an argument, listed back by a failing recall's hint.
    stdout(mira(dir.path()).args(["store", common::SEED, "--wing", "older_than_days"]));
    let out = mira(dir.path())
        .args(["recall", "PostgreSQL", "--wing", "nowhere"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Existing wings: older_than_days"), "{err}");
    let out = mira(dir.path())
        .args([
            "causal",
            &uuid::Uuid::new_v4().to_string(),
            "--max-depth",
            "99",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error: --max-depth 99 is out of range"),
        "{err}"
    );
    for (args, cli, _, _, _) in SPELLED_PER_SURFACE {
        let out = mira(dir.path()).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("error: {cli}")), "{args:?}: {err}");
    }

    let mut client = StdioClient::spawn(dir.path(), &["serve"]);
    client.initialize();
    for value in values {
        let r = client.call_tool(
            "mira_store",
            serde_json::json!({"content": "x", "wing": "w", "created_at": value}),
        );
        assert!(is_error(&r), "{r}");
        assert!(
            text(&r).starts_with(&format!("created_at '{value}' is not an RFC 3339 time")),
            "{r}"
        );
    }
    let r = client.call_tool(
        "mira_causal_chain",
        serde_json::json!({"id": uuid::Uuid::new_v4().to_string(), "max_depth": 99}),
    );
    assert!(text(&r).starts_with("max_depth 99 is out of range"), "{r}");
    for (_, _, tool, args, mcp) in SPELLED_PER_SURFACE {
        let r = client.call_tool(tool, serde_json::from_str(args).unwrap());
        assert!(
            is_error(&r) && text(&r).starts_with(mcp),
            "{tool} {args}: {r}"
        );
    }
}

/// One error per argument as each surface words it: the command's arguments and what its
/// message starts with, then the tool, its arguments and what its message starts with.
const SPELLED_PER_SURFACE: [(&[&str], &str, &str, &str, &str); 7] = [
    (
        &["recall", "q", "--budget", "0"],
        "--budget 0 is out of range",
        "mira_recall",
        r#"{"query": "q", "budget": 0}"#,
        "budget 0 is out of range",
    ),
    (
        &["recall", "q", "--wing", "budget room"],
        "--wing 'budget room' is invalid",
        "mira_recall",
        r#"{"query": "q", "wing": "budget room"}"#,
        "wing 'budget room' is invalid",
    ),
    (
        &["store", "x", "--wing", "w", "--room", "a/b"],
        "--room 'a/b' is invalid",
        "mira_store",
        r#"{"content": "x", "wing": "w", "room": "a/b"}"#,
        "room 'a/b' is invalid",
    ),
    (
        &["store", "  ", "--wing", "w"],
        "TEXT is empty",
        "mira_store",
        r#"{"content": "  ", "wing": "w"}"#,
        "content is empty",
    ),
    (
        &["timeline", "--limit", "0"],
        "--limit 0 is out of range: give 1 to 1000 (default 100) and page with --cursor",
        "mira_timeline",
        r#"{"limit": 0}"#,
        "limit 0 is out of range: give 1 to 1000 (default 100) and page with cursor",
    ),
    (
        &["timeline", "--since", "2026-02-01", "--until", "2026-01-01"],
        "--since (2026-02-01T00:00:00+00:00) is after --until",
        "mira_timeline",
        r#"{"since": "2026-02-01", "until": "2026-01-01"}"#,
        "since (2026-02-01T00:00:00+00:00) is after until",
    ),
    (
        &["link", "7f0c1d52", "7f0c1d53", "--relation", "cursor"],
        "--relation 'cursor' is not known",
        "mira_link",
        r#"{"from": "7f0c1d52", "to": "7f0c1d53", "relation": "cursor"}"#,
        "relation 'cursor' is not known",
    ),
];
