#!/usr/bin/env bash
# A long crash run: `mira serve` is SIGKILLed at seeded random moments while it stores, then a
# new process checks that every acknowledged memory survived (crates/mira/tests/it/crash_harness.rs).
#
#   scripts/crash-test.sh [KILLS] [SEED]     (defaults: 200 kills, a seed from the clock)
#
# Prints the kills survived and the acknowledged memories lost (must be 0).
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRA_CRASH_KILLS="${1:-200}"
export MIRA_CRASH_SEED="${2:-$(date +%s)}"
echo "crash test: ${MIRA_CRASH_KILLS} kills, seed ${MIRA_CRASH_SEED}"
cargo test -p mira --release --test it crash_harness -- --nocapture
