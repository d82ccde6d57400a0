//! Delivering one event to one endpoint: signed POST, retries with exponential backoff and
//! jitter, the endpoint's circuit breaker, and the dead-letter table when it cannot be done.

use super::breaker::Breaker;
use super::endpoint::Endpoint;
use crate::config::WebhooksConfig;
use crate::ops::{DeadLetterReason, Metrics};
use anyhow::{Context, Result};
use hmac::{Hmac, KeyInit, Mac};
use mira_store::DeadLetter;
use mira_store::DeadLetterStore;
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The signature header: `sha256=<hex HMAC-SHA256 of the body with the endpoint's secret>`.
pub const SIGNATURE_HEADER: &str = "X-Mira-Signature";
/// The event name header.
pub const EVENT_HEADER: &str = "X-Mira-Event";
/// The delivery id header (stable across retries and replays).
pub const DELIVERY_HEADER: &str = "X-Mira-Delivery";

/// Redirects followed at most (and only on the same host).
const MAX_REDIRECTS: usize = 5;

/// One event for one endpoint.
#[derive(Debug, Clone)]
pub struct Job {
    /// Index of the endpoint.
    pub endpoint: usize,
    /// Delivery id (the dead letter's key).
    pub id: String,
    /// Event name.
    pub event_type: String,
    /// JSON body.
    pub body: String,
}

/// How a delivery ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The endpoint answered 2xx.
    Delivered,
    /// It went to the dead-letter table.
    DeadLettered(String),
}

/// `sha256=<hex>` of `body` under `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    // HMAC takes keys of any length: this never fails.
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

/// Retry timing.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First delay.
    pub initial: Duration,
    /// Longest delay.
    pub max: Duration,
}

impl RetryPolicy {
    /// The delay before retry `n` (0-based): `initial·2ⁿ` capped at `max`, then a random
    /// point in its upper half (jitter, so that endpoints recovering are not hit in step).
    pub fn delay(&self, n: u32) -> Duration {
        let full = self
            .initial
            .saturating_mul(2u32.saturating_pow(n.min(30)))
            .min(self.max);
        let unit = (uuid::Uuid::new_v4().as_u128() % 1_000_000) as f64 / 1_000_000.0;
        full.mul_f64(0.5 + 0.5 * unit)
    }
}

/// Sends jobs: shared by the queue's workers and by `mira webhooks replay`.
pub struct Courier {
    store: Arc<dyn DeadLetterStore>,
    metrics: Arc<Metrics>,
    client: reqwest::blocking::Client,
    endpoints: Vec<(Endpoint, Breaker)>,
    policy: RetryPolicy,
    deadline: Mutex<Option<Instant>>,
}

impl Courier {
    /// A courier for these endpoints with the retry and breaker settings of `config`.
    pub fn new(
        config: &WebhooksConfig,
        endpoints: Vec<Endpoint>,
        store: Arc<dyn DeadLetterStore>,
        metrics: Arc<Metrics>,
    ) -> Result<Courier> {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same_host = attempt
                .previous()
                .first()
                .is_some_and(|first| first.host_str() == attempt.url().host_str());
            if same_host && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = reqwest::blocking::Client::builder()
            .redirect(policy)
            .user_agent(concat!("mira/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("cannot create the webhook HTTP client")?;
        let cooldown = Duration::from_millis(config.circuit_cooldown_ms);
        Ok(Courier {
            store,
            metrics,
            client,
            endpoints: endpoints
                .into_iter()
                .map(|e| (e, Breaker::new(config.circuit_failures, cooldown)))
                .collect(),
            policy: RetryPolicy {
                max_retries: config.max_retries,
                initial: Duration::from_millis(config.backoff_initial_ms),
                max: Duration::from_millis(config.backoff_max_ms),
            },
            deadline: Mutex::new(None),
        })
    }

    /// The endpoints.
    pub fn endpoints(&self) -> impl Iterator<Item = &Endpoint> {
        self.endpoints.iter().map(|(e, _)| e)
    }

    /// From now on, deliveries not finished by `at` are dead-lettered instead (shutdown).
    pub fn stop_by(&self, at: Instant) {
        *self.deadline.lock().unwrap_or_else(|p| p.into_inner()) = Some(at);
    }

    fn deadline(&self) -> Option<Instant> {
        *self.deadline.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One POST; an error says why (status, timeout, connection).
    fn post(&self, ep: &Endpoint, job: &Job) -> Result<(), String> {
        let mut req = self
            .client
            .post(ep.parsed.clone())
            .timeout(ep.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(EVENT_HEADER, &job.event_type)
            .header(DELIVERY_HEADER, &job.id);
        if let Some(secret) = &ep.secret {
            req = req.header(SIGNATURE_HEADER, signature(secret, job.body.as_bytes()));
        }
        match req.body(job.body.clone()).send() {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => Err(format!("the endpoint answered HTTP {}", r.status())),
            Err(e) if e.is_timeout() => Err(format!("no answer within {} s", ep.timeout.as_secs())),
            Err(e) => Err(format!("request failed: {}", without_url(&e))),
        }
    }

    /// Delivers `job` (retrying, through the breaker) or dead-letters it.
    pub fn deliver(&self, job: &Job) -> Outcome {
        let Some((ep, breaker)) = self.endpoints.get(job.endpoint) else {
            return self.dead_letter(
                job,
                "",
                0,
                "the endpoint is gone".into(),
                DeadLetterReason::Shutdown,
            );
        };
        let mut attempts = 0u32;
        loop {
            if self.deadline().is_some_and(|d| Instant::now() >= d) {
                return self.dead_letter(
                    job,
                    &ep.url,
                    attempts,
                    "mira stopped before the event was delivered".into(),
                    DeadLetterReason::Shutdown,
                );
            }
            if !breaker.allow() {
                return self.dead_letter(
                    job,
                    &ep.url,
                    attempts,
                    "the endpoint's circuit breaker is open after repeated failures".into(),
                    DeadLetterReason::CircuitOpen,
                );
            }
            attempts += 1;
            match self.post(ep, job) {
                Ok(()) => {
                    breaker.success();
                    self.metrics.webhook_delivered();
                    return Outcome::Delivered;
                }
                Err(e) => {
                    breaker.failure();
                    self.metrics.webhook_failed();
                    tracing::debug!(
                        "webhook {} to {}: attempt {attempts} failed: {e}",
                        job.event_type,
                        ep.redacted()
                    );
                    if attempts > self.policy.max_retries {
                        return self.dead_letter(
                            job,
                            &ep.url,
                            attempts,
                            e,
                            DeadLetterReason::RetriesExhausted,
                        );
                    }
                    let wait = self.policy.delay(attempts - 1);
                    let wait = match self.deadline() {
                        Some(d) => wait.min(d.saturating_duration_since(Instant::now())),
                        None => wait,
                    };
                    std::thread::sleep(wait);
                }
            }
        }
    }

    /// Writes (or updates) the dead letter of `job`.
    pub fn dead_letter(
        &self,
        job: &Job,
        url: &str,
        attempts: u32,
        error: String,
        reason: DeadLetterReason,
    ) -> Outcome {
        self.metrics.webhook_dead_lettered(reason);
        let letter = DeadLetter {
            id: job.id.clone(),
            endpoint: url.to_owned(),
            event_type: job.event_type.clone(),
            payload: job.body.clone(),
            attempts,
            last_error: Some(error.clone()),
            failed_at: chrono::Utc::now().timestamp_millis(),
        };
        match self.store.add_dead_letter(&letter) {
            Ok(()) => tracing::warn!(
                "webhook {} {} to {} dead-lettered: {error} (mira webhooks replay {})",
                job.event_type,
                job.id,
                super::endpoint::redact(url),
                job.id
            ),
            Err(e) => tracing::error!(
                "webhook {} {} lost: it could not be dead-lettered: {e}",
                job.event_type,
                job.id
            ),
        }
        Outcome::DeadLettered(error)
    }
}

/// A reqwest error's message without the URL (which may carry a token).
fn without_url(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut msg = if e.is_connect() {
        "cannot connect".to_owned()
    } else if e.is_redirect() {
        "redirect refused (only same-host redirects are followed)".to_owned()
    } else {
        "transport error".to_owned()
    };
    while let Some(s) = source {
        msg = format!("{msg}: {s}");
        source = s.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_matches_the_rfc_4231_vector() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn delays_double_with_jitter_and_are_capped() {
        let p = RetryPolicy {
            max_retries: 5,
            initial: Duration::from_millis(100),
            max: Duration::from_millis(350),
        };
        for _ in 0..20 {
            let d0 = p.delay(0);
            assert!(d0 >= Duration::from_millis(50) && d0 <= Duration::from_millis(100));
            let d1 = p.delay(1);
            assert!(d1 >= Duration::from_millis(100) && d1 <= Duration::from_millis(200));
            let d9 = p.delay(9);
            assert!(d9 >= Duration::from_millis(175) && d9 <= Duration::from_millis(350));
        }
    }
}
