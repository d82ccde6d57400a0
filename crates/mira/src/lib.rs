//! mira: long-term memory for LLM agents. This crate wires the use cases together and exposes
//! them through the CLI, the MCP server (stdio or HTTP) and the memory browser (`ui`).

pub mod app;
pub mod bearer;
pub mod bench;
pub mod cli;
pub mod config;
pub mod eval;
pub mod hooks;
pub mod locomo;
pub mod logging;
pub mod mcp;
pub mod ops;
pub mod progress;
pub mod serving;
pub mod ui;
pub mod usecases;
pub mod webhooks;

pub use app::App;
pub use config::Config;
