//! `mcp:`: the MCP server, its HTTP transport and its tokens.

use super::checks::{at_least, check};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

config_words! {
    /// `mcp.transport`: how `mira serve` talks to its clients when no `--http` is given.
    McpTransport {
        /// Newline-delimited JSON-RPC on stdin/stdout (the default).
        Stdio = "stdio",
        /// Streamable HTTP on `mcp.http.addr`.
        Http = "http",
    }
}

/// `mcp.http:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpHttpConfig {
    /// Address of `mira serve --http` when no address is given.
    pub addr: String,
    /// A bearer token with every right (every wing, destructive calls included).
    pub auth_token: Option<String>,
    /// Scoped bearer tokens, each with its wings and rights, kept as SHA-256 digests.
    pub tokens: Vec<ScopedToken>,
}
impl McpHttpConfig {
    /// Whether the HTTP transport and the memory browser require a bearer token (`auth_token`
    /// or any of `tokens`).
    pub fn requires_token(&self) -> bool {
        self.auth_token.as_deref().is_some_and(|t| !t.is_empty()) || !self.tokens.is_empty()
    }
}

impl Default for McpHttpConfig {
    fn default() -> Self {
        McpHttpConfig {
            addr: "127.0.0.1:8765".into(),
            auth_token: None,
            tokens: Vec::new(),
        }
    }
}

/// One scoped token of `mcp.http.tokens` (`mira token new` writes one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopedToken {
    /// Its name: in refusals and in the log of destructive calls.
    pub name: String,
    /// The SHA-256 of the token, 64 hex digits (`mira token hash` computes it); the token
    /// itself is not kept.
    pub sha256: String,
    /// The wings it may read (recall, load, timeline, status, export); `*`: every wing.
    #[serde(default)]
    pub read: Vec<String>,
    /// The wings it may write to (store, pin, edit); `*`: every wing.
    #[serde(default)]
    pub write: Vec<String>,
    /// Whether it may archive, clear and forget memories of the wings it writes.
    #[serde(default)]
    pub destructive: bool,
}

/// `mcp:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Server name announced to clients.
    pub name: String,
    /// Server version announced to clients.
    pub version: String,
    /// How `mira serve` talks to its clients when no `--http` is given.
    pub transport: McpTransport,
    /// Per-request timeout in seconds.
    pub timeout_seconds: u64,
    /// Streamable HTTP transport.
    pub http: McpHttpConfig,
}
impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            name: "mira".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            transport: McpTransport::Stdio,
            timeout_seconds: 30,
            http: McpHttpConfig::default(),
        }
    }
}

impl McpConfig {
    /// Checks `mcp:`.
    pub(super) fn validate(&self) -> Result<()> {
        at_least(self.timeout_seconds, 1, "mcp.timeout_seconds")?;
        check(
            self.http.addr.parse::<std::net::SocketAddr>().is_ok(),
            "mcp.http.addr",
            "must be an IP:port address such as 127.0.0.1:8765",
        )?;
        self.http.validate_tokens()
    }
}

impl McpHttpConfig {
    /// Checks `mcp.http.tokens`: names and digests unique and well formed, wings valid names
    /// or `*`.
    fn validate_tokens(&self) -> Result<()> {
        let mut names = std::collections::HashSet::new();
        let mut digests = std::collections::HashSet::new();
        for (i, t) in self.tokens.iter().enumerate() {
            let key = format!("mcp.http.tokens[{i}]");
            if !crate::usecases::validate::is_name(&t.name) {
                bail!("{key}.name: give 1-64 ASCII letters, digits, '-', '_' or '.' (e.g. ci-bot)");
            }
            if !names.insert(t.name.as_str()) {
                bail!(
                    "{key}.name: '{}' names two tokens; give each its own name",
                    t.name
                );
            }
            let digest = t.sha256.trim();
            if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
                bail!("{key}.sha256: give the token's SHA-256 as 64 hex digits (`mira token hash` prints it; `mira token new` makes a token and its entry)");
            }
            if !digests.insert(t.sha256.to_ascii_lowercase()) {
                bail!("{key}.sha256: two tokens have the same digest; give each its own token");
            }
            for (list, wings) in [("read", &t.read), ("write", &t.write)] {
                for w in wings {
                    if w.trim() != "*" && !crate::usecases::validate::is_name(w.trim()) {
                        bail!("{key}.{list}: '{w}' is neither a wing name (1-64 ASCII letters, digits, '-', '_', '.') nor * (every wing)");
                    }
                }
            }
        }
        Ok(())
    }
}
