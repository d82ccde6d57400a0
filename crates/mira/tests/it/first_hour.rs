//! The first hour of a new user: one test per trap a new user fell into, each spawning the
//! binary with a fresh HOME (and a git repository where it matters). The reference's
//! invocations, a bare `mira` on a terminal, closed pipes and logs off a terminal live in
//! `cli.rs` (`the_reference_invocations_work`,
//! `bare_mira_on_a_terminal_says_what_it_waits_for`,
//! `import_refuses_one_json_document_and_export_ends_quietly_on_a_closed_pipe`,
//! `a_closed_stdout_ends_a_command_quietly`, `logs_have_no_colour_codes_off_a_terminal`,
//! `recall_of_an_empty_wing_names_the_wings_that_exist`); the clear preview and the CLI's own
//! terms in `lifecycle_cli.rs`.

use crate::common::{self, stdout};
use crate::mcp_common::{self, mira_command, text, StdioClient};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// `mira ARGS` run in `cwd` with a fresh HOME and no storage override: the store is resolved
/// as a new user's would be.
pub(crate) fn as_new_user(home: &Path, cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = mira_command(cwd, args);
    cmd.env_remove("MIRA_STORAGE_PATH")
        .env_remove("MIRA_DATA_PATH")
        .env("HOME", home);
    cmd
}

pub(crate) fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo)
        .output()
        .expect("git (CI checks the repository out with it)");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Inside a git repository the CLI and a server started there (as Claude Code starts
/// it) use `<repo>/.mira/`, say so (status, the first log line, the MCP instructions and
/// `mira_status`), and git does not see it.
#[test]
fn a_project_store_is_named_everywhere_and_invisible_to_git() {
    let _serial = mcp_common::serial();
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let db = repo.join(".mira/mira.db").display().to_string();

    run_ok(&mut as_new_user(
        home.path(),
        &repo,
        &["store", common::SEED, "--wing", "repo"],
    ));
    let status = run_ok(&mut as_new_user(home.path(), &repo, &["status"]));
    assert!(status.contains(&format!("Database: {db}")), "{status}");
    assert_eq!(git(&repo, &["status", "--porcelain"]), "", "git sees .mira");

    let mut serve = as_new_user(home.path(), &repo, &["serve"]);
    serve.env("MIRA_LOG", "info");
    let mut client = StdioClient::spawn_command(serve);
    let init = client.initialize();
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains(&db), "{instructions}");
    let st = client.call_tool("mira_status", json!({}));
    assert!(text(&st).contains(&db), "{}", text(&st));
    let log = client.stderr();
    let first = log.lines().next().unwrap_or_default();
    assert!(
        first.contains("INFO") && first.contains(&format!("database {db}")),
        "{log}"
    );
    assert!(client.close().0.success());
}

/// The README installs the binary and every client snippet starts that binary.
#[test]
fn the_readme_installs_mira_and_its_snippets_start_the_installed_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("cargo install --path crates/mira --locked"));
    let commands: Vec<&str> = readme
        .split("\"command\": \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(commands.len() >= 3, "{commands:?}");
    for c in &commands {
        assert!(
            *c == "mira" || c.ends_with("/.cargo/bin/mira"),
            "a snippet starts {c}, not the installed `mira`"
        );
    }
    assert!(readme.contains("-- mira serve"), "the Claude Code line");
    // cargo names the Rust version needed instead of failing on a newer language feature.
    for krate in ["mira", "mira-core", "mira-store", "mira-embed", "mira-soul"] {
        let manifest =
            std::fs::read_to_string(root.join("crates").join(krate).join("Cargo.toml")).unwrap();
        assert!(manifest.contains("rust-version"), "{krate}");
    }
}

/// Two stdio servers side by side serve MCP and nothing else: no metrics port, no
/// warning about one (other warnings of two servers sharing a store are not this test's).
#[test]
fn stdio_servers_bind_no_metrics_port_unless_asked() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().unwrap();
    let spawn = || {
        let mut cmd = mira_command(dir.path(), &["serve"]);
        cmd.env_remove("MIRA_METRICS_ENABLED")
            .env("MIRA_LOG", "info");
        let mut c = StdioClient::spawn_command(cmd);
        c.initialize();
        c
    };
    let (a, b) = (spawn(), spawn());
    for c in [a, b] {
        let log = c.stderr();
        assert!(c.close().0.success());
        assert!(!log.contains("metrics") && !log.contains("9090"), "{log}");
    }
}

/// Runs `command` (a shell command line) on a terminal (util-linux `script`); returns what the
/// terminal showed.
fn on_a_terminal(dir: &Path, command: &str, env: &[(&str, &Path)]) -> String {
    let mut cmd = Command::new("script");
    cmd.args(["-qec", command, "/dev/null"])
        .env("HOME", dir)
        .env("MIRA_METRICS_ENABLED", "false")
        .env("MIRA_MODEL_DIR", mira_embed::resolve_model_dir(None))
        .env_remove("MIRA_CONFIG")
        .env_remove("MIRA_LOG")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("util-linux script");
    assert!(out.status.success(), "{command}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A LoCoMo conversation of two sessions, four turns and two questions.
fn tiny_locomo(path: &Path) {
    let conv = json!({
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat named Miso last week."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I am training for the Berlin marathon."}
            ],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "Miso broke a vase this morning."},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "My marathon time was 3 hours 40 minutes."}
            ]
        },
        "qa": [
            {"question": "What is the name of Ana's cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
            {"question": "Which marathon did Ben train for?", "answer": "Berlin", "evidence": ["D1:2"], "category": 4}
        ]
    });
    std::fs::write(path, conv.to_string()).unwrap();
}

/// On a terminal, import (LoCoMo turns, JSONL memories), eval (conversations and
/// questions), index rebuild and embed-missing draw bars with counts and an estimate; off a
/// terminal they draw nothing.
#[test]
fn long_commands_show_counts_and_time_left_on_a_terminal_only() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let conv = d.join("tiny.json");
    tiny_locomo(&conv);
    let bin = env!("CARGO_BIN_EXE_mira");
    let (a, b) = (d.join("a"), d.join("b"));
    let store_a: &[(&str, &Path)] = &[("MIRA_STORAGE_PATH", &a)];

    let shown = on_a_terminal(
        d,
        &format!("{bin} import --format locomo {}", conv.display()),
        store_a,
    );
    assert!(
        shown.contains("import") && shown.contains("/4 turns") && shown.contains("ETA"),
        "{shown}"
    );
    assert!(shown.contains("Imported: 4"), "{shown}");

    let export = d.join("all.jsonl");
    stdout(common::mira(&a).args(["export", "-o", export.to_str().unwrap()]));
    let shown = on_a_terminal(
        d,
        &format!("{bin} import {}", export.display()),
        &[("MIRA_STORAGE_PATH", &b)],
    );
    assert!(shown.contains("/4 memories"), "{shown}");
    assert!(!shown.contains(" B/"), "items, not bytes: {shown}");

    let shown = on_a_terminal(d, &format!("{bin} index rebuild"), store_a);
    assert!(shown.contains("/4 vectors"), "{shown}");
    let shown = on_a_terminal(d, &format!("{bin} index embed-missing"), store_a);
    assert!(shown.contains("memories"), "{shown}");

    let shown = on_a_terminal(
        d,
        &format!("{bin} eval locomo {} --no-embedding-cache", conv.display()),
        store_a,
    );
    assert!(
        shown.contains("/1 conversations") && shown.contains("/2 questions"),
        "{shown}"
    );

    // Off a terminal: the answer on stdout, nothing on stderr.
    let out = common::mira(&d.join("c"))
        .args(["import", "--format", "locomo", conv.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    let out = common::mira(&a)
        .args(["index", "rebuild"])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
}

/// A config file whose model folder is `model_dir`.
fn config_with_model(dir: &Path, name: &str, model_dir: &Path) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("embeddings:\n  model_dir: {}\n", model_dir.display()),
    )
    .unwrap();
    path
}

/// `mira --config CONFIG ARGS` on the store in `dir/store`, the model folder taken from the
/// config alone.
fn mira_with(dir: &Path, config: &Path, args: &[&str]) -> Command {
    let mut cmd = mira_command(dir, &["--config", config.to_str().unwrap()]);
    cmd.args(args).env_remove("MIRA_MODEL_DIR");
    cmd
}

fn status_json(dir: &Path, config: &Path) -> Value {
    serde_json::from_str(&run_ok(&mut mira_with(dir, config, &["status", "--json"]))).unwrap()
}

/// With `embeddings.model_dir` an empty folder, stores are kept without a vector,
/// recall answers by words with a notice (CLI and MCP), status counts what lacks a vector;
/// `mira index embed-missing` with the model fills them, and so does the next server start.
#[test]
fn without_the_model_memories_are_kept_and_recalled_by_their_words() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let empty = d.join("no-model");
    std::fs::create_dir_all(&empty).unwrap();
    let none = config_with_model(d, "none.yaml", &empty);
    let real = config_with_model(d, "real.yaml", &mira_embed::resolve_model_dir(None));

    let stored = run_ok(&mut mira_with(
        d,
        &none,
        &[
            "store",
            "The staging database runs PostgreSQL 16 on port 5433.",
            "--wing",
            "ops",
        ],
    ));
    assert!(
        stored.starts_with("Stored: ") && stored.contains("Warning: stored without a vector"),
        "{stored}"
    );
    run_ok(&mut mira_with(
        d,
        &none,
        &[
            "store",
            "We deploy the API every Tuesday after the review.",
            "--wing",
            "ops",
        ],
    ));
    let block = run_ok(&mut mira_with(
        d,
        &none,
        &[
            "recall",
            "which port does the staging database use",
            "--wing",
            "ops",
        ],
    ));
    assert!(
        block.contains(&format!(
            "\n{}\n",
            mira::usecases::recall::LEXICAL_ONLY_NOTICE
        )),
        "{block}"
    );
    let first = block.find("PostgreSQL").unwrap();
    assert!(
        first < block.find("Tuesday").unwrap_or(usize::MAX),
        "{block}"
    );
    let st = status_json(d, &none);
    assert_eq!(
        (&st["without_vector"], &st["model_present"]),
        (&json!(2), &json!(false))
    );
    let text_status = run_ok(&mut mira_with(d, &none, &["status"]));
    assert!(text_status.contains("Without a vector: 2"), "{text_status}");

    // Over MCP too: a store is kept, a recall says how it was ranked.
    let mut serve = mira_with(d, &none, &["serve"]);
    serve.env("MIRA_LOG", "warn");
    let mut client = StdioClient::spawn_command(serve);
    client.initialize();
    let r = client.call_tool(
        "mira_store",
        json!({"content": "The on-call rotation changes every Monday.", "wing": "ops"}),
    );
    assert!(!mcp_common::is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["embedded"], json!(false));
    let r = client.call_tool(
        "mira_recall",
        json!({"query": "on-call rotation", "wing": "ops"}),
    );
    assert!(
        text(&r).contains(mira::usecases::recall::LEXICAL_ONLY_NOTICE),
        "{}",
        text(&r)
    );
    assert_eq!(r["structuredContent"]["lexical_only"], json!(true));
    let log = client.stderr();
    assert!(client.close().0.success());
    assert!(log.contains("no embedding model in"), "{log}");

    // embed-missing needs the model, and says where it looked.
    let out = mira_with(d, &none, &["index", "embed-missing"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("scripts/fetch-model.sh"));
    let filled = run_ok(&mut mira_with(d, &real, &["index", "embed-missing"]));
    assert_eq!(
        filled,
        format!(
            "Embedded 3 memories that had no vector of {} (0 left without one)\n",
            common::default_model_name()
        )
    );
    let st = status_json(d, &real);
    assert_eq!(st["without_vector"], json!(0));
    assert_eq!(st["index"]["size"], json!(3));
    let block = run_ok(&mut mira_with(
        d,
        &real,
        &["recall", "staging database port"],
    ));
    assert!(!block.contains("ranked by words only"), "{block}");

    // A server started with the model embeds what was stored without it.
    run_ok(&mut mira_with(
        d,
        &none,
        &[
            "store",
            "Backups run nightly at 02:00 UTC.",
            "--wing",
            "ops",
        ],
    ));
    assert_eq!(status_json(d, &real)["without_vector"], json!(1));
    let mut client = StdioClient::spawn_command(mira_with(d, &real, &["serve"]));
    client.initialize();
    let deadline = Instant::now() + Duration::from_secs(120);
    while status_json(d, &real)["without_vector"] != json!(0) {
        assert!(Instant::now() < deadline, "{}", client.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(client.close().0.success());
}

/// `embeddings.current_model` is retired (accepted with a warning), every embedding
/// records the model that computed it, and an export naming the model in its older spelling
/// imports without embedding anything again.
#[test]
fn embeddings_record_the_model_that_made_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("config.yaml");
    std::fs::write(
        &config,
        "embeddings:\n  current_model: text-embedding-3-large\n",
    )
    .unwrap();
    let out = mira_command(d, &["--config", config.to_str().unwrap(), "store"])
        .args([common::SEED, "--wing", "proj"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`embeddings.current_model` is no longer used"),
        "{err}"
    );
    let status: Value =
        serde_json::from_str(&run_ok(&mut mira_command(d, &["status", "--json"]))).unwrap();
    let model = common::default_model_name();
    assert_eq!(status["model"], json!(model));
    let line = run_ok(&mut mira_command(d, &["export", "--embeddings"]));
    let exported: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(exported["embedding"]["model"], json!(model));

    // Into stores without a model: the older spelling of the same model is used as it is;
    // another model's vector is not, so that memory waits for one.
    let empty = d.join("no-model");
    std::fs::create_dir_all(&empty).unwrap();
    for (model, embedded, without) in [
        (format!("sentence-transformers/{model}"), 0, 0),
        ("text-embedding-3-large".to_owned(), 0, 1),
    ] {
        let mut line: Value = exported.clone();
        line["embedding"]["model"] = json!(model);
        let store = d.join(format!("import-{embedded}-{without}"));
        let file = d.join("one.jsonl");
        std::fs::write(&file, format!("{line}\n")).unwrap();
        let mut cmd = mira_command(d, &["import", "--json", file.to_str().unwrap()]);
        cmd.env("MIRA_STORAGE_PATH", &store)
            .env("MIRA_MODEL_DIR", &empty);
        let report: Value = serde_json::from_str(&run_ok(&mut cmd)).unwrap();
        assert_eq!(
            (
                &report["imported"],
                &report["embedded"],
                &report["without_vector"]
            ),
            (&json!(1), &json!(embedded), &json!(without)),
            "{model}"
        );
    }
}

/// A change of `embeddings.precision` leaves no store with vectors of two models: the memories
/// embedded by the other precision are re-embedded by `mira index embed-missing` (and by a
/// server's background pass), and recall finds them with the new model's query vectors.
#[test]
fn a_change_of_precision_re_embeds_the_older_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f32_cmd = |args: &[&str]| {
        let mut cmd = mira_command(d, args);
        cmd.env("MIRA_EMBEDDINGS_PRECISION", "f32");
        cmd
    };
    run_ok(&mut f32_cmd(&["store", common::SEED, "--wing", "proj"]));
    run_ok(&mut f32_cmd(&[
        "store",
        "Deploys happen on Tuesdays.",
        "--wing",
        "proj",
    ]));
    let model = common::default_model_name();
    assert_ne!(model, mira_embed::Precision::F32.model_name());
    let status: Value =
        serde_json::from_str(&run_ok(&mut mira_command(d, &["status", "--json"]))).unwrap();
    assert_eq!(status["model"], json!(model));
    assert_eq!(
        (&status["without_vector"], &status["other_model_vectors"]),
        (&json!(0), &json!(2))
    );
    let text = run_ok(&mut mira_command(d, &["status"]));
    assert!(
        text.contains("Vectors of another model: 2") && text.contains("embed-missing"),
        "{text}"
    );

    let filled = run_ok(&mut mira_command(d, &["index", "embed-missing"]));
    assert_eq!(
        filled,
        format!("Embedded 2 memories that had no vector of {model} (0 left without one)\n")
    );
    let again = run_ok(&mut mira_command(d, &["index", "embed-missing"]));
    assert!(again.starts_with("Embedded 0 memories"), "{again}");
    let status: Value =
        serde_json::from_str(&run_ok(&mut mira_command(d, &["status", "--json"]))).unwrap();
    assert_eq!(status["other_model_vectors"], json!(0));
    let text = run_ok(&mut mira_command(d, &["status"]));
    assert!(!text.contains("another model"), "{text}");
    let exported = run_ok(&mut mira_command(d, &["export", "--embeddings"]));
    assert_eq!(exported.lines().count(), 2);
    for line in exported.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["embedding"]["model"], json!(model), "{line}");
    }
    let recalled = run_ok(&mut mira_command(
        d,
        &["recall", "which database did we choose", "--wing", "proj"],
    ));
    assert!(recalled.contains("PostgreSQL"), "{recalled}");
}

/// `tools/list` stays small (it is read in every agent session) and still says what
/// an agent needs: when to call each tool, the id forms, the budget.
#[test]
fn the_tool_list_is_small_and_says_what_an_agent_needs() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(dir.path(), &["serve"]);
    c.initialize();
    let list = c.request("tools/list", json!({}));
    // What a client puts in the model's context: each tool's name, description and input schema
    // (the output schema describes the answer for the client's code, not for the model).
    let mut seen = list["result"].clone();
    for tool in seen["tools"].as_array_mut().unwrap() {
        tool.as_object_mut().unwrap().remove("outputSchema");
    }
    let bytes = serde_json::to_string(&seen).unwrap().len();
    // Twelve tools (mira_supersede the latest, at about 870 bytes).
    assert!(
        bytes <= 14_000,
        "tools/list without output schemas is {bytes} bytes"
    );
    let tools = list["result"]["tools"].as_array().unwrap();
    let find = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    let recall = find("mira_recall");
    let d = recall["description"].as_str().unwrap();
    assert!(
        d.contains("start of every task") && d.contains("budget") && d.contains("mira_load"),
        "{d}"
    );
    let budget = &recall["inputSchema"]["properties"]["budget"];
    assert_eq!(
        (&budget["minimum"], &budget["maximum"], &budget["default"]),
        (&json!(1), &json!(100_000), &json!(4000))
    );
    let id = find("mira_load")["inputSchema"]["properties"]["id"]["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        id.contains("8 hex") && id.contains("prefix") && id.contains("UUID"),
        "{id}"
    );
    let store = find("mira_store")["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(store.contains("as soon as you learn"), "{store}");
    let clear = find("mira_clear_memory")["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(clear.contains("confirm: true"), "{clear}");
    assert!(c.close().0.success());
}
