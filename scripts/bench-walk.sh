#!/usr/bin/env bash
# Bulk-walk throughput: ibsnmpd against net-snmp's snmpd, same clients.
#
#   scripts/bench-walk.sh [HOSTS] [PASSES]
#
# Starts ibsnmpd (sim source on a generated fat tree of HOSTS hosts, default
# 2000, so the per-node tables have thousands of rows) and snmpd (its own
# config in a temp dir, -f -Lo -C -c CONF) on random loopback ports, then
# for each agent measures varbinds per second of:
#   1. the whole tree, with net-snmp's `snmpbulkwalk -Cr50` (output to a file);
#   2. the whole tree, with a minimal Rust GetBulk client
#      (crates/ibsnmpd/examples/bulkwalk.rs, max-repetitions 50) because
#      snmpbulkwalk's own parsing and printing can be the bottleneck;
#   3. the largest table of each agent with the Rust client: on ibsnmpd the
#      subtree given by $OUR_TABLE (default: the biggest subtree found in the
#      walk by its first 8 arcs, i.e. a table), on snmpd hrSWInstalledTable (one row per
#      installed Debian package: the biggest table snmpd serves on a stock
#      host; override with $SNMPD_TABLE).
# Prints the figures and the ratio ibsnmpd/snmpd; stops both agents at the end.
set -euo pipefail

cd "$(dirname "$0")/.."
HOSTS=${1:-2000}
PASSES=${2:-3}
TARGET_DIR=${CARGO_TARGET_DIR:-target}

for t in snmpbulkwalk snmpget; do
    command -v "$t" >/dev/null || { echo "$t missing: apt-get install snmp" >&2; exit 1; }
done
SNMPD=$(command -v snmpd || echo /usr/sbin/snmpd)
[ -x "$SNMPD" ] || { echo "snmpd missing: apt-get install snmpd" >&2; exit 1; }

echo "== building (release)"
cargo build --release -q -p ibsnmpd --bin ibsnmpd --example bulkwalk
BIN=$TARGET_DIR/release/ibsnmpd
WALK=$TARGET_DIR/release/examples/bulkwalk

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

port() { echo $((20000 + RANDOM % 40000)); }
P1=$(port)
P2=$(port)
while [ "$P2" = "$P1" ]; do P2=$(port); done

echo "== fabric: fat tree with $HOSTS hosts"
LEVELS=2
[ "$HOSTS" -le 648 ] || LEVELS=3   # radix 36: 2 levels hold at most 648 hosts
"$BIN" topology fat-tree --hosts "$HOSTS" --levels "$LEVELS" -o "$tmp/fabric.net"

"$BIN" --listen "127.0.0.1:$P1" --source "sim:$tmp/fabric.net" --state-dir "$tmp/state" \
    --log-level warn --max-repetitions 1000 2>"$tmp/ibsnmpd.log" &
pids+=($!)

cat >"$tmp/snmpd.conf" <<CONF
agentaddress udp:127.0.0.1:$P2
rocommunity public 127.0.0.1
sysLocation bench
sysContact bench
CONF
SNMP_PERSISTENT_DIR="$tmp/snmpd-persist" "$SNMPD" -f -Lo -C -c "$tmp/snmpd.conf" \
    -p "$tmp/snmpd.pid" >"$tmp/snmpd.log" 2>&1 &
pids+=($!)

wait_up() {
    for _ in $(seq 1 200); do
        if snmpget -v2c -c public -t 0.3 -r 0 "127.0.0.1:$1" .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    echo "agent on port $1 did not answer; logs:" >&2
    cat "$tmp"/*.log >&2
    return 1
}
wait_up "$P1"
wait_up "$P2"

now() { date +%s.%N; }

# netsnmp_walk PORT ROOT -> "varbinds seconds"
netsnmp_walk() {
    local t0 t1 n
    t0=$(now)
    snmpbulkwalk -v2c -c public -Cr50 -On -t 5 -r 1 "127.0.0.1:$1" "$2" >"$tmp/walk.$1.txt"
    t1=$(now)
    n=$(grep -c '^\.' "$tmp/walk.$1.txt" || true)
    echo "$n $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
}

# rust_walk PORT ROOT -> "varbinds seconds" of the fastest pass
rust_walk() {
    "$WALK" "127.0.0.1:$1" public "$2" 50 "$PASSES" |
        sed -E 's/varbinds=([0-9]+) seconds=([0-9.]+).*/\1 \2/' | sort -k2 -g | head -1
}

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }

row() { # label ours(n s) theirs(n s)
    local on os tn ts orate trate
    read -r on os <<<"$2"
    read -r tn ts <<<"$3"
    orate=$(rate "$on" "$os")
    trate=$(rate "$tn" "$ts")
    printf '%-34s %9s vb %9s vb/s | %9s vb %9s vb/s | x%.1f\n' \
        "$1" "$on" "$orate" "$tn" "$trate" "$(awk -v a="$orate" -v b="$trate" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
}

echo "== walking (best of $PASSES passes for the Rust client)"
o1=$(netsnmp_walk "$P1" .1)
t1=$(netsnmp_walk "$P2" .1)
if [ -z "${OUR_TABLE:-}" ]; then
    OUR_TABLE=$(sed -E 's/ = .*//' "$tmp/walk.$P1.txt" | cut -d. -f1-9 | sort | uniq -c |
        sort -rn | head -1 | awk '{print $2}')
fi
SNMPD_TABLE=${SNMPD_TABLE:-.1.3.6.1.2.1.25.6.3}
o2=$(rust_walk "$P1" .1)
t2=$(rust_walk "$P2" .1)
o3=$(rust_walk "$P1" "$OUR_TABLE")
t3=$(rust_walk "$P2" "$SNMPD_TABLE")

echo
printf '%-34s %26s | %26s | %s\n' "" "ibsnmpd" "net-snmp snmpd" "ratio"
row "whole tree, snmpbulkwalk -Cr50" "$o1" "$t1"
row "whole tree, Rust client r=50" "$o2" "$t2"
row "largest table, Rust client r=50" "$o3" "$t3"
echo "  ibsnmpd table $OUR_TABLE; snmpd table $SNMPD_TABLE"
