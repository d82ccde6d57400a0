//! Webhook dead letters (`webhook_dead_letters`): deliveries that could not be made (retries
//! exhausted, queue full, circuit open, shutdown), kept until they are replayed.
//!
//! `endpoint` is the endpoint's URL as configured: replay looks the endpoint up by it (to use its
//! current secret and timeout). Callers show it redacted, never in logs.

/// One dead letter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The event id (unique per event and endpoint delivery; the primary key).
    pub id: String,
    /// The endpoint's URL.
    pub endpoint: String,
    /// The event name (`memory.stored`, …).
    pub event_type: String,
    /// The JSON body that was (or would have been) posted.
    pub payload: String,
    /// Delivery attempts made so far (0 when it never left the queue).
    pub attempts: u32,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it was dead-lettered (or last failed a replay), unix ms.
    pub failed_at: i64,
}
