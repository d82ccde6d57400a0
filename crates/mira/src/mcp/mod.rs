//! The MCP server: mira's use cases as MCP tools, over stdio (one client, the default) or
//! streamable HTTP (several clients sharing one store).
//!
//! stdout carries nothing but protocol frames: logs go to stderr. Start-up never waits for the
//! embedding model: it loads in the background and the first call that needs it waits for it.

pub mod args;
mod call;
pub mod frame;
mod http;
mod server;
mod soul_tools;
mod stdio;

pub use server::{MiraServer, INSTRUCTIONS};

use crate::config::{McpConfig, McpHttpConfig, McpTransport};
use crate::serving::{parse_addr, run_server, Exposure};
use crate::App;
use anyhow::Result;
use std::net::SocketAddr;
use std::sync::Arc;

/// How the server talks to its clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP on this address, path `/mcp`.
    Http(SocketAddr),
}

/// A transport ready to serve: stdio, or the bound listener of streamable HTTP (bound before
/// the store opens, so that a refused or taken address fails at once).
#[derive(Debug)]
pub enum Ready {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP on this listener.
    Http(std::net::TcpListener),
}

impl Transport {
    /// Makes the transport ready: binds the HTTP address through the exposure rule (a
    /// non-loopback address needs a token of `http`, or `exposure.insecure_no_auth`; see
    /// [`crate::serving`]).
    pub fn bind(self, http: &McpHttpConfig, exposure: Exposure) -> Result<Ready> {
        match self {
            Transport::Stdio => Ok(Ready::Stdio),
            Transport::Http(addr) => crate::serving::listen_for_clients(
                addr,
                http,
                "MCP over HTTP and the memory browser",
                "mcp.http.addr / --http",
                exposure,
            )
            .map(Ready::Http),
        }
    }
}

/// The transport of `mira serve`: HTTP when `--http [ADDR]` is given (`http`; `Some(None)`
/// for the flag without an address, meaning `mcp.http.addr`), else `mcp.transport`.
pub fn transport(config: &McpConfig, http: Option<Option<&str>>) -> Result<Transport> {
    let addr = match http {
        Some(addr) => addr.unwrap_or(&config.http.addr),
        None if config.transport == McpTransport::Http => &config.http.addr,
        None => return Ok(Transport::Stdio),
    };
    parse_addr(addr).map(Transport::Http)
}

/// Serves MCP on `transport` until the client goes away (stdio: end of input) or the process
/// is interrupted (Ctrl-C, SIGTERM), then saves the vector index.
pub fn serve(app: Arc<App>, transport: Ready) -> Result<()> {
    // Built before the runtime starts: making SOUL's tables ready waits on the database, which
    // the PostgreSQL client must not do on a runtime thread.
    let server = MiraServer::new(app.clone());
    run_server(app, "mira-mcp", async move {
        server.warm_up();
        match transport {
            Ready::Stdio => stdio::serve(server).await,
            Ready::Http(listener) => http::serve(server, listener).await,
        }
    })
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
        c.transport = McpTransport::Http;
        assert_eq!(transport(&c, None).ok(), Some(default));
    }
}
