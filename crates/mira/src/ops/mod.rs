//! Operations: the health and Prometheus metrics endpoints, on the MCP server's HTTP port and,
//! when asked for, on a listener of their own.

pub mod health;
pub mod metrics;
mod server;

pub use metrics::{DeadLetterReason, Gauges, Metrics, TimedEmbedder};
pub use server::{beside_mcp, gauges, OpsServer};
