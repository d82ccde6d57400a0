//! The integration tests of `mira-soul`, one binary: the SOUL operations end to end on an
//! in-memory database.

mod coherence;
mod service;
