//! The SOUL use cases (the identity extension, `soul:` in the config): the eight operations of
//! [`mira_soul::service`] over mira's database, shared by the `soul_*` MCP tools and
//! `mira soul …`.
//!
//! Each operation runs in one write transaction (rolled back when it fails) or, when it only
//! reads, on a read connection, after [`ensure`] has checked that SOUL's tables are ready
//! (creating them the first time). When they cannot be (a newer SOUL schema, a read-only
//! database), every operation fails with the cause, and [`state`] reports it in mira's status.
//!
//! SOUL's tables live in SQLite: on the PostgreSQL backend every operation fails with a message
//! saying so ([`sqlite`]).

use super::{UseCaseError, UseCaseResult};
use crate::config::SoulConfig;
use crate::App;
use anyhow::Context;
use mira_soul::service::{
    self, CaptureOutcome, CaptureRequest, DriftOutcome, DriftRequest, EditOutcome, HistoryOutcome,
    RecallOutcome, RecallRequest, StatusOutcome, SwapOutcome,
};
use mira_soul::{Patch, Settings, SoulError};
use mira_store::SqliteStore;
use rusqlite::Connection;
use serde::Serialize;

/// SOUL's settings from the `soul:` section of the config.
pub fn settings(c: &SoulConfig) -> Settings {
    Settings {
        min_trait_confidence: c.extraction.min_trait_confidence,
        min_observations_for_trait: c.extraction.min_observations_for_trait,
        recall_budget: c.recall.default_budget_tokens as usize,
        drift_threshold: c.drift_detection.threshold,
        drift_window: c.drift_detection.window_size as usize,
        auto_check_after_capture: c.drift_detection.auto_check_after_capture,
        auto_reinforce: c.model_swap.auto_reinforce,
        evolution_enabled: c.evolution.enabled,
        max_history_versions: c.evolution.max_history_versions as usize,
    }
}

impl From<SoulError> for UseCaseError {
    fn from(e: SoulError) -> Self {
        match e {
            SoulError::Invalid(m) => UseCaseError::Invalid(m),
            SoulError::NotFound(m) => UseCaseError::NotFound(m),
            SoulError::Database(_) | SoulError::Storage { .. } => {
                UseCaseError::Internal(anyhow::Error::new(e))
            }
        }
    }
}

/// Why SOUL is not available on the PostgreSQL backend.
pub const NEEDS_SQLITE: &str = "SOUL keeps its identities in SQLite and is not available with storage.backend: postgres; use the sqlite backend for SOUL, or turn it off (soul.enabled: false)";

/// The SQLite store SOUL's tables live in, or the error saying SOUL needs it.
pub fn sqlite(app: &App) -> UseCaseResult<&SqliteStore> {
    app.store
        .as_sqlite()
        .ok_or_else(|| UseCaseError::Invalid(NEEDS_SQLITE.into()))
}

/// Runs `f` in one write transaction, committed only when it succeeds, once SOUL is ready.
fn write<T>(app: &App, f: impl FnOnce(&Connection) -> Result<T, SoulError>) -> UseCaseResult<T> {
    ensure(app)?;
    sqlite(app)?.write_with(|tx| f(tx).map_err(UseCaseError::from))
}

/// Runs `f` on a read connection, once SOUL is ready.
pub fn read<T>(app: &App, f: impl FnOnce(&Connection) -> Result<T, SoulError>) -> UseCaseResult<T> {
    ensure(app)?;
    sqlite(app)?.read_with(|conn| f(conn).map_err(UseCaseError::from))
}

fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Makes sure SOUL's tables are ready: a read when they are, their creation (or upgrade) in a
/// write transaction when not. Fails with the cause when they cannot be (a newer SOUL schema,
/// a read-only database), prefixed "SOUL cannot start".
pub fn ensure(app: &App) -> UseCaseResult<()> {
    prepare(app).map_err(|e| match e {
        UseCaseError::Internal(e) => UseCaseError::Internal(e.context("SOUL cannot start")),
        other => other,
    })
}

fn prepare(app: &App) -> UseCaseResult<()> {
    let store = sqlite(app)?;
    let ready = store.read_with(|c| mira_soul::storage::ready(c).map_err(UseCaseError::from))?;
    if ready {
        return Ok(());
    }
    store.write_with(|tx| mira_soul::storage::init(tx).map_err(UseCaseError::from))
}

/// SOUL's part of mira's status.
#[derive(Debug, Clone, Serialize)]
pub struct SoulState {
    /// Whether the soul_* tools are served (`soul.enabled`, `mira serve --with-soul`).
    pub enabled: bool,
    /// Agents with an identity.
    pub agents: u64,
    /// When the latest capture was made (RFC 3339).
    pub last_capture: Option<String>,
    /// The agent of the latest capture.
    pub last_agent: Option<String>,
    /// Why SOUL cannot start (when enabled): its tools fail with this until it is fixed.
    pub error: Option<String>,
}

/// SOUL's state: enabled or not, its agents and latest capture, and why it cannot start (when
/// enabled and it cannot; checking creates its tables the first time).
pub fn state(app: &App) -> SoulState {
    let enabled = app.config.soul.enabled;
    let mut error = if enabled {
        prepare(app).err().map(|e| format!("{e:#}"))
    } else {
        None
    };
    let overview = sqlite(app).and_then(|store| {
        store.read_with(|c| {
            mira_soul::storage::overview(c)
                .context("cannot read SOUL's tables")
                .map_err(UseCaseError::from)
        })
    });
    let overview = match overview {
        Ok(o) => o,
        Err(e) => {
            if enabled && error.is_none() {
                error = Some(format!("{e:#}"));
            }
            mira_soul::storage::Overview::default()
        }
    };
    SoulState {
        enabled,
        agents: overview.agents,
        last_capture: overview.last_capture.map(mira_soul::render::rfc3339),
        last_agent: overview.last_agent,
        error,
    }
}

/// One line of the status text about SOUL.
pub fn state_line(s: &SoulState) -> String {
    let stored = match s.agents {
        1 => "1 agent".to_owned(),
        n => format!("{n} agents"),
    };
    match (&s.error, s.enabled) {
        (Some(e), _) => format!(
            "SOUL: enabled but cannot start ({e}); the soul_* tools fail until this is fixed"
        ),
        (None, true) => match (&s.last_capture, &s.last_agent) {
            (Some(at), Some(agent)) => {
                format!("SOUL: enabled, {stored}, last capture {at} ({agent})")
            }
            _ => format!("SOUL: enabled, {stored}, no capture yet"),
        },
        (None, false) if s.agents > 0 => {
            format!("SOUL: disabled ({stored} stored; soul.enabled or --with-soul serves them)")
        }
        (None, false) => "SOUL: disabled (soul.enabled or --with-soul)".to_owned(),
    }
}

/// Extracts identity observations from a conversation into a new version.
pub fn capture(app: &App, req: &CaptureRequest) -> UseCaseResult<CaptureOutcome> {
    let s = settings(&app.config.soul);
    write(app, |c| service::capture(c, &s, req, now()))
}

/// The identity prompt of an agent within a token budget.
pub fn recall(app: &App, req: &RecallRequest) -> UseCaseResult<RecallOutcome> {
    let s = settings(&app.config.soul);
    read(app, |c| service::recall(c, &s, req))
}

/// Drift between recent versions, or between what two models showed.
pub fn drift(app: &App, req: &DriftRequest) -> UseCaseResult<DriftOutcome> {
    let s = settings(&app.config.soul);
    read(app, |c| service::drift(c, &s, req))
}

/// Records a model change and returns the reinforcement prompt for the new model.
pub fn swap(app: &App, agent_id: &str, from: &str, to: &str) -> UseCaseResult<SwapOutcome> {
    let s = settings(&app.config.soul);
    write(app, |c| service::swap(c, &s, agent_id, from, to, now()))
}

/// The current identity summary, its version and recent versions.
pub fn status(app: &App, agent_id: &str) -> UseCaseResult<StatusOutcome> {
    let s = settings(&app.config.soul);
    read(app, |c| service::status(c, &s, agent_id))
}

/// The latest `limit` versions (default 10) with what changed at each.
pub fn history(app: &App, agent_id: &str, limit: Option<i64>) -> UseCaseResult<HistoryOutcome> {
    let s = settings(&app.config.soul);
    read(app, |c| service::history(c, &s, agent_id, limit))
}

/// Applies a natural-language directive ("be more concise") as a new version.
pub fn update(
    app: &App,
    agent_id: &str,
    directive: &str,
    reason: Option<&str>,
) -> UseCaseResult<EditOutcome> {
    let s = settings(&app.config.soul);
    write(app, |c| {
        service::update(c, &s, agent_id, directive, reason, now())
    })
}

/// Applies an explicit patch as a new version.
pub fn patch(
    app: &App,
    agent_id: &str,
    patch: &Patch,
    reason: Option<&str>,
) -> UseCaseResult<EditOutcome> {
    let s = settings(&app.config.soul);
    write(app, |c| {
        service::patch(c, &s, agent_id, patch, reason, now())
    })
}
