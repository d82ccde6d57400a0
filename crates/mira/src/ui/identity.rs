//! An agent's identity (SOUL) as the browser shows it: the soul status and history use cases,
//! and how far each version drifted from the one before it (what the drift chart draws),
//! measured as `soul_drift` measures two versions.

use crate::usecases::access::Access;
use crate::usecases::{soul, UseCaseResult};
use crate::App;
use mira_soul::service::{StatusOutcome, VersionEntry};
use serde::Serialize;

/// Versions drawn on the drift chart.
const VERSIONS_SHOWN: usize = 50;

/// One version on the drift chart.
#[derive(Debug, Clone, Serialize)]
pub struct VersionDrift {
    /// The version as the history use case lists it.
    #[serde(flatten)]
    pub entry: VersionEntry,
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

/// The identity of `agent` (identities belong to no wing: `access` must read every wing).
pub fn identity(app: &App, access: &Access, agent: &str) -> UseCaseResult<IdentityView> {
    access.check_read_all("read SOUL's identities (they belong to no wing)")?;
    let status = soul::status(app, agent)?;
    let history = soul::history(app, &status.agent_id, Some(VERSIONS_SHOWN as i64))?;
    let threshold = soul::settings(&app.config.soul).drift_threshold;
    let identities = soul::read(app, |c| c.history(&status.agent_id, VERSIONS_SHOWN + 1))?;
    let mut versions: Vec<VersionDrift> = history
        .versions
        .into_iter()
        .map(|entry| {
            let at = identities.iter().position(|v| v.version == entry.version);
            let report = at.and_then(|i| {
                let (now, before) = (identities.get(i)?, identities.get(i + 1)?);
                Some(mira_soul::drift::compare(before, now, threshold, false))
            });
            VersionDrift {
                entry,
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
