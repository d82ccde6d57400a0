//! Domain types and pure algorithms of mira. No I/O, no async.
//!
//! Store side: [`classify`], [`fingerprint`], [`entities`], [`causal`], [`tags`], [`tokens`],
//! [`redact`].
//! Recall side: [`expand`], [`lexical`], [`rank`], [`fusion`] (the RRF baseline), [`allocate`],
//! [`render`], [`sanitize`].

pub mod memory;
pub mod text;
pub mod tokens;

pub mod causal;
pub mod classify;
pub mod entities;
pub mod fingerprint;
pub mod redact;
pub mod tags;

pub mod allocate;
pub mod expand;
pub mod fusion;
pub mod lexical;
pub mod rank;
pub mod render;
pub mod retract;
pub mod sanitize;
pub mod slots;

pub use memory::{MemoryId, MemoryType, RelationType};
