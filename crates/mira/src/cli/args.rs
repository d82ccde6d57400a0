//! The clap definitions. The doc comments of the argument structs are the `--help` text: plain
//! text with `<placeholder>`s, not Markdown for rustdoc.
#![allow(
    rustdoc::invalid_html_tags,
    reason = "argument docs are the --help text, written as plain text"
)]

use super::actions::{
    parse_order, EvalBench, ImportFormat, IndexAction, SoulAction, TokenAction, WebhooksAction,
};
use crate::usecases;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

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
