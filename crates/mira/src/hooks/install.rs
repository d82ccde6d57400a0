//! `mira hook install claude-code [--project | --user]` and `mira hook uninstall`: the hooks
//! and the MCP server entry in Claude Code's settings, merged into what is there.
//!
//! | scope | hooks | MCP server |
//! |---|---|---|
//! | `--user` (default) | `~/.claude/settings.json` | `~/.claude.json` (`mcpServers`, user scope) |
//! | `--project` | `<project>/.claude/settings.json` | `<project>/.mcp.json` |
//!
//! The hooks are Claude Code's settings form (`hooks.<Event>[].hooks[]` of
//! `{"type": "command", "command": …, "timeout": …}`): `SessionStart` (the briefing),
//! `PreCompact` and `SessionEnd` (capture), and `UserPromptSubmit` with `--with-user-prompt`.
//! Nothing else in the files changes: other hooks, other servers and other settings keep their
//! place and their order, and the file keeps its indentation. An MCP server already named
//! `mira` is left as it is. Installing twice changes nothing the second time.
//!
//! Uninstalling removes mira's hooks (commands `<…>mira hook <event>`) and a `mira` server
//! entry that runs `mira serve`, and then the containers they leave empty (an event's list, the
//! `hooks` object, `mcpServers`, a file holding nothing else), so that install then uninstall
//! gives the file back byte for byte.
//!
//! A user install runs the binary by its absolute path (clients need not read the shell's
//! `PATH`); a project install, shared with a team through the repository, runs `mira` from
//! `PATH`. When a `mira` server is configured already with mira's variables in its `env`
//! (`MIRA_STORAGE_PATH` for one store everywhere, as the README's `claude mcp add` line sets
//! it), the hook commands set the same ones (`MIRA_STORAGE_PATH=… mira hook …`), so that the
//! hooks and the agent's tools use one store.

use super::json_doc::{self, Json, Style};
use super::HookEvent;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Where to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every project of the user.
    User,
    /// The project of the working directory.
    Project,
}

/// The hooks mira installs: event, Claude Code's name for it, timeout in seconds.
const HOOKS: &[(HookEvent, &str, u32)] = &[
    (HookEvent::SessionStart, "SessionStart", 10),
    (HookEvent::PreCompact, "PreCompact", 60),
    (HookEvent::SessionEnd, "SessionEnd", 60),
];

/// The optional prompt hook.
const PROMPT_HOOK: (HookEvent, &str, u32) = (HookEvent::UserPrompt, "UserPromptSubmit", 10);

/// The name of mira's MCP server entry.
const SERVER: &str = "mira";

/// One file to change: where, its text before (`None`: absent) and after (`None`: removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// Its text now.
    pub before: Option<String>,
    /// Its text after the change.
    pub after: Option<String>,
    /// What was left alone and why (an MCP server named mira that is not mira's entry).
    pub notes: Vec<String>,
}

impl Change {
    /// Whether the file changes.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }
}

/// The files of Claude Code that `scope` uses: (settings with the hooks, the MCP servers).
pub fn files(scope: Scope, cwd: &Path) -> Result<(PathBuf, PathBuf)> {
    Ok(match scope {
        Scope::User => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .context("HOME is not set: cannot find Claude Code's user settings (give --project to install in this project)")?;
            (
                home.join(".claude").join("settings.json"),
                home.join(".claude.json"),
            )
        }
        Scope::Project => {
            let root = cwd
                .ancestors()
                .find(|d| d.join(".git").exists())
                .unwrap_or(cwd);
            (
                root.join(".claude").join("settings.json"),
                root.join(".mcp.json"),
            )
        }
    })
}

/// How the client runs mira in `scope`: the absolute path of this binary for the user, `mira`
/// (from `PATH`) for a project.
pub fn program(scope: Scope) -> Result<String> {
    if scope == Scope::Project {
        return Ok("mira".into());
    }
    let exe = std::env::current_exe().context("cannot find the path of the mira binary")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let Some(text) = exe.to_str() else {
        bail!(
            "the path of the mira binary ({}) is not UTF-8: install with --project, which runs mira from PATH",
            exe.display()
        );
    };
    Ok(text.to_owned())
}

/// `program` as a word of a shell command (quoted when it needs to be).
fn shell_word(program: &str) -> String {
    if program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+'))
    {
        program.to_owned()
    } else {
        format!("'{}'", program.replace('\'', r"'\''"))
    }
}

/// The hooks installed, with or without the prompt hook.
fn hooks(with_user_prompt: bool) -> Vec<(HookEvent, &'static str, u32)> {
    let mut list = HOOKS.to_vec();
    if with_user_prompt {
        list.push(PROMPT_HOOK);
    }
    list
}

/// The `hooks` object of Claude Code's settings form for `program`: what an install adds, and
/// what the plugin's `hooks/hooks.json` holds.
pub fn hooks_object(program: &str, with_user_prompt: bool) -> Json {
    Json::Object(
        hooks(with_user_prompt)
            .into_iter()
            .map(|(event, name, timeout)| {
                (
                    name.to_owned(),
                    Json::Array(vec![group(program, &[], event, timeout)]),
                )
            })
            .collect(),
    )
}

/// The server entry: `{"command": program, "args": ["serve"]}`.
pub fn server_entry(program: &str) -> Json {
    Json::Object(vec![
        ("command".into(), Json::string(program)),
        ("args".into(), Json::Array(vec![Json::string("serve")])),
    ])
}

/// Variables (name, value) a hook command sets before running mira.
type Env = [(String, String)];

/// The shell command of mira's hook for `event`: `[NAME=value …] program hook <event>`.
fn command(program: &str, env: &Env, event: HookEvent) -> String {
    let mut words: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", shell_word(v)))
        .collect();
    words.push(shell_word(program));
    format!("{} hook {}", words.join(" "), event.as_str())
}

/// One matcher group running mira's hook for `event`.
fn group(program: &str, env: &Env, event: HookEvent, timeout: u32) -> Json {
    Json::Object(vec![(
        "hooks".into(),
        Json::Array(vec![Json::Object(vec![
            ("type".into(), Json::string("command")),
            (
                "command".into(),
                Json::string(&command(program, env, event)),
            ),
            ("timeout".into(), Json::Number(timeout.into())),
        ])]),
    )])
}

/// The `MIRA_*` variables of a configured server entry's `env`, in its order.
fn mira_env(entry: &Json) -> Vec<(String, String)> {
    let Some(Json::Object(env)) = entry.get("env") else {
        return Vec::new();
    };
    env.iter()
        .filter(|(k, _)| is_variable(k) && k.starts_with("MIRA_"))
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
        .collect()
}

/// Whether `name` is a shell variable name.
fn is_variable(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The words of a shell command as [`shell_word`] and [`command`] write them: split at spaces,
/// `'…'` quoting (with `'\''` for a quote) joined into its word; `None` for an unclosed quote.
fn shell_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        q => w.push(q),
                    }
                }
            }
            // `\'` (a quote between quoted parts); any other backslash is kept (`C:\bin`).
            '\\' if chars.as_str().starts_with('\'') => {
                word.get_or_insert_with(String::new).push('\'');
                chars.next();
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// Whether a program named in a command or an entry is mira (`mira`, `/path/to/mira`,
/// `'/path with space/mira'`, `mira.exe`).
fn is_mira(program: &str) -> bool {
    let program = program.trim_matches(|c| c == '\'' || c == '"');
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    name == "mira" || name == "mira.exe"
}

/// Whether a hook's command is one of mira's (`[NAME=value …] <…>mira hook <event>`).
fn is_mira_hook(command: &str) -> bool {
    let Some(words) = shell_words(command) else {
        return false;
    };
    let mut args = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| w.split_once('=').is_some_and(|(k, _)| is_variable(k)));
    args.next().is_some_and(is_mira)
        && args.next() == Some("hook")
        && args.next().is_some_and(|e| {
            HOOKS
                .iter()
                .chain([&PROMPT_HOOK])
                .any(|(h, _, _)| h.as_str() == e)
        })
        && args.next().is_none()
}

/// Whether an MCP server entry is the one mira installs (mira run with `serve`).
fn is_mira_server(entry: &Json) -> bool {
    let program = entry.get("command").and_then(Json::as_str).unwrap_or("");
    let serve = matches!(entry.get("args"), Some(Json::Array(a)) if a.len() == 1 && a[0].as_str() == Some("serve"));
    let Json::Object(keys) = entry else {
        return false;
    };
    is_mira(program)
        && serve
        && keys
            .iter()
            .all(|(k, _)| matches!(k.as_str(), "command" | "args" | "type"))
}

/// The text of `path`, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The document of `text` (an empty object for a new or blank file).
fn document(path: &Path, text: Option<&str>) -> Result<(Json, Style)> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok((Json::object(), Style::default()));
    };
    let (doc, style) = json_doc::parse(text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid JSON ({e}): fix it first, mira changes only files it can read",
            path.display()
        )
    })?;
    if !matches!(doc, Json::Object(_)) {
        bail!(
            "{} does not hold a JSON object: fix it first, mira changes only files it can read",
            path.display()
        );
    }
    Ok((doc, style))
}

/// The changes an install makes.
pub fn install(scope: Scope, cwd: &Path, with_user_prompt: bool) -> Result<Vec<Change>> {
    let program = program(scope)?;
    let (settings, servers) = files(scope, cwd)?;
    let servers_before = read(&servers)?;
    let (servers_doc, servers_style) = document(&servers, servers_before.as_deref())?;
    let env = servers_doc
        .get("mcpServers")
        .and_then(|l| l.get(SERVER))
        .map(mira_env)
        .unwrap_or_default();
    let mut out = Vec::new();
    let before = read(&settings)?;
    let (mut doc, style) = document(&settings, before.as_deref())?;
    add_hooks(&settings, &mut doc, &program, &env, with_user_prompt)?;
    let mut notes = Vec::new();
    if !env.is_empty() {
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        notes.push(format!(
            "the hooks set {} as the mira server configured in {} does",
            names.join(", "),
            servers.display()
        ));
    }
    out.push(Change {
        after: Some(json_doc::write(&doc, &style)),
        before,
        path: settings,
        notes,
    });
    let (before, mut doc, style) = (servers_before, servers_doc, servers_style);
    let mut notes = Vec::new();
    let list = doc
        .entry("mcpServers", Json::object)
        .filter(|l| matches!(l, Json::Object(_)))
        .with_context(|| {
            format!(
                "{}: mcpServers is not an object: fix it first",
                servers.display()
            )
        })?;
    match list.get(SERVER) {
        None => {
            list.entry(SERVER, || server_entry(&program));
        }
        Some(e) if !is_mira_server(e) => notes.push(format!(
            "{}: an MCP server named {SERVER} is configured already and was left as it is",
            servers.display()
        )),
        Some(_) => {}
    }
    out.push(Change {
        after: Some(json_doc::write(&doc, &style)),
        before,
        path: servers,
        notes,
    });
    Ok(out)
}

/// Adds mira's hooks to a settings document (replacing the command of a mira hook already
/// there, so that a moved binary is followed).
fn add_hooks(
    path: &Path,
    doc: &mut Json,
    program: &str,
    env: &Env,
    with_user_prompt: bool,
) -> Result<()> {
    let bad = || {
        anyhow::anyhow!(
            "{}: hooks is not an object of event lists: fix it first",
            path.display()
        )
    };
    let all = doc
        .entry("hooks", Json::object)
        .filter(|h| matches!(h, Json::Object(_)))
        .ok_or_else(bad)?;
    for (event, name, timeout) in hooks(with_user_prompt) {
        let Some(Json::Array(groups)) = all.entry(name, || Json::Array(Vec::new())) else {
            return Err(bad());
        };
        let mut found = false;
        for g in groups.iter_mut() {
            if let Some(Json::Array(list)) = g.get_mut("hooks") {
                for h in list.iter_mut() {
                    let ours = h
                        .get("command")
                        .and_then(Json::as_str)
                        .is_some_and(is_mira_hook);
                    if ours {
                        found = true;
                        if let Some(c) = h.get_mut("command") {
                            *c = Json::string(&command(program, env, event));
                        }
                    }
                }
            }
        }
        if !found {
            groups.push(group(program, env, event, timeout));
        }
    }
    Ok(())
}

/// The changes an uninstall makes.
pub fn uninstall(scope: Scope, cwd: &Path) -> Result<Vec<Change>> {
    let (settings, servers) = files(scope, cwd)?;
    let mut out = Vec::new();
    let before = read(&settings)?;
    if let Some(text) = &before {
        let (mut doc, style) = document(&settings, Some(text))?;
        remove_hooks(&mut doc);
        out.push(Change {
            after: written(&doc, &style),
            before,
            path: settings,
            notes: Vec::new(),
        });
    }
    let before = read(&servers)?;
    if let Some(text) = &before {
        let (mut doc, style) = document(&servers, Some(text))?;
        let mut notes = Vec::new();
        if let Some(list) = doc.get_mut("mcpServers") {
            match list.get(SERVER) {
                Some(e) if is_mira_server(e) => {
                    list.remove(SERVER);
                }
                Some(_) => notes.push(format!(
                    "{}: the MCP server named {SERVER} is not the one mira installs and was left as it is",
                    servers.display()
                )),
                None => {}
            }
            if list.is_empty_container() {
                doc.remove("mcpServers");
            }
        }
        out.push(Change {
            after: written(&doc, &style),
            before,
            path: servers,
            notes,
        });
    }
    Ok(out)
}

/// The text of a document after an uninstall; `None` (the file is removed) when nothing is
/// left in it.
fn written(doc: &Json, style: &Style) -> Option<String> {
    (!doc.is_empty_container()).then(|| json_doc::write(doc, style))
}

/// Removes mira's hooks from a settings document, and the containers left empty.
fn remove_hooks(doc: &mut Json) {
    let Some(Json::Object(events)) = doc.get_mut("hooks") else {
        return;
    };
    for (_, groups) in events.iter_mut() {
        let Json::Array(list) = groups else { continue };
        for g in list.iter_mut() {
            if let Some(Json::Array(hooks)) = g.get_mut("hooks") {
                hooks.retain(|h| {
                    !h.get("command")
                        .and_then(Json::as_str)
                        .is_some_and(is_mira_hook)
                });
            }
        }
        list.retain(|g| !matches!(g.get("hooks"), Some(h) if h.is_empty_container()));
    }
    events.retain(|(_, groups)| !groups.is_empty_container());
    if events.is_empty() {
        doc.remove("hooks");
    }
}

/// Writes the changes (each file replaced at once: written beside it, then renamed over it,
/// keeping its permissions; a file left with nothing is removed).
pub fn apply(changes: &[Change]) -> Result<()> {
    for c in changes.iter().filter(|c| c.changes()) {
        // A settings file may be a link (dotfiles): write where it points.
        let target = std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone());
        match &c.after {
            None => std::fs::remove_file(&target)
                .with_context(|| format!("cannot remove {}", target.display()))?,
            Some(text) => {
                let dir = target
                    .parent()
                    .with_context(|| format!("{} has no folder", target.display()))?;
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                let mut tmp = tempfile::NamedTempFile::new_in(dir)
                    .with_context(|| format!("cannot write in {}", dir.display()))?;
                std::io::Write::write_all(&mut tmp, text.as_bytes())
                    .with_context(|| format!("cannot write in {}", dir.display()))?;
                if let Ok(meta) = std::fs::metadata(&target) {
                    let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
                }
                tmp.persist(&target)
                    .with_context(|| format!("cannot replace {}", target.display()))?;
            }
        }
    }
    Ok(())
}

/// The changes as a person reads them: each file with its lines removed (`-`) and added (`+`).
pub fn render(changes: &[Change], dry_run: bool) -> String {
    let mut out = String::new();
    for c in changes {
        let path = c.path.display();
        if !c.changes() {
            out.push_str(&format!("{path}: unchanged\n"));
        } else if dry_run {
            out.push_str(&format!("--- {path}\n+++ {path}\n"));
            out.push_str(&diff(
                c.before.as_deref().unwrap_or(""),
                c.after.as_deref().unwrap_or(""),
            ));
        } else {
            let what = match (&c.before, &c.after) {
                (None, _) => "created",
                (_, None) => "removed (nothing else was in it)",
                _ => "updated",
            };
            out.push_str(&format!("{path}: {what}\n"));
        }
        for n in &c.notes {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    out
}

/// A line diff of two small texts: unchanged lines with two spaces, removed with `- `, added
/// with `+ ` (longest common subsequence).
fn diff(before: &str, after: &str) -> String {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!("  {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+ {}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", a[i]));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mira_commands_are_recognised() {
        for c in [
            "mira hook session-start",
            "/home/u/.cargo/bin/mira hook pre-compact",
            "'/Users/a b/bin/mira' hook session-end",
            "C:\\bin\\mira.exe hook user-prompt",
            "MIRA_STORAGE_PATH='/home/u/one store' /usr/bin/mira hook session-start",
            "MIRA_STORAGE_PATH=/s MIRA_LOG=warn mira hook session-end",
        ] {
            assert!(is_mira_hook(c), "{c}");
        }
        for c in [
            "mirai hook session-start",
            "mira hook session-start && rm -rf /",
            "mira serve",
            "echo mira hook session-start",
            "FOO=1 echo mira hook session-start",
            "MIRA_STORAGE_PATH='/unclosed mira hook session-start",
        ] {
            assert!(!is_mira_hook(c), "{c}");
        }
        assert_eq!(shell_word("/a b/mira"), "'/a b/mira'");
        let env = [("MIRA_STORAGE_PATH".to_owned(), "/it's here".to_owned())];
        let c = command("/a b/mira", &env, HookEvent::SessionEnd);
        assert_eq!(
            shell_words(&c).unwrap(),
            [
                "MIRA_STORAGE_PATH=/it's here",
                "/a b/mira",
                "hook",
                "session-end"
            ]
        );
        assert!(is_mira_hook(&c), "{c}");
    }
}
