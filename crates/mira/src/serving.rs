//! How mira's servers run (the MCP server, the memory browser, the health and metrics
//! endpoints): the address they listen on and the exposure rule every listener goes through
//! ([`listen`]), their async runtime, and the signal that stops them.

use crate::config::McpHttpConfig;
use crate::App;
use anyhow::{Context, Result};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// Whether the user allowed listeners on other interfaces without a token
/// (`--insecure-no-auth`: for a server behind the user's own authenticating proxy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exposure {
    /// `--insecure-no-auth` was given.
    pub insecure_no_auth: bool,
}

/// A listener of mira, as the exposure rule sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listener<'a> {
    /// What it serves, for messages ("MCP over HTTP and the memory browser").
    pub serves: &'a str,
    /// The setting (or option) of its address.
    pub addr_setting: &'a str,
    /// The setting of the token that protects it.
    pub token_setting: &'a str,
    /// Whether a token protects it.
    pub protected: bool,
}

/// A listener the exposure rule refused to open (the message names the token's setting).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(String);

/// The exposure rule, the same for every listener: a loopback address is always allowed; any
/// other address only with a token, or when the user said `--insecure-no-auth` (then it is
/// logged as a warning). Binds `addr` when allowed; a refusal is a [`Refused`] error.
pub(crate) fn listen(
    addr: SocketAddr,
    listener: Listener<'_>,
    exposure: Exposure,
) -> Result<std::net::TcpListener> {
    let Listener {
        serves,
        addr_setting,
        token_setting,
        protected,
    } = listener;
    if !addr.ip().is_loopback() && !protected {
        if !exposure.insecure_no_auth {
            return Err(Refused(format!(
                "{serves} on {addr} would let anyone on the network read and change memories: set {token_setting} (README, Privacy and security), listen on 127.0.0.1, or, behind your own proxy that authenticates every request, start with --insecure-no-auth"
            ))
            .into());
        }
        tracing::warn!(
            "{serves} on {addr} accepts anyone who can reach it, without a token (--insecure-no-auth): only your proxy stands between the network and every memory"
        );
    }
    let bound = std::net::TcpListener::bind(addr).with_context(|| {
        format!("cannot listen on {addr} ({addr_setting}): is another server using it?")
    })?;
    bound
        .set_nonblocking(true)
        .with_context(|| format!("cannot configure the listener on {addr}"))?;
    Ok(bound)
}

/// [`listen`] for a listener of clients (MCP over HTTP, the memory browser): protected by the
/// tokens of `mcp.http` (`auth_token`, `tokens`).
pub(crate) fn listen_for_clients(
    addr: SocketAddr,
    http: &McpHttpConfig,
    serves: &str,
    addr_setting: &str,
    exposure: Exposure,
) -> Result<std::net::TcpListener> {
    let listener = Listener {
        serves,
        addr_setting,
        token_setting: crate::bearer::TOKEN_SETTINGS,
        protected: http.requires_token(),
    };
    listen(addr, listener, exposure)
}

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
