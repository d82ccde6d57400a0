//! How mira's servers run (the MCP server and the memory browser): the address they listen
//! on, their async runtime, and the signal that stops them.

use crate::App;
use anyhow::{Context, Result};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// Parses `IP:PORT`, `localhost:PORT` or a bare port (on 127.0.0.1).
pub(crate) fn parse_addr(raw: &str) -> Result<SocketAddr> {
    let raw = raw.trim();
    let loopback = |port: &str| {
        port.parse::<u16>()
            .ok()
            .map(|p| SocketAddr::from((Ipv4Addr::LOCALHOST, p)))
    };
    raw.parse::<SocketAddr>()
        .ok()
        .or_else(|| loopback(raw))
        .or_else(|| raw.strip_prefix("localhost:").and_then(loopback))
        .with_context(|| {
            format!("'{raw}' is not an address to listen on: give IP:PORT, e.g. 127.0.0.1:8765")
        })
}

/// Reads the vector index (a server searches from its first request on), runs `serve` on a
/// new multi-threaded runtime (threads named `thread_name`) until it ends, then saves the index.
pub(crate) fn run_server(
    app: Arc<App>,
    thread_name: &str,
    serve: impl std::future::Future<Output = Result<()>>,
) -> Result<()> {
    app.index()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(thread_name)
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(serve);
    let saved = runtime.block_on(async {
        let app = app.clone();
        tokio::task::spawn_blocking(move || app.index_if_open().map_or(Ok(false), |i| i.save()))
            .await
    });
    match saved {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::warn!("vector index not saved (it is rebuilt at the next start): {e:#}")
        }
        Err(e) => tracing::warn!("vector index not saved: {e}"),
    }
    // Blocking tasks still running (a store that outlived its client) are not waited for
    // forever: what they acknowledged is already committed.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    result
}

/// Resolves when the process is asked to stop (Ctrl-C or SIGTERM).
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
