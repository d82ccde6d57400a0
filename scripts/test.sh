#!/usr/bin/env bash
# The test command: formatting, lints, docs, then every test of the workspace (the real model
# included).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
# Every target of every member, the cargo-fuzz targets of fuzz/ included (so they cannot rot
# unseen), with the workspace lints of Cargo.toml as errors.
cargo clippy --workspace --all-targets --locked -- -D warnings
# The API docs build without a warning (broken links, unclosed tags); no dependency docs.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
# The tests, among them the module-graph check (no module cycle inside a crate).
cargo test --workspace --locked
