//! The SOUL use cases (the identity extension, `soul:` in the config): the eight operations of
//! [`mira_soul::service`] over mira's database, shared by the `soul_*` MCP tools and
//! `mira soul …`.
//!
//! Each operation runs in one write transaction (rolled back when it fails) or, when it only
//! reads, on a read connection. [`init`] creates SOUL's tables; the MCP server calls it at
//! start when SOUL is enabled, the CLI before every `mira soul` command.

use super::{UseCaseError, UseCaseResult};
use crate::config::SoulConfig;
use crate::App;
use mira_soul::service::{
    self, CaptureOutcome, CaptureRequest, DriftOutcome, DriftRequest, EditOutcome, HistoryOutcome,
    RecallOutcome, RecallRequest, StatusOutcome, SwapOutcome,
};
use mira_soul::{Patch, Settings, SoulError};
use rusqlite::Connection;

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
            SoulError::Storage(_) => UseCaseError::Internal(anyhow::Error::new(e)),
        }
    }
}

/// Runs `f` in one write transaction, committed only when it succeeds.
fn write<T>(app: &App, f: impl FnOnce(&Connection) -> Result<T, SoulError>) -> UseCaseResult<T> {
    app.store.write_with(|tx| f(tx).map_err(UseCaseError::from))
}

/// Runs `f` on a read connection.
fn read<T>(app: &App, f: impl FnOnce(&Connection) -> Result<T, SoulError>) -> UseCaseResult<T> {
    app.store
        .read_with(|conn| f(conn).map_err(UseCaseError::from))
}

fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Creates SOUL's tables if needed (fails when the database holds a newer SOUL schema).
pub fn init(app: &App) -> UseCaseResult<()> {
    write(app, mira_soul::storage::init)
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
