#!/usr/bin/env bash
# Node contexts through net-snmp's snmpd as AgentX master (issue 52): what
# registering every node's contexts costs snmpd and the agent.
#
#   scripts/bench-agentx-contexts.sh [HOSTS...]    (default: 2000 10000)
#
# For each size: a generated fat tree served by the sim source, a private
# snmpd (master agentx, its own socket and UDP port), and the agent as its
# subagent. Prints snmpd's CPU seconds (utime + stime from /proc) and RSS
# before the subagent connects and once every context is registered, the
# agent's then; the registration requests, contexts and seconds from the
# first to the last answer (the agent's log); and the median of 20 GETs of
# sysName in a node context through snmpd beside 20 in the default context.
#
# Environment: NO_BUILD=1 uses target/release/ibsnmpd as it is; BIN=PATH
# runs that binary instead.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(2000 10000)
TARGET_DIR=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
    [ -n "${NO_BUILD:-}" ] || cargo build --release -q -p ibsnmpd --bin ibsnmpd
    BIN=$(realpath "$TARGET_DIR/release/ibsnmpd")
fi
# shellcheck source=scripts/lib/sim-agent.sh
. scripts/lib/sim-agent.sh
trap stop_agents EXIT
. scripts/lib/machine.sh
machine_line
HZ=$(getconf CLK_TCK)
cpu() { awk -v hz="$HZ" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
rss() { awk '/^VmRSS:/ {printf "%.0f MB", $2 / 1024}' "/proc/$1/status"; }
median_ms() { sort -n | awk '{a[NR] = $1} END {printf "%.1f ms", a[int((NR + 1) / 2)]}'; }
get_ms() { # community: milliseconds of one snmpget through snmpd
    local t0 t1
    t0=$(date +%s%N)
    snmpget -v2c -c "$1" -t 5 -r 0 "127.0.0.1:$MPORT" .1.3.6.1.2.1.1.5.0 >/dev/null
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))e-3
}

for HOSTS in "${SIZES[@]}"; do
    dir="$tmp/$HOSTS"
    mkdir -p "$dir/persist"
    fat_tree "$BIN" "$HOSTS" "$dir/fabric.net"
    SWITCH=$(sed -nE 's/^Switch\t[0-9]+ "((edge|leaf)0*2)".*/\1/p' "$dir/fabric.net" | head -1)
    MPORT=$((20000 + RANDOM % 40000))
    printf 'master agentx\nagentXSocket %s\nagentXTimeout 5\nrocommunity public 127.0.0.1\ncom2sec -Cn %s ctxsec 127.0.0.1 public@%s\ngroup ctxgroup v2c ctxsec\nview everything included .1\naccess ctxgroup "" any noauth prefix everything none none\n' \
        "$dir/master" "$SWITCH" "$SWITCH" >"$dir/snmpd.conf"
    SNMP_PERSISTENT_DIR="$dir/persist" MIBS="" /usr/sbin/snmpd -f -Lf "$dir/snmpd.log" -C -c "$dir/snmpd.conf" \
        "udp:127.0.0.1:$MPORT" &
    spid=$!
    pids+=("$spid")
    for _ in $(seq 1 100); do [ -S "$dir/master" ] && break; sleep 0.1; done
    before="snmpd $(cpu "$spid") s CPU, $(rss "$spid")"
    port=$((20000 + RANDOM % 40000))
    printf '[[rocommunity]]\ncommunity = "public"\n' >"$dir/agent.toml"
    "$BIN" --listen "127.0.0.1:$port" --config "$dir/agent.toml" --source "sim:$dir/fabric.net" \
        --state-dir "$dir/state" --sweep-interval 3600 --agentx "$dir/master" 2>"$dir/agent.log" &
    apid=$!
    pids+=("$apid")
    wait_snmp "$port"
    echo "== $HOSTS hosts (contexts: a GUID and a name a node, 2 subtrees each)"
    echo "before the subagent: $before"
    # Done when the agent logs that every registration was answered.
    for _ in $(seq 1 1200); do
        grep -q 'context registrations answered' "$dir/agent.log" && break
        sleep 0.5
    done
    echo "registered: $(grep 'context registrations answered' "$dir/agent.log" | head -1 | sed -E 's/.*(requests=[0-9]+).*(contexts=[0-9]+).*(seconds=[0-9.]+).*/\1 \2 \3/')"
    echo "after registration: snmpd $(cpu "$spid") s CPU, $(rss "$spid"); agent $(cpu "$apid") s CPU (its first sweep included), $(rss "$apid")"
    node=$(for _ in $(seq 1 20); do get_ms "public@$SWITCH"; done | median_ms)
    def=$(for _ in $(seq 1 20); do get_ms public; done | median_ms)
    echo "snmpget sysName through snmpd (median of 20, process start included): node context $node, default context $def"
    kill "$apid" "$spid" 2>/dev/null || true
    wait "$apid" "$spid" 2>/dev/null || true
done
