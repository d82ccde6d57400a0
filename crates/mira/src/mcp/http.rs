//! MCP over streamable HTTP (`POST`/`GET`/`DELETE /mcp`), one session per client, all sharing
//! the same application. Each request runs on its own task and use cases run on the blocking
//! pool, so a slow call (the first model load, a large store) never holds up the others.

use super::frame::{classify, error_frame, Framing, Parsed, MAX_FRAME_BYTES};
use super::server::MiraServer;
use crate::bearer::Credentials;
use anyhow::{Context, Result};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The path of the MCP endpoint.
pub const PATH: &str = "/mcp";
/// How long an idle HTTP session is kept.
const SESSION_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

/// Serves MCP on `listener` (bound by `crate::serving::listen_for_clients`) until the process is told to stop.
pub(super) async fn serve(server: MiraServer, listener: std::net::TcpListener) -> Result<()> {
    let credentials = Arc::new(Credentials::of(&server.app().config.mcp.http));
    let listener =
        tokio::net::TcpListener::from_std(listener).context("cannot serve on the listener")?;
    let addr = listener
        .local_addr()
        .context("cannot read the listening address")?;
    let cancel = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .with_max_request_body_bytes(MAX_FRAME_BYTES);
    if !addr.ip().is_loopback() {
        // Reachable from other hosts: their Host headers name this machine, not localhost.
        config = config.disable_allowed_hosts();
    }
    // An agent may sit idle for a while between tool calls: keep its session for an hour
    // (rmcp's default is 5 minutes; clients start a new session when theirs has expired).
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE_TIMEOUT);
    let app = server.app().clone();
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(sessions), config);
    let router = axum::Router::new()
        .route_service(PATH, service)
        .layer(axum::middleware::from_fn(check_frame))
        .layer(axum::middleware::from_fn(end_session));
    let ops = crate::ops::beside_mcp(app.clone(), credentials.clone());
    let mut router = crate::bearer::authenticate(router, credentials.clone())
        .merge(crate::ui::router(app, addr, credentials));
    if let Some(ops) = ops.clone() {
        router = router.merge(ops);
    }
    // stdout stays unused in every mode; this line is how people (and tests) find the port.
    eprintln!("mira: MCP over streamable HTTP on http://{addr}{PATH}");
    eprintln!("mira: memory browser on http://{addr}{}", crate::ui::PATH);
    if ops.is_some() {
        eprintln!("mira: health and metrics on http://{addr}/health and /metrics");
    }
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            crate::serving::shutdown_signal().await;
            cancel.cancel();
        })
        .await
        .context("the HTTP server failed")
}

/// A JSON-RPC error as an HTTP response.
fn rpc_error(status: StatusCode, frame: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], frame).into_response()
}

/// Answers a malformed POST body with a JSON-RPC error (400) instead of rmcp's bare 415, bodies
/// over [`MAX_FRAME_BYTES`] with 413, and a request for a feature mira does not offer with
/// "method not found" (200).
async fn check_frame(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_FRAME_BYTES).await else {
        let msg = format!(
            "Invalid request: the body is over {MAX_FRAME_BYTES} bytes (or could not be read)"
        );
        return rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            error_frame(&Value::Null, -32600, msg),
        );
    };
    match classify(&bytes, Framing::Body) {
        Parsed::Message(_) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Parsed::Skip => StatusCode::ACCEPTED.into_response(),
        Parsed::Answer(frame) => rpc_error(StatusCode::BAD_REQUEST, frame),
        // A well-formed request: its answer (an error) is the request's result.
        Parsed::Unoffered(frame) => rpc_error(StatusCode::OK, frame),
    }
}

/// Ends a session (`DELETE /mcp`) with 204 No Content: rmcp answers 202, which clients read as
/// a failure ("Session termination failed: 202" from the Python SDK at every close).
async fn end_session(request: Request, next: Next) -> Response {
    let delete = request.method() == Method::DELETE;
    let response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        return StatusCode::NO_CONTENT.into_response();
    }
    response
}
