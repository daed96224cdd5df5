#!/usr/bin/env bash
# The test command (README.md): every crate's unit and integration tests
# (the daemon's drive the real binary with net-snmp tools), then any shell
# tests in tests/*.test.sh, with tests/alerts-quiet.sh running beside them.
# Every test binary and script runs whatever failed before it; the command
# fails if any did, naming them.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
# The shipped alert rules watched on a healthy fabric for ten minutes
# (tests/alerts-quiet.sh), beside the rest.
# A release build, as operators run it (the package test builds the same
# one): its scrapes, not a debug build's, are what the rules see.
quiet=""
quiet_log=$(mktemp)
if cargo build --release -q -p ibsnmpd --bin ibsnmpd; then
    bash tests/alerts-quiet.sh target/release/ibsnmpd >"$quiet_log" 2>&1 &
    quiet=$!
else
    failed+=("cargo build --release -p ibsnmpd")
fi
cargo test --workspace --no-fail-fast || failed+=("cargo test --workspace")

shopt -s nullglob
for t in tests/*.test.sh; do
    echo "== $t"
    bash "$t" || failed+=("$t")
done

if [ -n "$quiet" ]; then
    echo "== tests/alerts-quiet.sh"
    wait "$quiet" || failed+=("tests/alerts-quiet.sh")
    cat "$quiet_log"
fi
rm -f "$quiet_log"

if [ ${#failed[@]} -gt 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
