//! An agent's identity (SOUL) as the browser shows it: the soul status use case, and how far
//! each version drifted from the one before it (what the drift chart draws), measured as
//! `soul_drift` measures two versions.

use crate::usecases::{soul, UseCaseError, UseCaseResult};
use crate::App;
use mira_soul::service::StatusOutcome;
use serde::Serialize;

/// Versions drawn on the drift chart.
const VERSIONS_SHOWN: usize = 50;

/// One version on the drift chart.
#[derive(Debug, Clone, Serialize)]
pub struct VersionDrift {
    /// Its number.
    pub version: i64,
    /// When it was made (unix ms).
    pub created_at: i64,
    /// The model the agent ran on.
    pub model_id: String,
    /// Why it exists.
    pub reason: String,
    /// Mean trait confidence.
    pub confidence: f64,
    /// Number of traits.
    pub traits: usize,
    /// Its drift score from the previous version (none for the first one shown).
    pub drift: Option<f64>,
    /// Whether that drift is above `soul.drift_detection.threshold`.
    pub significant: bool,
}

/// An agent's identity and its recent versions, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct IdentityView {
    /// The soul status use case's answer.
    pub status: StatusOutcome,
    /// The threshold above which a drift is significant.
    pub threshold: f64,
    /// The latest versions, oldest first, each with its drift from the one before.
    pub versions: Vec<VersionDrift>,
}

/// The identity of `agent`.
pub fn identity(app: &App, agent: &str) -> UseCaseResult<IdentityView> {
    let status = soul::status(app, agent)?;
    let threshold = soul::settings(&app.config.soul).drift_threshold;
    let agent = status.agent_id.clone();
    let history = app.store.read_with(|c| {
        mira_soul::storage::history(c, &agent, VERSIONS_SHOWN + 1).map_err(UseCaseError::from)
    })?;
    let mut versions: Vec<VersionDrift> = history
        .iter()
        .enumerate()
        .take(VERSIONS_SHOWN)
        .map(|(i, v)| {
            let report = history
                .get(i + 1)
                .map(|before| mira_soul::drift::compare(before, v, threshold, false));
            VersionDrift {
                version: v.version,
                created_at: v.created_at,
                model_id: v.model_id.clone(),
                reason: v.reason.clone(),
                confidence: v.confidence,
                traits: v.traits.len(),
                drift: report.as_ref().map(|r| r.score),
                significant: report.is_some_and(|r| r.significant),
            }
        })
        .collect();
    versions.reverse();
    Ok(IdentityView {
        status,
        threshold,
        versions,
    })
}
