//! SOUL, the identity extension of mira (opt-in): MIRA answers "what does the agent know?",
//! SOUL answers "who is the agent?".
//!
//! - [`model`]: the identity (traits, voice, communication, values, behaviour, emotional
//!   tone), one versioned snapshot per change, per agent, with the model it ran on.
//! - [`extract`]: rule-based capture from conversation text, a confidence per trait.
//! - [`merge`]: evolution (observations merged into the current identity) and diffs.
//! - [`statements`]: what an identity says, in prompt order (traits with their confidence,
//!   then observations, then defaults), without inference from absence on too little text;
//!   [`coherence`]: which statements contradict each other.
//! - [`prompt`]: the identity prompt within a token budget, the status summary and the
//!   model-swap reinforcement prompt.
//! - [`drift`]: how far two identities are apart (traits gained or lost, leanings reversed),
//!   per dimension, against a threshold.
//! - [`patch`]: explicit edits and natural-language directives.
//! - [`storage`]: SOUL's own tables in mira's database, SQLite or PostgreSQL, behind one
//!   interface ([`storage::SoulStore`]; see there for the design).
//! - [`service`]: the eight operations; [`render`]: their text answers.
//!
//! Everything but [`storage`] and [`service`] is pure. Time is passed in (unix ms).

pub mod coherence;
pub mod drift;
pub mod extract;
pub mod merge;
pub mod model;
pub mod patch;
pub mod prompt;
pub mod render;
pub mod service;
pub mod statements;
pub mod storage;
pub mod text;

pub use model::{Dimension, Identity, Trait};
pub use patch::Patch;

/// What SOUL needs from the configuration (`soul:` in mira's config file).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Observed traits below this confidence are not stored.
    pub min_trait_confidence: f64,
    /// Captures before a trait counts as well established (recall ranks those higher among the
    /// traits).
    pub min_observations_for_trait: u32,
    /// Default token budget of the identity prompt (and of the reinforcement prompt).
    pub recall_budget: usize,
    /// Drift above this is significant.
    pub drift_threshold: f64,
    /// Versions (or observations per model) a drift check looks at by default.
    pub drift_window: usize,
    /// Compare each capture with the previous version and report significant drift.
    pub auto_check_after_capture: bool,
    /// Store a reinforced version at each model swap.
    pub auto_reinforce: bool,
    /// Keep a history of versions (off: only the latest version is kept).
    pub evolution_enabled: bool,
    /// Versions kept per agent.
    pub max_history_versions: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_trait_confidence: 0.3,
            min_observations_for_trait: 5,
            recall_budget: 1000,
            drift_threshold: 0.3,
            drift_window: 10,
            auto_check_after_capture: true,
            auto_reinforce: true,
            evolution_enabled: true,
            max_history_versions: 100,
        }
    }
}

/// An error of a SOUL operation, split by who must act.
#[derive(Debug, thiserror::Error)]
pub enum SoulError {
    /// The request is invalid; the message says how to fix it.
    #[error("{0}")]
    Invalid(mira_core::message::Message),
    /// The agent (or model) has no data; the message says how to get some.
    #[error("{0}")]
    NotFound(mira_core::message::Message),
    /// The SQLite database failed.
    #[error("SOUL storage")]
    Sqlite(#[from] rusqlite::Error),
    /// The PostgreSQL database failed.
    #[error("SOUL storage")]
    Postgres(#[from] postgres::Error),
    /// The stored data cannot be used: what is wrong, and the error behind it when there is one.
    #[error("SOUL storage: {what}")]
    Storage {
        /// What is wrong, and what to do about it when the user can.
        what: String,
        /// The JSON error that made a stored record unreadable (or unwritable).
        #[source]
        source: Option<serde_json::Error>,
    },
}

impl SoulError {
    /// Stored data that cannot be used, for the reason `what`.
    pub(crate) fn storage(what: impl Into<String>) -> Self {
        SoulError::Storage {
            what: what.into(),
            source: None,
        }
    }

    /// A record that cannot be read or written as JSON (`what` names it).
    pub(crate) fn json(what: &str) -> impl FnOnce(serde_json::Error) -> Self + '_ {
        move |e| SoulError::Storage {
            what: what.to_owned(),
            source: Some(e),
        }
    }
}
