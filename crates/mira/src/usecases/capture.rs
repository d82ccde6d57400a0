//! The capture use case: stores what a session left (`mira hook pre-compact`, `session-end`,
//! `stop`), each memory marked `captured`, with the session's id and the time it happened,
//! secrets redacted as any store does. Nothing twice: an exact copy of a memory of the wing is
//! not stored again, nor a near duplicate (its embedding within
//! `extraction.near_duplicate_threshold` of a recent memory of the wing), so capturing the same
//! transcript again stores nothing new. A fix is linked to the error it resolves (the error's
//! memory, or the one already stored that it repeats). Requests and outcomes take the
//! classifier's type, but never `debug_log`: the debug logs of a session are its errors and
//! fixes, and a request or a conclusion that mentions an error is not an open problem.

use super::access::Access;
use super::store::{store, StoreRequest};
use super::{UseCaseError, UseCaseResult};
use crate::App;
use chrono::{DateTime, Utc};
use mira_core::memory::{MemoryId, MemoryType, RelationType};
use mira_core::message::Term;
use mira_store::Source;
use serde::Serialize;

/// What a candidate memory records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// What the user asked.
    Request,
    /// What the assistant concluded at the end of an exchange.
    Outcome,
    /// A command that failed.
    Error,
    /// What made a failed command pass.
    Fix,
}

/// A memory a session should leave.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What it records.
    pub kind: Kind,
    /// Its text.
    pub content: String,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Its type, when the kind decides it (`None`: classified from the text, a session note
    /// where the classifier says debug log).
    pub memory_type: Option<MemoryType>,
    /// For a fix, the index (among the candidates) of the error it resolves.
    pub resolves: Option<usize>,
}

/// A capture request.
#[derive(Debug, Clone)]
pub struct CaptureRequest {
    /// The wing (project).
    pub wing: String,
    /// The session the candidates come from.
    pub session_id: Option<String>,
    /// The memories to keep, in the order they happened (an error before its fix).
    pub candidates: Vec<Candidate>,
}

/// What a capture did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CaptureOutcome {
    /// Candidates read from the session.
    pub considered: usize,
    /// Memories written.
    pub stored: usize,
    /// Candidates already stored word for word.
    pub duplicates: usize,
    /// Candidates whose near duplicate was already stored.
    pub near_duplicates: usize,
    /// Candidates refused by validation (say, longer than a memory may be).
    pub rejected: usize,
    /// Fixes linked to the error they resolve.
    pub links: usize,
    /// Secrets replaced by `[REDACTED:<kind>]`.
    pub redacted: u32,
    /// The memories written.
    pub ids: Vec<MemoryId>,
}

/// The type a candidate is stored with (see the module docs).
fn memory_type(c: &Candidate) -> MemoryType {
    c.memory_type
        .unwrap_or_else(|| match mira_core::classify::classify(&c.content) {
            MemoryType::DebugLog => MemoryType::SessionNote,
            other => other,
        })
}

/// Stores the candidates of one session into `req.wing`.
pub fn capture(app: &App, req: CaptureRequest) -> UseCaseResult<CaptureOutcome> {
    super::validate::name(Term::Wing, &req.wing)?;
    let mut out = CaptureOutcome {
        considered: req.candidates.len(),
        ..CaptureOutcome::default()
    };
    // The memory each candidate became (written, or the copy already there).
    let mut became: Vec<Option<MemoryId>> = Vec::with_capacity(req.candidates.len());
    for c in &req.candidates {
        let causes: Vec<(MemoryId, RelationType)> = c
            .resolves
            .and_then(|i| became.get(i).copied().flatten())
            .map(|error| vec![(error, RelationType::Resolves)])
            .unwrap_or_default();
        let linked = !causes.is_empty();
        let result = store(
            app,
            // Capture runs in a hook: the machine's own user.
            &Access::local(),
            StoreRequest {
                content: c.content.clone(),
                wing: req.wing.clone(),
                memory_type: Some(memory_type(c).as_str().to_owned()),
                created_at: Some(c.at.min(Utc::now())),
                session_id: req.session_id.clone(),
                source: Source::Captured,
                causes,
                skip_near_duplicate: true,
                ..StoreRequest::default()
            },
        );
        match result {
            Ok(o) => {
                became.push(Some(o.id));
                out.redacted += o.redacted;
                if o.stored {
                    out.stored += 1;
                    out.links += usize::from(linked);
                    out.ids.push(o.id);
                } else if o.near_duplicate_of.is_some() {
                    out.near_duplicates += 1;
                } else {
                    out.duplicates += 1;
                }
            }
            Err(UseCaseError::Invalid(m)) => {
                tracing::info!("capture: a candidate was refused: {m}");
                became.push(None);
                out.rejected += 1;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
