#!/usr/bin/env bash
# Bulk-walk throughput: ibsnmpd against net-snmp's snmpd, same clients.
#
#   scripts/bench-walk.sh [HOSTS] [PASSES]
#
# ibsnmpd serves the sim source on a generated fat tree of HOSTS hosts
# (default 2000), so its per-node IB-PM-MIB tables have thousands of rows.
#
# snmpd runs with its own config in a temp dir (-f -Lo -C -c CONF) for the
# whole-tree walks. A stock host gives snmpd only small tables, so when the
# script runs as root and network namespaces work, a second snmpd runs in a
# private namespace holding $VETH_PAIRS veth pairs (default 1000, i.e. an
# ifTable of 2001 rows) for the table walks: a table of thousands of rows
# served by snmpd's own code. (Its whole tree is not walked: in such a
# namespace snmpd takes over 15 s per tcpConnTable request.) Without a
# namespace, snmpd's biggest stock table, hrSWInstalledTable (one row per
# Debian package), is used. Override with $OUR_TABLE / $SNMPD_TABLE.
#
# Measured for each agent, in varbinds per second:
#   1. the whole tree with net-snmp's `snmpbulkwalk -Cr50` (output to a file);
#   2. the whole tree with a minimal Rust GetBulk client
#      (crates/ibsnmpd/examples/bulkwalk.rs, max-repetitions 50), because
#      snmpbulkwalk's own parsing and printing is a bottleneck;
#   3. the big table with the Rust client, max-repetitions 50 and 1000.
# The Rust client keeps one request outstanding, as managers do; each figure
# is the best of PASSES walks. Then, for each agent: its CPU time (utime +
# stime from /proc) per varbind over walks of its big table, as many as
# give CPU_TICKS (default 400) clock ticks of user time (the figure that
# does not depend on the client; the ticks it rests on are printed), and
# the aggregate wall throughput of CLIENTS (default 4) such walks at once.
# The CPU figure is taken three times: with the client on any CPU (where
# the scheduler puts them), with each agent on CPU 0 and its client on CPU
# 1, and with both on CPU 0, where a virtual machine's halt and wake-up of
# an idle vCPU between requests is not paid (SAME_CPU=0 skips the last
# two). With each fixed placement: the kernel's floor (a responder that
# only answers), each agent's total less that floor (its own work, exact),
# and an accounting check (the same responder spending a known WORK_NS,
# default 5000, in user space per datagram, so the reader sees how well
# /proc's tick-sampled user/system split holds on the machine at hand:
# the total is exact, the split is sampled).
# Prints the ratio ibsnmpd/snmpd; stops both agents (and removes the
# namespace) at the end.
#
# With valgrind installed (and CALLGRIND not 0), also the machine-independent
# figure: user-space instructions per varbind of each agent over one Rust
# walk (r=50) of its big table, counted by callgrind in a second instance of
# each agent: ibsnmpd's receive loop (snmp::agent::serve: decode, dispatch,
# encode, the send and receive calls' user side), snmpd's snmp_read2 (the
# same work in net-snmp). What either does outside those (sweeps, snmpd's
# alarms) is left out of both.
set -euo pipefail

cd "$(dirname "$0")/.."
HOSTS=${1:-2000}
PASSES=${2:-3}
VETH_PAIRS=${VETH_PAIRS:-1000}
TARGET_DIR=${CARGO_TARGET_DIR:-target}

for t in snmpbulkwalk snmpget; do
    command -v "$t" >/dev/null || { echo "$t missing: apt-get install snmp" >&2; exit 1; }
done
SNMPD=$(command -v snmpd || echo /usr/sbin/snmpd)
[ -x "$SNMPD" ] || { echo "snmpd missing: apt-get install snmpd" >&2; exit 1; }

# The machine, for the figures' record (they differ from one to another).
. scripts/lib/machine.sh
machine_line
echo "== building (release)"
cargo build --release -q -p ibsnmpd --bin ibsnmpd --example bulkwalk --example udpfloor
# $IBSNMPD_BIN: another agent binary (e.g. an older build) to measure.
BIN=$(realpath "${IBSNMPD_BIN:-$TARGET_DIR/release/ibsnmpd}")
WALK=$(realpath "$TARGET_DIR/release/examples/bulkwalk")
FLOOR=$(realpath "$TARGET_DIR/release/examples/udpfloor")

tmp=$(mktemp -d)
pids=()
NS=""
cleanup() {
    for f in "$tmp"/snmpd*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -z "$NS" ] || ip netns del "$NS" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

port() { echo $((20000 + RANDOM % 40000)); }
P1=$(port)
P2=$(port)
P3=$(port)
while [ "$P2" = "$P1" ]; do P2=$(port); done
while [ "$P3" = "$P1" ] || [ "$P3" = "$P2" ]; do P3=$(port); done

# The table snmpd and its clients run inside the namespace when there is one.
IN_NS=()
if [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null && [ "$VETH_PAIRS" -gt 0 ]; then
    NS="ibsnmpd-bench-$$"
    if ip netns add "$NS" 2>/dev/null && ip -n "$NS" link set lo up; then
        for i in $(seq 1 "$VETH_PAIRS"); do echo "link add a$i type veth peer name b$i"; done >"$tmp/links"
        if ip -n "$NS" -batch "$tmp/links" 2>/dev/null; then
            IN_NS=(ip netns exec "$NS")
            SNMPD_TABLE=${SNMPD_TABLE:-.1.3.6.1.2.1.2.2}
            echo "== snmpd in namespace $NS with $((2 * VETH_PAIRS + 1)) interfaces"
        fi
    fi
    if [ "${#IN_NS[@]}" -eq 0 ]; then
        ip netns del "$NS" 2>/dev/null || true
        NS=""
    fi
fi
SNMPD_TABLE=${SNMPD_TABLE:-.1.3.6.1.2.1.25.6.3}

echo "== fabric: fat tree with $HOSTS hosts"
LEVELS=2
[ "$HOSTS" -le 648 ] || LEVELS=3 # radix 36: 2 levels hold at most 648 hosts
"$BIN" topology fat-tree --hosts "$HOSTS" --levels "$LEVELS" -o "$tmp/fabric.net"

# No sweeps during the walks (they would count as the agent's CPU).
"$BIN" --listen "127.0.0.1:$P1" --source "sim:$tmp/fabric.net" --state-dir "$tmp/state" \
    --log-level warn --max-repetitions 1000 --sweep-interval 3600 2>"$tmp/ibsnmpd.log" &
pids+=($!)
OUR_PID=$!

# start_snmpd PORT NAME [NAMESPACE PREFIX...]
start_snmpd() {
    local port=$1 name=$2
    shift 2
    # Connection logging off: ibsnmpd does not log each request either.
    cat >"$tmp/$name.conf" <<CONF
agentaddress udp:127.0.0.1:$port
rocommunity public 127.0.0.1
dontLogTCPWrappersConnects yes
sysLocation bench
sysContact bench
CONF
    "$@" env SNMP_PERSISTENT_DIR="$tmp/$name-persist" "${SNMPD_WRAP[@]}" "$SNMPD" -f -Lo -C -c "$tmp/$name.conf" \
        -p "$tmp/$name.pid" >"$tmp/$name.log" 2>&1 &
    pids+=($!)
}
SNMPD_WRAP=()
start_snmpd "$P2" snmpd
if [ "${#IN_NS[@]}" -gt 0 ]; then
    start_snmpd "$P3" snmpd-ns "${IN_NS[@]}"
else
    P3=$P2
fi

# ns PORT: the command prefix for clients of the agent on PORT.
ns() { if [ "$1" = "$P3" ] && [ "$P3" != "$P2" ]; then echo "${IN_NS[@]}"; fi; }

wait_up() {
    for _ in $(seq 1 "${2:-200}"); do
        # shellcheck disable=SC2046
        if $(ns "$1") snmpget -v2c -c public -t 0.3 -r 0 "127.0.0.1:$1" .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1; then
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
wait_up "$P3"

now() { date +%s.%N; }

# netsnmp_walk PORT ROOT -> "varbinds seconds"
netsnmp_walk() {
    local t0 t1 n
    t0=$(now)
    # shellcheck disable=SC2046
    $(ns "$1") snmpbulkwalk -v2c -c public -Cr50 -On -t 5 -r 1 "127.0.0.1:$1" "$2" >"$tmp/walk.$1.txt"
    t1=$(now)
    n=$(grep -c '^\.' "$tmp/walk.$1.txt" || true)
    echo "$n $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
}

# rust_walk PORT ROOT MAXREP -> "varbinds seconds" of the fastest pass
rust_walk() {
    # shellcheck disable=SC2046
    $(ns "$1") "$WALK" "127.0.0.1:$1" public "$2" "$3" "$PASSES" |
        sed -E 's/varbinds=([0-9]+) seconds=([0-9.]+).*/\1 \2/' | sort -k2 -g | sed -n 1p
}

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }

row() { # label ours(n s) theirs(n s)
    local on os tn ts orate trate
    read -r on os <<<"$2"
    read -r tn ts <<<"$3"
    orate=$(rate "$on" "$os")
    trate=$(rate "$tn" "$ts")
    printf '%-34s %7s vb %8s vb/s | %7s vb %8s vb/s | x%s\n' \
        "$1" "$on" "$orate" "$tn" "$trate" \
        "$(awk -v a="$orate" -v b="$trate" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"
}

echo "== walking (Rust client: best of $PASSES passes)"
o1=$(netsnmp_walk "$P1" .1)
t1=$(netsnmp_walk "$P2" .1)
if [ -z "${OUR_TABLE:-}" ]; then
    # The biggest subtree of our walk by its first 8 arcs: a table.
    OUR_TABLE=$(sed -E 's/ = .*//' "$tmp/walk.$P1.txt" | cut -d. -f1-9 | sort | uniq -c |
        sort -rn | sed -n 1p | awk '{print $2}')
fi
o2=$(rust_walk "$P1" .1 50)
t2=$(rust_walk "$P2" .1 50)
o3=$(rust_walk "$P1" "$OUR_TABLE" 50)
t3=$(rust_walk "$P3" "$SNMPD_TABLE" 50)
o4=$(rust_walk "$P1" "$OUR_TABLE" 1000)
t4=$(rust_walk "$P3" "$SNMPD_TABLE" 1000)

echo
printf '%-34s %26s | %26s | %s\n' "" "ibsnmpd" "net-snmp snmpd" "ratio"
row "whole tree, snmpbulkwalk -Cr50" "$o1" "$t1"
row "whole tree, Rust client r=50" "$o2" "$t2"
row "big table, Rust client r=50" "$o3" "$t3"
row "big table, Rust client r=1000" "$o4" "$t4"
echo "  tables: ibsnmpd $OUR_TABLE, snmpd $SNMPD_TABLE"

# cpu PID: "utime stime" in clock ticks.
cpu() { awk '{ print $14, $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
# /proc splits CPU time into user and system by sampling at each clock
# tick (on a kernel with tick accounting the sum is exact, the split is
# not): a figure resting on a few dozen ticks is noise. The walks go on,
# CPU_PASSES at a time, until the agent has CPU_TICKS ticks of user time
# (or 100 rounds), and each figure says how many ticks it rests on.
CPU_PASSES=${CPU_PASSES:-5}
CPU_TICKS=${CPU_TICKS:-400}
# us_per_varbind PID PORT ROOT: "total user system walks user_ticks
# system_ticks": agent CPU microseconds per varbind over Rust walks (r=50).
# The system part is mostly the kernel's per-datagram cost (one receive,
# one send that wakes the client), the same for any agent at this
# max-repetitions.
# CLIENT_PIN: a command prefix for the walking client (empty: any CPU).
CLIENT_PIN=()
us_per_varbind() {
    local u0 s0 u1 s1 n rounds=0
    read -r u0 s0 <<<"$(cpu "$1")"
    : >"$tmp/cpuwalk"
    while :; do
        # shellcheck disable=SC2046
        $(ns "$2") "${CLIENT_PIN[@]}" "$WALK" "127.0.0.1:$2" public "$3" 50 "$CPU_PASSES" >>"$tmp/cpuwalk"
        rounds=$((rounds + 1))
        read -r u1 s1 <<<"$(cpu "$1")"
        if [ $((u1 - u0)) -ge "$CPU_TICKS" ] || [ "$rounds" -ge 100 ]; then break; fi
    done
    n=$(sed -E 's/varbinds=([0-9]+).*/\1/' "$tmp/cpuwalk" | awk '{ s += $1 } END { print s }')
    awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$HZ" -v n="$n" -v w=$((rounds * CPU_PASSES)) 'BEGIN {
        k = (n > 0 ? 1e6 / hz / n : 0); printf "%.3f %.3f %.3f %d %d %d", (u + s) * k, u * k, s * k, w, u, s }'
}
SNMPD_PID=$(cat "$tmp/snmpd$([ "$P3" != "$P2" ] && echo -ns).pid")
ALL_AGENTS=("$OUR_PID" $(cat "$tmp"/snmpd*.pid))
# alone PID CMD...: CMD with every other agent stopped (SIGSTOP), so their
# background work (snmpd refreshing 2,001 interfaces) takes no core from it.
alone() {
    local me=$1 p
    shift
    for p in "${ALL_AGENTS[@]}"; do [ "$p" = "$me" ] || kill -STOP "$p"; done
    "$@"
    for p in "${ALL_AGENTS[@]}"; do [ "$p" = "$me" ] || kill -CONT "$p"; done
}
echo
echo "== agent CPU per varbind (utime+stime over Rust walks of the big table until $CPU_TICKS ticks of user time, r=50, the other agents stopped; a tick is $((1000 / HZ)) ms)"
read -r ou ouu ous ow out ost <<<"$(alone "$OUR_PID" us_per_varbind "$OUR_PID" "$P1" "$OUR_TABLE")"
cp "$tmp/cpuwalk" "$tmp/cpuwalk.ours"
read -r tu tuu tus tw tut tst <<<"$(alone "$SNMPD_PID" us_per_varbind "$SNMPD_PID" "$P3" "$SNMPD_TABLE")"
# The kernel's floor: a UDP responder doing nothing else answers as many
# datagrams of the walk's sizes; its CPU per varbind of the walk is what any
# agent pays the kernel for the same exchange. Where the scheduler puts a
# responder and its client decides that cost (on a virtual machine whose
# idle vCPUs halt, a wake-up across CPUs costs tens of microseconds, on one
# CPU none), and it does not always put this responder where it put the
# agents, so the floor is taken with the responder on CPU 0 and its client
# on CPU 1 here, and on CPU 0 both in the one-CPU section below.
field() { sed -E "s/.*$1=([0-9]+).*/\1/" "$tmp/cpuwalk.ours" | awk '{ s += $1 } END { print s }'; }
W_VB=$(field varbinds)
W_DG=$(field datagrams)
W_REQ=$(($(field request_octets) / ow))
W_RESP=$(($(field response_octets) / ow))
# The accounting check, with the same responder: /proc's user and system
# times are clock ticks sampled in whatever mode the CPU was in, scaled to
# the exact total. A responder that spends a known WORK_NS in user space
# per datagram (a busy loop on the clock) shows how far that split is from
# the truth on this machine, for a handler of about an r=50 request's
# length. (On the 2-core VM of docs/benchmarks.md, with the client on the
# other CPU, 5 us of user time a datagram showed as 7.8-9.2.)
WORK_NS=${WORK_NS:-5000}
# responder SERVER_CPU CLIENT_CPU WORK_NS: "user_us system_us user_ticks
# system_ticks" a datagram, W_DG datagrams of the walk's sizes.
responder() {
    local p fp a0 b0 a1 b1
    p=$(port)
    taskset -c "$1" "$FLOOR" serve "127.0.0.1:$p" "$W_RESP" "$3" &
    fp=$!
    sleep 0.2
    read -r a0 b0 <<<"$(cpu "$fp")"
    alone "$fp" taskset -c "$2" "$FLOOR" drive "127.0.0.1:$p" "$W_REQ" "$W_DG" >/dev/null
    read -r a1 b1 <<<"$(cpu "$fp")"
    kill "$fp"
    wait "$fp" 2>/dev/null || true
    awk -v u=$((a1 - a0)) -v s=$((b1 - b0)) -v hz="$HZ" -v n="$W_DG" 'BEGIN {
        k = (n > 0 ? 1e6 / hz / n : 0); printf "%.2f %.2f %d %d", u * k, s * k, u, s }'
}
# floor_and_check SERVER_CPU CLIENT_CPU: prints both lines.
floor_and_check() {
    local fu fs fut fst au as aut ast
    read -r fu fs fut fst <<<"$(responder "$1" "$2" 0)"
    FLOOR_VB=$(awk -v u="$fu" -v s="$fs" -v d="$W_DG" -v n="$W_VB" 'BEGIN { printf "%.3f", (n > 0 ? (u + s) * d / n : 0) }')
    awk -v u="$fu" -v s="$fs" -v d="$W_DG" -v n="$W_VB" -v ut="$fut" -v st="$fst" \
        -v req="$W_REQ" -v resp="$W_RESP" 'BEGIN {
        k = (n > 0 ? d / n : 0)
        printf "  kernel floor %.3f us/varbind (user %.3f, system %.3f; %d + %d ticks): %d datagrams of %d octets answered with %d\n",
            (u + s) * k, u * k, s * k, ut, st, d, req, resp }'
    read -r au as aut ast <<<"$(responder "$1" "$2" "$WORK_NS")"
    printf '  accounting check: a responder spending %s us in user space a datagram shows user %s us, system %s us a datagram (%s + %s ticks)\n' \
        "$(awk -v w="$WORK_NS" 'BEGIN { printf "%.2f", w / 1000 }')" "$au" "$as" "$aut" "$ast"
}
# report OURS THEIRS: each "total user system walks user_ticks
# system_ticks" (us_per_varbind's line), and their ratio.
report() {
    local o t
    read -r -a o <<<"$1"
    read -r -a t <<<"$2"
    printf '  ibsnmpd %s us/varbind (user %s, system %s; %s walks, %s user + %s system ticks)\n' "${o[@]}"
    printf '  net-snmp snmpd %s us/varbind (user %s, system %s; %s walks, %s user + %s system ticks)\n' "${t[@]}"
    printf '  snmpd uses x%s the CPU per varbind (x%s in user space)\n' \
        "$(awk -v a="${o[0]}" -v b="${t[0]}" 'BEGIN { printf "%.1f", (a > 0 ? b / a : 0) }')" \
        "$(awk -v a="${o[1]}" -v b="${t[1]}" 'BEGIN { printf "%.1f", (a > 0 ? b / a : 0) }')"
}
report "$ou $ouu $ous $ow $out $ost" "$tu $tuu $tus $tw $tut $tst"
# (The floor for this placement, the scheduler's, is in the pinned
# sections below: on two CPUs and on one.)
[ "${SAME_CPU:-1}" != 0 ] && [ "$(nproc)" -gt 1 ] || floor_and_check 0 0

# The same with the placement fixed (SAME_CPU=0: skipped): each agent on
# CPU 0 and its client on CPU 1, then both on CPU 0. On a virtual machine
# whose idle vCPUs halt, a client on another CPU wakes the agent's halted
# vCPU for every request, and the code that runs after that wake-up runs
# slowly (docs/benchmarks.md); on one CPU the agent's vCPU never idles
# between requests. Both agents are measured the same way, and beside the
# kernel floor in the same placement: an agent's total less the floor is
# its own work, exact where the user/system split is sampled.
pinned() { # AGENT_CPU CLIENT_CPU
    local all="0-$(($(nproc) - 1))"
    pin() { taskset -a -p -c "$2" "$1" >/dev/null; }
    CLIENT_PIN=(taskset -c "$2")
    pin "$OUR_PID" "$1"
    read -r pu puu pus pw put pst <<<"$(alone "$OUR_PID" us_per_varbind "$OUR_PID" "$P1" "$OUR_TABLE")"
    pin "$OUR_PID" "$all"
    pin "$SNMPD_PID" "$1"
    read -r qu quu qus qw qut qst <<<"$(alone "$SNMPD_PID" us_per_varbind "$SNMPD_PID" "$P3" "$SNMPD_TABLE")"
    pin "$SNMPD_PID" "$all"
    CLIENT_PIN=()
    report "$pu $puu $pus $pw $put $pst" "$qu $quu $qus $qw $qut $qst"
    floor_and_check "$1" "$2"
    awk -v a="$pu" -v b="$qu" -v f="$FLOOR_VB" 'BEGIN {
        o = a - f; t = b - f
        printf "  above the floor: ibsnmpd %.3f, snmpd %.3f us/varbind: x%.1f\n", o, t, (o > 0 ? t / o : 0) }'
}
if [ "${SAME_CPU:-1}" != 0 ] && [ "$(nproc)" -gt 1 ] && command -v taskset >/dev/null; then
    echo
    echo "== agent CPU per varbind, each agent on CPU 0 and its client on CPU 1 (same measure)"
    pinned 0 1
    echo
    echo "== agent CPU per varbind, each agent and its client on CPU 0 (same measure)"
    pinned 0 0
fi

# concurrent PORT ROOT K: aggregate varbinds/s of K Rust walks at once (wall).
concurrent() {
    local t0 t1 total clients=()
    t0=$(now)
    for i in $(seq 1 "$3"); do
        # shellcheck disable=SC2046
        $(ns "$1") "$WALK" "127.0.0.1:$1" public "$2" 50 1 >"$tmp/conc.$1.$i" &
        clients+=($!)
    done
    wait "${clients[@]}"
    t1=$(now)
    total=$(sed -E 's/varbinds=([0-9]+).*/\1/' "$tmp"/conc."$1".* | awk '{ s += $1 } END { print s }')
    rm -f "$tmp"/conc."$1".*
    echo "$total $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
}
K=${CLIENTS:-4}
echo
echo "== $K concurrent clients (Rust, r=50), aggregate wall throughput"
row "big table, $K clients" "$(concurrent "$P1" "$OUR_TABLE" "$K")" "$(concurrent "$P3" "$SNMPD_TABLE" "$K")"

# Instructions per varbind: one more instance of each agent under callgrind,
# counting only its request path (see the top of this file).
if [ "${CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null; then
    echo
    echo "== instructions per varbind (callgrind, one Rust walk of the big table, r=50)"
    CG=(valgrind --tool=callgrind --dump-instr=no --compress-strings=no)
    P5=$(port)
    P6=$(port)
    "${CG[@]}" --toggle-collect='*snmp::agent::serve*' --callgrind-out-file="$tmp/cg.ibsnmpd" \
        "$BIN" --listen "127.0.0.1:$P5" --source "sim:$tmp/fabric.net" --state-dir "$tmp/state-cg" \
        --log-level warn --max-repetitions 1000 --sweep-interval 3600 2>"$tmp/ibsnmpd-cg.log" &
    pids+=($!)
    CG_OURS=$!
    SNMPD_WRAP=("${CG[@]}" --toggle-collect=snmp_read2 --callgrind-out-file="$tmp/cg.snmpd")
    if [ "$P3" != "$P2" ]; then
        start_snmpd "$P6" snmpd-ns-cg "${IN_NS[@]}"
        P3=$P6 # ns() now prefixes this port's clients
    else
        start_snmpd "$P6" snmpd-cg
    fi
    CG_THEIRS=$!
    # Under valgrind an agent starts 20-50 times slower.
    wait_up "$P5" 3000
    wait_up "$P6" 3000
    # instructions PID FILE PORT ROOT: one walk, then the agent stopped so
    # callgrind writes its counts; sets CG_I (instructions) and CG_N (varbinds).
    instructions() {
        # shellcheck disable=SC2046
        $(ns "$3") env BULKWALK_TIMEOUT=120 "$WALK" "127.0.0.1:$3" public "$4" 50 1 >"$tmp/cg.walk"
        kill "$1"
        wait "$1" 2>/dev/null || true
        CG_N=$(sed -E 's/varbinds=([0-9]+).*/\1/' "$tmp/cg.walk")
        CG_I=$(sed -nE 's/^totals: ([0-9]+).*/\1/p' "$2" | head -1)
    }
    instructions "$CG_OURS" "$tmp/cg.ibsnmpd" "$P5" "$OUR_TABLE"
    oi=$CG_I on=$CG_N
    instructions "$CG_THEIRS" "$tmp/cg.snmpd" "$P6" "$SNMPD_TABLE"
    ti=$CG_I tn=$CG_N
    awk -v oi="$oi" -v on="$on" -v ti="$ti" -v tn="$tn" 'BEGIN {
        o = oi / on; t = ti / tn
        printf "  ibsnmpd %.0f instructions/varbind (%d varbinds)\n", o, on
        printf "  net-snmp snmpd %.0f instructions/varbind (%d varbinds)\n", t, tn
        printf "  snmpd executes x%.1f the instructions per varbind\n", t / o }'
fi
