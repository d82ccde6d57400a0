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

use crate::config::{McpConfig, McpTransport};
use crate::serving::{parse_addr, run_server};
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
pub fn serve(app: Arc<App>, transport: Transport) -> Result<()> {
    // Built before the runtime starts: making SOUL's tables ready waits on the database, which
    // the PostgreSQL client must not do on a runtime thread.
    let server = MiraServer::new(app.clone());
    run_server(app, "mira-mcp", async move {
        server.warm_up();
        match transport {
            Transport::Stdio => stdio::serve(server).await,
            Transport::Http(addr) => http::serve(server, addr).await,
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
