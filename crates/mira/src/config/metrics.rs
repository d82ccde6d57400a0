//! `metrics:`: the health and Prometheus endpoints.

use super::checks::check;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// `metrics:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Unset: `mira serve --http` serves `/health` and `/metrics` on its own port, a stdio
    /// server nowhere (every MCP client starts its own). `true`: also on a listener of their own
    /// at `prometheus_addr`, for either transport; `false`: nowhere.
    pub enabled: Option<bool>,
    /// The address of that listener of their own (loopback by default).
    pub prometheus_addr: String,
    /// When set, `/metrics` and `/health` require `Authorization: Bearer <token>`
    /// (`/health/live` and `/health/ready` stay open for probes).
    pub auth_token: Option<String>,
}
impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: None,
            prometheus_addr: "127.0.0.1:9090".into(),
            auth_token: None,
        }
    }
}

impl MetricsConfig {
    /// Checks `metrics:` (the address only when the endpoints may be served).
    pub(super) fn validate(&self) -> Result<()> {
        if self.enabled == Some(false) {
            return Ok(());
        }
        check(
            self.prometheus_addr.parse::<std::net::SocketAddr>().is_ok(),
            "metrics.prometheus_addr",
            "must be an IP:port address such as 127.0.0.1:9090",
        )
    }
}
