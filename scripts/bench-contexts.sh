#!/usr/bin/env bash
# Node contexts at scale (issue 39): the agent on the sim source over a
# generated fat tree of HOSTS hosts (default 48000).
#
#   scripts/bench-contexts.sh [HOSTS] [PASSES]
#
# Two agents on the same fabric: one with node contexts (the default,
# node_contexts = "all"), one without (node_contexts = "off"). Prints:
#   - each agent's RSS after its first sweep (VmRSS), and the first one's
#     again after the node-context walks (the names index built: VmRSS and
#     VmHWM);
#   - in the same run, on the agent with contexts, the CPU seconds (utime +
#     stime from /proc) and the varbinds of PASSES snmpbulkwalks
#     (-Cr50) of one leaf switch's ifXTable in its node context
#     (`public@edge0002`; `leaf0002` on two levels), and of the default
#     context's ifXTable (the local node's ports), each as CPU
#     microseconds per varbind (PASSES, default 200: a walk takes less
#     than a clock tick). The first
#     node-context walk also pays the names index (once per snapshot);
#     it is shown apart.
#
# Environment: NO_BUILD=1 uses target/release/ibsnmpd as it is; BIN=PATH
# runs that binary instead (e.g. a debug build, for a quick check at a
# small HOSTS).
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${1:-48000}
PASSES=${2:-200}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
    [ -n "${NO_BUILD:-}" ] || cargo build --release -q -p ibsnmpd --bin ibsnmpd
    BIN=$(realpath "$TARGET_DIR/release/ibsnmpd")
fi
# shellcheck source=scripts/lib/sim-agent.sh
. scripts/lib/sim-agent.sh
fat_tree "$BIN" "$HOSTS" "$tmp/fabric.net"
# The second leaf switch (edge0002 on three levels, leaf0002 on two): the
# sim's local node may be the first one, whose rows the default context
# shows.
SWITCH=$(sed -nE 's/^Switch\t[0-9]+ "((edge|leaf)0*2)".*/\1/p' "$tmp/fabric.net" | head -1)

ports=()
trap stop_agents EXIT
start() { # name, node_contexts
    local port=$((20000 + RANDOM % 40000))
    # Top-level keys first: TOML puts a key after a table header in it.
    printf 'node_contexts = "%s"\n[[rocommunity]]\ncommunity = "public"\n' "$2" >"$tmp/$1.toml"
    "$BIN" --listen "127.0.0.1:$port" --config "$tmp/$1.toml" --source "sim:$tmp/fabric.net" \
        --state-dir "$tmp/state.$1" --sweep-interval 3600 2>"$tmp/agent.$1.log" &
    pids+=($!) ports+=("$port")
    wait_snmp "$port"
}
start on all
start off off
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
mem() { grep -E "^$2:" "/proc/$1/status" | awk '{print $2 " kB"}'; }
HZ=$(getconf CLK_TCK)
. scripts/lib/machine.sh
machine_line
echo "hosts=$HOSTS passes=$PASSES"
echo "RSS after the first sweep: contexts on $(mem "${pids[0]}" VmRSS), off $(mem "${pids[1]}" VmRSS)"

# walk COMMUNITY: "VARBINDS TICKS" of one bulk walk of ifXTable (the
# agent's CPU clock ticks over it).
IF_X_TABLE=.1.3.6.1.2.1.31.1.1
walk() {
    local before after n
    before=$(cpu "${pids[0]}")
    n=$(snmpbulkwalk -v2c -c "$1" -Cr50 -On -t 20 -r 0 "127.0.0.1:${ports[0]}" "$IF_X_TABLE" | wc -l)
    after=$(cpu "${pids[0]}")
    echo "$n $((after - before))"
}
per_varbind() { # ticks varbinds
    awk -v t="$1" -v n="$2" -v hz="$HZ" 'BEGIN { if (n > 0) printf "%.2f", t / hz / n * 1e6; else print "-" }'
}
read -r n ticks < <(walk "public@$SWITCH")
echo "first node-context walk (names index built): $n varbinds, $(per_varbind "$ticks" "$n") us CPU/varbind"
for what in "public@$SWITCH" public; do
    total_t=0 total_n=0
    for _ in $(seq 1 "$PASSES"); do
        read -r n ticks < <(walk "$what")
        total_t=$((total_t + ticks)) total_n=$((total_n + n))
    done
    echo "ifXTable with community $what: $((total_n / PASSES)) varbinds a walk, $(per_varbind "$total_t" "$total_n") us CPU/varbind over $PASSES walks"
done
echo "after the walks: contexts on $(mem "${pids[0]}" VmRSS) (high-water $(mem "${pids[0]}" VmHWM)), off $(mem "${pids[1]}" VmRSS)"
