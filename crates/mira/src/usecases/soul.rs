//! The SOUL use cases (the identity extension, `soul:` in the config): the eight operations of
//! [`mira_soul::service`] over mira's database, shared by the `soul_*` MCP tools and
//! `mira soul …`.
//!
//! SOUL's tables live in mira's database, whichever backend it is: SQLite or PostgreSQL
//! (`storage.backend`), through [`mira_soul::storage::SqliteSoul`] or
//! [`mira_soul::storage::PgSoul`]; the operations are the same code on both. Each runs in one
//! write transaction (rolled back when it fails) or, when it only reads, on a read connection,
//! after [`ensure`] has checked that SOUL's tables are ready (creating them the first time).
//! When they cannot be (a newer SOUL schema, a read-only database), every operation fails with
//! the cause, and [`state`] reports it in mira's status.

use super::{UseCaseError, UseCaseResult};
use crate::config::SoulConfig;
use crate::App;
use mira_soul::service::{
    self, CaptureOutcome, CaptureRequest, DriftOutcome, DriftRequest, EditOutcome, HistoryOutcome,
    RecallOutcome, RecallRequest, StatusOutcome, SwapOutcome,
};
use mira_soul::storage::{PgSoul, SoulStore, SqliteSoul};
use mira_soul::{Patch, Settings, SoulError};
use mira_store::Database;
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
            SoulError::Sqlite(_) | SoulError::Postgres(_) | SoulError::Storage { .. } => {
                UseCaseError::Internal(anyhow::Error::new(e))
            }
        }
    }
}

/// How an operation uses the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// One write transaction, committed only when the operation succeeds.
    Write,
    /// A read connection.
    Read,
}

/// Runs `f` over SOUL's tables in the app's database, SQLite or PostgreSQL.
fn on_database<T>(
    app: &App,
    access: Access,
    f: impl FnOnce(&mut dyn SoulStore) -> Result<T, SoulError>,
) -> UseCaseResult<T> {
    let f = |store: &mut dyn SoulStore| f(store).map_err(UseCaseError::from);
    match (app.store.database(), access) {
        (Database::Sqlite(db), Access::Write) => db.write_with(|tx| f(&mut SqliteSoul::new(tx))),
        (Database::Sqlite(db), Access::Read) => db.read_with(|c| f(&mut SqliteSoul::new(c))),
        (Database::Postgres(db), Access::Write) => db.write_with(|tx| f(&mut PgSoul::new(tx))),
        (Database::Postgres(db), Access::Read) => db.read_with(|c| f(&mut PgSoul::new(c))),
    }
}

/// Runs `f` in one write transaction, committed only when it succeeds, once SOUL is ready.
fn write<T>(
    app: &App,
    f: impl FnOnce(&mut dyn SoulStore) -> Result<T, SoulError>,
) -> UseCaseResult<T> {
    ensure(app)?;
    on_database(app, Access::Write, f)
}

/// Runs `f` on a read connection, once SOUL is ready.
pub fn read<T>(
    app: &App,
    f: impl FnOnce(&mut dyn SoulStore) -> Result<T, SoulError>,
) -> UseCaseResult<T> {
    ensure(app)?;
    on_database(app, Access::Read, f)
}

fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Makes sure SOUL's tables are ready: a read when they are, their creation (or upgrade) in a
/// write transaction when not. Fails with the cause when they cannot be (a newer SOUL schema,
/// a read-only database), prefixed "SOUL cannot start".
pub fn ensure(app: &App) -> UseCaseResult<()> {
    prepare(app).map_err(|e| failed(e, "SOUL cannot start"))
}

/// `e` prefixed with `what` when mira failed (the database, SOUL's tables); the caller's
/// errors unchanged.
fn failed(e: UseCaseError, what: &'static str) -> UseCaseError {
    match e {
        UseCaseError::Internal(e) => UseCaseError::Internal(e.context(what)),
        other => other,
    }
}

fn prepare(app: &App) -> UseCaseResult<()> {
    if on_database(app, Access::Read, |s| s.ready())? {
        return Ok(());
    }
    on_database(app, Access::Write, |s| s.init())
}

/// SOUL's part of mira's status.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
/// enabled and it cannot; checking creates its tables the first time). Identities belong to
/// no wing: a caller that may not read every wing is told whether SOUL runs, not what it holds.
pub fn state(app: &App, caller: &super::access::Access) -> SoulState {
    let enabled = app.config.soul.enabled;
    if !caller.reads_all() {
        return SoulState {
            enabled,
            agents: 0,
            last_capture: None,
            last_agent: None,
            error: None,
        };
    }
    let mut error = if enabled {
        prepare(app).err().map(|e| format!("{e:#}"))
    } else {
        None
    };
    let overview = on_database(app, Access::Read, |s| s.overview())
        .map_err(|e| failed(e, "cannot read SOUL's tables"));
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
