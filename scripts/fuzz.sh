#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a bounded time (not in CI).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default: 30 s, every target)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`); works on stable through RUSTC_BOOTSTRAP=1.
# Targets are plain safe Rust, so no sanitizer is used (panics, overflows and debug assertions
# are what they catch). The corpus (fuzz/corpus/<target>) is committed and kept small: after
# each run it is minimised with `cargo fuzz cmin` and capped at $MAX_CORPUS inputs (default 60).
# Crashes land in fuzz/artifacts/<target>; the script fails when a target crashed.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-30}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi
export RUSTC_BOOTSTRAP=1
# Line numbers in crash backtraces (the fuzz crate is a workspace member: its own profile
# section would be ignored).
export CARGO_PROFILE_RELEASE_DEBUG=1
opts=(--sanitizer none)
cargo fuzz build "${opts[@]}"
failed=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    log="$(mktemp)"
    if cargo fuzz run "${opts[@]}" "$t" "corpus/$t" -- -max_total_time="$secs" -max_len=4096 \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
        status=ok
    else
        status=CRASHED
        failed+=("$t")
        grep -E "panicked|SUMMARY|Test unit written" "$log" || tail -20 "$log"
    fi
    execs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
    echo "$t: $status, ${execs:-?} executions in ${secs} s"
    rm -f "$log"
    cargo fuzz cmin "${opts[@]}" "$t" "corpus/$t" >/dev/null 2>&1 || true
    find "corpus/$t" -type f | sort | tail -n +"$((${MAX_CORPUS:-60} + 1))" | xargs -r rm -f
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "crashed: ${failed[*]}" >&2
    exit 1
fi
