//! Operations: the health and Prometheus metrics HTTP server that runs beside MCP when
//! `metrics.enabled`.

pub mod health;
pub mod metrics;
mod server;

pub use metrics::{DeadLetterReason, Metrics, TimedEmbedder};
pub use server::OpsServer;
