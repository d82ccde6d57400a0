//! The clap definitions of the subcommands' own subcommands and value types (their doc comments
//! are `--help` text, as in `args`).
#![allow(
    rustdoc::invalid_html_tags,
    reason = "argument docs are the --help text, written as plain text"
)]

use crate::usecases;
use clap::Subcommand;
use std::path::PathBuf;

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
        /// Store every case in one wing (each recall then sees the other cases' memories)
        /// instead of a wing per case.
        #[arg(long)]
        one_wing: bool,
        /// Confirm (as `mira_supersede` does) each "May update" offer that is the case's own
        /// update before recalling: an agent that judges every offer right, the most the
        /// agent's part can bring.
        #[arg(long)]
        confirm_offers: bool,
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

pub(super) fn parse_order(s: &str) -> Result<usecases::recall::Order, String> {
    s.parse()
}
