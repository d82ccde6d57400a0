//! The MCP server: mira's use cases as MCP tools, over stdio (one client, the default) or
//! streamable HTTP (several clients sharing one store).
//!
//! stdout carries nothing but protocol frames: logs go to stderr. Start-up never waits for the
//! embedding model: it loads in the background and the first call that needs it waits for it.

pub mod args;
pub mod frame;
mod http;
mod server;
mod soul_tools;
mod stdio;

pub use server::{MiraServer, INSTRUCTIONS};

use crate::config::McpConfig;
use crate::App;
use anyhow::{Context, Result};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// How the server talks to its clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP on this address, path `/mcp`.
    Http(SocketAddr),
}

/// The transport of `mira serve`: HTTP when `--http [ADDR]` is given (`http`; `Some(None)`
/// for the flag without an address, meaning `mcp.http.addr`), else `mcp.transport`.
pub fn transport(config: &McpConfig, http: Option<Option<&str>>) -> Result<Transport> {
    let addr = match http {
        Some(addr) => addr.unwrap_or(&config.http.addr),
        None if config.transport == "http" => &config.http.addr,
        None => return Ok(Transport::Stdio),
    };
    parse_addr(addr).map(Transport::Http)
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

/// Serves MCP on `transport` until the client goes away (stdio: end of input) or the process
/// is interrupted (Ctrl-C, SIGTERM), then saves the vector index.
pub fn serve(app: Arc<App>, transport: Transport) -> Result<()> {
    let served = app.clone();
    run_server(app, "mira-mcp", async move {
        let server = MiraServer::new(served);
        server.warm_up();
        match transport {
            Transport::Stdio => stdio::serve(server).await,
            Transport::Http(addr) => http::serve(server, addr).await,
        }
    })
}

/// Runs `serve` on a new multi-threaded runtime (threads named `thread_name`) until it ends,
/// then saves the vector index.
pub(crate) fn run_server(
    app: Arc<App>,
    thread_name: &str,
    serve: impl std::future::Future<Output = Result<()>>,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(thread_name)
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(serve);
    let saved = runtime.block_on(async {
        let app = app.clone();
        tokio::task::spawn_blocking(move || app.index.save()).await
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports() {
        let mut c = McpConfig::default();
        assert_eq!(transport(&c, None).ok(), Some(Transport::Stdio));
        let default = Transport::Http("127.0.0.1:8765".parse().expect("addr"));
        assert_eq!(transport(&c, Some(None)).ok(), Some(default.clone()));
        assert_eq!(
            transport(&c, Some(Some("0.0.0.0:9000"))).ok(),
            Some(Transport::Http("0.0.0.0:9000".parse().expect("addr")))
        );
        assert_eq!(
            transport(&c, Some(Some("9001"))).ok(),
            Some(Transport::Http("127.0.0.1:9001".parse().expect("addr")))
        );
        assert_eq!(
            transport(&c, Some(Some("localhost:9002"))).ok(),
            Some(Transport::Http("127.0.0.1:9002".parse().expect("addr")))
        );
        assert!(transport(&c, Some(Some("nowhere"))).is_err());
        c.transport = "http".into();
        assert_eq!(transport(&c, None).ok(), Some(default));
    }
}
