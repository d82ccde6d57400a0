//! `mira hook <event>`: memory that works without being asked. A coding agent's client runs
//! it at moments of its session's life with a JSON payload on standard input (Claude Code's
//! hooks; Codex CLI's take the same payload and answer for `session-start` and `user-prompt`):
//!
//! - `session-start`: the briefing of the project's wing ([`crate::usecases::briefing`]) as
//!   context for the agent;
//! - `user-prompt`: a recall for the prompt, added only when something relevant stands out
//!   ([`stands_out`]); off unless installed with `--with-user-prompt`;
//! - `pre-compact`, `session-end`, `stop`: what the session's transcript leaves in memory
//!   ([`rules`], stored by [`crate::usecases::capture`]).
//!
//! A hook never blocks nor breaks the session: whatever fails (a payload that is not JSON, no
//! store, a database error, even a panic) prints nothing on standard output, exits 0 and is
//! written to `hooks.log` in the storage folder (when there is one) and to the log on
//! standard error. The wing is the project's ([`wing`]); the process works in the payload's
//! `cwd`, so that it finds the project's configuration and store as the MCP server started
//! there does.

pub mod install;
mod json_doc;
pub mod rules;
pub mod transcript;
pub mod wing;

use crate::config::Config;
use crate::usecases::access::Access;
use crate::usecases::{briefing, capture, recall};
use crate::App;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The events `mira hook` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookEvent {
    /// A session starts (also after `/clear` and a compaction): the briefing as context.
    SessionStart,
    /// The user sent a prompt: what memory holds about it, when something stands out.
    UserPrompt,
    /// The context is about to be compacted: the finished exchanges are captured.
    PreCompact,
    /// The session ended: everything is captured.
    SessionEnd,
    /// The assistant finished a turn: everything so far is captured.
    Stop,
}

impl HookEvent {
    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPrompt => "user-prompt",
            HookEvent::PreCompact => "pre-compact",
            HookEvent::SessionEnd => "session-end",
            HookEvent::Stop => "stop",
        }
    }

    /// The client's name of the event, as its answer repeats it (`hookEventName`).
    fn client_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPrompt => "UserPromptSubmit",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Stop => "Stop",
        }
    }
}

/// The fields of a hook payload mira reads (every client sends more; unknown fields are
/// ignored, missing ones are `None`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Payload {
    /// The session's id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session's transcript (JSON lines).
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    /// The session's working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The event, as the client names it.
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// What the user just sent (`UserPromptSubmit`).
    #[serde(default)]
    pub prompt: Option<String>,
}

/// What a hook run did, for its log line and the tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The wing, when one was found.
    pub wing: Option<String>,
    /// What happened, in a few words.
    pub summary: String,
    /// What to print on standard output (the client's answer); empty for nothing.
    pub stdout: String,
    /// The storage folder, when it exists (where `hooks.log` goes).
    pub storage: Option<PathBuf>,
}

/// Runs the hook `event` on the payload `input` (configuration from `config`, else the usual
/// search from the payload's `cwd`) and returns what to print: never fails, never panics.
pub fn run(event: HookEvent, input: &[u8], config: Option<&Path>) -> Report {
    let started = Instant::now();
    let report = std::panic::catch_unwind(|| answer(event, input, config)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        Err((None, anyhow::anyhow!("panicked: {why}")))
    });
    let report = match report {
        Ok(r) => r,
        Err((storage, e)) => {
            tracing::warn!("mira hook {}: {e:#}", event.as_str());
            Report {
                wing: None,
                summary: format!("error: {e:#}"),
                stdout: String::new(),
                storage,
            }
        }
    };
    log(event, &report, started.elapsed().as_secs_f64() * 1000.0);
    report
}

/// A failure, with the storage folder when it was known (to log it there).
type Failure = (Option<PathBuf>, anyhow::Error);

fn answer(event: HookEvent, input: &[u8], config: Option<&Path>) -> Result<Report, Failure> {
    let fail = |storage: Option<PathBuf>| move |e: anyhow::Error| (storage.clone(), e);
    let payload: Payload = serde_json::from_slice(input)
        .context("the payload on standard input is not a JSON object of the client's hook")
        .map_err(fail(None))?;
    let cwd = match &payload.cwd {
        Some(dir) => {
            std::env::set_current_dir(dir)
                .with_context(|| format!("cannot work in the payload's cwd {}", dir.display()))
                .map_err(fail(None))?;
            dir.clone()
        }
        None => std::env::current_dir()
            .context("no cwd in the payload and no working directory")
            .map_err(fail(None))?,
    };
    let (config, source) = Config::load(config).map_err(fail(None))?;
    let storage_dir = config.storage_dir();
    let storage = storage_dir.is_dir().then(|| storage_dir.clone());
    let env_wing = std::env::var("MIRA_WING").ok();
    let Some(wing) = wing::wing_for(&cwd, env_wing.as_deref(), config.hooks.wing.as_deref()) else {
        return Err((
            storage,
            anyhow::anyhow!("no wing for {}: set MIRA_WING or hooks.wing", cwd.display()),
        ));
    };
    let report = |summary: String, stdout: String| Report {
        wing: Some(wing.clone()),
        summary,
        stdout,
        storage: storage_dir.is_dir().then(|| storage_dir.clone()),
    };
    let open = || App::open(config.clone(), source.clone());
    match event {
        HookEvent::SessionStart | HookEvent::UserPrompt => {
            if !store_exists(&config) {
                return Ok(report("no store yet: nothing to say".into(), String::new()));
            }
            let app = open().map_err(fail(storage.clone()))?;
            let (summary, context) = match event {
                HookEvent::SessionStart => session_start(&app, &wing, &payload),
                _ => user_prompt(&app, &wing, &payload),
            }
            .map_err(fail(storage.clone()))?;
            Ok(report(summary, client_answer(event, &context)))
        }
        HookEvent::PreCompact | HookEvent::SessionEnd | HookEvent::Stop => {
            if let Some(why) = capture_off(&config, &wing) {
                return Ok(report(format!("capture off ({why})"), String::new()));
            }
            let candidates = read_session(&payload, &cwd, event).map_err(fail(storage.clone()))?;
            if candidates.is_empty() {
                return Ok(report("nothing to capture".into(), String::new()));
            }
            let app = open().map_err(fail(storage.clone()))?;
            let o = capture::capture(
                &app,
                capture::CaptureRequest {
                    wing: wing.clone(),
                    session_id: payload.session_id.clone(),
                    candidates,
                },
            )
            .map_err(|e| fail(storage.clone())(anyhow::anyhow!("{e}")))?;
            Ok(report(
                format!(
                    "captured {} of {} (duplicates {}, near duplicates {}, refused {}, fixes linked {}, secrets redacted {})",
                    o.stored, o.considered, o.duplicates, o.near_duplicates, o.rejected, o.links, o.redacted
                ),
                String::new(),
            ))
        }
    }
}

/// Whether the store exists: a hook that only reads creates none.
fn store_exists(config: &Config) -> bool {
    match config.storage.backend {
        crate::config::StorageBackend::Sqlite => config.db_path().is_file(),
        crate::config::StorageBackend::Postgres => true,
    }
}

/// Why capture is off for `wing`, if it is.
fn capture_off(config: &Config, wing: &str) -> Option<&'static str> {
    if !config.hooks.capture {
        Some("hooks.capture: false")
    } else if config.hooks.capture_skip_wings.iter().any(|w| w == wing) {
        Some("the wing is in hooks.capture_skip_wings")
    } else {
        None
    }
}

/// The briefing of the wing.
fn session_start(app: &App, wing: &str, payload: &Payload) -> Result<(String, String)> {
    let b = briefing::briefing(
        app,
        &briefing::BriefingRequest {
            wing: wing.to_owned(),
            budget: app.config.hooks.session_start_budget,
            session_id: payload.session_id.clone(),
        },
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((
        format!(
            "briefing: {} memories, at most {} of {} tokens",
            b.items.len(),
            b.tokens,
            b.budget
        ),
        b.text,
    ))
}

/// The recall for the prompt, when something stands out.
fn user_prompt(app: &App, wing: &str, payload: &Payload) -> Result<(String, String)> {
    let Some(prompt) = payload.prompt.as_deref().map(str::trim) else {
        bail!("the payload has no prompt");
    };
    if mira_core::text::keywords(prompt, 3).len() < rules::MIN_CONTENT_WORDS {
        return Ok(("a prompt too short to recall for".into(), String::new()));
    }
    let query: String = prompt.chars().take(recall::MAX_QUERY_CHARS).collect();
    let outcome = recall::recall(
        app,
        &Access::local(),
        &recall::RecallRequest {
            query,
            budget: Some(i64::from(app.config.hooks.user_prompt_budget)),
            wing: Some(wing.to_owned()),
            ..recall::RecallRequest::default()
        },
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if !stands_out(&outcome) {
        return Ok((
            format!(
                "recall: nothing stands out ({} candidates)",
                outcome.candidates
            ),
            String::new(),
        ));
    }
    Ok((
        format!(
            "recall: {} memories, {} tokens",
            outcome.items.len(),
            outcome.used
        ),
        outcome.text,
    ))
}

/// Whether a recall found something relevant enough to put before the agent unasked.
///
/// Provisional, until recall reports how far its best candidate stands above the store's
/// background: at least one recalled memory shares `SHARED_TERMS` (2) distinct content terms
/// (stemmed) with the query, so that a prompt about something the memory never mentions adds
/// nothing.
pub fn stands_out(outcome: &recall::RecallOutcome) -> bool {
    let query: std::collections::HashSet<String> = mira_core::lexical::terms(&outcome.query)
        .into_iter()
        .collect();
    outcome.items.iter().any(|item| {
        let mut shared: Vec<String> = mira_core::lexical::terms(&item.text)
            .into_iter()
            .filter(|t| query.contains(t))
            .collect();
        shared.sort();
        shared.dedup();
        shared.len() >= SHARED_TERMS
    })
}

/// Content terms a recalled memory must share with the prompt ([`stands_out`]).
const SHARED_TERMS: usize = 2;

/// The candidates of the session the payload names.
fn read_session(
    payload: &Payload,
    cwd: &Path,
    event: HookEvent,
) -> Result<Vec<capture::Candidate>> {
    let Some(path) = &payload.transcript_path else {
        bail!("the payload names no transcript_path");
    };
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the transcript {}", path.display()))?;
    let t = transcript::read(std::io::BufReader::new(file))
        .with_context(|| format!("cannot read the transcript {}", path.display()))?;
    if t.bad_lines > 0 {
        tracing::info!(
            "transcript {}: {} lines were not JSON records (skipped)",
            path.display(),
            t.bad_lines
        );
    }
    Ok(rules::candidates(
        &t.events,
        &rules::Options {
            cwd: Some(t.cwd.as_deref().unwrap_or(cwd)),
            last_exchange_done: event != HookEvent::PreCompact,
        },
    ))
}

/// The client's answer carrying `context` for the agent (Claude Code's and Codex CLI's form:
/// `hookSpecificOutput.additionalContext`); empty when there is nothing to add.
fn client_answer(event: HookEvent, context: &str) -> String {
    if context.trim().is_empty() {
        return String::new();
    }
    let answer = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": event.client_name(),
            "additionalContext": context,
        }
    });
    format!("{answer}\n")
}

/// Largest `hooks.log` kept: past it, the log starts again (the previous one is kept as
/// `hooks.log.1`).
const LOG_MAX_BYTES: u64 = 1 << 20;

/// Appends the run's line to `hooks.log` in the storage folder, when there is one.
fn log(event: HookEvent, report: &Report, millis: f64) {
    let Some(dir) = &report.storage else {
        return;
    };
    let path = dir.join("hooks.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_MAX_BYTES) {
        let _ = std::fs::rename(&path, dir.join("hooks.log.1"));
    }
    let line = format!(
        "{} {} wing={} {:.0}ms {}\n",
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        event.as_str(),
        report.wing.as_deref().unwrap_or("-"),
        millis,
        report.summary.replace('\n', " ")
    );
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
}

/// `mira hook …`: an event, or the installation.
#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// A session starts: print the project's briefing as the client's context.
    SessionStart,
    /// The user sent a prompt: print what memory holds about it, when something stands out.
    UserPrompt,
    /// The context is about to be compacted: capture the session's finished exchanges.
    PreCompact,
    /// The session ended: capture it.
    SessionEnd,
    /// A turn ended: capture the session so far (for clients without a session-end hook).
    Stop,
    /// Add mira's hooks and MCP server to a client's settings (merged into what is there).
    Install {
        /// The client (claude-code).
        client: Client,
        /// In this project's settings (.claude/settings.json and .mcp.json), shared with the
        /// team through the repository.
        #[arg(long, conflicts_with = "user")]
        project: bool,
        /// In your user settings (~/.claude/settings.json and ~/.claude.json): every project
        /// (the default).
        #[arg(long)]
        user: bool,
        /// Print the change without writing anything.
        #[arg(long)]
        dry_run: bool,
        /// Also add the user-prompt hook (a recall for every prompt; off by default).
        #[arg(long)]
        with_user_prompt: bool,
    },
    /// Remove exactly what `mira hook install` added.
    Uninstall {
        /// The client (claude-code).
        #[arg(default_value = "claude-code")]
        client: Client,
        /// From this project's settings.
        #[arg(long, conflicts_with = "user")]
        project: bool,
        /// From your user settings (the default).
        #[arg(long)]
        user: bool,
        /// Print the change without writing anything.
        #[arg(long)]
        dry_run: bool,
    },
}

/// The clients `mira hook install` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code (hooks in settings.json, MCP servers in .mcp.json or ~/.claude.json).
    ClaudeCode,
}

/// Runs `mira hook …`. An event reads its payload on standard input, prints the client's
/// answer and exits 0 whatever happens (see the module docs); it works in the payload's `cwd`.
pub fn command(cmd: &HookCommand, config: Option<&Path>) -> Result<std::process::ExitCode> {
    let event = match cmd {
        HookCommand::SessionStart => HookEvent::SessionStart,
        HookCommand::UserPrompt => HookEvent::UserPrompt,
        HookCommand::PreCompact => HookEvent::PreCompact,
        HookCommand::SessionEnd => HookEvent::SessionEnd,
        HookCommand::Stop => HookEvent::Stop,
        HookCommand::Install {
            client: Client::ClaudeCode,
            project,
            dry_run,
            with_user_prompt,
            ..
        } => {
            let cwd = std::env::current_dir().context("no working directory")?;
            let changes = install::install(scope(*project), &cwd, *with_user_prompt)?;
            return settle(&changes, *dry_run);
        }
        HookCommand::Uninstall {
            client: Client::ClaudeCode,
            project,
            dry_run,
            ..
        } => {
            let cwd = std::env::current_dir().context("no working directory")?;
            let changes = install::uninstall(scope(*project), &cwd)?;
            return settle(&changes, *dry_run);
        }
    };
    let input = read_payload();
    let report = run(event, &input, config);
    if !report.stdout.is_empty() {
        let mut out = std::io::stdout().lock();
        // A client that stopped reading has what it wanted, or nothing to do with it.
        let _ = out
            .write_all(report.stdout.as_bytes())
            .and_then(|()| out.flush());
    }
    Ok(std::process::ExitCode::SUCCESS)
}

fn scope(project: bool) -> install::Scope {
    if project {
        install::Scope::Project
    } else {
        install::Scope::User
    }
}

/// Largest payload read (a prompt is at most the client's; more is cut, and then not JSON).
const MAX_PAYLOAD_BYTES: u64 = 16 << 20;

/// The payload on standard input (nothing when it is a terminal: there is no client).
fn read_payload() -> Vec<u8> {
    let stdin = std::io::stdin();
    if std::io::IsTerminal::is_terminal(&stdin) {
        eprintln!("mira hook: give the client's JSON payload on standard input");
        return Vec::new();
    }
    let mut input = Vec::new();
    if let Err(e) = std::io::Read::read_to_end(
        &mut std::io::Read::take(stdin.lock(), MAX_PAYLOAD_BYTES),
        &mut input,
    ) {
        tracing::warn!("mira hook: cannot read standard input: {e}");
    }
    input
}

/// Prints the changes, and writes them unless `dry_run`.
fn settle(changes: &[install::Change], dry_run: bool) -> Result<std::process::ExitCode> {
    if !dry_run {
        install::apply(changes)?;
    }
    let mut text = install::render(changes, dry_run);
    if dry_run {
        text.push_str("(dry run: nothing was written)\n");
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    Ok(std::process::ExitCode::SUCCESS)
}
