//! `mira webhooks dead-letters` and `mira webhooks replay`: listing the dead-letter table and
//! delivering its events again to their (still configured) endpoints.

use crate::usecases::{UseCaseError, UseCaseResult};
use crate::webhooks::delivery::{Courier, Job, Outcome};
use crate::webhooks::endpoint::{endpoints, redact};
use crate::App;
use serde::Serialize;
use std::fmt::Write;

/// Dead letters listed at most.
pub const LIST_LIMIT: usize = 1000;

/// A dead letter as shown to the user (the endpoint without credentials or query).
#[derive(Debug, Clone, Serialize)]
pub struct DeadLetterView {
    /// The delivery id (give it to `mira webhooks replay`).
    pub id: String,
    /// The event name.
    pub event_type: String,
    /// The endpoint, redacted.
    pub endpoint: String,
    /// Attempts made.
    pub attempts: u32,
    /// The last error.
    pub last_error: Option<String>,
    /// When it last failed (RFC 3339).
    pub failed_at: String,
    /// The JSON body.
    pub payload: serde_json::Value,
}

/// The result of replaying one dead letter.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayResult {
    /// The delivery id.
    pub id: String,
    /// The event name.
    pub event_type: String,
    /// The endpoint, redacted.
    pub endpoint: String,
    /// Whether it was delivered (and removed from the table).
    pub delivered: bool,
    /// Why not.
    pub error: Option<String>,
}

/// The dead letters, oldest first.
pub fn list(app: &App) -> UseCaseResult<Vec<DeadLetterView>> {
    Ok(app
        .store
        .dead_letters(LIST_LIMIT)?
        .into_iter()
        .map(|d| DeadLetterView {
            endpoint: redact(&d.endpoint),
            payload: serde_json::from_str(&d.payload)
                .unwrap_or(serde_json::Value::String(d.payload)),
            failed_at: chrono::DateTime::from_timestamp_millis(d.failed_at)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                .unwrap_or_default(),
            id: d.id,
            event_type: d.event_type,
            attempts: d.attempts,
            last_error: d.last_error,
        })
        .collect())
}

/// Delivers the dead letter `id` again, or every one when `id` is `None`, with the retry
/// settings of `webhooks:`. Delivered letters are removed; the others keep their place with
/// the attempts added and the new error. A letter whose endpoint is no longer configured is
/// left as it is.
pub fn replay(app: &App, id: Option<&str>) -> UseCaseResult<Vec<ReplayResult>> {
    let letters = match id {
        Some(id) => vec![app.store.dead_letter(id)?.ok_or_else(|| {
            UseCaseError::NotFound(
                format!("no dead letter has id {id}: `mira webhooks dead-letters` lists them")
                    .into(),
            )
        })?],
        None => app.store.dead_letters(usize::MAX)?,
    };
    let config = &app.config.webhooks;
    let courier = Courier::new(
        config,
        endpoints(config).map_err(|e| UseCaseError::Invalid(format!("{e:#}").into()))?,
        app.store.clone(),
        app.metrics.clone(),
    )?;
    let mut out = Vec::with_capacity(letters.len());
    for d in letters {
        let endpoint = courier.endpoints().position(|e| e.url == d.endpoint);
        let mut result = ReplayResult {
            id: d.id.clone(),
            event_type: d.event_type.clone(),
            endpoint: redact(&d.endpoint),
            delivered: false,
            error: None,
        };
        let Some(endpoint) = endpoint else {
            result.error = Some(
                "this endpoint is no longer in webhooks.endpoints: add it back to replay the event"
                    .into(),
            );
            out.push(result);
            continue;
        };
        let job = Job {
            endpoint,
            id: d.id,
            event_type: d.event_type,
            body: d.payload,
        };
        match courier.deliver(&job) {
            Outcome::Delivered => {
                app.store.remove_dead_letter(&job.id)?;
                result.delivered = true;
            }
            Outcome::DeadLettered(e) => result.error = Some(e),
        }
        out.push(result);
    }
    Ok(out)
}

/// The text of a listing: one line per dead letter.
pub fn render_list(letters: &[DeadLetterView]) -> String {
    if letters.is_empty() {
        return "No dead letters.\n".into();
    }
    let mut s = String::new();
    for d in letters {
        let _ = writeln!(
            s,
            "{}  {}  {}  {} attempts  {}  {}",
            d.id,
            d.event_type,
            d.endpoint,
            d.attempts,
            d.failed_at,
            d.last_error.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(
        s,
        "{} dead letters; replay with `mira webhooks replay ID` or `--all`.",
        letters.len()
    );
    s
}

/// The text of a replay: one line per letter, then the totals.
pub fn render_replay(results: &[ReplayResult]) -> String {
    let mut s = String::new();
    for r in results {
        match &r.error {
            None => {
                let _ = writeln!(s, "delivered  {}  {}  {}", r.id, r.event_type, r.endpoint);
            }
            Some(e) => {
                let _ = writeln!(
                    s,
                    "failed     {}  {}  {}: {e}",
                    r.id, r.event_type, r.endpoint
                );
            }
        }
    }
    let ok = results.iter().filter(|r| r.delivered).count();
    let _ = writeln!(s, "Replayed {ok} of {} dead letters.", results.len());
    s
}
