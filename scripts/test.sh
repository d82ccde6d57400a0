#!/usr/bin/env bash
# The test command: formatting, lints, then every test of the workspace (the real model included).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
