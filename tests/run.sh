#!/usr/bin/env bash
# The test command (README.md): every crate's unit and integration tests
# (the daemon's drive the real binary with net-snmp tools), then any shell
# tests in tests/*.test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --no-fail-fast

shopt -s nullglob
for t in tests/*.test.sh; do
    echo "== $t"
    bash "$t"
done
