//! The memory browser: a local web page (`/ui/`) over a small JSON API (`/ui/api/…`) that runs
//! the same use cases as the MCP tools. `mira ui` serves it alone; `mira serve --http` serves it
//! beside `/mcp`.
//!
//! The page is plain HTML, CSS and JavaScript embedded in the binary (`assets/`), with no
//! build step and nothing fetched from the network. Safety: the API takes the HTTP transport's
//! bearer tokens (`mcp.http.auth_token`, the scoped `mcp.http.tokens`: each request has the
//! rights of its token) when any is set; on a loopback address only loopback
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

use crate::bearer::Credentials;
use crate::App;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::sync::Arc;

/// Where the page lives.
pub const PATH: &str = "/ui/";

/// The browser's routes (page, assets and API under `/ui`) for an app served on `addr`, each
/// API request with the rights of the token it presents (`credentials`).
pub fn router(app: Arc<App>, addr: SocketAddr, credentials: Arc<Credentials>) -> axum::Router {
    let api = crate::bearer::authenticate(api::router(app), credentials);
    assets::router()
        .nest("/ui/api", api)
        .layer(axum::middleware::from_fn_with_state(
            guard::Guard::new(addr),
            guard::check,
        ))
}

/// `mira ui`: serves the browser alone on `listener` (bound by `crate::serving::listen_for_clients`) until the process is
/// interrupted, then saves the vector index.
pub fn serve(app: Arc<App>, listener: std::net::TcpListener) -> Result<()> {
    let credentials = Arc::new(Credentials::of(&app.config.mcp.http));
    crate::serving::run_server(app.clone(), "mira-ui", async move {
        let loader = app.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = loader.embedder() {
                tracing::warn!("embedding model not loaded: {e:#}");
            }
        });
        let listener =
            tokio::net::TcpListener::from_std(listener).context("cannot serve on the listener")?;
        let local = listener
            .local_addr()
            .context("cannot read the listening address")?;
        let routes = axum::Router::new()
            .route(
                "/",
                axum::routing::get(|| async { axum::response::Redirect::to(PATH) }),
            )
            .merge(router(app, local, credentials));
        // stdout stays unused; this line is how people (and tests) find the page.
        eprintln!("mira: memory browser on http://{local}{PATH}");
        axum::serve(listener, routes)
            .with_graceful_shutdown(crate::serving::shutdown_signal())
            .await
            .context("the memory browser's HTTP server failed")
    })
}
