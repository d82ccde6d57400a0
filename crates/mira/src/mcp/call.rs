//! What every MCP tool call goes through, whichever tool it is.
//!
//! A tool is declared once, as a [`Tool`]: what `tools/list` shows (name, title, description,
//! input and output schemas, and annotations derived from its [`Effect`]) and the handler that answers it.
//! A handler parses its arguments (errors become `isError: true` results that say how to fix
//! the call), runs its use case on the blocking pool (SQLite and the model are blocking) under
//! the `mcp.timeout_seconds` limit ([`Calls::run`]), and answers with its text plus the outcome
//! as structured content ([`Calls::answer`]); a [`Failure`] becomes a tool error the model can
//! act on.
//!
//! Rights: each call runs with its caller's [`Access`] (over HTTP the rights of the bearer
//! token the request presented, see [`crate::bearer`]; on stdio the local user's), which the
//! handler hands to its use case, and which [`admitted`] checks first against the tool's
//! [`Effect`] and [`Family`]: a tool that reads needs a wing to read, one that writes a wing to
//! write, one that removes the right to remove, and SOUL's tools (their identities belong to
//! no wing) every wing. A tool declared here is therefore never reachable by a token without
//! the rights its effect needs, whatever its handler does.

use crate::usecases::access::Access;
use crate::usecases::{UseCaseError, UseCaseResult};
use crate::App;
use futures::future::BoxFuture;
use mira_core::message::{Message, Term};
use rmcp::handler::server::tool::{ToolCallContext, ToolRoute, ToolRouter};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a tool does to what mira keeps; its `readOnlyHint` and `destructiveHint` follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// It only reads.
    Reads,
    /// It adds or changes something, and takes nothing away.
    Writes,
    /// It removes memories from recall or deletes them.
    Removes,
}

/// The answer of a tool's handler, borrowing the calls it runs on.
pub(super) type Handler =
    for<'a> fn(&'a Calls, &'a Tool, JsonObject) -> BoxFuture<'a, Result<CallToolResult, Failure>>;

/// One MCP tool, declared once.
pub(super) struct Tool {
    /// Its name (`mira_store`).
    pub name: &'static str,
    /// Its title for people (the `title` annotation).
    pub title: &'static str,
    /// What it tells the model: what it does and when to call it.
    pub description: &'static str,
    /// Its input schema.
    pub schema: fn() -> Arc<JsonObject>,
    /// The schema of its structured content ([`super::args::output_schema`] of the type its
    /// handler serialises).
    pub output: fn() -> Arc<JsonObject>,
    /// What it does to the memory.
    pub effect: Effect,
    /// Whether calling it twice with the same arguments does no more than once.
    pub idempotent: bool,
    /// Whether its use case embeds text: its calls wait for the model to load first.
    pub needs_model: bool,
    /// Its handler, which receives the tool it answers.
    pub handler: Handler,
}

impl Tool {
    /// Whether it may change something: a call of it that timed out may have gone through.
    pub fn writes(&self) -> bool {
        self.effect != Effect::Reads
    }

    /// What `tools/list` shows of it.
    fn listing(&self) -> rmcp::model::Tool {
        rmcp::model::Tool::new(self.name, self.description, (self.schema)())
            .with_raw_output_schema((self.output)())
            .with_annotations(ToolAnnotations::from_raw(
                Some(self.title.to_owned()),
                Some(self.effect == Effect::Reads),
                Some(self.effect == Effect::Removes),
                Some(self.idempotent),
                Some(false),
            ))
    }
}

/// A family of tools (mira's memory tools, SOUL's identity tools): what a timeout of one of
/// them says, and whether what they touch lies in wings.
pub(super) struct Family {
    /// The likely reason a call is slow.
    pub slow_because: &'static str,
    /// The read-only tool that shows whether a write went through.
    pub check_with: &'static str,
    /// Whether what the tools touch belongs to no wing (SOUL's identities): only a caller that
    /// may read (for a change, write) every wing reaches it.
    pub wingless: bool,
}

/// The router of `tools`, for a server that holds its [`Calls`].
pub(super) fn router<S>(tools: &'static [Tool], family: &'static Family) -> ToolRouter<S>
where
    S: AsRef<Calls> + Send + Sync + 'static,
{
    let mut router = ToolRouter::new();
    for tool in tools {
        router.add_route(ToolRoute::new_dyn(
            tool.listing(),
            move |context: ToolCallContext<'_, S>| {
                let calls = context
                    .service
                    .as_ref()
                    .with_access(caller(&context.request_context.extensions));
                let arguments = context.arguments.unwrap_or_default();
                Box::pin(async move { Ok(call(&calls, tool, family, arguments).await.into()) })
            },
        ));
    }
    router
}

/// The rights of a call: those the HTTP layer found for the request's bearer token, or the
/// local user's on stdio (no HTTP request). An HTTP request without them gets none.
fn caller(extensions: &rmcp::model::Extensions) -> Access {
    match extensions.get::<axum::http::request::Parts>() {
        None => Access::local(),
        Some(request) => request
            .extensions
            .get::<Access>()
            .cloned()
            .unwrap_or_else(Access::nobody),
    }
}

/// Refuses a call the caller's rights cannot allow whatever its arguments: see the module
/// docs. The use case then checks the wings the call touches.
fn admitted(
    access: &Access,
    tool: &Tool,
    family: &Family,
    arguments: &JsonObject,
) -> Result<(), Failure> {
    let wing = arguments
        .get("wing")
        .and_then(Value::as_str)
        .map(|w| format!(" (wing '{w}')"))
        .unwrap_or_default();
    let call = format!("call {}{wing}", tool.name);
    let checked = match (family.wingless, tool.effect) {
        (true, Effect::Reads) => {
            access.check_read_all(&format!("{call}, whose data belongs to no wing"))
        }
        (true, _) => access.check_write_all(&format!("{call}, whose data belongs to no wing")),
        (false, Effect::Reads) if !access.reads_any() => Err(forbidden(access, &call, "reads")),
        (false, Effect::Writes) if !access.writes_any() => Err(forbidden(access, &call, "writes")),
        (false, Effect::Removes) if !access.writes_any() => Err(forbidden(access, &call, "writes")),
        (false, Effect::Removes) => access.check_destructive(&call),
        (false, _) => Ok(()),
    };
    checked.map_err(Failure::from)
}

fn forbidden(access: &Access, call: &str, verb: &str) -> UseCaseError {
    UseCaseError::Forbidden(format!(
        "{} may not {call}: it {verb} no wing. Use a token with that right (mcp.http.tokens on the server).",
        access.who()
    ).into())
}

/// Answers one call of `tool`: its handler's answer, or its failure as a tool error.
pub(super) async fn call(
    calls: &Calls,
    tool: &Tool,
    family: &Family,
    arguments: JsonObject,
) -> CallToolResult {
    let answer = match admitted(&calls.access, tool, family, &arguments) {
        Ok(()) => (tool.handler)(calls, tool, arguments).await,
        Err(refused) => Err(refused),
    };
    match answer {
        Ok(answer) => answer,
        Err(f) => CallToolResult::error(vec![ContentBlock::text(failure_message(
            calls, tool, family, f,
        ))]),
    }
}

/// What a failed call answers (and logs).
fn failure_message(calls: &Calls, tool: &Tool, family: &Family, f: Failure) -> String {
    let name = tool.name;
    match f {
        Failure::UseCase(UseCaseError::Invalid(m) | UseCaseError::NotFound(m)) => {
            m.render(Term::mcp_name)
        }
        Failure::UseCase(UseCaseError::Forbidden(m)) => {
            let m = m.render(Term::mcp_name);
            tracing::info!("{name} refused: {m}");
            m
        }
        Failure::UseCase(UseCaseError::Internal(e)) => {
            tracing::error!("{name}: {e:#}");
            format!("{name} failed inside mira: {e:#}. This is not caused by your arguments: retry later, or ask the user to check mira's log.")
        }
        Failure::Timeout => {
            let secs = calls.timeout.as_secs();
            tracing::warn!("{name}: no answer within {secs} s");
            timeout_message(tool, family, secs)
        }
    }
}

/// The answer to a call of `tool` that ran out of time: why it may be slow and, for a tool that
/// writes, how to check whether it went through before repeating it.
pub(super) fn timeout_message(tool: &Tool, family: &Family, secs: u64) -> String {
    let check = if tool.writes() {
        format!(
            " (it may have completed anyway: check with {} before repeating it)",
            family.check_with
        )
    } else {
        String::new()
    };
    format!(
        "{} did not finish within {secs} s (mcp.timeout_seconds): {}. Retry in a moment{check}.",
        tool.name, family.slow_because
    )
}

/// Why a tool call failed.
pub(super) enum Failure {
    /// The use case said no.
    UseCase(UseCaseError),
    /// It took longer than `mcp.timeout_seconds`.
    Timeout,
}

impl From<UseCaseError> for Failure {
    fn from(e: UseCaseError) -> Self {
        Failure::UseCase(e)
    }
}

/// A failure for invalid arguments; `msg` says how to fix the call.
pub(super) fn invalid(msg: impl Into<Message>) -> Failure {
    Failure::UseCase(UseCaseError::Invalid(msg.into()))
}

/// A successful answer: `text` for the model, `structured` as structured content.
pub(super) fn success(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

/// `value` as structured content. Written as text and read back, so that an `f32` reads as
/// written (0.9), not as the nearest `f64` (0.8999999761581421) `serde_json::to_value` makes.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_string(value)
        .and_then(|text| serde_json::from_str(&text))
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
}

/// What the tools run on: the application, the embedding model loaded once, the time limit,
/// and the rights of the caller of this call.
#[derive(Clone)]
pub(super) struct Calls {
    app: Arc<App>,
    model: Arc<tokio::sync::OnceCell<()>>,
    timeout: Duration,
    access: Access,
}

impl Calls {
    /// Calls on `app`, within its `mcp.timeout_seconds` (at least 1 s), with the local user's
    /// rights until [`Calls::with_access`] says otherwise.
    pub fn new(app: Arc<App>) -> Self {
        let timeout = Duration::from_secs(app.config.mcp.timeout_seconds.max(1));
        Calls {
            app,
            model: Arc::new(tokio::sync::OnceCell::new()),
            timeout,
            access: Access::local(),
        }
    }

    /// The same calls for a caller with `access`.
    pub fn with_access(&self, access: Access) -> Calls {
        Calls {
            access,
            ..self.clone()
        }
    }

    /// The application.
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    /// Starts loading the embedding model in the background, so that the first store or recall
    /// does not pay for it (the rule sets are built when the [`App`] opens).
    pub fn warm_up(&self) {
        let calls = self.clone();
        tokio::spawn(async move { calls.model_ready().await });
    }

    /// Waits until the model is loaded (loading it if nobody is). A failure is logged and not
    /// remembered: the use case reports it, and the next call tries again.
    async fn model_ready(&self) {
        let app = self.app.clone();
        let loaded = self
            .model
            .get_or_try_init(|| async move {
                let started = Instant::now();
                let dir = app.model_dir();
                let loaded = tokio::task::spawn_blocking(move || app.embedder_if_installed())
                    .await
                    .map_err(|e| anyhow::anyhow!("model loader stopped: {e}"))??;
                match loaded {
                    Some(_) => tracing::info!(
                        "embedding model loaded in {} ms",
                        started.elapsed().as_millis()
                    ),
                    None => tracing::warn!(
                        "no embedding model in {}: memories are stored without a vector and recall ranks by words only; install it with scripts/fetch-model.sh",
                        dir.display()
                    ),
                }
                anyhow::Ok(())
            })
            .await;
        if let Err(e) = loaded {
            tracing::warn!("embedding model not loaded: {e:#}");
        }
    }

    /// Runs `tool`'s use case on the blocking pool within the time limit (after the model is
    /// loaded, when the tool needs the model), with the caller's rights.
    pub async fn run<T, F>(&self, tool: &Tool, f: F) -> Result<T, Failure>
    where
        T: Send + 'static,
        F: FnOnce(&App, &Access) -> UseCaseResult<T> + Send + 'static,
    {
        self.within_limit(tool.needs_model, f).await
    }

    /// Runs a read a handler needs besides its use case (the wings for a hint, say), which
    /// never waits for the model, within the time limit.
    pub async fn query<T, F>(&self, f: F) -> Result<T, Failure>
    where
        T: Send + 'static,
        F: FnOnce(&App, &Access) -> UseCaseResult<T> + Send + 'static,
    {
        self.within_limit(false, f).await
    }

    /// Runs `f` on the blocking pool within the time limit, after the model is loaded when
    /// `needs_model`.
    async fn within_limit<T, F>(&self, needs_model: bool, f: F) -> Result<T, Failure>
    where
        T: Send + 'static,
        F: FnOnce(&App, &Access) -> UseCaseResult<T> + Send + 'static,
    {
        let app = self.app.clone();
        let access = self.access.clone();
        let work = async move {
            if needs_model {
                self.model_ready().await;
            }
            match tokio::task::spawn_blocking(move || f(&app, &access)).await {
                Ok(r) => r.map_err(Failure::from),
                Err(e) => Err(Failure::UseCase(UseCaseError::Internal(anyhow::anyhow!(
                    "the call failed unexpectedly: {e}"
                )))),
            }
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .unwrap_or(Err(Failure::Timeout))
    }

    /// Runs a use case (as [`Calls::run`]) and answers with `text` of its outcome, and the
    /// outcome as structured content.
    pub async fn answer<T, F>(
        &self,
        tool: &Tool,
        f: F,
        text: fn(&T) -> String,
    ) -> Result<CallToolResult, Failure>
    where
        T: serde::Serialize + Send + 'static,
        F: FnOnce(&App, &Access) -> UseCaseResult<T> + Send + 'static,
    {
        let outcome = self.run(tool, f).await?;
        Ok(success(text(&outcome), to_json(&outcome)))
    }
}
