#!/usr/bin/env bash
# /metrics at scale: the agent on the sim source over a generated fat tree
# of HOSTS hosts (default 48000), scraped with curl on loopback.
#
#   scripts/bench-metrics.sh [HOSTS] [FAMILIES]
#
# FAMILIES is metrics_families as TOML (default: the agent's default,
# data + errors + state + health). Prints per scrape, plain and gzipped:
# octets on the wire, samples, wall seconds, the agent's CPU seconds over
# it; and the agent's RSS after the first sweep, and its high-water mark
# (VmHWM) after all the scrapes.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${1:-48000}
FAMILIES=${2:-}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
[ -n "${NO_BUILD:-}" ] || cargo build --release -q -p ibsnmpd --bin ibsnmpd
BIN=$(realpath "$TARGET_DIR/release/ibsnmpd")
# shellcheck source=scripts/lib/sim-agent.sh
. scripts/lib/sim-agent.sh
fat_tree "$BIN" "$HOSTS" "$tmp/fabric.net"
: >"$tmp/ibsnmpd.toml"
[ -z "$FAMILIES" ] || echo "metrics_families = $FAMILIES" >"$tmp/ibsnmpd.toml"
PORT=$((20000 + RANDOM % 40000))
MPORT=$((PORT + 1))
"$BIN" --listen "127.0.0.1:$PORT" --metrics "127.0.0.1:$MPORT" --config "$tmp/ibsnmpd.toml" \
    --source "sim:$tmp/fabric.net" --state-dir "$tmp/state" --sweep-interval 3600 2>"$tmp/agent.log" &
pid=$!
wait_snmp "$PORT"
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
HZ=$(getconf CLK_TCK)
# The machine, for the figures' record (they differ from one to another).
echo "machine: $(nproc) CPUs, $(lscpu | sed -nE 's/^Model name: *//p' | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "hosts=$HOSTS families=${FAMILIES:-default}"
echo "after the first sweep: $(grep VmRSS "/proc/$pid/status")"
scrape() { # label, curl options
    local label=$1; shift
    local c0 c1 t
    c0=$(cpu)
    t=$( { /usr/bin/time -f '%e' curl -sS --fail -o "$tmp/body" "$@" "http://127.0.0.1:$MPORT/metrics"; } 2>&1)
    c1=$(cpu)
    local octets samples
    octets=$(stat -c %s "$tmp/body")
    if [ "$label" = gzip ]; then
        samples=$(gzip -dc "$tmp/body" | grep -vc '^#')
    else
        samples=$(grep -vc '^#' "$tmp/body")
    fi
    awk -v l="$label" -v o="$octets" -v s="$samples" -v t="$t" -v c=$((c1 - c0)) -v hz="$HZ" \
        'BEGIN { printf "%-6s %12.0f octets %10.0f samples %6.2f s wall %6.2f s agent CPU\n", l, o, s, t, c / hz }'
}
for _ in 1 2; do
    scrape plain
    scrape gzip -H 'Accept-Encoding: gzip'
done
echo "after the scrapes: $(grep VmRSS "/proc/$pid/status"), $(grep VmHWM "/proc/$pid/status")"
