//! The status use case: counts, paths, schema version, model.

use super::access::Access;
use super::UseCaseResult;
use crate::config::{Config, ConfigSource, StorageBackend, StorageChoice};
use crate::App;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What `mira status` reports.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Status {
    /// mira's version.
    pub version: String,
    /// The database file.
    pub db_path: String,
    /// Why this database: the environment, the config file, the project or the user's folder.
    pub store_chosen_by: String,
    /// Database size in bytes (with its WAL).
    pub db_bytes: u64,
    /// Applied schema version.
    pub schema_version: i64,
    /// The config file, or "defaults".
    pub config: String,
    /// The embedding model.
    pub model: String,
    /// The model directory.
    pub model_dir: String,
    /// Whether the model files are present.
    pub model_present: bool,
    /// Seconds since the server started (`None` from the command line, where there is no
    /// server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime_secs: Option<u64>,
    /// The vector index.
    pub index: IndexStatus,
    /// All memories.
    pub memories: u64,
    /// Archived memories.
    pub archived: u64,
    /// Superseded memories.
    pub superseded: u64,
    /// Memories without an embedding (stored with no model installed): recall ranks them by
    /// BM25 alone until `mira index embed-missing` computes their vectors.
    pub without_vector: u64,
    /// Memories whose vector another model (or precision) made: recall uses it until
    /// `mira index embed-missing`, or a server's background pass, re-embeds them.
    pub other_model_vectors: u64,
    /// Causal edges.
    pub causal_edges: u64,
    /// Tags.
    pub tags: u64,
    /// Sum of T0 tokens.
    pub total_tokens: u64,
    /// Memories per type.
    pub by_type: BTreeMap<String, u64>,
    /// Memories per wing.
    pub by_wing: BTreeMap<String, u64>,
    /// Memories per wing/room.
    pub by_room: BTreeMap<String, u64>,
    /// Per wing, what the client hooks captured (`mira hook`): wings without a capture are
    /// absent.
    pub captures: BTreeMap<String, CaptureStatus>,
    /// SOUL, the identity extension.
    pub soul: super::soul::SoulState,
}

/// What the client hooks captured in one wing.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CaptureStatus {
    /// Captured memories (archived ones included).
    pub memories: u64,
    /// When the last one was written (RFC 3339).
    pub last: String,
}

/// The vector index part of the status.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct IndexStatus {
    /// `exact` or `hnsw`: the path searches take now.
    pub kind: String,
    /// Vectors indexed.
    pub size: usize,
    /// Whether the HNSW graph is ready.
    pub ready: bool,
    /// Whether a build is running.
    pub building: bool,
    /// When the graph was last built (RFC 3339).
    pub last_rebuilt: Option<String>,
    /// Whether the files on disk hold the current graph.
    pub persisted: bool,
}

/// Why the configured store is the one used: a sentence for people.
fn chosen_by(config: &Config) -> String {
    match config.storage.backend {
        StorageBackend::Postgres => "storage.backend: postgres (storage.postgres.url)".into(),
        StorageBackend::Sqlite => config.storage_choice().describe(),
    }
}

fn config_name(source: &ConfigSource) -> String {
    match source {
        ConfigSource::File(p) => p.display().to_string(),
        ConfigSource::Defaults => "defaults".into(),
    }
}

fn model_line(out: &mut String, model: &str, dir: &str, present: bool) {
    let _ = writeln!(
        out,
        "Model: {model} in {dir} ({})",
        if present {
            "present"
        } else {
            "missing: recall is lexical only; run scripts/fetch-model.sh"
        }
    );
}

/// For a store chosen by the working folder: which other folders share it.
fn folder_note(config: &Config) -> Option<String> {
    let user = Config::user_storage_dir().join("mira.db");
    match config.storage_choice() {
        StorageChoice::Project { root, .. } => Some(format!(
            "an MCP client starting `mira serve` anywhere in {} uses that store too; every other project gets its own, and folders outside any project share {}",
            root.display(),
            user.display()
        )),
        StorageChoice::User => Some(
            "every folder outside a project shares it; a folder inside a project (with .git or .mira above it) uses <project>/.mira/mira.db instead"
                .to_owned(),
        ),
        StorageChoice::Env(_) | StorageChoice::ConfigFile => None,
    }
}

/// What `mira status` reports where no store exists yet: where the first store would create
/// it, why there, and the model.
#[derive(Debug, Clone, Serialize)]
pub struct NoStore {
    /// mira's version.
    pub version: String,
    /// Always false.
    pub exists: bool,
    /// The database file the first store would create.
    pub db_path: String,
    /// Why there.
    pub store_chosen_by: String,
    /// What follows from that choice for the stores of other folders, when it depends on the
    /// folder.
    pub note: Option<String>,
    /// The config file, or "defaults".
    pub config: String,
    /// The embedding model.
    pub model: String,
    /// The model directory.
    pub model_dir: String,
    /// Whether the model files are present.
    pub model_present: bool,
}

/// The status of a configuration whose store does not exist yet (nothing is created).
pub fn no_store(config: &Config, source: &ConfigSource) -> NoStore {
    let model_dir = mira_embed::resolve_model_dir(config.embeddings.model_dir.as_deref());
    NoStore {
        version: env!("CARGO_PKG_VERSION").into(),
        exists: false,
        db_path: config.db_path().display().to_string(),
        store_chosen_by: chosen_by(config),
        note: folder_note(config),
        config: config_name(source),
        model: config.embeddings.precision.model_name(),
        model_present: mira_embed::missing_file(&model_dir, config.embeddings.precision).is_none(),
        model_dir: model_dir.display().to_string(),
    }
}

/// The text form of [`NoStore`]: where the first memory will go and how to choose another
/// store.
pub fn render_no_store_text(s: &NoStore) -> String {
    let rule = "═".repeat(39);
    let mut out = format!("MIRA System Status:\n{rule}\nVersion: {}\n", s.version);
    let _ = writeln!(
        out,
        "Database: none yet. The first memory stored from here creates {}",
        s.db_path
    );
    let _ = writeln!(out, "Chosen by: {}", s.store_chosen_by);
    if let Some(note) = &s.note {
        let _ = writeln!(out, "  ({note})");
    }
    let _ = writeln!(
        out,
        "To use another store: set MIRA_STORAGE_PATH=DIR (in the shell, or in the \"env\" of your MCP client's configuration), or storage.path in a config file (~/.config/mira/config.yaml, or <project>/.mira/config.yaml)"
    );
    let _ = writeln!(out, "Config: {}", s.config);
    model_line(&mut out, &s.model, &s.model_dir, s.model_present);
    out.push_str(&rule);
    out.push('\n');
    out
}

/// Collects the status. The counts are those of the wings `access` may read (the server's
/// lines, database, model and index, are the same for every caller).
pub fn status(app: &App, access: &Access) -> UseCaseResult<Status> {
    let index = app.synced_index()?;
    let wings = access.readable_list();
    let s = app.store.stats_in(wings.as_deref())?;
    let without_vector = s.memories.saturating_sub(s.embeddings);
    let without_current = app
        .store
        .count_without_embedding(app.model_name(), wings.as_deref())?;
    let model_dir = app.model_dir();
    Ok(Status {
        version: env!("CARGO_PKG_VERSION").into(),
        db_path: app.store.location(),
        store_chosen_by: chosen_by(&app.config),
        db_bytes: app.store.size_bytes()?,
        schema_version: app.store.schema_version()?,
        config: config_name(&app.config_source),
        model: app.model_name().to_owned(),
        model_present: app.model_installed(),
        model_dir: model_dir.display().to_string(),
        uptime_secs: Some(app.started.elapsed().as_secs()),
        index: {
            let st = index.state();
            IndexStatus {
                kind: st.kind.to_owned(),
                size: st.size,
                ready: st.ready,
                building: st.building,
                last_rebuilt: st
                    .last_rebuilt
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                persisted: st.persisted,
            }
        },
        memories: s.memories,
        archived: s.archived,
        superseded: s.superseded,
        without_vector,
        other_model_vectors: without_current.saturating_sub(without_vector),
        causal_edges: s.edges,
        tags: s.tags,
        total_tokens: s.total_tokens,
        by_type: s.by_type,
        by_wing: s.by_wing,
        by_room: s.by_room,
        captures: s
            .captures
            .into_iter()
            .map(|(wing, (memories, last_ms))| {
                let last = chrono::DateTime::from_timestamp_millis(last_ms)
                    .unwrap_or_default()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                (wing, CaptureStatus { memories, last })
            })
            .collect(),
        soul: super::soul::state(app, access),
    })
}

/// The text form of the status.
pub fn render_text(s: &Status) -> String {
    let rule = "═".repeat(39);
    let mut out = format!("MIRA System Status:\n{rule}\n");
    let _ = writeln!(out, "Version: {}", s.version);
    let _ = writeln!(
        out,
        "Database: {} ({} bytes, schema v{})",
        s.db_path, s.db_bytes, s.schema_version
    );
    let _ = writeln!(out, "Chosen by: {}", s.store_chosen_by);
    let _ = writeln!(out, "Config: {}", s.config);
    model_line(&mut out, &s.model, &s.model_dir, s.model_present);
    if let Some(u) = s.uptime_secs {
        let _ = writeln!(out, "Uptime: {u}s");
    }
    let _ = writeln!(out, "{}", super::soul::state_line(&s.soul));
    let i = &s.index;
    let _ = writeln!(
        out,
        "Vector index: {} ({} vectors, HNSW {}{}, last rebuilt {})\n",
        i.kind,
        i.size,
        if i.ready {
            "ready"
        } else if i.building {
            "building"
        } else {
            "not built"
        },
        if i.persisted { ", saved" } else { "" },
        i.last_rebuilt.as_deref().unwrap_or("never")
    );
    let _ = writeln!(
        out,
        "Storage:\n  Memories: {}\n  Archived: {}\n  Superseded: {}",
        s.memories, s.archived, s.superseded
    );
    let _ = write!(out, "  Without a vector: {}", s.without_vector);
    if s.without_vector > 0 {
        out.push_str(
            " (ranked by BM25 alone; `mira index embed-missing` computes them once the model is installed)",
        );
    }
    out.push('\n');
    if s.other_model_vectors > 0 {
        let _ = writeln!(
            out,
            "  Vectors of another model: {} (re-embedded with {} by `mira index embed-missing`, or in the background by a running server)",
            s.other_model_vectors, s.model
        );
    }
    let _ = writeln!(
        out,
        "  Causal Edges: {}\n  Tags: {}\n  Total Tokens: {}\n",
        s.causal_edges, s.tags, s.total_tokens
    );
    out.push_str("Memory Distribution:\n");
    for t in mira_core::MemoryType::ALL {
        let _ = writeln!(
            out,
            "  {}: {}",
            t,
            s.by_type.get(t.as_str()).copied().unwrap_or(0)
        );
    }
    out.push_str("\nWings:\n");
    if s.by_wing.is_empty() {
        out.push_str("  (none)\n");
    }
    for (w, n) in &s.by_wing {
        let _ = write!(out, "  {w}: {n}");
        if let Some(c) = s.captures.get(w) {
            let _ = write!(out, " ({} captured, last capture {})", c.memories, c.last);
        }
        out.push('\n');
        let prefix = format!("{w}/");
        for (r, n) in s.by_room.iter().filter(|(k, _)| k.starts_with(&prefix)) {
            let _ = writeln!(out, "    {}: {n}", &r[prefix.len()..]);
        }
    }
    out.push_str(&rule);
    out.push('\n');
    out
}
