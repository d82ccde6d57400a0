//! The memory browser: a local web page (`/ui/`) over a small JSON API (`/ui/api/…`) that runs
//! the same use cases as the MCP tools. `mira ui` serves it alone; `mira serve --http` serves it
//! beside `/mcp`.
//!
//! The page is plain HTML, CSS and JavaScript embedded in the binary (`assets/`), with no
//! build step and nothing fetched from the network. Safety: the API takes the HTTP transport's
//! bearer token (`mcp.http.auth_token`) when one is set; on a loopback address only loopback
//! host names are answered (no DNS rebinding); a request that changes something must carry a
//! JSON body and, when its browser names an origin, come from the page's own origin (no
//! cross-site request can do both); every response carries a Content-Security-Policy that
//! allows nothing but the page's own files. The page writes memory text with `textContent`
//! only: a stored `<script>` is shown, never run.

mod api;
mod assets;
mod guard;
mod identity;
mod page;

use crate::App;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::sync::Arc;

/// Where the page lives.
pub const PATH: &str = "/ui/";

/// The browser's routes (page, assets and API under `/ui`) for an app served on `addr`, with
/// the API protected by `token` when it is set.
pub fn router(app: Arc<App>, addr: SocketAddr, token: Option<&str>) -> axum::Router {
    let api = crate::bearer::protect(api::router(app), token, "mcp.http.auth_token");
    assets::router()
        .nest("/ui/api", api)
        .layer(axum::middleware::from_fn_with_state(
            guard::Guard::new(addr),
            guard::check,
        ))
}

/// `mira ui`: serves the browser alone on `addr` until the process is interrupted, then saves
/// the vector index. A non-loopback address is refused unless a token is set.
pub fn serve(app: Arc<App>, addr: SocketAddr) -> Result<()> {
    let token = app.config.mcp.http.token().map(str::to_owned);
    if !addr.ip().is_loopback() && token.is_none() {
        anyhow::bail!(
            "mira ui on {addr} would let anyone on the network read and delete memories: set mcp.http.auth_token in the config, or listen on 127.0.0.1"
        );
    }
    crate::serving::run_server(app.clone(), "mira-ui", async move {
        let loader = app.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = loader.embedder() {
                tracing::warn!("embedding model not loaded: {e:#}");
            }
        });
        let routes = axum::Router::new()
            .route(
                "/",
                axum::routing::get(|| async { axum::response::Redirect::to(PATH) }),
            )
            .merge(router(app, addr, token.as_deref()));
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
            format!("cannot listen on {addr} (--addr): is another server using it?")
        })?;
        let local = listener
            .local_addr()
            .context("cannot read the listening address")?;
        // stdout stays unused; this line is how people (and tests) find the page.
        eprintln!("mira: memory browser on http://{local}{PATH}");
        axum::serve(listener, routes)
            .with_graceful_shutdown(crate::serving::shutdown_signal())
            .await
            .context("the memory browser's HTTP server failed")
    })
}
