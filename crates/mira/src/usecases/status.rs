//! The status use case: counts, paths, schema version, model.

use super::access::Access;
use super::UseCaseResult;
use crate::config::ConfigSource;
use crate::App;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What `mira status` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// mira's version.
    pub version: String,
    /// The database file.
    pub db_path: String,
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
    /// SOUL, the identity extension.
    pub soul: super::soul::SoulState,
}

/// The vector index part of the status.
#[derive(Debug, Clone, Serialize)]
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
        db_bytes: app.store.size_bytes()?,
        schema_version: app.store.schema_version()?,
        config: match &app.config_source {
            ConfigSource::File(p) => p.display().to_string(),
            ConfigSource::Defaults => "defaults".into(),
        },
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
    let _ = writeln!(out, "Config: {}", s.config);
    let _ = writeln!(
        out,
        "Model: {} in {} ({})",
        s.model,
        s.model_dir,
        if s.model_present {
            "present"
        } else {
            "missing: recall is lexical only; run scripts/fetch-model.sh"
        }
    );
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
        let _ = writeln!(out, "  {w}: {n}");
        let prefix = format!("{w}/");
        for (r, n) in s.by_room.iter().filter(|(k, _)| k.starts_with(&prefix)) {
            let _ = writeln!(out, "    {}: {n}", &r[prefix.len()..]);
        }
    }
    out.push_str(&rule);
    out.push('\n');
    out
}
