//! `webhooks:`: outgoing webhooks.

use super::checks::{at_least, check, in_range};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// One webhook endpoint: a URL, or an object with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WebhookEndpoint {
    /// Just the URL (all events, no secret).
    Url(String),
    /// URL with options.
    Detailed(WebhookEndpointDetail),
}

/// A webhook endpoint with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookEndpointDetail {
    /// http(s) URL.
    pub url: String,
    /// HMAC-SHA256 secret for the signature header.
    #[serde(default)]
    pub secret: Option<String>,
    /// Events delivered (`*` or names); all when empty.
    #[serde(default)]
    pub events: Vec<String>,
    /// Include the memory content in payloads.
    #[serde(default)]
    pub include_content: bool,
    /// Per-request timeout in seconds for this endpoint (default `webhooks.timeout_seconds`).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// `webhooks:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhooksConfig {
    /// Deliver events.
    pub enabled: bool,
    /// Delivery workers.
    pub workers: usize,
    /// Queue capacity; a full queue dead-letters the event.
    pub queue_size: usize,
    /// Per-request timeout in seconds.
    pub timeout_seconds: u64,
    /// Retries after a failed attempt before the event is dead-lettered.
    pub max_retries: u32,
    /// Delay before the first retry (doubled each retry, with jitter), in milliseconds.
    pub backoff_initial_ms: u64,
    /// Longest delay between retries, in milliseconds.
    pub backoff_max_ms: u64,
    /// Consecutive failed attempts that open an endpoint's circuit breaker.
    pub circuit_failures: u32,
    /// How long an open circuit refuses deliveries before one trial, in milliseconds.
    pub circuit_cooldown_ms: u64,
    /// Endpoints.
    pub endpoints: Vec<WebhookEndpoint>,
}
impl Default for WebhooksConfig {
    fn default() -> Self {
        WebhooksConfig {
            enabled: false,
            workers: 3,
            queue_size: 1000,
            timeout_seconds: 30,
            max_retries: 3,
            backoff_initial_ms: 500,
            backoff_max_ms: 30_000,
            circuit_failures: 5,
            circuit_cooldown_ms: 30_000,
            endpoints: vec![],
        }
    }
}

impl WebhooksConfig {
    /// Checks `webhooks:`.
    pub(super) fn validate(&self) -> Result<()> {
        at_least(self.workers, 1, "webhooks.workers")?;
        at_least(self.queue_size, 1, "webhooks.queue_size")?;
        at_least(self.timeout_seconds, 1, "webhooks.timeout_seconds")?;
        in_range(self.max_retries, 0..=20, "webhooks.max_retries")?;
        check(
            self.backoff_initial_ms >= 1 && self.backoff_max_ms >= self.backoff_initial_ms,
            "webhooks.backoff_initial_ms",
            "must be at least 1 and at most webhooks.backoff_max_ms",
        )?;
        at_least(self.circuit_failures, 1, "webhooks.circuit_failures")?;
        at_least(self.circuit_cooldown_ms, 1, "webhooks.circuit_cooldown_ms")?;
        for (i, e) in self.endpoints.iter().enumerate() {
            let url = match e {
                WebhookEndpoint::Url(u) => u,
                WebhookEndpoint::Detailed(d) => &d.url,
            };
            check(
                url.starts_with("http://") || url.starts_with("https://"),
                &format!("webhooks.endpoints[{i}]"),
                "must be an http:// or https:// URL",
            )?;
        }
        Ok(())
    }
}
