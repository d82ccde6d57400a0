//! Domain types and pure algorithms of mira. No I/O, no async.
//!
//! Store side: [`classify`] (rules) and [`type_model`] (learned, over the embedding),
//! [`fingerprint`], [`entities`], [`causal`], [`tags`], [`tokens`],
//! [`redact`].
//! Recall side: [`expand`], [`lexical`], [`rank`], [`fusion`] (the RRF baseline), [`allocate`],
//! [`render`], [`sanitize`], [`sameness`] (two memories about the same thing).
//! Errors: [`message`] (what the caller reads, each surface naming tools and arguments its way).

pub mod memory;
pub mod message;
pub mod text;
pub mod tokens;

pub mod causal;
pub mod classify;
pub mod entities;
pub mod fingerprint;
pub mod redact;
pub mod tags;
pub mod type_model;

pub mod allocate;
pub mod expand;
pub mod fusion;
pub mod lexical;
pub mod rank;
pub mod render;
pub mod retract;
pub mod sameness;
pub mod sanitize;
pub mod slots;

pub use memory::{MemoryId, MemoryType, RelationType};

/// Builds now what storing a memory otherwise builds on first use: the extraction regexes
/// (type, entities, fingerprint, tags, causal cues, slots, secrets, retractions) and the token
/// counter's table, ~0.3 s of CPU once per process. mira runs it on a background thread when it
/// opens, beside loading the model, so that the first stores do not pay for it.
pub fn warm_up() {
    const SAMPLE: &str = "Jean: We decided to use Redis rather than Memcached because of speed; I \
                          moved to Paris. Owner: Jean, by 2024-04-15; approved by Marie. Update: \
                          the limit is now 500, forget what I said about the API key sk-test.";
    let memory_type = classify::classify(SAMPLE);
    let fingerprint = fingerprint::extract(SAMPLE, memory_type, 2);
    tags::extract_tags(SAMPLE, &fingerprint);
    causal::detect_cues(SAMPLE);
    slots::slots(SAMPLE);
    redact::redact(SAMPLE);
    retract::retraction_terms(SAMPLE);
    tokens::warm_up();
}

#[cfg(test)]
mod tests {
    #[test]
    fn warm_up_leaves_extraction_as_it_was() {
        let text = "We decided to use PostgreSQL because MySQL kept failing.";
        let before = crate::fingerprint::extract(text, crate::MemoryType::Decision, 2);
        super::warm_up();
        let after = crate::fingerprint::extract(text, crate::MemoryType::Decision, 2);
        assert_eq!(after, before);
        assert_eq!(after.decision.as_deref(), Some("PostgreSQL"));
        assert!(!crate::slots::slots("I moved to Paris.").is_empty());
    }
}
