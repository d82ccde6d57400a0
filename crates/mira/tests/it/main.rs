//! The integration tests of `mira`, one binary: each module was a test file of its own.
#![allow(
    clippy::unwrap_used,
    reason = "helpers unwrap like the tests (clippy.toml's allowance covers only #[test] functions)"
)]

#[macro_use]
mod common;

mod agent_supersede;
mod bad_input;
mod batch_ingest;
mod bench;
mod cli;
#[cfg(unix)]
mod client_snippets;
mod concurrency;
mod context_block;
#[cfg(unix)]
mod crash_harness;
mod eval_locomo;
mod first_day;
mod first_hour;
mod hooks;
mod hooks_install;
mod lifecycle_archive;
mod lifecycle_causal;
mod lifecycle_clear;
mod lifecycle_cli;
mod lifecycle_timeline;
mod mcp_common;
mod mcp_http;
mod mcp_stdio;
mod module_graph;
mod newer_first;
mod ops_http;
mod output_schema;
mod pg_connect;
#[cfg(target_os = "linux")]
mod privacy;
mod recall_usecase;
mod redaction;
mod scoped_tokens;
mod setup_script;
mod soul_mcp;
mod soul_status;
mod store_usecase;
mod supersession;
mod transfer;
mod two_http_servers;
mod types_classifier;
mod ui_api;
mod ui_browser;
mod ui_supersede;
mod webhooks;
