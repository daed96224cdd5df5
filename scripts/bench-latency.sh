#!/usr/bin/env bash
# GET latency under load while the agent sweeps a large fabric (issue 28.5).
#
#   scripts/bench-latency.sh [HOSTS] [RATE] [SECONDS]
#
# ibsnmpd (release) serves the sim source on a generated 3-level fat tree of
# HOSTS hosts (default 48000: ~289k ports) and sweeps it back to back
# (--sweep-interval 0.1; a sweep of that fabric takes longer than that, so
# one is always running and publishing). crates/ibsnmpd/examples/getload.rs
# sends open-loop SNMPv2c GETs at RATE per second (default 10000) for
# SECONDS (default 20), spread over IF-MIB, IB-PM-MIB and IB-SM-MIB cells,
# and reports latency percentiles from each request's own send time. The
# same load against the same agent with sweeps 1 hour apart (no sweep
# during the run) gives the baseline, in the same run. A benchmark, not a
# test: it prints figures and never fails on them.
set -euo pipefail

cd "$(dirname "$0")/.."
HOSTS=${1:-48000}
RATE=${2:-10000}
SECS=${3:-20}

# shellcheck source=scripts/lib/sim-agent.sh
. scripts/lib/sim-agent.sh
build_with_getload

echo "== topology: $HOSTS hosts"
"$BIN" topology fat-tree --hosts "$HOSTS" --radix 254 --levels 3 -o "$tmp/fabric.net"

port=$((20000 + RANDOM % 20000))
# Cells spread over the modules (the sim's first node and port).
OIDS=(
    1.3.6.1.2.1.1.3.0
    1.3.6.1.2.1.2.2.1.10.1
    1.3.6.1.2.1.31.1.1.1.6.1
    1.3.6.1.3.117.1.4.1.17.0.0.0.0.0.16.0.0
    1.3.6.1.3.117.7.1.2.1.1.3.254.128.0.0.0.0.0.0.0.0.0.0.0.16.0.0
)

run() { # SWEEP_INTERVAL LABEL
    "$BIN" --source "sim:$tmp/fabric.net" --listen "127.0.0.1:$port" \
        --state-dir "$tmp/state" --sweep-interval "$1" --log-level warn 2>"$tmp/agent.log" &
    pid=$!
    for _ in $(seq 600); do
        snmpget -v2c -c public -t 0.5 -r 0 "127.0.0.1:$port" 1.3.6.1.2.1.1.3.0 >/dev/null 2>&1 && break
        sleep 0.5
    done
    # Let the back-to-back sweeps start.
    sleep 3
    local t0 c0 c1
    c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
    t0=$(date +%s.%N)
    printf '%-34s ' "$2:"
    "$LOAD" "127.0.0.1:$port" public "$RATE" "$SECS" "${OIDS[@]}"
    c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
    echo "    agent CPU $(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l | cut -c1-5) s over $(echo "$(date +%s.%N) - $t0" | bc -l | cut -c1-5) s; RSS $(awk '/VmRSS/ {print $2/1024 " MB"}' "/proc/$pid/status")"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

run 3600 "no sweep during the run"
run 0.1 "sweeping back to back"
