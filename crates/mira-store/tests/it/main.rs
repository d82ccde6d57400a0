//! The integration tests of this crate, one binary: each module was a test file of its own.
#![allow(
    clippy::unwrap_used,
    reason = "helpers unwrap like the tests (clippy.toml's allowance covers only #[test] functions)"
)]

#[macro_use]
mod backends;
mod conformance;
mod index_behaviour;
mod index_recall_real;
mod old_stores;
mod pg_tls;
mod repo;
