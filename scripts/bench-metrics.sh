#!/usr/bin/env bash
# /metrics at scale: the agent on the sim source over a generated fat tree
# of HOSTS hosts (default 48000), scraped with curl on loopback.
#
#   scripts/bench-metrics.sh [HOSTS] [FAMILIES]
#
# FAMILIES is metrics_families as TOML (default: the agent's default,
# data + errors + state + health). Prints per scrape, plain and gzipped:
# octets on the wire, samples, wall seconds, the agent's CPU seconds over
# it (user + system, from /proc); and the agent's RSS after the first
# sweep, and its high-water mark (VmHWM) after all the scrapes.
#
# Each agent is scraped three times each way: the first gzip scrape of a
# snapshot renders and compresses it, the next ones send the gzip kept
# for that snapshot (docs/metrics.md). The first plain scrape builds the
# snapshot's port labels; then each agent sweeps again (its control
# socket) and is scraped once with gzip, the first scrape of that
# snapshot ("gzip1", once the agent is idle after the sweep): what a
# Prometheus that scrapes only with gzip, once per sweep, costs the agent.
# That is done ROUNDS times (default 3), the agents in turn, and the
# median printed (with BASELINE, also the ratio of each round).
#
# Environment:
#   BASELINE=BIN   also run BIN (an earlier build) on the same fabric and
#                  scrape the two in turn: before and after, side by side,
#                  under the same load.
#   CALLGRIND=1    run the agents under valgrind's callgrind, instrumented
#                  only while a scrape runs: instructions per scrape, the
#                  figure that does not depend on the machine or its load
#                  (slow: use a smaller fabric, e.g. 4000 hosts).
#   CG_DIR=DIR     with CALLGRIND, keep callgrind's dumps in DIR (for
#                  callgrind_annotate; the newest of an agent is its last
#                  scrape); CG_OPTS: more valgrind options (split at spaces),
#                  e.g. --dump-instr=yes.
#   NO_BUILD=1     use the release binary as it is.
#   ROUNDS=N       sweeps and gzip1 scrapes of each agent (default 3).
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

# The agents: name, pid, metrics port.
names=() mports=()
trap stop_agents EXIT
start() { # name, binary
    local port=$((20000 + RANDOM % 40000))
    local run=()
    [ -z "${CALLGRIND:-}" ] ||
        # shellcheck disable=SC2086 # CG_OPTS: options split at spaces
        run=(valgrind --tool=callgrind --instr-atstart=no ${CG_OPTS:-} "--callgrind-out-file=$tmp/cg.$1.%p")
    "${run[@]}" "$2" --listen "127.0.0.1:$port" --metrics "127.0.0.1:$((port + 1))" \
        --config "$tmp/ibsnmpd.toml" --source "sim:$tmp/fabric.net" --state-dir "$tmp/state.$1" \
        --control-socket "$tmp/ctl.$1" --sweep-interval 3600 2>"$tmp/agent.$1.log" &
    names+=("$1") pids+=($!) mports+=($((port + 1)))
    wait_snmp "$port"
}
[ -z "${BASELINE:-}" ] || start before "$(realpath "$BASELINE")"
start now "$BIN"

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
# The machine, for the figures' record (they differ from one to another).
. scripts/lib/machine.sh
machine_line
echo "hosts=$HOSTS families=${FAMILIES:-default}"
for i in "${!names[@]}"; do
    echo "${names[$i]}: after the first sweep: $(grep VmRSS "/proc/${pids[$i]}/status")"
done
# Instructions of the agent since the last call (callgrind's dump and
# zeroing of its counters); empty without CALLGRIND.
instructions() {
    [ -n "${CALLGRIND:-}" ] || return 0
    callgrind_control -d "$1" >/dev/null 2>&1
    # The newest dump of this agent: its total.
    local f
    f=$(ls -t "$tmp"/cg.*."$1"* | head -1)
    sed -nE 's/^totals: *([0-9]+).*/\1/p' "$f"
}
scrape() { # agent index, label, curl options
    local i=$1 label=$2; shift 2
    local pid=${pids[$i]} c0 c1 t ir=""
    [ -z "${CALLGRIND:-}" ] || { callgrind_control -z "$pid" >/dev/null 2>&1; callgrind_control -i on "$pid" >/dev/null 2>&1; }
    c0=$(cpu "$pid")
    t=$( { /usr/bin/time -f '%e' curl -sS --fail -o "$tmp/body" "$@" "http://127.0.0.1:${mports[$i]}/metrics"; } 2>&1)
    c1=$(cpu "$pid")
    if [ -n "${CALLGRIND:-}" ]; then
        callgrind_control -i off "$pid" >/dev/null 2>&1
        ir=$(instructions "$pid")
    fi
    local octets samples
    octets=$(stat -c %s "$tmp/body")
    if [ "$label" != plain ]; then
        samples=$(gzip -dc "$tmp/body" | grep -vc '^#')
    else
        samples=$(grep -vc '^#' "$tmp/body")
    fi
    awk -v a="${names[$i]}" -v l="$label" -v o="$octets" -v s="$samples" -v t="$t" -v c=$((c1 - c0)) \
        -v hz="$HZ" -v ir="$ir" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
        'BEGIN { printf "%-6s %-5s %12.0f octets %10.0f samples %6.2f s wall %6.2f s agent CPU%s  load %s\n",
                 a, l, o, s, t, c / hz, ir == "" ? "" : sprintf(" %14.0f instructions", ir), load }'
}
for _ in 1 2 3; do
    for i in "${!names[@]}"; do
        scrape "$i" plain
        scrape "$i" gzip -H 'Accept-Encoding: gzip'
    done
done
# Until the agent has used no CPU for a second (what it does after a
# sweep, such as making the port labels, done).
idle() {
    local a b
    a=$(cpu "$1")
    while sleep 1; b=$(cpu "$1"); [ "$a" != "$b" ]; do a=$b; done
}
# ROUNDS (default 3) such sweeps and gzip1 scrapes, the agents in turn each
# round: this machine's speed drifts by tens of percent within minutes, so
# a before/after figure is each round's ratio, and the median of the
# rounds.
ROUNDS=${ROUNDS:-3}
for round in $(seq 1 "$ROUNDS"); do
    for i in "${!names[@]}"; do
        "$BIN" ctl --socket "$tmp/ctl.${names[$i]}" sweep >/dev/null
        idle "${pids[$i]}"
        scrape "$i" gzip1 -H 'Accept-Encoding: gzip' | tee -a "$tmp/gzip1.${names[$i]}"
    done
done
# The CPU seconds of each gzip1 scrape of agent NAME, in order.
gzip1_cpu() { sed -E 's/.* ([0-9.]+) s agent CPU.*/\1/' "$tmp/gzip1.$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for i in "${!names[@]}"; do
    echo "${names[$i]}: gzip1 agent CPU, median of $ROUNDS: $(gzip1_cpu "${names[$i]}" | median) s"
done
if [ "${#names[@]}" -eq 2 ]; then
    echo "gzip1 agent CPU now/before, each round: $(paste <(gzip1_cpu now) <(gzip1_cpu before) |
        awk '{ printf "%.2f ", ($2 > 0 ? $1 / $2 : 0) }')(median $(paste <(gzip1_cpu now) <(gzip1_cpu before) |
        awk '{ print ($2 > 0 ? $1 / $2 : 0) }' | median | xargs printf '%.2f'))"
fi
for i in "${!names[@]}"; do
    echo "${names[$i]}: after the scrapes: $(grep VmRSS "/proc/${pids[$i]}/status"), $(grep VmHWM "/proc/${pids[$i]}/status")"
done
[ -z "${CALLGRIND:-}" ] || [ -z "${CG_DIR:-}" ] || cp "$tmp"/cg.* "$CG_DIR"/
