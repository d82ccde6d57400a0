//! The eight SOUL operations, over a [`SoulStore`] (SQLite or PostgreSQL, the same code):
//! capture, recall, drift, swap, status, history, update and patch. Each validates its request
//! (errors say how to fix it), reads and writes through [`crate::storage`], and returns an
//! outcome that [`crate::render`] turns into the tool's text. The operations that write take
//! the agent's lock first ([`SoulStore::lock_agent`]), so that concurrent writers for one
//! agent make consecutive versions.

use crate::drift::{compare, DriftReport};
use crate::extract::{extract, ObservedTrait};
use crate::merge::{diff, merge, Diff};
use crate::model::Identity;
use crate::patch::{apply, parse_directive, Patch};
use crate::storage::{ObservationRecord, SoulStore, Swap};
use crate::{Settings, SoulError};
use mira_core::message::{Message, Term};
use schemars::JsonSchema;
use serde::Serialize;

/// Longest accepted conversation, in characters.
pub const MAX_CONVERSATION_CHARS: usize = 200_000;
/// Longest agent or model id.
pub const MAX_ID_CHARS: usize = 128;
/// Largest recall budget.
pub const MAX_BUDGET: i64 = 100_000;
/// Largest drift window and history limit.
pub const MAX_WINDOW: i64 = 1000;
/// Model id used when a capture does not say.
pub const UNKNOWN_MODEL: &str = "unknown";

/// Checks an agent id (or model id): trimmed, 1 to 128 characters, no control characters.
/// The error for a missing one shows an example of the right kind: an agent (`my-agent`) for
/// `agent_id`, a model (`gpt-4o`) for the model arguments.
pub fn check_id(name: Term, value: &str) -> Result<String, SoulError> {
    let v = value.trim();
    if v.is_empty() {
        let (what, example) = if name == Term::AgentId {
            ("the agent's name", "my-agent")
        } else {
            ("the model's name", "gpt-4o")
        };
        return Err(SoulError::Invalid(
            name.then(format!(" is required: give {what}, e.g. \"{example}\"")),
        ));
    }
    if v.chars().count() > MAX_ID_CHARS || v.chars().any(char::is_control) {
        return Err(SoulError::Invalid(name.then(format!(
            " must be at most {MAX_ID_CHARS} characters without control characters"
        ))));
    }
    Ok(v.to_owned())
}

/// Checks free text stored as given (a session id, a reason): no NUL character, which
/// PostgreSQL cannot store in text.
fn check_text(name: Term, value: &str) -> Result<(), SoulError> {
    if value.contains('\0') {
        return Err(SoulError::Invalid(
            name.then(" contains a NUL character (U+0000): remove it"),
        ));
    }
    Ok(())
}

fn not_found(agent: &str) -> SoulError {
    SoulError::NotFound(
        Message::from(format!(
            "no identity found for agent {agent}: capture one first with "
        ))
        .then(Term::SoulCapture)
        .then(" (or shape one with ")
        .then(Term::SoulUpdate)
        .then(" / ")
        .then(Term::SoulPatch)
        .then(")"),
    )
}

fn range(name: Term, v: Option<i64>, default: i64, min: i64, max: i64) -> Result<i64, SoulError> {
    match v {
        None => Ok(default),
        Some(x) if (min..=max).contains(&x) => Ok(x),
        Some(x) => Err(SoulError::Invalid(name.then(format!(
            " {x} is out of range: give a whole number from {min} to {max} (default {default})"
        )))),
    }
}

fn keep(s: &Settings) -> usize {
    if s.evolution_enabled {
        s.max_history_versions.max(1)
    } else {
        1
    }
}

/// A capture request.
#[derive(Debug, Clone, Default)]
pub struct CaptureRequest {
    /// The agent.
    pub agent_id: String,
    /// The conversation text (the agent's turns are read; see [`crate::text::agent_turns`]).
    pub conversation: String,
    /// The model the agent ran on (default `unknown`).
    pub model_id: Option<String>,
    /// The session, stored with the observation.
    pub session_id: Option<String>,
    /// Behavioural metrics to keep with the version (a JSON object).
    pub behavioral_metrics: Option<serde_json::Value>,
}

/// What a capture did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CaptureOutcome {
    /// The agent.
    pub agent_id: String,
    /// The new version.
    pub version: i64,
    /// The model.
    pub model_id: String,
    /// Mean trait confidence of the new version.
    pub confidence: f64,
    /// Traits observed at or above the confidence threshold (kept), strongest first.
    pub traits: Vec<ObservedTrait>,
    /// Traits observed below the threshold (not stored).
    pub dropped: Vec<String>,
    /// Levels measured.
    pub levels_observed: usize,
    /// Traits of the identity after the merge.
    pub identity_traits: usize,
    /// Agent sentences read.
    pub sentences: usize,
    /// Drift from the previous version (with `auto_check_after_capture`).
    pub drift: Option<DriftReport>,
    /// When (unix ms).
    pub timestamp: i64,
}

/// Extracts observations from a conversation and merges them into a new version.
pub fn capture(
    store: &mut dyn SoulStore,
    s: &Settings,
    req: &CaptureRequest,
    now: i64,
) -> Result<CaptureOutcome, SoulError> {
    let agent = check_id(Term::AgentId, &req.agent_id)?;
    let model = match req.model_id.as_deref().map(str::trim) {
        None | Some("") => UNKNOWN_MODEL.to_owned(),
        Some(m) => check_id(Term::ModelId, m)?,
    };
    if req.conversation.trim().is_empty() {
        return Err(SoulError::Invalid(
            "conversation is required: give the conversation text (the agent's turns prefixed with 'Assistant:', or the agent's replies alone)".into(),
        ));
    }
    if req.conversation.chars().count() > MAX_CONVERSATION_CHARS {
        return Err(SoulError::Invalid(
            format!(
                "conversation exceeds {MAX_CONVERSATION_CHARS} characters: capture it in parts"
            )
            .into(),
        ));
    }
    if let Some(m) = &req.behavioral_metrics {
        if !m.is_object() {
            return Err(SoulError::Invalid(
                "behavioral_metrics must be a JSON object, e.g. {\"response_time_ms\": 850}".into(),
            ));
        }
    }
    if let Some(session) = &req.session_id {
        check_text(Term::SessionId, session)?;
    }
    let obs = extract(&req.conversation);
    if obs.is_empty() {
        return Err(SoulError::Invalid(format!(
            "conversation shows nothing about the agent ({} agent sentences found): send the agent's replies (lines after 'Assistant:' are the agent's, lines after 'User:' are ignored)",
            obs.sentences
        ).into()));
    }
    store.lock_agent(&agent)?;
    let previous = store.latest(&agent)?;
    let base = previous
        .clone()
        .unwrap_or_else(|| Identity::neutral(&agent, &model, now));
    let mut next = base.derive(&model, "capture", now);
    let dropped = merge(&mut next, &obs, s.min_trait_confidence, now);
    if req.behavioral_metrics.is_some() {
        next.behavioral_metrics = req.behavioral_metrics.clone();
    }
    store.insert(&next, keep(s))?;
    store.insert_observation(
        &ObservationRecord {
            agent: &agent,
            model: &model,
            session: req.session_id.as_deref().filter(|x| !x.trim().is_empty()),
            identity_id: &next.id,
            observation: &obs,
            at: now,
        },
        keep(s).max(s.drift_window),
    )?;
    let drift = match (&previous, s.auto_check_after_capture) {
        (Some(p), true) => Some(compare(p, &next, s.drift_threshold, false)),
        _ => None,
    };
    let traits: Vec<ObservedTrait> = obs
        .traits
        .iter()
        .filter(|t| t.confidence >= s.min_trait_confidence)
        .cloned()
        .collect();
    Ok(CaptureOutcome {
        agent_id: agent,
        version: next.version,
        model_id: model,
        confidence: next.confidence,
        traits,
        dropped,
        levels_observed: obs.levels.len(),
        identity_traits: next.traits.len(),
        sentences: obs.sentences,
        drift,
        timestamp: now,
    })
}

/// A recall request.
#[derive(Debug, Clone, Default)]
pub struct RecallRequest {
    /// The agent.
    pub agent_id: String,
    /// What the agent is about to do (boosts the statements that mention it).
    pub context: Option<String>,
    /// Token budget (default `soul.recall.default_budget_tokens`).
    pub budget: Option<i64>,
}

/// The identity prompt.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecallOutcome {
    /// The agent.
    pub agent_id: String,
    /// The version it describes.
    pub version: i64,
    /// The prompt.
    pub prompt: String,
    /// Its cl100k tokens.
    pub tokens: usize,
    /// The budget applied.
    pub budget: usize,
    /// The statements included, in prompt order, each with its source (trait, observed,
    /// default).
    pub statements: Vec<crate::statements::Statement>,
    /// Statements left out for the budget.
    pub omitted: usize,
}

/// The identity prompt of an agent within a budget.
pub fn recall(
    store: &mut dyn SoulStore,
    s: &Settings,
    req: &RecallRequest,
) -> Result<RecallOutcome, SoulError> {
    let agent = check_id(Term::AgentId, &req.agent_id)?;
    let budget = range(
        Term::Budget,
        req.budget,
        s.recall_budget as i64,
        crate::prompt::MIN_BUDGET as i64,
        MAX_BUDGET,
    )? as usize;
    let id = store.latest(&agent)?.ok_or_else(|| not_found(&agent))?;
    let context = req.context.as_deref().filter(|c| !c.trim().is_empty());
    let p = crate::prompt::identity_prompt(&id, budget, context, s.min_observations_for_trait);
    Ok(RecallOutcome {
        agent_id: agent,
        version: id.version,
        prompt: p.text,
        tokens: p.tokens,
        budget,
        statements: p.statements,
        omitted: p.omitted,
    })
}

/// A drift request: between versions (the last `window`), or between two models.
#[derive(Debug, Clone, Default)]
pub struct DriftRequest {
    /// The agent.
    pub agent_id: String,
    /// Versions (or, between models, observations per model) to analyse.
    pub window: Option<i64>,
    /// Compare what was observed under this model …
    pub from_model: Option<String>,
    /// … with what was observed under this one.
    pub to_model: Option<String>,
}

/// What was compared.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum DriftScope {
    /// Two versions of the identity.
    Versions {
        /// Older version.
        from_version: i64,
        /// Newer version.
        to_version: i64,
    },
    /// The identities observed under two models.
    Models {
        /// First model.
        from_model: String,
        /// Second model.
        to_model: String,
        /// Observations used for the first.
        from_observations: usize,
        /// Observations used for the second.
        to_observations: usize,
    },
}

/// A drift check.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DriftOutcome {
    /// The agent.
    pub agent_id: String,
    /// The window applied.
    pub window: i64,
    /// What was compared (None: fewer than two versions).
    pub scope: Option<DriftScope>,
    /// The report (None: nothing to compare).
    pub report: Option<DriftReport>,
    /// The threshold applied.
    pub threshold: f64,
}

/// The identity observed under `model`: its latest `window` observations merged into a
/// neutral identity.
pub fn observed_profile(
    store: &mut dyn SoulStore,
    s: &Settings,
    agent: &str,
    model: &str,
    window: usize,
) -> Result<(Identity, usize), SoulError> {
    let list = store.observations(agent, model, window)?;
    let mut id = Identity::neutral(agent, model, 0);
    for o in &list {
        merge(&mut id, o, s.min_trait_confidence, 0);
    }
    Ok((id, list.len()))
}

/// Drift between the last `window` versions, or between two models.
pub fn drift(
    store: &mut dyn SoulStore,
    s: &Settings,
    req: &DriftRequest,
) -> Result<DriftOutcome, SoulError> {
    let agent = check_id(Term::AgentId, &req.agent_id)?;
    let window = range(
        Term::Window,
        req.window,
        s.drift_window as i64,
        1,
        MAX_WINDOW,
    )?;
    let from = req
        .from_model
        .as_deref()
        .map(str::trim)
        .filter(|x| !x.is_empty());
    let to = req
        .to_model
        .as_deref()
        .map(str::trim)
        .filter(|x| !x.is_empty());
    let outcome = |scope, report| DriftOutcome {
        agent_id: agent.clone(),
        window,
        scope,
        report,
        threshold: s.drift_threshold,
    };
    match (from, to) {
        (Some(f), Some(t)) => {
            let f = check_id(Term::FromModel, f)?;
            let t = check_id(Term::ToModel, t)?;
            let (a, na) = observed_profile(store, s, &agent, &f, window as usize)?;
            let (b, nb) = observed_profile(store, s, &agent, &t, window as usize)?;
            if na == 0 || nb == 0 {
                let models = store.observed_models(&agent)?;
                let known = if models.is_empty() {
                    "none yet: capture conversations with model_id set".to_owned()
                } else {
                    models
                        .iter()
                        .map(|(m, n)| format!("{m} ({n})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let missing = if na == 0 { &f } else { &t };
                return Err(SoulError::NotFound(
                    format!(
                    "agent {agent} has no capture under model {missing}; models observed: {known}"
                )
                    .into(),
                ));
            }
            let report = compare(&a, &b, s.drift_threshold, true);
            Ok(outcome(
                Some(DriftScope::Models {
                    from_model: f,
                    to_model: t,
                    from_observations: na,
                    to_observations: nb,
                }),
                Some(report),
            ))
        }
        (None, None) => {
            let versions = store.history(&agent, window as usize + 1)?;
            if versions.len() < 2 {
                return Ok(outcome(None, None));
            }
            let (newest, oldest) = (&versions[0], &versions[versions.len() - 1]);
            let report = compare(oldest, newest, s.drift_threshold, false);
            Ok(outcome(
                Some(DriftScope::Versions {
                    from_version: oldest.version,
                    to_version: newest.version,
                }),
                Some(report),
            ))
        }
        _ => Err(SoulError::Invalid(
            Message::from("give both ")
                .then(Term::FromModel)
                .then(" and ")
                .then(Term::ToModel)
                .then(" to compare two models, or neither to compare recent versions"),
        )),
    }
}

/// A model swap.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SwapOutcome {
    /// The agent.
    pub agent_id: String,
    /// Previous model.
    pub from_model: String,
    /// New model.
    pub to_model: String,
    /// The version the prompt describes (the reinforced one when stored).
    pub version: i64,
    /// Whether a reinforced version was stored (`soul.model_swap.auto_reinforce`).
    pub reinforced: bool,
    /// The strongest traits, named in the prompt.
    pub strongest_traits: Vec<String>,
    /// Drift between what the two models showed, when both were captured.
    pub drift: Option<DriftReport>,
    /// The reinforcement prompt.
    pub prompt: String,
    /// Its cl100k tokens.
    pub tokens: usize,
    /// When (unix ms).
    pub timestamp: i64,
}

/// Records a model change and builds the reinforcement prompt for the new model. With
/// `auto_reinforce`, a new version is stored in which the established traits (confidence
/// > 0.7) are reinforced ×1.1 (capped at 1), as the reference did.
pub fn swap(
    store: &mut dyn SoulStore,
    s: &Settings,
    agent_id: &str,
    from_model: &str,
    to_model: &str,
    now: i64,
) -> Result<SwapOutcome, SoulError> {
    let agent = check_id(Term::AgentId, agent_id)?;
    let from = check_id(Term::FromModel, from_model)?;
    let to = check_id(Term::ToModel, to_model)?;
    if from == to {
        return Err(SoulError::Invalid(
            Term::FromModel
                .then(" and ")
                .then(Term::ToModel)
                .then(format!(
                    " are both '{from}': a swap needs the previous and the new model"
                )),
        ));
    }
    store.lock_agent(&agent)?;
    let current = store.latest(&agent)?.ok_or_else(|| {
        SoulError::NotFound(
            Message::from(format!(
                "no identity found for agent {agent}, cannot reinforce: capture one first with "
            ))
            .then(Term::SoulCapture),
        )
    })?;
    let (a, na) = observed_profile(store, s, &agent, &from, s.drift_window)?;
    let (b, nb) = observed_profile(store, s, &agent, &to, s.drift_window)?;
    let drift = (na > 0 && nb > 0).then(|| compare(&a, &b, s.drift_threshold, true));
    let identity = if s.auto_reinforce {
        let mut next = current.derive(&to, &format!("model swap {from} -> {to}"), now);
        for t in next.traits.iter_mut().filter(|t| t.confidence > 0.7) {
            t.confidence = (t.confidence * 1.1).min(1.0);
        }
        next.refresh();
        store.insert(&next, keep(s))?;
        next
    } else {
        current
    };
    let record = Swap {
        from_model: from.clone(),
        to_model: to.clone(),
        swapped_at: now,
        reinforced: s.auto_reinforce,
        drift: drift.as_ref().map(|d| d.score),
    };
    store.insert_swap(&agent, &record, Some(&identity.id))?;
    let p = crate::prompt::reinforcement_prompt(
        &identity,
        &from,
        &to,
        s.recall_budget,
        s.min_observations_for_trait,
    );
    Ok(SwapOutcome {
        agent_id: agent,
        from_model: from,
        to_model: to,
        version: identity.version,
        reinforced: s.auto_reinforce,
        strongest_traits: crate::prompt::strongest_traits(
            &identity,
            crate::prompt::REINFORCED_TRAITS,
        )
        .iter()
        .map(|t| t.name.clone())
        .collect(),
        drift,
        prompt: p.text,
        tokens: p.tokens,
        timestamp: now,
    })
}

/// One version, as listed by status and history.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct VersionEntry {
    /// Version number.
    pub version: i64,
    /// When (unix ms).
    pub created_at: i64,
    /// Model.
    pub model_id: String,
    /// Why it exists.
    pub reason: String,
    /// Mean trait confidence.
    pub confidence: f64,
    /// Number of traits.
    pub traits: usize,
    /// Parent version id.
    pub parent_id: Option<String>,
    /// What changed from the previous version (None for the first one, or when the previous
    /// one was pruned from the history).
    pub changes: Option<Diff>,
}

fn entries(versions: &[Identity], shown: usize) -> Vec<VersionEntry> {
    versions
        .iter()
        .enumerate()
        .take(shown)
        .map(|(i, v)| VersionEntry {
            version: v.version,
            created_at: v.created_at,
            model_id: v.model_id.clone(),
            reason: v.reason.clone(),
            confidence: v.confidence,
            traits: v.traits.len(),
            parent_id: v.parent_id.clone(),
            changes: versions
                .get(i + 1)
                .filter(|p| Some(&p.id) == v.parent_id.as_ref())
                .map(|p| diff(p, v)),
        })
        .collect()
}

/// An agent's current identity.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusOutcome {
    /// The agent.
    pub agent_id: String,
    /// The current version (None: nothing captured yet).
    pub identity: Option<Identity>,
    /// The summary text (every statement, most characteristic first).
    pub summary: Option<String>,
    /// Versions stored.
    pub versions: i64,
    /// The 3 most recent versions.
    pub recent: Vec<VersionEntry>,
    /// Models observed, with their captures.
    pub models: Vec<(String, i64)>,
    /// The latest model swap.
    pub last_swap: Option<Swap>,
    /// Drift over the default window.
    pub drift: Option<DriftReport>,
}

/// The current identity summary and version.
pub fn status(
    store: &mut dyn SoulStore,
    s: &Settings,
    agent_id: &str,
) -> Result<StatusOutcome, SoulError> {
    let agent = check_id(Term::AgentId, agent_id)?;
    let versions = store.history(&agent, 4)?;
    let identity = versions.first().cloned();
    let drift = drift(
        store,
        s,
        &DriftRequest {
            agent_id: agent.clone(),
            ..DriftRequest::default()
        },
    )?
    .report;
    Ok(StatusOutcome {
        summary: identity
            .as_ref()
            .map(|i| crate::prompt::summary(i, s.min_observations_for_trait)),
        identity,
        versions: store.version_count(&agent)?,
        recent: entries(&versions, 3),
        models: store.observed_models(&agent)?,
        last_swap: store.latest_swap(&agent)?,
        drift,
        agent_id: agent,
    })
}

/// The evolution of an identity.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HistoryOutcome {
    /// The agent.
    pub agent_id: String,
    /// Versions, newest first.
    pub versions: Vec<VersionEntry>,
    /// Versions stored in all.
    pub total: i64,
}

/// The latest `limit` versions with what changed at each.
pub fn history(
    store: &mut dyn SoulStore,
    _s: &Settings,
    agent_id: &str,
    limit: Option<i64>,
) -> Result<HistoryOutcome, SoulError> {
    let agent = check_id(Term::AgentId, agent_id)?;
    let limit = range(Term::Limit, limit, 10, 1, MAX_WINDOW)? as usize;
    let versions = store.history(&agent, limit + 1)?;
    Ok(HistoryOutcome {
        versions: entries(&versions, limit),
        total: store.version_count(&agent)?,
        agent_id: agent,
    })
}

/// An edit (update or patch).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EditOutcome {
    /// The agent.
    pub agent_id: String,
    /// The new version.
    pub version: i64,
    /// Its mean trait confidence.
    pub confidence: f64,
    /// The directive (update only).
    pub directive: Option<String>,
    /// The reason recorded.
    pub reason: String,
    /// The changes made.
    pub changes: Vec<String>,
    /// When (unix ms).
    pub timestamp: i64,
}

fn edit(
    store: &mut dyn SoulStore,
    s: &Settings,
    agent: &str,
    patch: &Patch,
    reason: &str,
    now: i64,
) -> Result<(Identity, Vec<String>), SoulError> {
    patch.validate()?;
    if patch.is_empty() {
        return Err(SoulError::Invalid(
            "the patch is empty: give at least one field to change (e.g. formality_level: 0.8, uses_emojis: false, add_catch_phrases: [\"…\"])".into(),
        ));
    }
    check_text(Term::Reason, reason)?;
    store.lock_agent(agent)?;
    let current = store.latest(agent)?;
    let base = current.unwrap_or_else(|| Identity::neutral(agent, UNKNOWN_MODEL, now));
    let model = base.model_id.clone();
    let mut next = base.derive(&model, reason, now);
    let changes = apply(&mut next, patch, reason, now);
    if changes.is_empty() {
        return Err(SoulError::Invalid(
            "nothing would change: the identity already has these values (phrases to remove are absent)".into(),
        ));
    }
    store.insert(&next, keep(s))?;
    Ok((next, changes))
}

/// Applies a natural-language directive ("be more concise", "stop using emojis").
pub fn update(
    store: &mut dyn SoulStore,
    s: &Settings,
    agent_id: &str,
    directive: &str,
    reason: Option<&str>,
    now: i64,
) -> Result<EditOutcome, SoulError> {
    let agent = check_id(Term::AgentId, agent_id)?;
    if directive.trim().is_empty() {
        return Err(SoulError::Invalid(Term::Directive.then(
            " is required: say what to change, e.g. \"be more concise\" or \"stop using emojis\"",
        )));
    }
    check_text(Term::Directive, directive)?;
    let patch = parse_directive(directive)?;
    let reason = reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("user directive: {}", directive.trim()));
    let (next, changes) = edit(store, s, &agent, &patch, &reason, now)?;
    Ok(EditOutcome {
        agent_id: agent,
        version: next.version,
        confidence: next.confidence,
        directive: Some(directive.trim().to_owned()),
        reason,
        changes,
        timestamp: now,
    })
}

/// Applies an explicit patch.
pub fn patch(
    store: &mut dyn SoulStore,
    s: &Settings,
    agent_id: &str,
    patch: &Patch,
    reason: Option<&str>,
    now: i64,
) -> Result<EditOutcome, SoulError> {
    let agent = check_id(Term::AgentId, agent_id)?;
    let reason = reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or("explicit patch")
        .to_owned();
    let (next, changes) = edit(store, s, &agent, patch, &reason, now)?;
    Ok(EditOutcome {
        agent_id: agent,
        version: next.version,
        confidence: next.confidence,
        directive: None,
        reason,
        changes,
        timestamp: now,
    })
}
