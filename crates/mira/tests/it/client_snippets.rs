//! The README's "Connect a client": every snippet there is read the way
//! its client reads it and then run. A `claude …` line goes through the shell as typed (quoting,
//! `$HOME`) and its arguments through Claude Code's `claude mcp add` rules (variadic `-e`/`-H`,
//! `--`); a JSON snippet must parse and name the server `mira`. What each one configures (a
//! command, its arguments and environment, or a URL) is then started and spoken to over MCP:
//! a memory is stored and recalled.
//!
//! With `MIRA_TEST_CLAUDE=/path/to/claude` (Claude Code's CLI) the `claude` lines also run for
//! real in a scratch HOME, offline (`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`): what Claude Code
//! writes must be what the model below predicts, and `claude mcp list` must connect to mira.

use crate::mcp_common::{self, is_error, text, HttpClient, HttpServer, StdioClient};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The README at the root of the workspace.
fn readme() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join("README.md")).unwrap()
}

/// The text of the README's `## heading` section, up to the next `## `.
fn section(readme: &str, heading: &str) -> String {
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("the README has no '## {heading}'"));
    let body = &readme[start + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |i| i + 3);
    body[..end].to_owned()
}

/// The fenced code blocks of `text`: (language, content).
fn code_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.trim().to_owned(), String::new())),
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    blocks
}

/// What a client is configured to start or reach.
#[derive(Debug, Clone, PartialEq)]
enum Server {
    /// A command it starts, speaking MCP on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Server {
    /// The entry Claude Code writes into its configuration for this server.
    fn claude_code_entry(&self) -> Value {
        match self {
            Server::Stdio { command, args, env } => {
                json!({"type": "stdio", "command": command, "args": args, "env": env})
            }
            Server::Http { url, headers } if headers.is_empty() => {
                json!({"type": "http", "url": url})
            }
            Server::Http { url, headers } => {
                json!({"type": "http", "url": url, "headers": headers})
            }
        }
    }

    /// The server an `mcpServers` entry describes (Claude Desktop, Cursor, `.mcp.json`).
    fn from_entry(entry: &Value) -> Server {
        let strings = |v: &Value| -> BTreeMap<String, String> {
            v.as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                        .collect()
                })
                .unwrap_or_default()
        };
        if let Some(url) = entry["url"].as_str() {
            return Server::Http {
                url: url.to_owned(),
                headers: strings(&entry["headers"]),
            };
        }
        Server::Stdio {
            command: entry["command"]
                .as_str()
                .unwrap_or_else(|| panic!("an entry without command or url: {entry}"))
                .to_owned(),
            args: entry["args"]
                .as_array()
                .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default(),
            env: strings(&entry["env"]),
        }
    }
}

/// What `claude mcp add ARGS` adds: the scope, the server's name and the server.
#[derive(Debug, PartialEq)]
struct Added {
    scope: String,
    name: String,
    server: Server,
}

/// `claude mcp add`'s reading of its arguments (Claude Code 2.1, a commander.js program, checked
/// against the real CLI with `MIRA_TEST_CLAUDE`): options may come before or after the
/// positionals `<name> <commandOrUrl> [args...]`; `-e/--env` and `-H/--header` take every
/// following word up to the next option or `--`; everything after `--` is positional. The
/// errors are Claude Code's.
fn claude_mcp_add(argv: &[String]) -> Result<Added, String> {
    let [mcp, add, rest @ ..] = argv else {
        return Err(format!("not `claude mcp add`: {argv:?}"));
    };
    if (mcp.as_str(), add.as_str()) != ("mcp", "add") {
        return Err(format!("not `claude mcp add`: {argv:?}"));
    }
    let (mut positionals, mut env, mut headers) = (Vec::new(), Vec::new(), Vec::new());
    let (mut scope, mut transport) = ("local".to_owned(), "stdio".to_owned());
    let mut words = rest.iter().cloned().peekable();
    while let Some(word) = words.next() {
        if word == "--" {
            positionals.extend(words.by_ref());
            break;
        }
        if !word.starts_with('-') || word == "-" {
            positionals.push(word);
            continue;
        }
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (word.clone(), None),
        };
        let value = inline.or_else(|| {
            // Options of one value take the next word; variadic ones every word up to the
            // next option.
            let variadic = ["-e", "--env", "-H", "--header"].contains(&flag.as_str());
            let flag_only = flag == "--client-secret";
            (!variadic && !flag_only).then(|| words.next()).flatten()
        });
        let mut values: Vec<String> = value.into_iter().collect();
        match flag.as_str() {
            "-e" | "--env" | "-H" | "--header" => {
                while let Some(next) = words.next_if(|w| !w.starts_with('-')) {
                    values.push(next);
                }
                let list = if flag == "-e" || flag == "--env" {
                    &mut env
                } else {
                    &mut headers
                };
                list.extend(values);
            }
            "-s" | "--scope" | "-t" | "--transport" | "--callback-port" | "--client-id" => {
                let Some(v) = values.pop() else {
                    return Err(format!("error: option '{flag}' argument missing"));
                };
                match flag.as_str() {
                    "-s" | "--scope" => scope = v,
                    "-t" | "--transport" => transport = v,
                    _ => {}
                }
            }
            "--client-secret" => {}
            other => return Err(format!("error: unknown option '{other}'")),
        }
    }
    for e in &env {
        if e.split_once('=').is_none_or(|(k, _)| k.is_empty()) {
            return Err(format!("Invalid environment variable format: {e}, environment variables should be added as: -e KEY1=value1 -e KEY2=value2"));
        }
    }
    let [name, target, args @ ..] = positionals.as_slice() else {
        return Err(format!(
            "error: missing required argument (name and commandOrUrl): {positionals:?}"
        ));
    };
    if !["local", "user", "project"].contains(&scope.as_str()) {
        return Err(format!("Invalid scope: {scope}"));
    }
    let server = match transport.as_str() {
        "stdio" => Server::Stdio {
            command: target.clone(),
            args: args.to_vec(),
            env: env
                .iter()
                .filter_map(|e| e.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        },
        "http" | "sse" if args.is_empty() => Server::Http {
            url: target.clone(),
            headers: headers
                .iter()
                .filter_map(|h| h.split_once(':'))
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .collect(),
        },
        other => {
            return Err(format!(
                "cannot add a {other} server with arguments {args:?}"
            ))
        }
    };
    Ok(Added {
        scope,
        name: name.clone(),
        server,
    })
}

/// The words the shell hands to `claude` for `line`, run by bash as typed (a stand-in `claude`
/// on the PATH records them), with HOME set to `home`.
fn shell_words(line: &str, home: &Path) -> Vec<String> {
    let bin = home.join("recorder");
    std::fs::create_dir_all(&bin).unwrap();
    let record = home.join("argv");
    let fake = bin.join("claude");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '{}'\n",
            record.display()
        ),
    )
    .unwrap();
    make_executable(&fake);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("bash")
        .args(["-c", line])
        .env("HOME", home)
        .env("PATH", path)
        .status()
        .unwrap();
    assert!(status.success(), "`{line}` failed in bash");
    std::fs::read_to_string(&record)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_owned)
        .collect()
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The `claude …` lines of the section's shell blocks.
fn claude_lines(section: &str) -> Vec<String> {
    code_blocks(section)
        .into_iter()
        .filter(|(lang, _)| lang == "sh")
        .flat_map(|(_, body)| {
            body.lines()
                .map(|l| l.split(" #").next().unwrap_or(l).trim().to_owned())
                .filter(|l| l.starts_with("claude "))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The `mcpServers.mira` entries of the section's JSON blocks.
fn json_entries(section: &str) -> Vec<Value> {
    code_blocks(section)
        .into_iter()
        .filter(|(lang, _)| lang == "json")
        .map(|(_, body)| {
            let v: Value = serde_json::from_str(&body)
                .unwrap_or_else(|e| panic!("a JSON snippet does not parse ({e}):\n{body}"));
            let servers = v["mcpServers"]
                .as_object()
                .unwrap_or_else(|| panic!("no mcpServers object: {body}"));
            assert_eq!(
                servers.keys().collect::<Vec<_>>(),
                ["mira"],
                "one server named mira: {body}"
            );
            servers["mira"].clone()
        })
        .collect()
}

/// The placeholder home of the README's macOS paths.
const EXAMPLE_HOME: &str = "/Users/me";

/// Starts what `server` configures (in `project`, with HOME `home`; the README's example home is
/// read as `home`), stores a memory through it and recalls it; a configured `MIRA_STORAGE_PATH`
/// must be the store it uses.
fn store_and_recall(server: &Server, home: &Path, project: &Path) {
    let local = |s: &str| s.replace(EXAMPLE_HOME, &home.display().to_string());
    match server {
        Server::Stdio { command, args, env } => {
            assert!(
                command == "mira" || command.ends_with("/.cargo/bin/mira"),
                "the snippet starts {command}, not the binary `cargo install` puts on the PATH"
            );
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_mira"));
            cmd.args(args)
                .current_dir(project)
                .env("HOME", home)
                .env("MIRA_MODEL_DIR", mira_embed::resolve_model_dir(None))
                .env("MIRA_METRICS_ENABLED", "false");
            for var in [
                "MIRA_STORAGE_PATH",
                "MIRA_DATA_PATH",
                "MIRA_CONFIG",
                "MIRA_LOG",
                "MIRA_STORAGE_BACKEND",
                "MIRA_DATABASE_URL",
                "MIRA_HTTP_ADDR",
            ] {
                cmd.env_remove(var);
            }
            for (k, v) in env {
                cmd.env(k, local(v));
            }
            let store = env
                .get("MIRA_STORAGE_PATH")
                .map(|p| PathBuf::from(local(p)));
            let mut client = StdioClient::spawn_command(cmd);
            client.initialize();
            exchange(|name, args| client.call_tool(name, args), store);
            assert!(client.close().0.success());
        }
        Server::Http { url, headers } => {
            let default = mira::Config::default().mcp.http.addr;
            assert_eq!(
                url,
                &format!("http://{default}/mcp"),
                "the URL of `mira serve --http`"
            );
            for (k, v) in headers {
                assert_eq!((k.as_str(), &v[..7]), ("Authorization", "Bearer "));
            }
            let dir = tempfile::tempdir().unwrap();
            let served = HttpServer::start(dir.path());
            let mut client = HttpClient::new(&served.url);
            client.initialize();
            exchange(|name, args| client.call_tool(name, args), None);
            assert!(served.stop().success());
        }
    }
}

/// Stores a memory and recalls it through `call`; the store must be in `store` when given.
fn exchange(mut call: impl FnMut(&str, Value) -> Value, store: Option<PathBuf>) {
    let fact = "The nightly backup of the billing database runs at 02:30 UTC.";
    let stored = call("mira_store", json!({"content": fact, "wing": "snippets"}));
    assert!(!is_error(&stored), "{stored}");
    let recalled = call(
        "mira_recall",
        json!({"query": "when does the billing backup run?", "wing": "snippets"}),
    );
    assert!(text(&recalled).contains(fact), "{recalled}");
    if let Some(dir) = store {
        let status = call("mira_status", json!({}));
        let db = status["structuredContent"]["db_path"].as_str().unwrap();
        assert_eq!(Path::new(db), dir.join("mira.db"));
    }
}

/// Every `claude` line of the README reads as Claude Code reads it (the name before `-e`), adds a
/// server that starts the installed `mira` (or reaches `mira serve --http`), and that server
/// answers a store and a recall.
#[test]
fn the_claude_code_commands_add_a_server_that_answers() {
    let _serial = mcp_common::serial();
    let section = section(&readme(), "Connect a client");
    let lines = claude_lines(&section);
    assert!(lines.len() >= 2, "{lines:?}");
    for line in &lines {
        let home = tempfile::tempdir().unwrap();
        let words = shell_words(line, home.path());
        let added = claude_mcp_add(&words).unwrap_or_else(|e| panic!("`{line}`: {e}"));
        assert_eq!(added.name, "mira", "{line}");
        assert_eq!(added.scope, "user", "one entry for every project: {line}");
        if let Server::Stdio { args, env, .. } = &added.server {
            assert_eq!(args, &["serve"], "{line}");
            let store = &env["MIRA_STORAGE_PATH"];
            assert!(
                store.starts_with(&home.path().display().to_string()),
                "$HOME expanded by the shell: {store}"
            );
        }
        let project = home.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        store_and_recall(&added.server, home.path(), &project);
    }
}

/// The model of `claude mcp add` refuses what Claude Code 2.1 refuses: the order the README used
/// to print (name after `-e`) and a variable without `=`.
#[test]
fn claude_mcp_add_reads_a_name_after_e_as_a_variable() {
    let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let err = claude_mcp_add(&argv(
        "mcp add --scope user -e MIRA_STORAGE_PATH=/x mira -- mira serve",
    ))
    .unwrap_err();
    assert!(
        err.starts_with("Invalid environment variable format: mira,"),
        "{err}"
    );
    assert!(claude_mcp_add(&argv("mcp add mira -e PATHLESS -- mira serve")).is_err());
    let ok = claude_mcp_add(&argv(
        "mcp add mira -s user -e A=1 B=2 --transport stdio -- mira serve --http",
    ))
    .unwrap();
    assert_eq!(
        ok.server,
        Server::Stdio {
            command: "mira".into(),
            args: vec!["serve".into(), "--http".into()],
            env: [("A".into(), "1".into()), ("B".into(), "2".into())].into(),
        }
    );
    let http = claude_mcp_add(&argv(
        "mcp add --transport http mira http://127.0.0.1:8765/mcp -H Authorization:Bearer",
    ))
    .unwrap();
    assert_eq!(http.scope, "local");
    assert!(matches!(http.server, Server::Http { .. }));
}

/// Every JSON snippet (Claude Desktop, Cursor, `.mcp.json`, the shared server's form) parses,
/// names one server `mira`, and what it configures answers a store and a recall.
#[test]
fn every_json_snippet_configures_a_server_that_answers() {
    let _serial = mcp_common::serial();
    let entries = json_entries(&section(&readme(), "Connect a client"));
    assert!(entries.len() >= 4, "{entries:?}");
    let mut forms = std::collections::BTreeSet::new();
    for entry in &entries {
        let server = Server::from_entry(entry);
        forms.insert(match &server {
            Server::Stdio { command, env, .. } if command.starts_with('/') => {
                assert!(env.contains_key("MIRA_STORAGE_PATH"), "{entry}");
                "absolute command"
            }
            Server::Stdio { .. } => "command on the PATH",
            Server::Http { .. } => "url",
        });
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        store_and_recall(&server, home.path(), &project);
    }
    assert_eq!(forms.len(), 3, "{forms:?}");
}

/// A newcomer finds "Set up" and "Connect a client" within the first 120 lines, and every
/// `(#anchor)` link of the README leads to a heading.
#[test]
fn the_readme_starts_with_set_up_and_its_links_resolve() {
    let readme = readme();
    for heading in ["## Set up", "## Connect a client", "## Use it"] {
        let line = readme
            .lines()
            .position(|l| l == heading)
            .unwrap_or_else(|| panic!("no {heading}"));
        assert!(line < 120, "{heading} at line {}", line + 1);
    }
    let after = readme.find("## Use it").unwrap();
    assert!(after < readme.find("## Measured figures").unwrap());
    let anchors: Vec<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| {
            h.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect();
    for link in readme.split("](#").skip(1) {
        let anchor = link.split(')').next().unwrap();
        assert!(
            anchors.iter().any(|a| a == anchor),
            "no heading for #{anchor}"
        );
    }
    assert!(readme.contains("cargo install --path crates/mira --locked"));
    assert!(readme.contains("MIRA_SHARED_DIR"));
}

/// With `MIRA_TEST_CLAUDE` naming Claude Code's CLI: each README line, run by the real `claude`
/// in a scratch HOME, writes the entry the model predicts, the project form matches the README's
/// `.mcp.json`, and `claude mcp list` connects to the installed `mira`.
#[test]
fn the_real_claude_code_agrees_when_available() {
    let Some(claude) = std::env::var_os("MIRA_TEST_CLAUDE").map(PathBuf::from) else {
        eprintln!("MIRA_TEST_CLAUDE is not set: the README's claude lines are checked against the model of `claude mcp add` only");
        return;
    };
    let _serial = mcp_common::serial();
    let section = section(&readme(), "Connect a client");
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&claude, bin.join("claude")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_mira"), bin.join("mira")).unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let exec = |line: &str| {
        let out = Command::new("bash")
            .args(["-c", line])
            .current_dir(&project)
            .env("HOME", home.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("MIRA_MODEL_DIR", mira_embed::resolve_model_dir(None))
            .env_remove("MIRA_STORAGE_PATH")
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    };
    let run = |line: &str| {
        let (ok, said) = exec(line);
        assert!(ok, "`{line}`: {said}");
        said
    };
    let config = || -> Map<String, Value> {
        let text = std::fs::read_to_string(home.path().join(".claude.json")).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["mcpServers"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    };
    for line in claude_lines(&section) {
        let predicted = claude_mcp_add(&shell_words(&line, home.path())).unwrap();
        exec("claude mcp remove mira --scope user");
        run(&line);
        assert_eq!(
            config()["mira"],
            predicted.server.claude_code_entry(),
            "`{line}`"
        );
        if let Server::Stdio { .. } = predicted.server {
            let listed = run("claude mcp list");
            assert!(
                listed
                    .lines()
                    .any(|l| l.starts_with("mira:") && l.contains("Connected")),
                "{listed}"
            );
        }
    }
    run("claude mcp add --scope project mira -- mira serve");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".mcp.json")).unwrap()).unwrap();
    let readme_form = json_entries(&section)
        .into_iter()
        .map(|e| Server::from_entry(&e))
        .find(|s| matches!(s, Server::Stdio { command, env, .. } if command == "mira" && env.is_empty()))
        .expect("the README's .mcp.json form");
    assert_eq!(
        Server::from_entry(&written["mcpServers"]["mira"]),
        readme_form
    );
}
