//! Outgoing webhooks: `memory.stored`, `memory.archived`, `memory.cleared` and
//! `memory.superseded` events posted as JSON to the configured endpoints.
//!
//! Emitting never blocks nor fails the use case: each (event, endpoint) pair goes into a
//! bounded queue (`webhooks.queue_size`) drained by `webhooks.workers` threads; when the queue
//! is full the event is dead-lettered at once. Workers retry failed attempts with exponential
//! backoff and jitter behind a per-endpoint circuit breaker; what cannot be delivered lands in
//! the dead-letter table, listed and replayed by `mira webhooks dead-letters` / `replay`.

mod breaker;
pub(crate) mod delivery;
pub(crate) mod endpoint;
mod event;

pub use delivery::{signature, DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER};
pub use endpoint::{endpoints, redact, Endpoint};
pub use event::{EventKind, MemoryEvent};

use crate::config::WebhooksConfig;
use crate::ops::{DeadLetterReason, Metrics};
use anyhow::{Context, Result};
use delivery::{Courier, Job};
use mira_store::DeadLetterStore;
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a stopping process keeps delivering what is queued before dead-lettering it.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The queue and its workers.
pub struct Dispatcher {
    courier: Arc<Courier>,
    queue: Mutex<Option<SyncSender<Job>>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher").finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// Validates the endpoints and starts the workers.
    pub fn start(
        config: &WebhooksConfig,
        store: Arc<dyn DeadLetterStore>,
        metrics: Arc<Metrics>,
    ) -> Result<Dispatcher> {
        let eps = endpoints(config)?;
        let courier = Arc::new(Courier::new(config, eps, store, metrics)?);
        let (tx, rx) = mpsc::sync_channel::<Job>(config.queue_size.max(1));
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..config.workers.max(1))
            .map(|i| {
                let (courier, rx) = (courier.clone(), rx.clone());
                std::thread::Builder::new()
                    .name(format!("mira-webhook-{i}"))
                    .spawn(move || work(&courier, &rx))
                    .context("cannot start a webhook worker")
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Dispatcher {
            courier,
            queue: Mutex::new(Some(tx)),
            workers: Mutex::new(workers),
        })
    }

    /// Queues `event` for every endpoint that wants it; a full queue dead-letters it.
    pub fn enqueue(&self, event: &MemoryEvent) {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        for (i, ep) in self.courier.endpoints().enumerate() {
            if !ep.wants(event.kind) {
                continue;
            }
            let job = Job {
                endpoint: i,
                id: uuid::Uuid::new_v4().to_string(),
                event_type: event.kind.as_str().to_owned(),
                body: event.payload(ep.include_content),
            };
            let refused = match queue.as_ref().map(|q| q.try_send(job.clone())) {
                Some(Ok(())) => None,
                Some(Err(TrySendError::Full(_))) => Some((
                    "the webhook queue was full (raise webhooks.queue_size or webhooks.workers)",
                    DeadLetterReason::QueueFull,
                )),
                Some(Err(TrySendError::Disconnected(_))) | None => {
                    Some(("mira was stopping", DeadLetterReason::Shutdown))
                }
            };
            if let Some((why, reason)) = refused {
                self.courier
                    .dead_letter(&job, &ep.url, 0, why.into(), reason);
            }
        }
    }

    /// Stops taking events, delivers what is queued for at most `grace` (the rest is
    /// dead-lettered) and waits for the workers.
    pub fn shutdown(&self, grace: Duration) {
        self.courier.stop_by(Instant::now() + grace);
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|p| p.into_inner()));
        for w in workers {
            let _ = w.join();
        }
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.shutdown(SHUTDOWN_GRACE);
    }
}

fn work(courier: &Courier, rx: &Mutex<Receiver<Job>>) {
    loop {
        let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
        match next {
            Ok(job) => {
                courier.deliver(&job);
            }
            Err(_) => return,
        }
    }
}
