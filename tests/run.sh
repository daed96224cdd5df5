#!/usr/bin/env bash
# The test command (README.md): every crate's unit and integration tests
# (the daemon's drive the real binary with net-snmp tools), then any shell
# tests in tests/*.test.sh. Every test binary and script runs whatever
# failed before it; the command fails if any did, naming them.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
cargo test --workspace --no-fail-fast || failed+=("cargo test --workspace")

shopt -s nullglob
for t in tests/*.test.sh; do
    echo "== $t"
    bash "$t" || failed+=("$t")
done

if [ ${#failed[@]} -gt 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
