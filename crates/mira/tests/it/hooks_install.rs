//! `mira hook install claude-code` and `mira hook uninstall`: merged into Claude Code's
//! settings without clobbering, undone byte for byte.

use crate::common::{mira, stdout};
use serde_json::Value;
use std::path::Path;

/// A user settings file as Claude Code writes it (two spaces, other hooks and settings).
const SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": [
      "Bash(cargo test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": []
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write \"$CLAUDE_FILE_PATHS\""
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "echo 'remember the release freeze'",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "model": "sonnet",
  "env": {
    "DISABLE_TELEMETRY": "1",
    "BUDGET": 12.5
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  }
}"#;

/// `~/.claude.json`: Claude Code's own state, with a user MCP server.
const CLAUDE_JSON: &str = r#"{
  "numStartups": 42,
  "autoUpdates": true,
  "projects": {
    "/home/u/src/app": {
      "allowedTools": [],
      "mcpServers": {}
    }
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {}
    }
  },
  "userID": "0123abcd"
}
"#;

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn run(home: &Path, cwd: &Path, args: &[&str]) -> String {
    stdout(mira(home).current_dir(cwd).env("HOME", home).args(args))
}

#[test]
fn user_install_merges_and_uninstall_restores_the_files_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    let claude_json = home.path().join(".claude.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, SETTINGS).unwrap();
    std::fs::write(&claude_json, CLAUDE_JSON).unwrap();

    let dry = run(
        home.path(),
        home.path(),
        &["hook", "install", "claude-code", "--dry-run"],
    );
    assert!(
        dry.contains("+ ") && dry.contains("hook session-start"),
        "{dry}"
    );
    assert_eq!(
        read(&settings).as_deref(),
        Some(SETTINGS),
        "a dry run writes nothing"
    );

    let out = run(
        home.path(),
        home.path(),
        &["hook", "install", "claude-code"],
    );
    assert!(out.contains("updated"), "{out}");
    let installed = read(&settings).unwrap();
    let v: Value = serde_json::from_str(&installed).unwrap();
    let hooks = &v["hooks"];
    assert_eq!(
        hooks["PostToolUse"][0]["matcher"], "Edit|Write",
        "other hooks kept"
    );
    let starts = hooks["SessionStart"].as_array().unwrap();
    assert_eq!(
        starts.len(),
        2,
        "the user's own SessionStart hook is kept beside mira's"
    );
    let command = starts[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        command.starts_with('/') && command.ends_with("mira hook session-start"),
        "the binary by its absolute path: {command}"
    );
    for event in ["PreCompact", "SessionEnd"] {
        assert!(hooks[event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(&format!(
                "hook {}",
                if event == "PreCompact" {
                    "pre-compact"
                } else {
                    "session-end"
                }
            )));
    }
    assert!(
        hooks.get("UserPromptSubmit").is_none(),
        "the prompt hook is off by default"
    );
    assert_eq!(v["env"]["BUDGET"], 12.5);
    assert!(
        installed.starts_with("{\n  \"$schema\""),
        "order and indentation kept:\n{installed}"
    );
    let servers: Value = serde_json::from_str(&read(&claude_json).unwrap()).unwrap();
    assert_eq!(servers["mcpServers"]["mira"]["args"][0], "serve");
    assert_eq!(servers["mcpServers"]["github"]["command"], "npx");
    assert_eq!(servers["numStartups"], 42);

    // Installing again changes nothing.
    let again = run(
        home.path(),
        home.path(),
        &["hook", "install", "claude-code"],
    );
    assert!(again.contains("unchanged"), "{again}");
    assert_eq!(read(&settings).unwrap(), installed);

    // Uninstall gives both files back as they were.
    run(
        home.path(),
        home.path(),
        &["hook", "uninstall", "claude-code"],
    );
    assert_eq!(read(&settings).as_deref(), Some(SETTINGS));
    assert_eq!(read(&claude_json).as_deref(), Some(CLAUDE_JSON));
}

#[test]
fn project_install_creates_the_files_and_uninstall_removes_them() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let cwd = repo.join("src/deep");
    run(
        home.path(),
        &cwd,
        &[
            "hook",
            "install",
            "claude-code",
            "--project",
            "--with-user-prompt",
        ],
    );
    let settings = repo.join(".claude/settings.json");
    let mcp = repo.join(".mcp.json");
    let v: Value = serde_json::from_str(&read(&settings).unwrap()).unwrap();
    assert_eq!(
        v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"], "mira hook user-prompt",
        "a project install runs mira from PATH"
    );
    let m: Value = serde_json::from_str(&read(&mcp).unwrap()).unwrap();
    assert_eq!(m["mcpServers"]["mira"]["command"], "mira");
    run(home.path(), &cwd, &["hook", "uninstall", "--project"]);
    assert!(
        !settings.exists() && !mcp.exists(),
        "nothing else was in them"
    );
}

#[test]
fn a_server_named_mira_that_is_not_miras_is_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let mcp = repo.join(".mcp.json");
    // Four spaces, no final line break, a shared HTTP server under the name mira.
    let text = "{\n    \"mcpServers\": {\n        \"mira\": {\n            \"type\": \"http\",\n            \"url\": \"http://127.0.0.1:8765/mcp\"\n        }\n    }\n}";
    std::fs::write(&mcp, text).unwrap();
    let out = run(
        home.path(),
        &repo,
        &["hook", "install", "claude-code", "--project"],
    );
    assert!(out.contains("left as it is"), "{out}");
    assert_eq!(read(&mcp).as_deref(), Some(text));
    run(home.path(), &repo, &["hook", "uninstall", "--project"]);
    assert_eq!(read(&mcp).as_deref(), Some(text));
    assert!(!repo.join(".claude/settings.json").exists());
}

#[test]
fn a_settings_file_that_is_not_json_is_refused_and_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{ \"model\": \"sonnet\", // a comment\n}").unwrap();
    let out = mira(home.path())
        .current_dir(home.path())
        .env("HOME", home.path())
        .args(["hook", "install", "claude-code"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not valid JSON") && err.contains("settings.json"),
        "{err}"
    );
    assert_eq!(
        read(&settings).as_deref(),
        Some("{ \"model\": \"sonnet\", // a comment\n}")
    );
}

#[test]
fn the_plugin_layout_holds_what_a_project_install_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugin");
    let hooks: Value =
        serde_json::from_str(&read(&root.join("hooks/hooks.json")).unwrap()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    run(
        home.path(),
        &repo,
        &["hook", "install", "claude-code", "--project"],
    );
    let installed: Value =
        serde_json::from_str(&read(&repo.join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(hooks["hooks"], installed["hooks"]);
    let mcp: Value = serde_json::from_str(&read(&root.join(".mcp.json")).unwrap()).unwrap();
    let written: Value = serde_json::from_str(&read(&repo.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp, written);
    let manifest: Value =
        serde_json::from_str(&read(&root.join(".claude-plugin/plugin.json")).unwrap()).unwrap();
    assert_eq!(manifest["name"], "mira");
}

/// A `mira` server added as the README's `claude mcp add` line adds it (one store for every
/// project through `MIRA_STORAGE_PATH`) is left as it is, and the hooks set the same variable:
/// run as Claude Code runs them (`sh -c`, in a project), they capture into that store, not the
/// project's own.
#[test]
fn the_hooks_use_the_store_of_a_mira_server_configured_already() {
    let home = tempfile::tempdir().unwrap();
    let shared = home.path().join("one store");
    let claude_json = home.path().join(".claude.json");
    let before = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": {"mira": {"type": "stdio", "command": "mira", "args": ["serve"],
                                "env": {"MIRA_STORAGE_PATH": shared, "RUST_BACKTRACE": "1"}}}
    }))
    .unwrap();
    std::fs::write(&claude_json, &before).unwrap();
    let out = run(
        home.path(),
        home.path(),
        &["hook", "install", "claude-code"],
    );
    assert!(out.contains("MIRA_STORAGE_PATH"), "says so: {out}");
    assert_eq!(
        read(&claude_json).as_deref(),
        Some(before.as_str()),
        "the server is left alone"
    );
    let settings = home.path().join(".claude/settings.json");
    let v: Value = serde_json::from_str(&read(&settings).unwrap()).unwrap();
    let command = v["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        command.starts_with(&format!("MIRA_STORAGE_PATH='{}' /", shared.display()))
            && !command.contains("RUST_BACKTRACE"),
        "{command}"
    );
    let project = home.path().join("billing-service");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let transcript =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hooks/session-dev.jsonl");
    let payload = serde_json::json!({"session_id": "s1", "transcript_path": transcript,
        "cwd": project, "hook_event_name": "SessionEnd", "reason": "logout"});
    let ran = assert_cmd::Command::new("sh")
        .args(["-c", &command])
        .current_dir(&project)
        .env("HOME", home.path())
        .env("MIRA_MODEL_DIR", mira_embed::resolve_model_dir(None))
        .env_remove("MIRA_STORAGE_PATH")
        .env_remove("MIRA_CONFIG")
        .env_remove("MIRA_WING")
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert!(ran.status.success() && ran.stdout.is_empty(), "{ran:?}");
    assert!(
        shared.join("mira.db").exists(),
        "captured into the server's store"
    );
    assert!(!project.join(".mira").exists(), "not into the project's");
    let exported = stdout(mira(&shared).arg("export"));
    assert!(exported.contains("\"source\":\"captured\""), "{exported}");

    // Uninstall recognises the commands with their variable: the files are as before.
    run(
        home.path(),
        home.path(),
        &["hook", "uninstall", "claude-code"],
    );
    assert_eq!(read(&settings), None);
    assert_eq!(read(&claude_json).as_deref(), Some(before.as_str()));
}
