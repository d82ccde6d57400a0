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
use mira_store::StoreError;
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

/// Passes a SOUL result through a store closure: a failure becomes the store error that makes
/// the store roll back (a write) or return, and its cause is kept in `failed` for [`finish`].
fn guarded<T>(failed: &mut Option<SoulError>, r: Result<T, SoulError>) -> mira_store::Result<T> {
    r.map_err(|e| {
        let abort = StoreError::Corrupt(e.to_string());
        *failed = Some(e);
        abort
    })
}

/// The outcome of a store closure run through [`guarded`]: SOUL's own error when it failed.
fn finish<T>(done: mira_store::Result<T>, failed: Option<SoulError>) -> UseCaseResult<T> {
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(done?),
    }
}

/// Runs `f` in one write transaction, committed only when it succeeds.
fn write<T>(app: &App, f: impl FnOnce(&Connection) -> Result<T, SoulError>) -> UseCaseResult<T> {
    let mut failed = None;
    let done = app.store.write(|tx| guarded(&mut failed, f(tx)));
    finish(done, failed)
}

/// Runs `f` on a read connection.
fn read<T>(app: &App, f: impl FnOnce(&Connection) -> Result<T, SoulError>) -> UseCaseResult<T> {
    let mut failed = None;
    let done = app.store.read(|conn| guarded(&mut failed, f(conn)));
    finish(done, failed)
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
