#!/usr/bin/env bash
# Agent CPU per varbind: an SNMPv3 authPriv (SHA-256 + AES-128) bulk walk
# against the same walk over v2c, with net-snmp's snmpbulkwalk.
#
#   scripts/bench-v3.sh [HOSTS] [PASSES]
#
# ibsnmpd (release) serves the sim source on a generated fat tree of HOSTS
# hosts (default 600). PASSES (default 10) walks of the whole tree with
# `snmpbulkwalk -Cr50`; the agent's CPU time (utime+stime from
# /proc/PID/stat) is read before and after all of them. Prints CPU
# microseconds per varbind for v2c and for authPriv, and their ratio.
set -euo pipefail

cd "$(dirname "$0")/.."
HOSTS=${1:-600}
PASSES=${2:-10}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
command -v snmpbulkwalk >/dev/null || { echo "snmpbulkwalk missing: apt-get install snmp" >&2; exit 1; }

echo "== building (release)"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release -q -p ibsnmpd --bin ibsnmpd
BIN=$(realpath "$TARGET_DIR/release/ibsnmpd")

tmp=$(mktemp -d)
pid=""
cleanup() {
    [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
    rm -rf "$tmp"
}
trap cleanup EXIT

"$BIN" topology fat-tree --hosts "$HOSTS" --levels 2 -o "$tmp/fabric.net"
cat > "$tmp/conf.toml" <<CONF
[[user]]
name = "bench"
auth = "SHA-256"
auth_pass = "bench-auth-pass"
priv = "AES"
priv_pass = "bench-priv-pass"
[[rouser]]
user = "bench"
level = "priv"
CONF
chmod 600 "$tmp/conf.toml"
PORT=$((20000 + RANDOM % 40000))
"$BIN" --listen "127.0.0.1:$PORT" --source "sim:$tmp/fabric.net" --state-dir "$tmp/state" \
    --config "$tmp/conf.toml" --log-level warn 2>"$tmp/agent.log" &
pid=$!
for _ in $(seq 100); do
    snmpget -v2c -c public -t 0.3 -r 0 "127.0.0.1:$PORT" .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1 && break
    sleep 0.1
done

ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
HZ=$(getconf CLK_TCK)

run() { # label, snmpbulkwalk args...
    # CPU ticks are 10 ms: sum over all passes rather than take the best.
    local label=$1; shift
    local t0 t1 n=0 k
    t0=$(ticks)
    for _ in $(seq "$PASSES"); do
        k=$(snmpbulkwalk -m "" -On -Cr50 -t 5 -r 1 "$@" "127.0.0.1:$PORT" .1 | wc -l)
        n=$((n + k))
    done
    t1=$(ticks)
    local us=$(( (t1 - t0) * 1000000 / HZ ))
    local per
    per=$(awk -v us="$us" -v n="$n" 'BEGIN { printf "%.3f", us / n }')
    echo "$label: $PASSES walks, $n varbinds, agent CPU ${us} us, ${per} us/varbind"
    eval "BEST_$label=$per"
}

run v2c -v2c -c public
run authPriv -v3 -u bench -l authPriv -a SHA-256 -A bench-auth-pass -x AES -X bench-priv-pass
awk -v a="$BEST_authPriv" -v b="$BEST_v2c" 'BEGIN { printf "authPriv / v2c CPU per varbind: %.2f\n", a / b }'
