//! The browser's JSON API (`/ui/api/…`): each endpoint runs one use case, the one the matching
//! MCP tool runs, on the blocking pool, with the rights of the request's bearer token (the
//! [`Access`] [`crate::bearer::authenticate`] put in its extensions; a request without one is
//! refused). Reads are `GET` with query parameters; changes are `POST` with a JSON body.
//! `GET /export` answers JSON lines (`mira export`'s format) of the wings the token reads.
//! Errors are `{"error": "<what to do>"}` with 400 (bad input), 403 (outside the token's
//! rights), 404 (unknown id) or 500 (mira failed).

use super::{identity, page};
use crate::ops::metrics::MetricsSummary;
use crate::usecases::access::Access;
use crate::usecases::{
    archive, causal, clear, edit, link, pin, recall, status, store, supersede, timeline, transfer,
    UseCaseError, UseCaseResult,
};
use crate::App;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Extension, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

type AppState = State<Arc<App>>;
/// The caller's rights.
type Caller = Extension<Access>;

/// The API's routes, relative to `/ui/api`.
pub fn router(app: Arc<App>) -> axum::Router {
    axum::Router::new()
        .route("/status", get(get_status))
        .route("/recall", get(get_recall))
        .route("/timeline", get(get_timeline))
        .route("/memory", get(get_memory))
        .route("/graph", get(get_graph))
        .route("/soul", get(get_soul))
        .route("/export", get(get_export))
        .route("/store", post(post_store))
        .route("/forget", post(post_forget))
        .route("/archive", post(post_archive))
        .route("/restore", post(post_restore))
        .route("/pin", post(post_pin))
        .route("/link", post(post_link))
        .route("/unlink", post(post_unlink))
        .route("/edit", post(post_edit))
        .route("/supersede", post(post_supersede))
        .fallback(|| async {
            ApiError(
                StatusCode::NOT_FOUND,
                "no such API endpoint: the memory browser's page is at /ui/".into(),
            )
        })
        .with_state(app)
}

/// A refusal: its status and what to do, answered as `{"error": "…"}`.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> Self {
        ApiError(StatusCode::BAD_REQUEST, e.body_text())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(e: JsonRejection) -> Self {
        ApiError(StatusCode::BAD_REQUEST, e.body_text())
    }
}

impl From<UseCaseError> for ApiError {
    fn from(e: UseCaseError) -> Self {
        match e {
            // The browser shows the tools' words, as its help names the MCP tools.
            UseCaseError::Invalid(m) => ApiError(StatusCode::BAD_REQUEST, m.to_string()),
            UseCaseError::NotFound(m) => ApiError(StatusCode::NOT_FOUND, m.to_string()),
            UseCaseError::Forbidden(m) => ApiError(StatusCode::FORBIDDEN, m.to_string()),
            UseCaseError::Internal(e) => {
                tracing::error!("memory browser: {e:#}");
                ApiError(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("mira failed: {e:#}. Check mira's log."),
                )
            }
        }
    }
}

type Answer = Result<Response, ApiError>;

/// Runs a use case on the blocking pool and answers with its outcome as JSON.
async fn run<T, F>(app: Arc<App>, f: F) -> Answer
where
    T: Serialize + Send + 'static,
    F: FnOnce(&App) -> UseCaseResult<T> + Send + 'static,
{
    match tokio::task::spawn_blocking(move || f(&app)).await {
        Ok(r) => Ok(Json(r?).into_response()),
        Err(e) => Err(ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the call failed unexpectedly: {e}"),
        )),
    }
}

/// The present, non-blank value of an optional field.
fn present(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

/// What the page needs to start: the store's status, this process's metrics, and settings.
#[derive(Serialize)]
struct Overview {
    status: status::Status,
    metrics: MetricsSummary,
    soul: bool,
    read_only: bool,
    /// Whether the API needs a token (the page offers to change it only then).
    token_required: bool,
    default_budget: u32,
    max_budget: u32,
    types: Vec<&'static str>,
    relations: Vec<&'static str>,
}

async fn get_status(State(app): AppState, Extension(access): Caller) -> Answer {
    run(app, move |app| {
        Ok(Overview {
            status: status::status(app, &access)?,
            metrics: app.metrics.summary(),
            soul: app.config.soul.enabled,
            read_only: app.store.is_read_only(),
            token_required: app.config.mcp.http.requires_token(),
            default_budget: app.config.allocator.default_budget,
            max_budget: recall::MAX_BUDGET,
            types: mira_core::MemoryType::ALL
                .iter()
                .map(|t| t.as_str())
                .collect(),
            relations: link::RELATIONS.iter().map(|r| r.as_str()).collect(),
        })
    })
    .await
}

#[derive(Deserialize)]
struct RecallQuery {
    query: Option<String>,
    budget: Option<i64>,
    wing: Option<String>,
    room: Option<String>,
    order: Option<String>,
}

async fn get_recall(
    State(app): AppState,
    Extension(access): Caller,
    q: Result<Query<RecallQuery>, QueryRejection>,
) -> Answer {
    let Query(q) = q?;
    let order = match present(q.order) {
        Some(o) => o
            .parse::<recall::Order>()
            .map_err(|m| ApiError(StatusCode::BAD_REQUEST, m))?,
        None => recall::Order::default(),
    };
    let req = recall::RecallRequest {
        query: q.query.unwrap_or_default(),
        budget: q.budget,
        wing: present(q.wing),
        room: present(q.room),
        order,
        ..recall::RecallRequest::default()
    };
    run(app, move |app| recall::recall(app, &access, &req)).await
}

#[derive(Deserialize)]
struct TimelineQuery {
    wing: Option<String>,
    room: Option<String>,
    #[serde(rename = "type")]
    memory_type: Option<String>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<i64>,
    cursor: Option<String>,
    order: Option<String>,
    #[serde(default)]
    archived: bool,
    #[serde(default)]
    superseded: bool,
    source: Option<String>,
}

async fn get_timeline(
    State(app): AppState,
    Extension(access): Caller,
    q: Result<Query<TimelineQuery>, QueryRejection>,
) -> Answer {
    let Query(q) = q?;
    let req = timeline::TimelineRequest {
        wing: q.wing,
        room: q.room,
        memory_type: q.memory_type,
        since: q.since,
        until: q.until,
        limit: q.limit,
        cursor: q.cursor,
        order: q.order,
        include_archived: q.archived,
        include_superseded: q.superseded,
        source: q.source,
        pinned_only: false,
        now: None,
    };
    run(app, move |app| timeline::timeline(app, &access, &req)).await
}

#[derive(Deserialize)]
struct IdQuery {
    id: Option<String>,
    depth: Option<i64>,
}

/// The id of a request, or the refusal saying it is missing.
fn required_id(id: Option<String>) -> Result<String, ApiError> {
    present(id).ok_or_else(|| {
        ApiError(
            StatusCode::BAD_REQUEST,
            "give the memory's id (as the timeline or a search shows it)".into(),
        )
    })
}

/// A memory's page. An address that names no memory is answered for the person reading the page
/// (the use case's message names the MCP tools that list ids).
async fn get_memory(
    State(app): AppState,
    Extension(access): Caller,
    q: Result<Query<IdQuery>, QueryRejection>,
) -> Answer {
    let id = required_id(q?.0.id)?;
    if mira_core::memory::parse_id_ref(&id).is_err() {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            format!("\u{201c}{id}\u{201d} is not a memory id: a memory's address ends with its id, 8 or more hexadecimal digits such as 81af6ada."),
        ));
    }
    run(app, move |app| {
        page::memory_page(app, &access, &id).map_err(|e| match e {
            UseCaseError::NotFound(_) => UseCaseError::NotFound(format!(
                "No memory has the id {id}: it may have been forgotten or cleared, or the address is mistyped."
            ).into()),
            other => other,
        })
    })
    .await
}

async fn get_graph(
    State(app): AppState,
    Extension(access): Caller,
    q: Result<Query<IdQuery>, QueryRejection>,
) -> Answer {
    let Query(q) = q?;
    let req = causal::CausalRequest {
        id: required_id(q.id)?,
        max_depth: q.depth,
        include_consequences: true,
    };
    run(app, move |app| causal::causal_chain(app, &access, &req)).await
}

#[derive(Deserialize)]
struct AgentQuery {
    agent: Option<String>,
}

async fn get_soul(
    State(app): AppState,
    Extension(access): Caller,
    q: Result<Query<AgentQuery>, QueryRejection>,
) -> Answer {
    if !app.config.soul.enabled {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            "SOUL is off: start mira with --with-soul (or soul.enabled: true in the config) to see identities".into(),
        ));
    }
    let agent = q?.0.agent.unwrap_or_default();
    run(app, move |app| identity::identity(app, &access, &agent)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportQuery {
    wing: Option<String>,
    #[serde(default)]
    embeddings: bool,
}

/// `mira export`'s JSON lines, of one wing or of every wing the token reads.
async fn get_export(
    State(app): AppState,
    Extension(access): Caller,
    q: Result<Query<ExportQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q?;
    let wing = present(q.wing);
    let exported = tokio::task::spawn_blocking(move || {
        let mut lines = Vec::new();
        transfer::export(&app, &access, wing.as_deref(), q.embeddings, &mut lines)?;
        Ok::<_, UseCaseError>(lines)
    })
    .await
    .map_err(|e| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the call failed unexpectedly: {e}"),
        )
    })??;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/x-ndjson")],
        exported,
    )
        .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreBody {
    content: String,
    wing: String,
    room: Option<String>,
    #[serde(rename = "type")]
    memory_type: Option<String>,
    #[serde(default)]
    pinned: bool,
}

async fn post_store(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<StoreBody>, JsonRejection>,
) -> Answer {
    let Json(b) = b?;
    let req = store::StoreRequest {
        content: b.content,
        wing: b.wing.trim().to_owned(),
        room: present(b.room),
        memory_type: present(b.memory_type),
        pinned: b.pinned,
        ..store::StoreRequest::default()
    };
    run(app, move |app| store::store(app, &access, req)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdBody {
    id: String,
}

async fn post_forget(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<IdBody>, JsonRejection>,
) -> Answer {
    let Json(b) = b?;
    run(app, move |app| clear::forget(app, &access, &b.id)).await
}

async fn post_archive(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<IdBody>, JsonRejection>,
) -> Answer {
    let req = archive::ArchiveRequest {
        ids: vec![b?.0.id],
        ..archive::ArchiveRequest::default()
    };
    run(app, move |app| archive::archive(app, &access, &req)).await
}

async fn post_restore(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<IdBody>, JsonRejection>,
) -> Answer {
    let ids = vec![b?.0.id];
    run(app, move |app| archive::unarchive(app, &access, &ids)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinBody {
    id: String,
    pinned: bool,
}

async fn post_pin(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<PinBody>, JsonRejection>,
) -> Answer {
    let Json(b) = b?;
    run(app, move |app| {
        pin::set_pinned(app, &access, &b.id, b.pinned)
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkBody {
    from: String,
    to: String,
    relation: Option<String>,
}

impl From<LinkBody> for link::LinkRequest {
    fn from(b: LinkBody) -> Self {
        link::LinkRequest {
            from: b.from,
            to: b.to,
            relation: present(b.relation),
        }
    }
}

async fn post_link(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<LinkBody>, JsonRejection>,
) -> Answer {
    let req = link::LinkRequest::from(b?.0);
    run(app, move |app| link::link(app, &access, &req)).await
}

async fn post_unlink(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<LinkBody>, JsonRejection>,
) -> Answer {
    let req = link::LinkRequest::from(b?.0);
    run(app, move |app| link::unlink(app, &access, &req)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditBody {
    id: String,
    wing: Option<String>,
    room: Option<String>,
    #[serde(rename = "type")]
    memory_type: Option<String>,
}

async fn post_edit(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<EditBody>, JsonRejection>,
) -> Answer {
    let Json(b) = b?;
    let req = edit::EditRequest {
        id: b.id,
        wing: b.wing,
        room: b.room,
        memory_type: b.memory_type,
    };
    run(app, move |app| edit::edit(app, &access, &req)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SupersedeBody {
    old: String,
    new: String,
    reason: Option<String>,
    #[serde(default)]
    undo: bool,
}

/// `mira_supersede`: marks `old` as superseded by `new`, or with `undo`, current again.
async fn post_supersede(
    State(app): AppState,
    Extension(access): Caller,
    b: Result<Json<SupersedeBody>, JsonRejection>,
) -> Answer {
    let Json(b) = b?;
    let req = supersede::SupersedeRequest {
        old: b.old,
        new: b.new,
        reason: b.reason,
        undo: b.undo,
    };
    run(app, move |app| supersede::supersede(app, &access, &req)).await
}
