//! The eight `soul_*` tools of SOUL, the identity extension: a second tool router, merged into
//! the server's when SOUL is enabled (`soul.enabled: true` or `mira serve --with-soul`). SOUL's
//! tables are made ready at start; when they cannot be, the failure is logged, the tools stay
//! listed and each call answers with the cause (and tries again, so a passing failure heals),
//! and `mira_status` shows it.

use super::args;
use super::call::{self, invalid, Calls, Effect, Failure, Family, Tool};
use crate::usecases::soul;
use crate::App;
use mira_soul::service::{
    self, CaptureRequest, DriftRequest, RecallRequest, MAX_BUDGET, MAX_WINDOW,
};
use mira_soul::{render, Patch};
use rmcp::handler::server::tool::ToolRouter;
use rmcp::model::{CallToolResult, JsonObject};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// What the server's `instructions` add when SOUL is enabled: the identity loop.
pub(super) const SOUL_INSTRUCTIONS: &str = "SOUL keeps your identity (who you are: traits, voice, style) across sessions and models, under your agent_id.
- At the start of a session, call soul_recall with your agent_id and inject the prompt it returns: it is who you are.
- At the end of a session, call soul_capture with the conversation and the model you ran on.
- When you move to another model, call soul_swap and follow its reinforcement prompt; soul_drift tells whether you stayed yourself.
- When the user asks you to behave differently, call soul_update with their words (or soul_patch with exact values).";

const CAPTURE_DESCRIPTION: &str = "Record who the agent is from a conversation it took part in: SOUL reads the agent's turns (lines after 'Assistant:'; 'User:' lines are ignored) and extracts personality traits, voice (formality, humour, empathy, directness …), communication style, values, behaviour and emotional tone, each with a confidence, then merges them into the agent's identity as a new version. Call it at the end of a session, with the model you ran on as model_id. Traits below the configured confidence are not stored. Returns the version, the traits captured with their confidences, and a drift warning when the identity changed a lot.";

const RECALL_DESCRIPTION: &str = "Get the agent's identity prompt (who you are: traits, voice, style, values), within a token budget, best evidenced first: the captured traits with their confidence, then what captures observed, then defaults for what was never observed. Call it at the start of a session and inject the prompt into your context so that you stay yourself; give context (what you are about to do) to favour the statements that matter for it. Needs an identity captured before (soul_capture, soul_update or soul_patch).";

const DRIFT_DESCRIPTION: &str = "Check whether the agent's identity drifted: by default between its last `window` versions; with from_model and to_model, between what the agent showed under two models (from its captures). Returns a drift score in [0, 1], the distance per dimension (voice, traits, communication, values, behaviour, emotion) marked [!] above the configured threshold, and recommendations. Call it after a model change or when the agent seems out of character.";

const SWAP_DESCRIPTION: &str = "Record that the agent now runs on another model, and get a reinforcement prompt for the new model naming the agent's strongest traits and voice, so that it keeps its identity. Call it when you switch models (from_model is the previous one, to_model the new one) and inject the prompt into the new model's context. With soul.model_swap.auto_reinforce, a reinforced version is stored.";

const STATUS_DESCRIPTION: &str = "Show the agent's current identity: its version, model, confidence, the full identity summary, the most recent versions, the models observed and the current drift. Call it to see who the agent is before changing it.";

const HISTORY_DESCRIPTION: &str = "List the evolution of the agent's identity: its latest versions (newest first) with date, model, reason, confidence, number of traits and what changed from the previous version. Call it to see how and why the identity changed.";

const UPDATE_DESCRIPTION: &str = "Change the agent's identity from a natural-language directive, in English or French, e.g. \"be more concise\", \"stop using emojis\", \"sois plus formel\", \"less humour\". The changes are listed and stored as a new version with its reason. Call it when the user asks the agent to behave differently; use soul_patch to set exact values.";

const PATCH_DESCRIPTION: &str = "Edit the agent's identity with exact values: voice and emotional-tone levels in [0, 1], emojis and Markdown on or off, sentence structure, explanation style, response length, structure, catch phrases, openings and closings to add or remove, and traits to upsert or remove. Out-of-range values and unknown choices are errors; nothing changes then. Stored as a new version with its reason. Prefer soul_update for a described change.";

const AGENT_ID: &str = "The agent whose identity this is, e.g. \"my-agent\" (1 to 128 characters); use the same id in every session.";

/// Arguments of `soul_capture`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureArgs {
    /// The agent whose identity this is, e.g. "my-agent" (1 to 128 characters); use the same
    /// id in every session.
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub agent_id: Option<String>,
    /// The conversation text: the agent's turns prefixed with "Assistant:" (lines after
    /// "User:" are ignored), or the agent's replies alone. At most 200000 characters.
    #[schemars(with = "String", length(min = 1))]
    pub conversation: Option<String>,
    /// The model the agent ran on, e.g. "claude-sonnet-4" (default "unknown"); drift between
    /// models compares captures by this id.
    #[serde(default)]
    #[schemars(with = "String")]
    pub model_id: Option<String>,
    /// The session the conversation comes from (stored with the capture).
    #[serde(default)]
    #[schemars(with = "String")]
    pub session_id: Option<String>,
    /// Behavioural metrics kept with the new version: a JSON object, or a string holding
    /// one, e.g. {"response_time_ms": 850}.
    #[serde(default)]
    #[schemars(schema_with = "metrics_schema")]
    pub behavioral_metrics: Option<Value>,
}

/// Arguments of `soul_recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// The agent whose identity this is, e.g. "my-agent".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub agent_id: Option<String>,
    /// What the agent is about to do; statements that mention it come first.
    #[serde(default)]
    #[schemars(with = "String")]
    pub context: Option<String>,
    /// Token budget of the prompt (cl100k tokens), 30 to 100000. Default
    /// soul.recall.default_budget_tokens (1000).
    #[serde(default)]
    #[schemars(schema_with = "budget_schema")]
    pub budget: Option<Value>,
}

/// Arguments of `soul_drift`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriftArgs {
    /// The agent whose identity this is, e.g. "my-agent".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub agent_id: Option<String>,
    /// Versions to analyse (between models: captures per model), 1 to 1000. Default
    /// soul.drift_detection.window_size (10).
    #[serde(default)]
    #[schemars(schema_with = "window_schema")]
    pub window: Option<Value>,
    /// Compare the identity observed under this model (give to_model too).
    #[serde(default)]
    #[schemars(with = "String")]
    pub from_model: Option<String>,
    /// … with the identity observed under this model (give from_model too).
    #[serde(default)]
    #[schemars(with = "String")]
    pub to_model: Option<String>,
}

/// Arguments of `soul_swap`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapArgs {
    /// The agent whose identity this is, e.g. "my-agent".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub agent_id: Option<String>,
    /// The model the agent ran on until now, e.g. "gpt-4o".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub from_model: Option<String>,
    /// The model it runs on from now on, e.g. "claude-sonnet-4".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub to_model: Option<String>,
}

/// Arguments of `soul_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// The agent whose identity this is, e.g. "my-agent".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub agent_id: Option<String>,
}

/// Arguments of `soul_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// The agent whose identity this is, e.g. "my-agent".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub agent_id: Option<String>,
    /// Versions to list, newest first, 1 to 1000. Default 10.
    #[serde(default)]
    #[schemars(schema_with = "window_schema")]
    pub limit: Option<Value>,
}

/// Arguments of `soul_update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The agent whose identity this is, e.g. "my-agent".
    #[schemars(with = "String", length(min = 1, max = 128))]
    pub agent_id: Option<String>,
    /// What to change, in English or French, e.g. "be more concise", "stop using emojis",
    /// "sois plus chaleureux".
    #[schemars(with = "String", length(min = 1))]
    pub directive: Option<String>,
    /// Why (recorded with the version). Default "user directive: <directive>".
    #[serde(default)]
    #[schemars(with = "String")]
    pub reason: Option<String>,
}

fn metrics_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["object", "string"] })
}

fn budget_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": mira_soul::prompt::MIN_BUDGET, "maximum": MAX_BUDGET })
}

fn window_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": MAX_WINDOW })
}

/// `soul_patch`'s schema: `agent_id` and `reason` beside the fields of a [`Patch`].
fn patch_schema() -> Arc<JsonObject> {
    let mut schema = JsonObject::clone(&args::input_schema::<Patch>());
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        let mut all = JsonObject::new();
        all.insert(
            "agent_id".into(),
            serde_json::json!({"type": "string", "minLength": 1, "maxLength": 128, "description": AGENT_ID}),
        );
        all.insert(
            "reason".into(),
            serde_json::json!({"type": "string", "description": "Why (recorded with the version). Default \"explicit patch\"."}),
        );
        all.append(props);
        *props = all;
    }
    schema.insert("required".into(), serde_json::json!(["agent_id"]));
    Arc::new(schema)
}

/// The optional string argument `name` of a raw argument object.
fn take_string(a: &mut JsonObject, name: &str) -> Result<Option<String>, Failure> {
    match a.remove(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(format!(
            "soul_patch: argument `{name}` must be a string. Fix it and call the tool again."
        ))),
    }
}

/// `behavioral_metrics`: an object, or a string holding one.
fn metrics(value: Option<Value>) -> Result<Option<Value>, Failure> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => serde_json::from_str(&s).map(Some).map_err(|e| {
            invalid(format!(
                "behavioral_metrics must be valid JSON ({e}): give an object, e.g. {{\"response_time_ms\": 850}}"
            ))
        }),
        Some(v) => Ok(Some(v)),
    }
}

fn count(name: &str, value: Option<&Value>, hint: &str) -> Result<Option<i64>, Failure> {
    args::integer(name, value, hint).map_err(invalid)
}

/// What a timeout of a soul tool says.
const SOUL: Family = Family {
    slow_because: "the database is busy",
    check_with: "soul_history",
    wingless: true,
};

/// SOUL's tools, in the order `tools/list` shows them.
const TOOLS: &[Tool] = &[
    Tool {
        name: "soul_capture",
        title: "Capture identity",
        description: CAPTURE_DESCRIPTION,
        schema: args::input_schema::<CaptureArgs>,
        output: args::output_schema::<service::CaptureOutcome>,
        effect: Effect::Writes,
        idempotent: false,
        needs_model: false,
        handler: |c, t, a| Box::pin(capture(c, t, a)),
    },
    Tool {
        name: "soul_recall",
        title: "Recall identity",
        description: RECALL_DESCRIPTION,
        schema: args::input_schema::<RecallArgs>,
        output: args::output_schema::<service::RecallOutcome>,
        effect: Effect::Reads,
        idempotent: true,
        needs_model: false,
        handler: |c, t, a| Box::pin(recall(c, t, a)),
    },
    Tool {
        name: "soul_drift",
        title: "Identity drift",
        description: DRIFT_DESCRIPTION,
        schema: args::input_schema::<DriftArgs>,
        output: args::output_schema::<service::DriftOutcome>,
        effect: Effect::Reads,
        idempotent: true,
        needs_model: false,
        handler: |c, t, a| Box::pin(drift(c, t, a)),
    },
    Tool {
        name: "soul_swap",
        title: "Model swap",
        description: SWAP_DESCRIPTION,
        schema: args::input_schema::<SwapArgs>,
        output: args::output_schema::<service::SwapOutcome>,
        effect: Effect::Writes,
        idempotent: false,
        needs_model: false,
        handler: |c, t, a| Box::pin(swap(c, t, a)),
    },
    Tool {
        name: "soul_status",
        title: "Identity status",
        description: STATUS_DESCRIPTION,
        schema: args::input_schema::<StatusArgs>,
        output: args::output_schema::<service::StatusOutcome>,
        effect: Effect::Reads,
        idempotent: true,
        needs_model: false,
        handler: |c, t, a| Box::pin(status(c, t, a)),
    },
    Tool {
        name: "soul_history",
        title: "Identity history",
        description: HISTORY_DESCRIPTION,
        schema: args::input_schema::<HistoryArgs>,
        output: args::output_schema::<service::HistoryOutcome>,
        effect: Effect::Reads,
        idempotent: true,
        needs_model: false,
        handler: |c, t, a| Box::pin(history(c, t, a)),
    },
    Tool {
        name: "soul_update",
        title: "Update identity",
        description: UPDATE_DESCRIPTION,
        schema: args::input_schema::<UpdateArgs>,
        output: args::output_schema::<service::EditOutcome>,
        effect: Effect::Writes,
        idempotent: false,
        needs_model: false,
        handler: |c, t, a| Box::pin(update(c, t, a)),
    },
    Tool {
        name: "soul_patch",
        title: "Patch identity",
        description: PATCH_DESCRIPTION,
        schema: patch_schema,
        output: args::output_schema::<service::EditOutcome>,
        effect: Effect::Writes,
        idempotent: false,
        needs_model: false,
        handler: |c, t, a| Box::pin(patch(c, t, a)),
    },
];

/// The soul tools when SOUL is enabled; none otherwise. A failure to make SOUL's tables ready
/// is logged here, and answered by every soul tool until it is fixed.
pub(super) fn router<S>(app: &App) -> ToolRouter<S>
where
    S: AsRef<Calls> + Send + Sync + 'static,
{
    if !app.config.soul.enabled {
        return ToolRouter::new();
    }
    match soul::ensure(app) {
        Ok(()) => tracing::info!("SOUL enabled: serving the soul_* tools"),
        Err(e) => tracing::error!(
            "SOUL failed to initialise; its tools answer with this error: {:#}",
            anyhow::Error::new(e)
        ),
    }
    call::router(TOOLS, &SOUL)
}

async fn capture(c: &Calls, tool: &Tool, a: JsonObject) -> Result<CallToolResult, Failure> {
    let a: CaptureArgs = args::parse(tool.name, a).map_err(invalid)?;
    let req = CaptureRequest {
        agent_id: a.agent_id.unwrap_or_default(),
        conversation: a.conversation.unwrap_or_default(),
        model_id: a.model_id,
        session_id: a.session_id,
        behavioral_metrics: metrics(a.behavioral_metrics)?,
    };
    c.answer(
        tool,
        move |app, _| soul::capture(app, &req),
        render::capture,
    )
    .await
}

async fn recall(c: &Calls, tool: &Tool, a: JsonObject) -> Result<CallToolResult, Failure> {
    let a: RecallArgs = args::parse(tool.name, a).map_err(invalid)?;
    let hint = format!(
        "give a whole number of tokens from {} to {MAX_BUDGET}",
        mira_soul::prompt::MIN_BUDGET
    );
    let req = RecallRequest {
        agent_id: a.agent_id.unwrap_or_default(),
        context: a.context,
        budget: count("budget", a.budget.as_ref(), &hint)?,
    };
    c.answer(tool, move |app, _| soul::recall(app, &req), render::recall)
        .await
}

async fn drift(c: &Calls, tool: &Tool, a: JsonObject) -> Result<CallToolResult, Failure> {
    let a: DriftArgs = args::parse(tool.name, a).map_err(invalid)?;
    let hint = format!("give a whole number from 1 to {MAX_WINDOW}");
    let req = DriftRequest {
        agent_id: a.agent_id.unwrap_or_default(),
        window: count("window", a.window.as_ref(), &hint)?,
        from_model: a.from_model,
        to_model: a.to_model,
    };
    c.answer(tool, move |app, _| soul::drift(app, &req), render::drift)
        .await
}

async fn swap(c: &Calls, tool: &Tool, a: JsonObject) -> Result<CallToolResult, Failure> {
    let a: SwapArgs = args::parse(tool.name, a).map_err(invalid)?;
    let (agent, from, to) = (
        a.agent_id.unwrap_or_default(),
        a.from_model.unwrap_or_default(),
        a.to_model.unwrap_or_default(),
    );
    c.answer(
        tool,
        move |app, _| soul::swap(app, &agent, &from, &to),
        render::swap,
    )
    .await
}

async fn status(c: &Calls, tool: &Tool, a: JsonObject) -> Result<CallToolResult, Failure> {
    let a: StatusArgs = args::parse(tool.name, a).map_err(invalid)?;
    let agent = a.agent_id.unwrap_or_default();
    c.answer(
        tool,
        move |app, _| soul::status(app, &agent),
        render::status,
    )
    .await
}

async fn history(c: &Calls, tool: &Tool, a: JsonObject) -> Result<CallToolResult, Failure> {
    let a: HistoryArgs = args::parse(tool.name, a).map_err(invalid)?;
    let hint = format!("give a whole number from 1 to {MAX_WINDOW}");
    let limit = count("limit", a.limit.as_ref(), &hint)?;
    let agent = a.agent_id.unwrap_or_default();
    c.answer(
        tool,
        move |app, _| soul::history(app, &agent, limit),
        render::history,
    )
    .await
}

async fn update(c: &Calls, tool: &Tool, a: JsonObject) -> Result<CallToolResult, Failure> {
    let a: UpdateArgs = args::parse(tool.name, a).map_err(invalid)?;
    let (agent, directive, reason) = (
        a.agent_id.unwrap_or_default(),
        a.directive.unwrap_or_default(),
        a.reason,
    );
    c.answer(
        tool,
        move |app, _| soul::update(app, &agent, &directive, reason.as_deref()),
        render::edit,
    )
    .await
}

async fn patch(c: &Calls, tool: &Tool, mut a: JsonObject) -> Result<CallToolResult, Failure> {
    let agent = take_string(&mut a, "agent_id")?.unwrap_or_default();
    let reason = take_string(&mut a, "reason")?;
    if let Some(Value::String(s)) = a.get("traits") {
        // The reference also took the trait edits as a JSON string.
        let parsed = serde_json::from_str(s).map_err(|e| {
            invalid(format!(
                "soul_patch: `traits` is not valid JSON ({e}): give an array of {{name, category, intensity, confidence, action}}"
            ))
        })?;
        a.insert("traits".into(), parsed);
    }
    let patch: Patch = args::parse(tool.name, a).map_err(invalid)?;
    c.answer(
        tool,
        move |app, _| soul::patch(app, &agent, &patch, reason.as_deref()),
        render::edit,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::{call, SOUL, TOOLS};

    fn soul_timeout_message(name: &str, secs: u64) -> String {
        let tool = TOOLS.iter().find(|t| t.name == name).expect("a soul tool");
        call::timeout_message(tool, &SOUL, secs)
    }

    #[test]
    fn a_timeout_names_soul_tools_only() {
        let m = soul_timeout_message("soul_capture", 30);
        assert!(
            m.starts_with("soul_capture did not finish within 30 s"),
            "{m}"
        );
        assert!(
            m.contains("check with soul_history before repeating it"),
            "{m}"
        );
        assert!(!m.contains("mira_"), "{m}");
        let m = soul_timeout_message("soul_recall", 30);
        assert!(!m.contains("soul_history") && !m.contains("mira_"), "{m}");
    }
}
