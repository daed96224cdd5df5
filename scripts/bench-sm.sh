#!/usr/bin/env bash
# IB-SM-MIB at scale: the agent on the sim source over a generated fat tree
# of HOSTS hosts (default 48000), serving everything it serves.
#
#   scripts/bench-sm.sh [HOSTS]
#
# Prints: the agent's RSS after the first sweep, the time the modules'
# per-snapshot derivation took (the daemon's debug log, "derived the
# modules' rows"), and a full GetBulk walk of ibSmPortInfoTable with the
# Rust client (crates/ibsnmpd/examples/bulkwalk.rs, max-repetitions 50):
# varbinds, wall seconds, and varbinds per agent CPU-second (utime+stime of
# the agent over the walk, from /proc).
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${1:-48000}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
[ -n "${NO_BUILD:-}" ] || cargo build --release -q -p ibsnmpd --bin ibsnmpd --example bulkwalk
BIN=$(realpath "$TARGET_DIR/release/ibsnmpd")
WALK=$(realpath "$TARGET_DIR/release/examples/bulkwalk")
# shellcheck source=scripts/lib/sim-agent.sh
. scripts/lib/sim-agent.sh
fat_tree "$BIN" "$HOSTS" "$tmp/fabric.net"
PORT=$((20000 + RANDOM % 40000))
"$BIN" --listen "127.0.0.1:$PORT" --source "sim:$tmp/fabric.net" --state-dir "$tmp/state" \
    --log-level debug --sweep-interval 3600 --max-repetitions 1000 2>"$tmp/agent.log" &
pid=$!
wait_snmp "$PORT"
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "hosts=$HOSTS"
grep VmRSS "/proc/$pid/status"
grep -o 'derive_ms=[0-9.]*' "$tmp/agent.log" | head -1
grep -o 'sweep nodes=[0-9]* ports=[0-9]* ms=[0-9]*' "$tmp/agent.log" | head -1 || true
HZ=$(getconf CLK_TCK)
c0=$(cpu)
out=$("$WALK" "127.0.0.1:$PORT" public .1.3.6.1.3.117.7.1.3.1 50 1)
c1=$(cpu)
echo "ibSmPortInfoTable: $out"
vb=$(echo "$out" | grep -o 'varbinds=[0-9]*' | cut -d= -f2)
awk -v vb="$vb" -v c=$((c1 - c0)) -v hz="$HZ" \
    'BEGIN { s = c / hz; printf "agent CPU %.2f s, %.0f varbinds per agent CPU-second\n", s, (s > 0 ? vb / s : 0) }'
grep VmRSS "/proc/$pid/status"
