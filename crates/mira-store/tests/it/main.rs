//! The integration tests of this crate, one binary: each module was a test file of its own.

mod backends;
mod conformance;
mod index_behaviour;
mod index_recall_real;
mod pg_server;
mod repo;
