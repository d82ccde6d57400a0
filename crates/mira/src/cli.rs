//! The command line. The doc comments of the argument structs are the `--help` text: plain
//! text with `<placeholder>`s, not Markdown for rustdoc.
#![allow(
    rustdoc::invalid_html_tags,
    reason = "argument docs are the --help text, written as plain text"
)]

use crate::config::Config;
use crate::serving::Exposure;
use crate::usecases::access::Access;
use crate::usecases::{self, store::StoreRequest, UseCaseError};
use crate::App;
use anyhow::{Context, Result};
use clap::{CommandFactory, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// mira: long-term memory for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "mira", version, about, long_about = None)]
pub struct Cli {
    /// Configuration file (YAML). Default: $MIRA_CONFIG, <project>/.mira/config.yaml, ~/.config/mira/config.yaml.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Log filter for stderr (overrides MIRA_LOG), e.g. `info` or `mira=debug`.
    #[arg(long, global = true, value_name = "FILTER")]
    pub log: Option<String>,
    /// What to do; without one, mira serves MCP (as `mira serve`).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The command line with the reference implementation's forms rewritten to mira's, so that
/// configurations written for it keep working: Go-style single-dash long flags (`-config FILE`,
/// `-config=FILE`, `-version`, `-help`), `-migrate` for `mira migrate`, and `-with-soul` /
/// `--with-soul` without a subcommand for `mira serve --with-soul`.
pub fn reference_compatible(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(args.len() + 1);
    let mut with_soul = false;
    for (i, arg) in args.into_iter().enumerate() {
        let Some(text) = arg.to_str().filter(|_| i > 0) else {
            out.push(arg);
            continue;
        };
        let (flag, value) = match text.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (text, None),
        };
        let long = match flag {
            "-config" | "-log" | "-version" | "-help" => Some(format!("-{flag}")),
            "-with-soul" | "--with-soul" => Some("--with-soul".to_string()),
            _ => None,
        };
        match (flag, long) {
            ("-migrate" | "--migrate", _) => out.push("migrate".into()),
            (_, Some(long)) => {
                with_soul |= long == "--with-soul";
                out.push(match value {
                    Some(v) => format!("{long}={v}").into(),
                    None => long.into(),
                });
            }
            _ => out.push(arg),
        }
    }
    // Without a subcommand, `--with-soul` means `serve --with-soul`.
    let has_command = || {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        out.iter()
            .skip(1)
            .any(|a| a.to_str().is_some_and(|a| names.iter().any(|n| n == a)))
    };
    if with_soul && !out.is_empty() && !has_command() {
        out.insert(1, "serve".into());
    }
    out
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (also `mira` alone), or over streamable HTTP with --http.
    Serve {
        /// Serve streamable HTTP on ADDR (path /mcp) instead of stdio; ADDR defaults to
        /// mcp.http.addr (127.0.0.1:8765).
        #[arg(long, value_name = "ADDR", num_args = 0..=1)]
        http: Option<Option<String>>,
        /// Also serve the 8 soul_* identity tools (as soul.enabled: true).
        #[arg(long)]
        with_soul: bool,
        /// Also serve /health and /metrics on a port of their own, ADDR (default
        /// metrics.prometheus_addr, 127.0.0.1:9090); with --http they are on the server's port.
        #[arg(long, value_name = "ADDR", num_args = 0..=1)]
        metrics: Option<Option<String>>,
        /// Listen on an address other hosts can reach even without a token (only behind your
        /// own proxy that authenticates every request: anyone reaching mira could read and
        /// delete every memory).
        #[arg(long)]
        insecure_no_auth: bool,
    },
    /// Apply pending database migrations and print the schema version.
    Migrate,
    /// Show counts, paths, schema version and model.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Store one memory.
    Store {
        /// The text to remember (or use --file).
        #[arg(required_unless_present = "file", conflicts_with = "file")]
        text: Option<String>,
        /// Read the text from this file ("-" for standard input).
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// The wing (project) it belongs to.
        #[arg(long)]
        wing: String,
        /// The room (topic); defaults to the type's room.
        #[arg(long)]
        room: Option<String>,
        /// decision, fact, preference, session_note or debug_log; classified when absent.
        #[arg(long = "type", value_name = "TYPE")]
        memory_type: Option<String>,
        /// Id of an earlier memory this one replaces.
        #[arg(long, value_name = "ID")]
        supersedes: Option<String>,
        /// Pin it: shown in every recall of its wing, before anything else.
        #[arg(long)]
        pinned: bool,
        /// When it happened, RFC 3339 (e.g. 2024-03-01T12:00:00Z); default now.
        #[arg(long, value_name = "TIME")]
        created_at: Option<String>,
        /// The conversation or session it comes from; default this command's own.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Recall the best context for a query within a token budget.
    Recall {
        /// What you are looking for.
        query: String,
        /// Token budget of the context (1-100000; default allocator.default_budget).
        #[arg(long, allow_negative_numbers = true)]
        budget: Option<i64>,
        /// Only this wing.
        #[arg(long)]
        wing: Option<String>,
        /// Only this room.
        #[arg(long)]
        room: Option<String>,
        /// Wings tried in order when the primary scope has no memory (comma-separated).
        #[arg(long, value_delimiter = ',', value_name = "WINGS")]
        fallback_wings: Vec<String>,
        /// The order of the memories: relevance (under their day, the most relevant's day first)
        /// or time (oldest first).
        #[arg(long, default_value = "relevance", value_parser = parse_order)]
        order: usecases::recall::Order,
        /// Print JSON instead of the context block.
        #[arg(long)]
        json: bool,
    },
    /// Write every memory (or one wing's) as JSON lines, oldest first, to standard output.
    Export {
        /// Only this wing.
        #[arg(long)]
        wing: Option<String>,
        /// Include the embeddings (base64; an import then needs no model).
        #[arg(long)]
        embeddings: bool,
        /// Write to this file instead of standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Import memories from a `mira export` file or a LoCoMo conversation.
    ///
    /// A `mira export` file is JSON lines ("-" reads standard input). Memories already in the
    /// store are skipped. Bad lines are reported and skipped; the exit code is 1 when any was.
    Import {
        /// The file.
        file: PathBuf,
        /// jsonl (a `mira export` file) or locomo (a LoCoMo conversation JSON).
        #[arg(long, value_enum, default_value_t = ImportFormat::Jsonl)]
        format: ImportFormat,
        /// With --format locomo: the wing (default `locomo-<file stem>`).
        #[arg(long)]
        wing: Option<String>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Retrieval benchmarks.
    Eval {
        /// Which benchmark.
        #[command(subcommand)]
        bench: EvalBench,
    },
    /// Measure speed at several store sizes: store throughput and recall latency.
    ///
    /// Reports store throughput, recall p50/p95/p99 with fresh and cached query embeddings, and
    /// the ratio to a lower bound (an exact scan plus a lookup in the store's full-text index).
    /// Stores are built once and kept under the cache directory (on PostgreSQL, each size in a
    /// database of its own on the configured server).
    Bench {
        /// Store sizes, comma-separated.
        #[arg(long, default_value = "1000,10000", value_parser = crate::bench::parse_sizes)]
        #[allow(
            unused_qualifications,
            reason = "the full path keeps clap from reading a repeated option: one value is the list"
        )]
        sizes: std::vec::Vec<usize>,
        /// LoCoMo conversations (a folder of JSON files, or one file) to take memories and
        /// questions from (default: built-in project notes).
        #[arg(long, value_name = "DIR")]
        data: Option<PathBuf>,
        /// Questions per pass.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        queries: u32,
        /// Token budget per recall.
        #[arg(long, default_value_t = 4000)]
        budget: u32,
        /// Where stores and embeddings are kept between runs (default ~/.cache/mira/bench).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Outgoing webhooks: the dead letters and their replay.
    Webhooks {
        /// What to do.
        #[command(subcommand)]
        action: WebhooksAction,
    },
    /// The vector index.
    Index {
        /// What to do with it.
        #[command(subcommand)]
        action: IndexAction,
    },
    /// Show one memory in full (id as printed by recall or timeline).
    Load {
        /// The id: the short id printed by recall or timeline (8 hex digits), any longer prefix,
        /// or the UUID.
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List memories in time order (newest first by default), with their ids.
    Timeline {
        /// Only this wing (all wings when absent).
        #[arg(long)]
        wing: Option<String>,
        /// Only this room.
        #[arg(long)]
        room: Option<String>,
        /// Only this type: decision, fact, preference, session_note or debug_log.
        #[arg(long = "type", value_name = "TYPE")]
        memory_type: Option<String>,
        /// Created at or after: YYYY-MM-DD, RFC 3339, or an age such as 7d, 12h, 2w.
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Created at or before (a bare date includes the whole day); same forms as --since.
        #[arg(long, value_name = "WHEN")]
        until: Option<String>,
        /// Memories per page, 1-1000 (default 100).
        #[arg(long, allow_negative_numbers = true)]
        limit: Option<i64>,
        /// Continue after a page: the next_cursor it printed.
        #[arg(long)]
        cursor: Option<String>,
        /// newest (default) or oldest first.
        #[arg(long, value_name = "ORDER")]
        order: Option<String>,
        /// Show archived memories too.
        #[arg(long)]
        include_archived: bool,
        /// Show superseded memories too.
        #[arg(long)]
        include_superseded: bool,
        /// Only memories from this source: stored (on purpose) or captured (by the client's
        /// hooks, `mira hook`).
        #[arg(long, value_name = "SOURCE")]
        source: Option<String>,
        /// Only pinned memories.
        #[arg(long)]
        pinned: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show the causes (and optionally the consequences) of a memory along its causal links.
    Causal {
        /// The id: the short id printed by recall or timeline (8 hex digits), any longer prefix,
        /// or the UUID.
        id: String,
        /// How many links to follow, 1-10 (default 3).
        #[arg(long, allow_negative_numbers = true)]
        max_depth: Option<i64>,
        /// Also show what the memory led to.
        #[arg(long)]
        consequences: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Archive old memories, or restore some: archived memories leave recall, stay loadable.
    ///
    /// Which memories: those past archive_thresholds (the default), those older than
    /// --older-than, or each --id.
    Archive {
        /// Archive session notes and debug logs older than this many days (instead of the
        /// thresholds; decisions, facts and preferences never age out).
        #[arg(long, value_name = "DAYS", allow_negative_numbers = true)]
        older_than: Option<i64>,
        /// Archive this memory (repeatable; instead of the thresholds).
        #[arg(long = "id", value_name = "ID")]
        ids: Vec<String>,
        /// Show what would be archived without changing anything.
        #[arg(long)]
        dry_run: bool,
        /// Archive by the thresholds (without it and without --older-than or --id, only what
        /// would be archived is shown).
        #[arg(long, conflicts_with = "dry_run")]
        yes: bool,
        /// Un-archive these memories instead.
        #[arg(long, value_name = "ID", num_args = 1.., conflicts_with_all = ["older_than", "ids", "dry_run", "yes"])]
        restore: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Permanently delete every memory, a wing, or a room of a wing (needs --yes).
    #[command(group(clap::ArgGroup::new("scope").required(true).args(["all", "wing"])))]
    Clear {
        /// Delete every memory of every wing.
        #[arg(long, conflicts_with_all = ["wing", "room"])]
        all: bool,
        /// Delete this wing (all its rooms unless --room).
        #[arg(long)]
        wing: Option<String>,
        /// Only this room of the wing.
        #[arg(long, requires = "wing")]
        room: Option<String>,
        /// Confirm the deletion (without it, only the counts are shown).
        #[arg(long)]
        yes: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Permanently delete one memory and everything derived from it (asks first).
    ///
    /// On a terminal it shows the memory and asks for confirmation; elsewhere (a script, a
    /// pipe) it deletes nothing unless --yes confirms.
    Forget {
        /// The id: the short id printed by recall (8 hex digits), any longer prefix, or the UUID.
        id: String,
        /// Confirm without being asked.
        #[arg(long, short)]
        yes: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Link two memories: the later one follows from the earlier one (a bug and its fix).
    ///
    /// mira links memories itself when a new one says why it follows from an earlier one of
    /// its wing; this adds a link it missed. `mira causal ID` shows the links.
    Link {
        /// The earlier memory, the cause: its short id, a longer prefix or the UUID.
        from: String,
        /// The later memory it led to.
        to: String,
        /// because (the default: it happened because of the earlier one), triggered (the
        /// earlier one set it off) or resolves (it fixes what the earlier one describes).
        #[arg(long, value_name = "RELATION")]
        relation: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove the links between two memories (either way), made by mira or by hand.
    Unlink {
        /// One memory: its short id, a longer prefix or the UUID.
        a: String,
        /// The other.
        b: String,
        /// Only links of this relation (because, triggered, resolves, updates, contradicts).
        #[arg(long, value_name = "RELATION")]
        relation: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Mark memory OLD as replaced by NEW of its wing (reversible with --undo).
    ///
    /// Recall then shows OLD only as a header right after NEW; `mira load OLD` names NEW.
    Supersede {
        /// The earlier memory that is no longer true (short id, prefix or UUID).
        old: String,
        /// The memory that replaces it.
        new: String,
        /// Why (shown in the answer and the log; not stored).
        #[arg(long)]
        reason: Option<String>,
        /// Undo an earlier supersession of OLD by NEW: OLD is current again.
        #[arg(long)]
        undo: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Pin a memory: shown in every recall of its wing, before anything else.
    Pin {
        /// The id: the short id printed by recall (8 hex digits), any longer prefix, or the UUID.
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Unpin a memory.
    Unpin {
        /// The id: the short id printed by recall (8 hex digits), any longer prefix, or the UUID.
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Bring archived or retracted memories back into recall (as `mira archive --restore`).
    Restore {
        /// Their ids (short ids, longer prefixes or UUIDs).
        #[arg(required = true)]
        ids: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Open the memory browser: a local web page to search, read and fix the memories.
    Ui {
        /// Listen on ADDR (IP:PORT or a port on 127.0.0.1); another host needs a token
        /// (mcp.http.auth_token or mcp.http.tokens).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8766")]
        addr: String,
        /// Also show SOUL identities (as soul.enabled: true).
        #[arg(long)]
        with_soul: bool,
        /// Listen on an address other hosts can reach even without a token (only behind your
        /// own proxy that authenticates every request).
        #[arg(long)]
        insecure_no_auth: bool,
    },
    /// Bearer tokens of a shared server (mcp.http.tokens): make one, or hash one.
    Token {
        /// What to do.
        #[command(subcommand)]
        action: TokenAction,
    },
    /// Client hooks: a briefing when a session starts, capture when it ends (`hook install`).
    ///
    /// `mira hook install claude-code` sets them up in Claude Code's settings.
    Hook {
        /// The event, or install / uninstall.
        #[command(subcommand)]
        action: crate::hooks::HookCommand,
    },
    /// SOUL, the identity extension: who the agent is (works whether or not soul.enabled).
    Soul {
        /// The agent whose identity this is.
        #[arg(long, global = true)]
        agent: Option<String>,
        /// Print JSON instead of text.
        #[arg(long, global = true)]
        json: bool,
        /// What to do.
        #[command(subcommand)]
        action: SoulAction,
    },
}

/// The `mira soul` commands (the soul_* tools).
#[derive(Debug, Subcommand)]
pub enum SoulAction {
    /// Capture identity observations from a conversation file ("-" for standard input).
    Capture {
        /// The conversation ("Assistant:" lines are the agent's).
        #[arg(long, value_name = "FILE")]
        conversation: PathBuf,
        /// The model the agent ran on (default unknown).
        #[arg(long)]
        model: Option<String>,
        /// The session it comes from.
        #[arg(long)]
        session: Option<String>,
        /// Behavioural metrics to keep with the version (a JSON object).
        #[arg(long, value_name = "JSON")]
        metrics: Option<String>,
    },
    /// Print the identity prompt within a token budget.
    Recall {
        /// What the agent is about to do.
        #[arg(long)]
        context: Option<String>,
        /// Token budget (30-100000; default soul.recall.default_budget_tokens).
        #[arg(long, allow_negative_numbers = true)]
        budget: Option<i64>,
    },
    /// Drift between the recent versions, or between two models (--from and --to).
    Drift {
        /// Versions (or captures per model) to analyse.
        #[arg(long, allow_negative_numbers = true)]
        window: Option<i64>,
        /// Compare the identity observed under this model …
        #[arg(long, requires = "to")]
        from: Option<String>,
        /// … with the one observed under this model.
        #[arg(long, requires = "from")]
        to: Option<String>,
    },
    /// Record a model change and print the reinforcement prompt for the new model.
    Swap {
        /// The previous model.
        #[arg(long)]
        from: String,
        /// The new model.
        #[arg(long)]
        to: String,
    },
    /// Show the current identity, its version and drift.
    Status,
    /// List the latest versions and what changed at each.
    History {
        /// Versions to list (1-1000, default 10).
        #[arg(long, allow_negative_numbers = true)]
        limit: Option<i64>,
    },
    /// Apply a natural-language directive ("be more concise", "stop using emojis").
    Update {
        /// The directive (English or French).
        directive: String,
        /// Why (recorded with the version).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Apply an explicit patch: a JSON object of soul_patch's fields, e.g. '{"formality_level": 0.8}'.
    Patch {
        /// The patch (JSON object).
        patch: String,
        /// Why (recorded with the version).
        #[arg(long)]
        reason: Option<String>,
    },
}

/// Formats `mira import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// JSON lines written by `mira export`.
    Jsonl,
    /// A LoCoMo conversation (one memory per turn).
    Locomo,
}

/// The evaluation benchmarks.
#[derive(Debug, Subcommand)]
pub enum EvalBench {
    /// Evidence recall on data sets of conversations in the LoCoMo format (each a folder of
    /// JSON files, or one file), one table per data set.
    Locomo {
        /// The data sets: folders (or files).
        #[arg(required = true, num_args = 1..)]
        paths: Vec<PathBuf>,
        /// Token budget per question.
        #[arg(long, default_value_t = 4000)]
        budget: u32,
        /// Ask at most this many questions per conversation.
        #[arg(long, value_name = "N")]
        max_questions: Option<usize>,
        /// Candidates each search returns in large scopes (dense and BM25; default: the
        /// configured `allocator.max_candidates`).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(10..=1000))]
        k: Option<u16>,
        /// Also report each conversation.
        #[arg(long)]
        per_conversation: bool,
        /// Also score the ranking parameters chosen where they are not scored, over a declared
        /// grid: leave one conversation out, leave one data set out, each stage switched off.
        #[arg(long)]
        loco: bool,
        /// Embed everything afresh instead of reusing the vectors of earlier runs
        /// (`~/.cache/mira/eval/`).
        #[arg(long)]
        no_embedding_cache: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Also write each question's 50 best memories of every system, with their relevance,
        /// to FILE (JSON lines), for failure analysis.
        #[arg(long, value_name = "FILE")]
        questions: Option<PathBuf>,
        /// Also rank by each of PostgreSQL's full-text rankings (ts_rank and ts_rank_cd with
        /// each length normalisation), beside its default (`fts`); needs storage.backend:
        /// postgres.
        #[arg(long)]
        text_ranks: bool,
    },
    /// Facts that change: pairs of memories (an earlier fact, a later one that changes it, or
    /// a control that must not) each stored in a wing of its own, then a question recalled;
    /// reports whether the new value is shown first and the old one marked (JSON lines, see
    /// crates/mira/tests/data/README.md). Give a config with `recall.newer_first: true` to
    /// measure the newer-first stage.
    Updates {
        /// The JSON-lines file of cases.
        path: PathBuf,
        /// Token budget of each recall.
        #[arg(long, default_value_t = 2000)]
        budget: u32,
        /// Also list every case that went wrong.
        #[arg(long)]
        failures: bool,
        /// Embed everything afresh instead of reusing the vectors of earlier runs
        /// (`~/.cache/mira/eval/`).
        #[arg(long)]
        no_embedding_cache: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Memory types: accuracy per type of the rules and of the store's classifier on held-out
    /// labelled statements (JSON lines `{"type": …, "text": …}`); with --train, first train
    /// the classifier on the training sets (settings by cross-validation inside them) and write
    /// its weights. The defaults are the sets and the weights file of mira's source tree.
    Types {
        /// The labelled statements scored.
        #[arg(long, value_name = "FILE", default_value = crate::eval::types::DEFAULT_HELDOUT)]
        heldout: PathBuf,
        /// Train the classifier on --train-set and write its weights to --out first.
        #[arg(long)]
        train: bool,
        /// The labelled statements trained on, all files together (repeat the option or give
        /// several files).
        #[arg(long, value_name = "FILE", num_args = 1.., default_values = crate::eval::types::DEFAULT_TRAIN)]
        train_set: Vec<PathBuf>,
        /// Where --train writes the weights.
        #[arg(long, value_name = "FILE", default_value = crate::eval::types::DEFAULT_WEIGHTS)]
        out: PathBuf,
        /// Also list every statement the classifier got wrong.
        #[arg(long)]
        wrong: bool,
        /// Embed everything afresh instead of reusing the vectors of earlier runs
        /// (`~/.cache/mira/eval/`).
        #[arg(long)]
        no_embedding_cache: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Actions on the webhook dead letters.
#[derive(Debug, Subcommand)]
pub enum WebhooksAction {
    /// List the events that could not be delivered, oldest first.
    DeadLetters {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Deliver dead letters again (removed once delivered).
    #[command(group(clap::ArgGroup::new("which").required(true).args(["id", "all"])))]
    Replay {
        /// The dead letter's id, as listed by `mira webhooks dead-letters`.
        id: Option<String>,
        /// Every dead letter.
        #[arg(long, conflicts_with = "id")]
        all: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The `mira token` commands.
#[derive(Debug, Subcommand)]
pub enum TokenAction {
    /// Make a random token and print it once, with its entry for mcp.http.tokens (which keeps
    /// only the token's SHA-256).
    New {
        /// Its name, shown in refusals and in the log of destructive calls (e.g. ci-bot).
        name: String,
        /// A wing it may read (repeat the option; * for every wing).
        #[arg(long = "read", value_name = "WING")]
        read: Vec<String>,
        /// A wing it may write to (repeat the option; * for every wing). Writing does not let
        /// it read.
        #[arg(long = "write", value_name = "WING")]
        write: Vec<String>,
        /// Let it archive, clear and forget memories of the wings it writes.
        #[arg(long)]
        destructive: bool,
    },
    /// Print the SHA-256 of a token read from standard input (for the sha256 of an
    /// mcp.http.tokens entry).
    Hash,
}

/// Actions on the vector index.
#[derive(Debug, Subcommand)]
pub enum IndexAction {
    /// Rebuild the index from the embeddings stored in SQLite and save it.
    Rebuild,
    /// Compute the vectors of the memories stored while no model was installed, or embedded by
    /// another model than the configured one (after a change of embeddings.precision); a server
    /// started with the model does it in the background too.
    EmbedMissing,
}

/// `mira serve` and `mira` alone: MCP on the transport chosen by `--http` or `mcp.transport`.
/// Its listeners are bound before the store opens, through the exposure rule
/// ([`crate::serving`]): an address it refuses ends the command at once. A health and metrics
/// listener of its own, when asked for, starts first, so that `/health/ready` answers 503 while
/// the store opens; a port already taken (another mira) only costs the endpoints, not MCP.
fn serve(
    cli: &Cli,
    http: Option<Option<&str>>,
    with_soul: bool,
    metrics: Option<Option<&str>>,
    exposure: Exposure,
) -> Result<ExitCode> {
    let (mut config, source) = Config::load(cli.config.as_deref())?;
    config.soul.enabled |= with_soul;
    if let Some(addr) = metrics {
        config.metrics.enabled = Some(true);
        if let Some(a) = addr {
            config.metrics.prometheus_addr = a.to_string();
        }
    }
    let transport = crate::mcp::transport(&config.mcp, http)?;
    let transport = transport.bind(&config.mcp.http, exposure)?;
    // An HTTP server serves the endpoints on its own port (`ops::beside_mcp`); a listener of
    // their own only when asked for.
    let ops = if config.metrics.enabled == Some(true) {
        match crate::ops::OpsServer::start(&config.metrics, exposure) {
            Ok(ops) => Some(ops),
            Err(e) if e.is::<crate::serving::Refused>() => return Err(e),
            Err(e) => {
                tracing::warn!("no health and metrics endpoints: {e:#}");
                None
            }
        }
    } else {
        None
    };
    let app = std::sync::Arc::new(App::open(config, source)?);
    // Read before the health and metrics endpoints report it (the server would at start).
    app.index()?;
    if let Some(ops) = &ops {
        ops.attach(app.clone());
    }
    usecases::embed_missing::spawn_at_start(app.clone());
    crate::mcp::serve(app, transport)?;
    Ok(ExitCode::SUCCESS)
}

/// `mira ui`: the memory browser on `addr` (bound before the store opens, through the
/// exposure rule).
fn browse(cli: &Cli, addr: &str, with_soul: bool, exposure: Exposure) -> Result<ExitCode> {
    let addr = crate::serving::parse_addr(addr)?;
    let (mut config, source) = Config::load(cli.config.as_deref())?;
    config.soul.enabled |= with_soul;
    let listener = crate::serving::listen_for_clients(
        addr,
        &config.mcp.http,
        "the memory browser (mira ui)",
        "--addr",
        exposure,
    )?;
    // SOUL's tables are made ready by its first operation (usecases::soul::ensure).
    let app = std::sync::Arc::new(App::open(config, source)?);
    usecases::embed_missing::spawn_at_start(app.clone());
    crate::ui::serve(app, listener)?;
    Ok(ExitCode::SUCCESS)
}

/// `mira token`: a new token with its mcp.http.tokens entry, or the digest of a given one.
fn token(action: &TokenAction) -> Result<ExitCode> {
    match action {
        TokenAction::New {
            name,
            read,
            write,
            destructive,
        } => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| anyhow::anyhow!("no randomness from the system: {e}"))?;
            let secret = format!(
                "mira_{}",
                base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, bytes)
            );
            let entry = crate::config::ScopedToken {
                name: name.clone(),
                sha256: crate::bearer::sha256_hex(&secret),
                read: read.clone(),
                write: write.clone(),
                destructive: *destructive,
            };
            let mut check = Config::default();
            check.mcp.http.tokens.push(entry.clone());
            check.validate().context("mira token new")?;
            let yaml = serde_norway::to_string(&vec![entry])?;
            let indented: String = yaml.lines().map(|l| format!("    {l}\n")).collect();
            write_stdout(&format!(
                "token: {secret}\n\n\
                 The token is shown once: give it to the client (Authorization: Bearer <token>).\n\
                 Add this entry to the server's config (it keeps only the token's SHA-256):\n\n\
                 mcp:\n  http:\n    tokens:\n{indented}"
            ));
        }
        TokenAction::Hash => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("cannot read the token from standard input")?;
            let token = text.trim_end_matches(['\r', '\n']);
            if token.trim().is_empty() {
                anyhow::bail!(
                    "no token on standard input: pipe it in, e.g. printf %s \"$TOKEN\" | mira token hash"
                );
            }
            write_stdout(&format!("{}\n", crate::bearer::sha256_hex(token)));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The configuration and the real model for `mira eval` and `mira bench`, with `--budget`
/// checked.
fn measuring(cli: &Cli, budget: u32) -> Result<(Config, std::sync::Arc<dyn mira_embed::Embedder>)> {
    let (config, _) = Config::load(cli.config.as_deref())?;
    if !(1..=usecases::recall::MAX_BUDGET).contains(&budget) {
        anyhow::bail!(
            "--budget must be between 1 and {}",
            usecases::recall::MAX_BUDGET
        );
    }
    let model = std::sync::Arc::new(crate::app::load_model(&config.embeddings)?);
    Ok((config, model))
}

/// The model behind the evaluations' embedding cache (`~/.cache/mira/eval/`, unless `fresh`).
fn eval_cache(
    model: std::sync::Arc<dyn mira_embed::Embedder>,
    fresh: bool,
) -> std::sync::Arc<crate::eval::EmbeddingCache> {
    let path = (!fresh)
        .then(|| crate::eval::EmbeddingCache::default_path(model.model_name()))
        .flatten();
    std::sync::Arc::new(crate::eval::EmbeddingCache::open(model, path))
}

/// Opens the store for a command that may write, creating it where none exists yet (and saying
/// so on a terminal).
fn open(cli: &Cli) -> Result<App> {
    let (config, source) = Config::load(cli.config.as_deref())?;
    let created = !config.store_exists();
    let app = App::open(config, source)?;
    if created {
        let note = format!(
            "created the memory store {}, chosen by {}; `mira status` says how to choose another",
            app.store.location(),
            app.config.storage_choice().describe()
        );
        // For people: a script's stderr stays quiet (the log has it).
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprintln!("note: {note}");
        } else {
            tracing::info!("{note}");
        }
    }
    Ok(app)
}

/// Opens the store for a command that only reads, or changes what is stored: where none
/// exists, it creates nothing and the command ends with exit code 3, saying where it looked.
fn open_existing(cli: &Cli) -> Result<Result<App, ExitCode>> {
    let (config, source) = Config::load(cli.config.as_deref())?;
    if !config.store_exists() {
        eprintln!(
            "error: no memory store at {}: nothing has been stored from here yet (the store is chosen by {}). Store a memory first, or point MIRA_STORAGE_PATH at an existing store; `mira status` explains",
            config.db_path().display(),
            config.storage_choice().describe()
        );
        return Ok(Err(ExitCode::from(3)));
    }
    Ok(Ok(App::open(config, source)?))
}

/// The store of [`open_existing`], or the exit code of a command that found none.
macro_rules! existing_store {
    ($cli:expr) => {
        match open_existing($cli)? {
            Ok(app) => app,
            Err(code) => return Ok(code),
        }
    };
}

fn read_text(path: &PathBuf) -> Result<String> {
    let bytes = if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .context("cannot read standard input")?;
        buf
    } else {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid UTF-8 (first bad byte at offset {}): convert it to UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Writes `text` to stdout. A closed pipe (`mira timeline | head`) ends the command quietly
/// with success, as `head` asked for no more; any other write error ends it with code 1.
fn write_stdout(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    write_stdout(&format!("{}\n", serde_json::to_string_pretty(value)?));
    Ok(())
}

/// Exit code 2 for invalid input (and a refused right, which the command line's local user
/// never meets), 3 for not found, 1 for internal errors. Messages name the commands and
/// options of the command line, not the MCP tools and arguments.
fn use_case<T>(r: Result<T, UseCaseError>) -> Result<Result<T, ExitCode>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(UseCaseError::Invalid(m) | UseCaseError::Forbidden(m)) => {
            eprintln!("error: {}", in_cli_terms(&m));
            Ok(Err(ExitCode::from(2)))
        }
        Err(UseCaseError::NotFound(m)) => {
            eprintln!("error: {}", in_cli_terms(&m));
            Ok(Err(ExitCode::from(3)))
        }
        Err(UseCaseError::Internal(e)) => Err(e),
    }
}

/// The MCP tools and arguments that the use cases' messages name, with what the command line
/// calls them.
const CLI_TERMS: &[(&str, &str)] = &[
    ("mira_recall", "`mira recall`"),
    ("mira_timeline", "`mira timeline`"),
    ("mira_load", "`mira load`"),
    ("mira_status", "`mira status`"),
    ("mira_causal_chain", "`mira causal`"),
    ("include_consequences", "--consequences"),
    ("mira_store", "`mira store`"),
    ("soul_capture", "`mira soul capture`"),
    ("soul_update", "`mira soul update`"),
    ("soul_patch", "`mira soul patch`"),
    ("include_archived", "--include-archived"),
    ("older_than_days", "--older-than"),
    ("max_depth", "--max-depth"),
    ("created_at", "--created-at"),
    ("session_id", "--session"),
    ("from_model", "--from"),
    ("to_model", "--to"),
];

/// `message` with the MCP names of [`CLI_TERMS`] replaced by the command line's.
fn in_cli_terms(message: &str) -> String {
    CLI_TERMS
        .iter()
        .fold(message.to_owned(), |m, (mcp, cli)| m.replace(mcp, cli))
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let Some(command) = &cli.command else {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            eprintln!(
                "mira: serving MCP over stdio, waiting for a client on standard input (Ctrl-D ends; `mira --help` lists the commands)"
            );
        }
        return serve(&cli, None, false, None, Exposure::default());
    };
    match command {
        Command::Serve {
            http,
            with_soul,
            metrics,
            insecure_no_auth,
        } => {
            return serve(
                &cli,
                http.as_ref().map(Option::as_deref),
                *with_soul,
                metrics.as_ref().map(Option::as_deref),
                Exposure {
                    insecure_no_auth: *insecure_no_auth,
                },
            )
        }
        Command::Ui {
            addr,
            with_soul,
            insecure_no_auth,
        } => {
            return browse(
                &cli,
                addr,
                *with_soul,
                Exposure {
                    insecure_no_auth: *insecure_no_auth,
                },
            )
        }
        Command::Token { action } => return token(action),
        Command::Hook { action } => return crate::hooks::command(action, cli.config.as_deref()),
        Command::Soul {
            agent,
            json,
            action,
        } => return run_soul(&cli, agent.as_deref(), *json, action),
        Command::Migrate => {
            let app = open(&cli)?;
            write_stdout(&format!(
                "Database {} is at schema version {}\n",
                app.store.location(),
                app.store.schema_version()?
            ));
        }
        Command::Status { json } => {
            let (config, source) = Config::load(cli.config.as_deref())?;
            if !config.store_exists() {
                for w in config.retired_key_warnings() {
                    tracing::warn!("{w}");
                }
                let s = usecases::status::no_store(&config, &source);
                if *json {
                    print_json(&s)?;
                } else {
                    write_stdout(&usecases::status::render_no_store_text(&s));
                }
                return Ok(ExitCode::SUCCESS);
            }
            let app = App::open(config, source)?;
            // The index as it will serve (loaded from its files, or built), not mid-load; and
            // no uptime: there is no server.
            app.index()?.wait_idle(std::time::Duration::from_secs(30));
            let mut status = match use_case(usecases::status::status(&app, &Access::local()))? {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            status.uptime_secs = None;
            if *json {
                print_json(&status)?;
            } else {
                write_stdout(&usecases::status::render_text(&status));
            }
        }
        Command::Store {
            text,
            file,
            wing,
            room,
            memory_type,
            supersedes,
            pinned,
            created_at,
            session,
            json,
        } => {
            let when = created_at.as_deref().map(usecases::validate::created_at);
            let created_at = match use_case(when.transpose())? {
                Ok(t) => t,
                Err(code) => return Ok(code),
            };
            let content = match (text, file) {
                (Some(t), _) => t.clone(),
                (None, Some(f)) => read_text(f)?,
                (None, None) => anyhow::bail!("give the text to store, or --file FILE"),
            };
            let app = open(&cli)?;
            let req = StoreRequest {
                content,
                wing: wing.clone(),
                room: room.clone(),
                memory_type: memory_type.clone(),
                supersedes: supersedes.clone(),
                pinned: *pinned,
                created_at,
                session_id: session.clone(),
                ..StoreRequest::default()
            };
            let outcome = match use_case(usecases::store::store(&app, &Access::local(), req))? {
                Ok(o) => o,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&outcome)?;
            } else {
                write_stdout(&usecases::store::render_text(&outcome));
            }
        }
        Command::Recall {
            query,
            budget,
            wing,
            room,
            fallback_wings,
            order,
            json,
        } => {
            let app = existing_store!(&cli);
            let req = usecases::recall::RecallRequest {
                query: query.clone(),
                budget: *budget,
                wing: wing.clone(),
                room: room.clone(),
                fallback_wings: fallback_wings
                    .iter()
                    .map(|w| w.trim().to_owned())
                    .filter(|w| !w.is_empty())
                    .collect(),
                order: *order,
                surface: usecases::recall::Surface::Cli,
                ..usecases::recall::RecallRequest::default()
            };
            let outcome = match use_case(usecases::recall::recall(&app, &Access::local(), &req))? {
                Ok(o) => o,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&outcome)?;
            } else {
                write_stdout(&format!("{}\n", outcome.text));
            }
            if outcome.items.is_empty() && req.wing.is_some() && outcome.candidates == 0 {
                let wings = app.store.wings()?;
                eprintln!(
                    "note: nothing in that wing. {}",
                    usecases::validate::wings_hint(&wings)
                );
            }
        }
        Command::Eval {
            bench:
                EvalBench::Locomo {
                    paths,
                    budget,
                    max_questions,
                    k,
                    per_conversation,
                    loco,
                    no_embedding_cache,
                    json,
                    questions,
                    text_ranks,
                },
        } => {
            let (config, model) = measuring(&cli, *budget)?;
            let cache = eval_cache(model, *no_embedding_cache);
            let opts = crate::eval::EvalOptions {
                paths: paths.clone(),
                budget: *budget,
                max_questions: *max_questions,
                k: k.map(usize::from),
                loco: *loco,
                questions: questions.clone(),
                text_ranks: *text_ranks,
            };
            let report = crate::eval::run(&config, cache.clone(), &opts)?;
            if let Err(e) = cache.save() {
                tracing::warn!("embedding cache not saved: {e}");
            }
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::eval::render_table(&report, *per_conversation));
            }
        }
        Command::Eval {
            bench:
                EvalBench::Updates {
                    path,
                    budget,
                    failures,
                    no_embedding_cache,
                    json,
                },
        } => {
            let (config, model) = measuring(&cli, *budget)?;
            let cache = eval_cache(model, *no_embedding_cache);
            let opts = crate::eval::updates::UpdatesOptions {
                path: path.clone(),
                budget: *budget,
            };
            let report = crate::eval::updates::run(&config, cache.clone(), &opts)?;
            if let Err(e) = cache.save() {
                tracing::warn!("embedding cache not saved: {e}");
            }
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::eval::updates::render_table(&report, *failures));
            }
        }
        Command::Eval {
            bench:
                EvalBench::Types {
                    heldout,
                    train,
                    train_set,
                    out,
                    wrong,
                    no_embedding_cache,
                    json,
                },
        } => {
            let (_, model) = measuring(&cli, 1)?;
            let cache = eval_cache(model, *no_embedding_cache);
            let opts = crate::eval::types::TypesOptions {
                heldout: heldout.clone(),
                train: train.then(|| train_set.clone()),
            };
            let (report, trained) = crate::eval::types::run(&*cache, &opts)?;
            if let Err(e) = cache.save() {
                tracing::warn!("embedding cache not saved: {e}");
            }
            if let Some(model) = trained {
                std::fs::write(out, model.to_json()? + "\n")
                    .with_context(|| format!("cannot write {}", out.display()))?;
                eprintln!("wrote the trained weights to {}", out.display());
            }
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::eval::types::render_table(&report, *wrong));
            }
        }
        Command::Bench {
            sizes,
            data,
            queries,
            budget,
            cache_dir,
            json,
        } => {
            let (config, model) = measuring(&cli, *budget)?;
            let cache_dir = match cache_dir {
                Some(d) => d.clone(),
                None => std::env::var_os("HOME")
                    .map(|h| PathBuf::from(h).join(".cache/mira/bench"))
                    .ok_or_else(|| anyhow::anyhow!("HOME is not set: give --cache-dir DIR"))?,
            };
            let opts = crate::bench::BenchOptions {
                sizes: sizes.clone(),
                data: data.clone(),
                queries: *queries as usize,
                budget: *budget,
                cache_dir,
                hook_binary: std::env::current_exe().ok(),
            };
            let report = crate::bench::run(&config, model, &opts)?;
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::bench::render_table(&report));
            }
        }
        Command::Index { action } => return run_index(&cli, action),
        Command::Load { id, json } => {
            let app = existing_store!(&cli);
            let loaded = match use_case(usecases::load::load(&app, &Access::local(), id))? {
                Ok(m) => m,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&usecases::load::to_json(&loaded))?;
            } else {
                let slot = usecases::load::replaced_slot(&app, &Access::local(), &loaded)?;
                write_stdout(&usecases::load::render_text(&loaded, slot.as_deref()));
            }
        }
        Command::Export {
            wing,
            embeddings,
            output,
        } => return run_export(&cli, wing.as_deref(), *embeddings, output.as_deref()),
        Command::Import {
            file,
            format,
            wing,
            json,
        } => return run_import(&cli, file, *format, wing.as_deref(), *json),
        Command::Webhooks { action } => return webhooks(&cli, action),
        Command::Timeline { .. }
        | Command::Causal { .. }
        | Command::Archive { .. }
        | Command::Restore { .. }
        | Command::Clear { .. }
        | Command::Forget { .. }
        | Command::Link { .. }
        | Command::Unlink { .. }
        | Command::Pin { .. }
        | Command::Supersede { .. }
        | Command::Unpin { .. } => {
            return run_lifecycle(&cli);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `mira webhooks …`; a replay that leaves letters undelivered exits 1.
fn webhooks(cli: &Cli, action: &WebhooksAction) -> Result<ExitCode> {
    use crate::webhooks::replay;
    let app = existing_store!(cli);
    match action {
        WebhooksAction::DeadLetters { json } => {
            emit(replay::list(&app), *json, |l| replay::render_list(l))
        }
        WebhooksAction::Replay { id, json, .. } => {
            let results = match use_case(replay::replay(&app, id.as_deref()))? {
                Ok(r) => r,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&results)?;
            } else {
                write_stdout(&replay::render_replay(&results));
            }
            Ok(if results.iter().all(|r| r.delivered) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

/// Prints a use case's outcome as JSON or as its text form; invalid input and unknown ids
/// become exit codes 2 and 3.
fn emit<T: serde::Serialize>(
    r: Result<T, UseCaseError>,
    json: bool,
    text: impl FnOnce(&T) -> String,
) -> Result<ExitCode> {
    let value = match use_case(r)? {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    if json {
        print_json(&value)?;
    } else {
        write_stdout(&text(&value));
    }
    Ok(ExitCode::SUCCESS)
}

/// The lifecycle commands: timeline, causal, archive, restore, clear, forget, link, unlink,
/// pin, unpin (each on a store that exists).
fn run_lifecycle(cli: &Cli) -> Result<ExitCode> {
    use usecases::{archive, causal, clear, link, timeline};
    let app = existing_store!(cli);
    let Some(command) = &cli.command else {
        anyhow::bail!("not a lifecycle command")
    };
    match command {
        Command::Timeline {
            wing,
            room,
            memory_type,
            since,
            until,
            limit,
            cursor,
            order,
            include_archived,
            include_superseded,
            source,
            pinned,
            json,
        } => {
            let req = timeline::TimelineRequest {
                wing: wing.clone(),
                room: room.clone(),
                memory_type: memory_type.clone(),
                since: since.clone(),
                until: until.clone(),
                limit: *limit,
                cursor: cursor.clone(),
                order: order.clone(),
                include_archived: *include_archived,
                include_superseded: *include_superseded,
                source: source.clone(),
                pinned_only: *pinned,
                now: None,
            };
            emit(
                timeline::timeline(&app, &Access::local(), &req),
                *json,
                timeline::render_text,
            )
        }
        Command::Causal {
            id,
            max_depth,
            consequences,
            json,
        } => {
            let req = causal::CausalRequest {
                id: id.clone(),
                max_depth: *max_depth,
                include_consequences: *consequences,
            };
            emit(
                causal::causal_chain(&app, &Access::local(), &req),
                *json,
                causal::render_text,
            )
        }
        Command::Archive { restore, json, .. } if !restore.is_empty() => emit(
            archive::unarchive(&app, &Access::local(), restore),
            *json,
            archive::render_unarchive_text,
        ),
        Command::Restore { ids, json } => emit(
            archive::unarchive(&app, &Access::local(), ids),
            *json,
            archive::render_unarchive_text,
        ),
        Command::Archive {
            older_than,
            ids,
            dry_run,
            yes,
            json,
            ..
        } => {
            // Without arguments, the thresholds' archive is shown before it is done.
            let ask_first = !*yes && older_than.is_none() && ids.is_empty();
            let req = archive::ArchiveRequest {
                older_than_days: *older_than,
                ids: ids.clone(),
                dry_run: *dry_run || ask_first,
                now: None,
            };
            emit(
                archive::archive(&app, &Access::local(), &req),
                *json,
                |o: &archive::ArchiveOutcome| {
                    let mut text = archive::render_text(o);
                    if ask_first && !*dry_run && !o.items.is_empty() {
                        text.push_str("Run `mira archive --yes` to archive them.\n");
                    }
                    text
                },
            )
        }
        Command::Clear {
            all,
            wing,
            room,
            yes,
            json,
        } => {
            let scope = match (all, wing, room) {
                (true, _, _) => clear::ClearScope::All,
                (false, Some(w), None) => clear::ClearScope::Wing { wing: w.clone() },
                (false, Some(w), Some(r)) => clear::ClearScope::Room {
                    wing: w.clone(),
                    room: r.clone(),
                },
                (false, None, _) => anyhow::bail!("give --all or --wing WING"),
            };
            if !*yes {
                // A preview is what was asked for, not an error.
                return emit(
                    clear::preview(&app, &scope),
                    *json,
                    clear::render_preview_text,
                );
            }
            emit(
                clear::clear(
                    &app,
                    &Access::local(),
                    &clear::ClearRequest {
                        scope,
                        confirm: true,
                    },
                ),
                *json,
                clear::render_text,
            )
        }
        Command::Forget { id, yes, json } => {
            let what = match use_case(clear::forget_preview(&app, &Access::local(), id))? {
                Ok(w) => w,
                Err(code) => return Ok(code),
            };
            if !*yes {
                if let Some(refused) = confirm_forget(&what, id)? {
                    return Ok(refused);
                }
            }
            emit(
                clear::forget(&app, &Access::local(), &what.id.to_string()),
                *json,
                clear::render_forget_text,
            )
        }
        Command::Link {
            from,
            to,
            relation,
            json,
        } => {
            let req = link::LinkRequest {
                from: from.clone(),
                to: to.clone(),
                relation: relation.clone(),
            };
            emit(
                link::link(&app, &Access::local(), &req),
                *json,
                link::render_link_text,
            )
        }
        Command::Unlink {
            a,
            b,
            relation,
            json,
        } => {
            let req = link::LinkRequest {
                from: a.clone(),
                to: b.clone(),
                relation: relation.clone(),
            };
            emit(
                link::unlink(&app, &Access::local(), &req),
                *json,
                link::render_unlink_text,
            )
        }
        Command::Supersede {
            old,
            new,
            reason,
            undo,
            json,
        } => emit(
            usecases::supersede::supersede(
                &app,
                &Access::local(),
                &usecases::supersede::SupersedeRequest {
                    old: old.clone(),
                    new: new.clone(),
                    reason: reason.clone(),
                    undo: *undo,
                },
            ),
            *json,
            usecases::supersede::render_text,
        ),
        Command::Pin { id, json } | Command::Unpin { id, json } => {
            let pinned = matches!(command, Command::Pin { .. });
            emit(
                usecases::pin::set_pinned(&app, &Access::local(), id, pinned),
                *json,
                usecases::pin::render_text,
            )
        }
        _ => anyhow::bail!("not a lifecycle command"),
    }
}

/// Asks on the terminal whether to forget `what` (given as `raw_id`); off a terminal, says how
/// to confirm instead. `None` when the user said yes; else the exit code: 2 off a terminal (the
/// caller must add --yes), 1 when the answer was no. Nothing is deleted then.
fn confirm_forget(what: &usecases::clear::ForgetOutcome, raw_id: &str) -> Result<Option<ExitCode>> {
    use std::io::{BufRead as _, IsTerminal as _, Write as _};
    let target = usecases::clear::render_forget_target(what);
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "error: nothing was deleted: `mira forget` asks before deleting {target} for good, and standard input is not a terminal; run `mira forget {raw_id} --yes` to confirm"
        );
        return Ok(Some(ExitCode::from(2)));
    }
    let mut err = std::io::stderr().lock();
    write!(err, "Forget {target} for good? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        return Ok(None);
    }
    writeln!(err, "Nothing was deleted.")?;
    Ok(Some(ExitCode::FAILURE))
}

/// `mira index rebuild` and `mira index embed-missing`, with a progress bar on a terminal.
fn run_index(cli: &Cli, action: &IndexAction) -> Result<ExitCode> {
    let app = existing_store!(cli);
    let progress = crate::progress::Progress::new();
    match action {
        IndexAction::Rebuild => {
            let index = app.index()?;
            let bar = progress.bar("index", Some(index.len() as u64), "vectors");
            let built = std::thread::scope(|s| {
                let job = s.spawn(|| index.rebuild_blocking());
                while !job.is_finished() {
                    if let Some((done, total)) = index.build_progress() {
                        bar.set_length(total as u64);
                        bar.set_position(done as u64);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                job.join()
                    .map_err(|_| anyhow::anyhow!("the index build stopped unexpectedly"))
            });
            bar.finish_and_clear();
            let n = built??;
            index.save()?;
            let state = index.state();
            write_stdout(&format!(
                "Index rebuilt: {n} vectors ({}, saved in {})\n",
                state.kind,
                index.dir().display()
            ));
        }
        IndexAction::EmbedMissing => {
            let bar = progress.bar("embed", Some(0), "memories");
            let embedded = usecases::embed_missing::embed_missing(&app, &mut |done, total| {
                bar.set_length(total);
                bar.set_position(done);
            });
            bar.finish_and_clear();
            let n = match use_case(embedded)? {
                Ok(n) => n,
                Err(code) => return Ok(code),
            };
            persist_index(&app);
            write_stdout(&format!(
                "Embedded {} that had no vector of {} ({} left without one)\n",
                mira_core::text::plural(n, "memory", "memories"),
                app.model_name(),
                app.store.count_without_embedding(app.model_name(), None)?
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `mira export`: JSON lines to `output` or standard output.
fn run_export(
    cli: &Cli,
    wing: Option<&str>,
    embeddings: bool,
    output: Option<&Path>,
) -> Result<ExitCode> {
    let app = existing_store!(cli);
    let mut out: Box<dyn std::io::Write> = match output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let result = usecases::transfer::export(&app, &Access::local(), wing, embeddings, &mut out);
    let result = result.and_then(|n| {
        out.flush().map_err(|e| UseCaseError::Internal(e.into()))?;
        Ok(n)
    });
    // `mira export | head`: the reader has what it wanted.
    if let Err(UseCaseError::Internal(e)) = &result {
        let closed = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if closed {
            return Ok(ExitCode::SUCCESS);
        }
    }
    match use_case(result)? {
        Ok(n) => eprintln!(
            "Exported {}",
            mira_core::text::plural(n, "memory", "memories")
        ),
        Err(code) => return Ok(code),
    }
    Ok(ExitCode::SUCCESS)
}

/// `mira import`: prints the summary; exit code 1 when a line (or turn) was skipped.
fn run_import(
    cli: &Cli,
    file: &Path,
    format: ImportFormat,
    wing: Option<&str>,
    json: bool,
) -> Result<ExitCode> {
    if format == ImportFormat::Jsonl && wing.is_some() {
        anyhow::bail!("--wing only applies to --format locomo (each JSON line names its wing)");
    }
    let app = open(cli)?;
    let report = match format {
        ImportFormat::Locomo => {
            let bar = crate::progress::Progress::new().bar("import", Some(0), "turns");
            let report = usecases::transfer::import_locomo(&app, file, wing, &mut |done, total| {
                bar.set_length(total);
                bar.set_position(done);
            });
            bar.finish_and_clear();
            report
        }
        ImportFormat::Jsonl => import_file(&app, file),
    };
    let report = match use_case(report)? {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    persist_index(&app);
    if json {
        print_json(&report)?;
    } else {
        write_stdout(&usecases::transfer::render_report(&report));
    }
    Ok(if report.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// After a bulk write: reads the index if this process has not (its saved graph is then
/// brought in step with what was written), waits for the build under way and saves the graph,
/// so that the next process loads it instead of building it again.
fn persist_index(app: &App) {
    let index = match app.synced_index() {
        Ok(index) => index,
        Err(e) => {
            tracing::warn!("vector index: not saved ({e:#}); the next start builds it");
            return;
        }
    };
    if !index.wait_idle(std::time::Duration::from_secs(900)) {
        tracing::warn!("vector index: still building after 15 minutes; the next start builds it");
        return;
    }
    if let Err(e) = index.save() {
        tracing::warn!("vector index: not saved ({e}); the next start builds it");
    }
}

/// A file that is one JSON document (a LoCoMo conversation, say) rather than JSON Lines is
/// refused with the command that imports it, instead of one error per line.
fn refuse_json_document(path: &Path, f: &std::fs::File) -> Result<(), UseCaseError> {
    use std::io::BufRead;
    let mut first = String::new();
    let mut reader = std::io::BufReader::new(f);
    while first.trim().is_empty() {
        first.clear();
        match reader.read_line(&mut first) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
    }
    let line = first.trim();
    let document = line.starts_with('[')
        || (line.starts_with('{') && serde_json::from_str::<serde_json::Value>(line).is_err());
    if document {
        return Err(UseCaseError::Invalid(format!(
            "{} is one JSON document, not JSON Lines (one memory per line, as `mira export` writes): for a LoCoMo conversation run `mira import --format locomo {}`",
            path.display(),
            path.display()
        )));
    }
    // The file is read again from its start.
    std::io::Seek::rewind(&mut &*f)
        .map_err(|e| UseCaseError::Invalid(format!("cannot read {}: {e}", path.display())))
}

/// Imports a JSONL file ("-": standard input), with a progress bar (memories read of the
/// file's lines) when stderr is a terminal.
fn import_file(app: &App, file: &Path) -> Result<usecases::transfer::ImportReport, UseCaseError> {
    let (input, lines): (Box<dyn std::io::BufRead>, Option<u64>) = if file.as_os_str() == "-" {
        (Box::new(std::io::stdin().lock()), None)
    } else {
        let f = std::fs::File::open(file)
            .map_err(|e| UseCaseError::Invalid(format!("cannot open {}: {e}", file.display())))?;
        refuse_json_document(file, &f)?;
        let lines = count_lines(&f)
            .map_err(|e| UseCaseError::Invalid(format!("cannot read {}: {e}", file.display())))?;
        (Box::new(std::io::BufReader::new(f)), Some(lines))
    };
    let bar = crate::progress::Progress::new().bar("import", lines, "memories");
    let report = usecases::transfer::import_jsonl(app, input, &mut |read| bar.set_position(read));
    bar.finish_and_clear();
    report
}

/// The lines of `f` (each memory of a JSONL file is one), read from its start, which it is
/// rewound to.
fn count_lines(f: &std::fs::File) -> std::io::Result<u64> {
    use std::io::{BufRead, Seek};
    let mut reader = std::io::BufReader::new(f);
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else { break };
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = end;
        let n = buf.len();
        reader.consume(n);
    }
    drop(reader);
    (&*f).rewind()?;
    Ok(lines + u64::from(last != b'\n'))
}

/// `mira soul …`: the SOUL use cases (its tables are created on first use).
fn run_soul(cli: &Cli, agent: Option<&str>, json: bool, action: &SoulAction) -> Result<ExitCode> {
    use mira_soul::{render, service};
    use usecases::soul;
    let Some(agent) = agent.map(str::to_owned) else {
        eprintln!("error: give the agent whose identity this is: mira soul <command> --agent NAME");
        return Ok(ExitCode::from(2));
    };
    let reads = matches!(
        action,
        SoulAction::Recall { .. }
            | SoulAction::Drift { .. }
            | SoulAction::Status
            | SoulAction::History { .. }
    );
    let app = if reads {
        existing_store!(cli)
    } else {
        open(cli)?
    };
    fn json_arg<T: serde::de::DeserializeOwned>(what: &str, raw: &str) -> Result<T, UseCaseError> {
        serde_json::from_str(raw).map_err(|e| {
            UseCaseError::Invalid(format!(
                "{what} is not valid JSON ({e}): give a JSON object"
            ))
        })
    }
    match action {
        SoulAction::Capture {
            conversation,
            model,
            session,
            metrics,
        } => {
            let conversation = read_text(conversation)?;
            let r = metrics
                .as_deref()
                .map(|m| json_arg("--metrics", m))
                .transpose()
                .and_then(|behavioral_metrics| {
                    let req = service::CaptureRequest {
                        agent_id: agent,
                        conversation,
                        model_id: model.clone(),
                        session_id: session.clone(),
                        behavioral_metrics,
                    };
                    soul::capture(&app, &req)
                });
            emit(r, json, render::capture)
        }
        SoulAction::Recall { context, budget } => {
            let req = service::RecallRequest {
                agent_id: agent,
                context: context.clone(),
                budget: *budget,
            };
            emit(soul::recall(&app, &req), json, render::recall)
        }
        SoulAction::Drift { window, from, to } => {
            let req = service::DriftRequest {
                agent_id: agent,
                window: *window,
                from_model: from.clone(),
                to_model: to.clone(),
            };
            emit(soul::drift(&app, &req), json, render::drift)
        }
        SoulAction::Swap { from, to } => {
            emit(soul::swap(&app, &agent, from, to), json, render::swap)
        }
        SoulAction::Status => emit(soul::status(&app, &agent), json, render::status),
        SoulAction::History { limit } => {
            emit(soul::history(&app, &agent, *limit), json, render::history)
        }
        SoulAction::Update { directive, reason } => emit(
            soul::update(&app, &agent, directive, reason.as_deref()),
            json,
            render::edit,
        ),
        SoulAction::Patch { patch, reason } => emit(
            json_arg("the patch", patch)
                .and_then(|p| soul::patch(&app, &agent, &p, reason.as_deref())),
            json,
            render::edit,
        ),
    }
}

fn parse_order(s: &str) -> std::result::Result<usecases::recall::Order, String> {
    s.parse()
}
