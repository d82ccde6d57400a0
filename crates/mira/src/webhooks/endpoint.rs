//! Webhook endpoints from the configuration, validated at start.

use super::event::EventKind;
use crate::config::{WebhookEndpoint, WebhooksConfig};
use anyhow::{bail, Context, Result};
use reqwest::Url;
use std::time::Duration;

/// One validated endpoint.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The URL as configured (the dead-letter key).
    pub url: String,
    /// The parsed URL.
    pub parsed: Url,
    /// HMAC-SHA256 secret for `X-Mira-Signature`.
    pub secret: Option<String>,
    /// Events delivered; empty means all.
    pub events: Vec<EventKind>,
    /// Whether payloads carry the memory content.
    pub include_content: bool,
    /// Per-request timeout.
    pub timeout: Duration,
}

impl Endpoint {
    /// Whether it wants `kind`.
    pub fn wants(&self, kind: EventKind) -> bool {
        self.events.is_empty() || self.events.contains(&kind)
    }

    /// The URL without credentials, query or fragment (for logs and listings).
    pub fn redacted(&self) -> String {
        redact(&self.url)
    }
}

/// `scheme://host[:port]/path` of `url`, without user info, query or fragment.
pub fn redact(url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!(
                "{}://{}{port}{}",
                u.scheme(),
                u.host_str().unwrap_or(""),
                u.path()
            )
        }
        Err(_) => "<invalid url>".into(),
    }
}

fn parse_events(i: usize, names: &[String]) -> Result<Vec<EventKind>> {
    if names.iter().any(|n| n == "*") {
        return Ok(vec![]);
    }
    names
        .iter()
        .map(|n| {
            EventKind::ALL
                .into_iter()
                .find(|k| k.as_str() == n)
                .with_context(|| {
                    format!(
                        "webhooks.endpoints[{i}].events: unknown event '{n}': use *, {}",
                        EventKind::ALL.map(EventKind::as_str).join(", ")
                    )
                })
        })
        .collect()
}

/// Validates every endpoint of `config` (an http or https URL with a host, known event
/// names, a positive timeout).
pub fn endpoints(config: &WebhooksConfig) -> Result<Vec<Endpoint>> {
    config
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (url, secret, events, include_content, timeout) = match e {
                WebhookEndpoint::Url(u) => (u.clone(), None, vec![], false, None),
                WebhookEndpoint::Detailed(d) => (
                    d.url.clone(),
                    d.secret.clone().filter(|s| !s.is_empty()),
                    d.events.clone(),
                    d.include_content,
                    d.timeout_seconds,
                ),
            };
            let parsed = Url::parse(&url).with_context(|| {
                format!("webhooks.endpoints[{i}]: not a URL: give http(s)://host/path")
            })?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                bail!("webhooks.endpoints[{i}]: must be an http:// or https:// URL with a host");
            }
            let secs = timeout.unwrap_or(config.timeout_seconds);
            if secs == 0 {
                bail!("webhooks.endpoints[{i}].timeout_seconds: must be at least 1");
            }
            Ok(Endpoint {
                url,
                parsed,
                secret,
                events: parse_events(i, &events)?,
                include_content,
                timeout: Duration::from_secs(secs),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WebhookEndpointDetail;

    fn config(endpoints: Vec<WebhookEndpoint>) -> WebhooksConfig {
        WebhooksConfig {
            endpoints,
            ..WebhooksConfig::default()
        }
    }

    #[test]
    fn validates_urls_and_events() {
        let ok = endpoints(&config(vec![WebhookEndpoint::Url(
            "https://user:pw@example.com:8443/hook?token=x".into(),
        )]))
        .expect("valid");
        assert_eq!(ok[0].redacted(), "https://example.com:8443/hook");
        assert!(ok[0].wants(EventKind::Cleared));
        for bad in ["ftp://example.com/x", "not a url", "http://"] {
            assert!(
                endpoints(&config(vec![WebhookEndpoint::Url(bad.into())])).is_err(),
                "{bad}"
            );
        }
        let detail = |events: Vec<&str>| {
            WebhookEndpoint::Detailed(WebhookEndpointDetail {
                url: "http://127.0.0.1:1/h".into(),
                secret: None,
                events: events.into_iter().map(String::from).collect(),
                include_content: false,
                timeout_seconds: None,
            })
        };
        let only = endpoints(&config(vec![detail(vec!["memory.archived"])])).expect("valid");
        assert!(only[0].wants(EventKind::Archived) && !only[0].wants(EventKind::Stored));
        let err = endpoints(&config(vec![detail(vec!["memory.deleted"])]))
            .expect_err("unknown event")
            .to_string();
        assert!(
            err.contains("memory.deleted") && err.contains("memory.cleared"),
            "{err}"
        );
    }
}
