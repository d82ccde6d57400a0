//! The health and metrics endpoints (`/health`, `/health/live`, `/health/ready`, `/metrics`):
//! on the port of `mira serve --http` beside `/mcp` ([`beside_mcp`]), and, when asked for
//! (`--metrics`, `metrics.enabled: true`), on a listener of their own ([`OpsServer`]: its own
//! thread and runtime, so that it runs beside either MCP transport and answers while the store
//! is still opening).

use super::health;
use super::metrics::Gauges;
use crate::bearer::Credentials;
use crate::config::MetricsConfig;
use crate::serving::{Exposure, Listener};
use crate::App;
use anyhow::{Context, Result};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// The application once it is open (empty while migrations run and the index loads).
type Slot = Arc<OnceLock<Arc<App>>>;

/// A running health and metrics server; dropping it stops it.
pub struct OpsServer {
    slot: Slot,
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for OpsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpsServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl OpsServer {
    /// Listens on `metrics.prometheus_addr` and serves until dropped. A non-loopback address
    /// needs `metrics.auth_token` (or `exposure.insecure_no_auth`): the exposure rule of
    /// [`crate::serving`], whose refusal is a [`crate::serving::Refused`] error. Until
    /// [`OpsServer::attach`] is called, `/health/ready` and `/health` answer 503 and
    /// `/metrics` 503.
    pub fn start(config: &MetricsConfig, exposure: Exposure) -> Result<OpsServer> {
        let addr: SocketAddr = config.prometheus_addr.parse().with_context(|| {
            format!(
                "metrics.prometheus_addr '{}' is not an IP:port address such as 127.0.0.1:9090",
                config.prometheus_addr
            )
        })?;
        let listener = crate::serving::listen(
            addr,
            Listener {
                serves: "the health and metrics endpoints",
                addr_setting: "metrics.prometheus_addr / MIRA_METRICS_ADDR",
                token_setting: "metrics.auth_token",
                protected: config.auth_token.as_deref().is_some_and(|t| !t.is_empty()),
            },
            exposure,
        )?;
        let addr = listener
            .local_addr()
            .context("cannot read the metrics address")?;
        let slot: Slot = Arc::default();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let router = routes(slot.clone(), |r| {
            crate::bearer::protect(r, config.auth_token.as_deref(), "metrics.auth_token")
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the metrics runtime")?;
        let thread = std::thread::Builder::new()
            .name("mira-ops".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let served = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => axum::serve(l, router)
                            .with_graceful_shutdown(async move {
                                let _ = stopped.await;
                            })
                            .await
                            .map_err(anyhow::Error::from),
                        Err(e) => Err(e.into()),
                    };
                    if let Err(e) = served {
                        tracing::warn!("the health and metrics server stopped: {e}");
                    }
                });
            })
            .context("cannot start the metrics thread")?;
        eprintln!("mira: health and metrics on http://{addr}/health and /metrics");
        Ok(OpsServer {
            slot,
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `app` from now on (readiness turns to 200).
    pub fn attach(&self, app: Arc<App>) {
        let _ = self.slot.set(app);
    }
}

impl Drop for OpsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The health and metrics routes over the app in `slot`: `/health` and `/metrics` behind
/// `guard` (a bearer-token check); the probes `/health/live` and `/health/ready` stay open.
fn routes(
    slot: Slot,
    guard: impl FnOnce(axum::Router<Slot>) -> axum::Router<Slot>,
) -> axum::Router {
    let detailed = axum::Router::new()
        .route("/health", get(full_health))
        .route("/metrics", get(metrics));
    guard(detailed)
        .route("/health/live", get(live))
        .route("/health/ready", get(ready))
        .with_state(slot)
}

/// The health and metrics routes `mira serve --http` serves on its own port beside `/mcp`
/// (none with `metrics.enabled: false`). `/health` and `/metrics` need `metrics.auth_token`
/// when it is set, else one of the server's own tokens (`credentials`: `mcp.http.auth_token`,
/// `mcp.http.tokens`) when it has any.
pub fn beside_mcp(app: Arc<App>, credentials: Arc<Credentials>) -> Option<axum::Router> {
    let config = &app.config;
    if config.metrics.enabled == Some(false) {
        return None;
    }
    let slot: Slot = Arc::new(OnceLock::from(app.clone()));
    Some(match config.metrics.auth_token.as_deref() {
        Some(t) if !t.is_empty() => routes(slot, |r| {
            crate::bearer::protect(r, Some(t), "metrics.auth_token")
        }),
        _ => routes(slot, |r| crate::bearer::authenticate(r, credentials)),
    })
}

fn json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let text = serde_json::to_string(body).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    (status, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}

fn status_of(ok: bool) -> StatusCode {
    if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

/// Runs blocking work (SQLite) off the server's only thread.
async fn blocking<T: Send + 'static>(app: Arc<App>, f: fn(&App) -> T) -> Result<T, String> {
    tokio::task::spawn_blocking(move || f(&app))
        .await
        .map_err(|e| format!("the check failed unexpectedly: {e}"))
}

async fn full_health(State(slot): State<Slot>) -> Response {
    let Some(app) = slot.get().cloned() else {
        return json(StatusCode::SERVICE_UNAVAILABLE, &health::Health::starting());
    };
    match blocking(app, health::check).await {
        Ok(h) => json(status_of(h.is_ok()), &h),
        Err(e) => json(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({ "status": "degraded", "detail": e }),
        ),
    }
}

async fn live() -> Response {
    json(StatusCode::OK, &serde_json::json!({ "status": "alive" }))
}

async fn ready(State(slot): State<Slot>) -> Response {
    let answer = match slot.get().cloned() {
        None => health::ready(None),
        Some(app) => blocking(app, |a| health::ready(Some(a)))
            .await
            .and_then(|r| r),
    };
    match answer {
        Ok(()) => json(StatusCode::OK, &serde_json::json!({ "status": "ready" })),
        Err(detail) => json(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({ "status": "not_ready", "detail": detail }),
        ),
    }
}

/// The gauges of `app` now (blocking: reads the store).
pub fn gauges(app: &App) -> Result<Gauges> {
    let st = app.index()?.state();
    let index_state = if st.building {
        "building"
    } else if st.ready || st.size < st.params.exact_threshold {
        "ready"
    } else {
        "exact"
    };
    Ok(Gauges {
        index_vectors: st.size,
        index_state,
        memories: app.store.stats()?.by_type,
        dead_letters: app.store.dead_letter_count()?,
    })
}

async fn metrics(State(slot): State<Slot>) -> Response {
    let Some(app) = slot.get().cloned() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "mira is still opening the store\n",
        )
            .into_response();
    };
    match blocking(app, |a| a.metrics.render(&gauges(a)?)).await {
        Ok(Ok(text)) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Ok(Err(e)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("metrics unavailable: {e:#}\n"),
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}
