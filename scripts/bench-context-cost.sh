#!/usr/bin/env bash
# Agent CPU per request by kind of request (issue 53 item 1): what a node
# context costs beside the default context, and what a refused request
# costs beside a wrong community, in one run.
#
#   scripts/bench-context-cost.sh [HOSTS] [REQUESTS] [RATE]
#
# Two agents on the sim source over a generated fat tree of HOSTS hosts
# (default 4000): "all" (node_contexts = "all": the community reaches
# every node context) and "none" (node_contexts = "none": the community
# reaches the default context only, so a request naming a node context is
# refused by VACM). Each kind of request is sent REQUESTS times (default
# 40000) at RATE a second (default 8000, open loop:
# crates/ibsnmpd/examples/getload.rs), one varbind each
# (ifHCInOctets.1), and measured as the agent's CPU (utime + stime from
# /proc) over them, in microseconds per request:
#
#   default GET        "all", community public (the default context)
#   node GET, one      "all", public@edge0002 (one switch: its rows cached)
#   node GET, random   "all", public@SWITCH, every switch of the fabric in
#                      a shuffled order (the rows of most not cached)
#   refused node GET   "none", public@SWITCH as above (no answer)
#   wrong community    "none", community "wrong" (no answer)
#   default GET        "none", community public
#
# and the ratios the issue asks for: node GET / default GET (at most 2),
# refused / wrong community (at most 2). getload's latency percentiles
# are printed beside (their own client's view, not the point here).
#
# Environment: NO_BUILD=1 uses target/release as it is; BIN=PATH runs that
# agent binary instead (e.g. an earlier build, to compare), with
# target/release/examples/getload as the client.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${1:-4000}
REQUESTS=${2:-40000}
RATE=${3:-8000}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
# shellcheck source=scripts/lib/sim-agent.sh
. scripts/lib/sim-agent.sh
if [ -n "${BIN:-}" ] || [ -n "${NO_BUILD:-}" ]; then
    BIN=$(realpath "${BIN:-$TARGET_DIR/release/ibsnmpd}")
    LOAD=$(realpath "$TARGET_DIR/release/examples/getload")
else
    build_with_getload
fi
fat_tree "$BIN" "$HOSTS" "$tmp/fabric.net"
# Every switch's name context, shuffled; the second leaf (the sim's local
# node may be the first one) for the cached case.
sed -nE 's/^Switch\t[0-9]+ "([^"]*)".*/public@\1/p' "$tmp/fabric.net" | shuf >"$tmp/switches"
ONE=$(sed -nE 's/^Switch\t[0-9]+ "((edge|leaf)0*2)".*/public@\1/p' "$tmp/fabric.net" | head -1)

ports=()
trap stop_agents EXIT
start() { # name, node_contexts
    local port=$((20000 + RANDOM % 40000))
    printf 'node_contexts = "%s"\n[[rocommunity]]\ncommunity = "public"\n' "$2" >"$tmp/$1.toml"
    "$BIN" --listen "127.0.0.1:$port" --config "$tmp/$1.toml" --source "sim:$tmp/fabric.net" \
        --state-dir "$tmp/state.$1" --sweep-interval 3600 2>"$tmp/agent.$1.log" &
    pids+=($!) ports+=("$port")
    wait_snmp "$port"
}
start all all
start none none
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
. scripts/lib/machine.sh
machine_line
echo "agent: $BIN"
echo "hosts=$HOSTS switches=$(wc -l <"$tmp/switches") requests=$REQUESTS rate=$RATE/s"
OID=1.3.6.1.2.1.31.1.1.1.6.1

# load AGENT COMMUNITY [FILE] COUNT: getload's line.
load() {
    local secs
    secs=$(awk -v n="$4" -v r="$RATE" 'BEGIN { printf "%.3f", n / r }')
    if [ -n "$3" ]; then
        GETLOAD_COMMUNITIES=$3 "$LOAD" "127.0.0.1:${ports[$1]}" "$2" "$RATE" "$secs" "$OID"
    else
        "$LOAD" "127.0.0.1:${ports[$1]}" "$2" "$RATE" "$secs" "$OID"
    fi
}
# Warm-up: each agent's names index (built once per snapshot) and a pass
# over every switch.
load 0 public "$tmp/switches" "$(wc -l <"$tmp/switches")" >/dev/null
load 1 public "$tmp/switches" "$(wc -l <"$tmp/switches")" >/dev/null

declare -A per
# measure KEY LABEL AGENT COMMUNITY [FILE]
measure() {
    local before after line us
    before=$(cpu "${pids[$3]}")
    line=$(load "$3" "$4" "${5:-}" "$REQUESTS")
    after=$(cpu "${pids[$3]}")
    us=$(awk -v t="$((after - before))" -v n="$REQUESTS" -v hz="$HZ" 'BEGIN { printf "%.1f", t / hz / n * 1e6 }')
    per[$1]=$us
    printf '%-20s %7s us CPU/request  (%s)\n' "$2" "$us" "$line"
}
measure default "default GET" 0 public
measure one "node GET, one" 0 "$ONE"
measure random "node GET, random" 0 public "$tmp/switches"
measure refused "refused node GET" 1 public "$tmp/switches"
measure wrong "wrong community" 1 wrong
measure default_none "default GET (none)" 1 public
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
echo "node GET (random) / default GET: $(ratio "${per[random]}" "${per[default]}") (goal: at most 2)"
echo "refused / wrong community: $(ratio "${per[refused]}" "${per[wrong]}") (goal: at most 2)"
