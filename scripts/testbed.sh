#!/bin/sh
# Start/stop an ibsim (+ OpenSM) fabric for humans and benchmarks.
#
#   scripts/testbed.sh start DIR [NETFILE] [--no-opensm] [--ibsim-args "-N 8192 -S 512 -P 32768"]
#   . DIR/env.sh            # LD_PRELOAD=umad2sim, IBSIM_SOCKNAME; then: ibnetdiscover, perfquery...
#   echo 'Dump' > DIR/ctl   # ibsim console (its output goes to DIR/ibsim.out)
#   scripts/testbed.sh stop DIR
#
# NETFILE defaults to a small two-switch fabric. OpenSM's console is on 127.0.0.1:$(cat DIR/console.port).
# Pitfalls: docs/umad.md and the ibsim testbed notes (<= 10 clients, <= 256 MADs outstanding).
set -eu

PRE=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so

usage() {
    sed -n '2,10p' "$0" >&2
    exit 2
}

need() {
    command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || {
        echo "$1 not found: apt-get install ibsim-utils opensm infiniband-diags libibumad-dev" >&2
        exit 1
    }
}

wait_grep() { # file pattern count timeout_s
    i=0
    while :; do
        n=$(grep -c "$2" "$1" 2>/dev/null) || true
        [ "${n:-0}" -ge "$3" ] && return 0
        i=$((i + 1))
        if [ "$i" -gt $(($4 * 10)) ]; then
            echo "timed out waiting for '$2' in $1" >&2
            return 1
        fi
        sleep 0.1
    done
}

small_net() {
    cat <<'EOF'
Switch	8 "Switch1"
[1]	"Hca1"[1]
[2]	"Hca3"[1]
[3]	"Switch2"[3]
[5]	"Switch2"[5]

Switch	8 "Switch2"
[1]	"Hca2"[1]
[2]	"Hca4"[1]
[3]	"Switch1"[3]
[5]	"Switch1"[5]

Hca	2 "Hca1"
[1]	"Switch1"[1]

Hca	2 "Hca2"
[1]	"Switch2"[1]

Hca	2 "Hca3"
[1]	"Switch1"[2]

Hca	2 "Hca4"
[1]	"Switch2"[2]
EOF
}

start() {
    [ $# -ge 1 ] || usage
    dir=$1
    shift
    net=""
    opensm=1
    ibsim_args=""
    while [ $# -gt 0 ]; do
        case $1 in
        --no-opensm) opensm=0 ;;
        --ibsim-args)
            ibsim_args=$2
            shift
            ;;
        *) net=$1 ;;
        esac
        shift
    done
    need ibsim
    need opensm
    [ -f "$PRE" ] || need libumad2sim.so
    mkdir -p "$dir/osm"
    dir=$(cd "$dir" && pwd)
    [ -e "$dir/ibsim.pid" ] && { echo "$dir already holds a testbed (stop it first)" >&2; exit 1; }
    if [ -n "$net" ]; then cp "$net" "$dir/net"; else small_net >"$dir/net"; fi
    [ -f "$dir/partitions.conf" ] || echo 'Default=0x7fff, ipoib : ALL=full;' >"$dir/partitions.conf"
    sock="ibsnmpd-sh-$$-$(date +%s)"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cd "$dir"
    rm -f ctl
    mkfifo ctl
    # The holder keeps ibsim's console stdin open (ibsim spins at 100% CPU on EOF).
    (exec sleep 1000000 >ctl) &
    echo $! >holder.pid
    # shellcheck disable=SC2086
    IBSIM_SOCKNAME=$sock ibsim -s $ibsim_args net <ctl >ibsim.out 2>&1 &
    echo $! >ibsim.pid
    wait_grep ibsim.out "Network simulator ready" 1 120
    cat >env.sh <<EOF
export IBSIM_SOCKNAME=$sock
export LD_PRELOAD=$PRE
EOF
    echo "$port" >console.port
    if [ "$opensm" = 1 ]; then
        IBSIM_SOCKNAME=$sock OSM_TMP_DIR=$dir/osm OSM_CACHE_DIR=$dir/osm LD_PRELOAD=$PRE \
            opensm -d2 -f "$dir/osm/osm.log" -P "$dir/partitions.conf" -s 5 \
            --console loopback --console-port "$port" >osm.out 2>&1 </dev/null &
        echo $! >opensm.pid
        wait_grep osm/osm.log "SUBNET UP" 1 600
    fi
    echo "testbed up in $dir: . $dir/env.sh"
}

stop() {
    [ $# -ge 1 ] || usage
    dir=$1
    cd "$dir"
    if [ -f opensm.pid ]; then
        p=$(cat opensm.pid)
        kill -TERM "$p" 2>/dev/null || true
        i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "$p" 2>/dev/null || true
        rm -f opensm.pid
    fi
    if [ -f ibsim.pid ]; then
        p=$(cat ibsim.pid)
        if kill -0 "$p" 2>/dev/null; then
            echo Quit >ctl &
            qp=$!
            i=0
            while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
            kill -KILL "$p" 2>/dev/null || true
            kill "$qp" 2>/dev/null || true
        fi
        rm -f ibsim.pid
    fi
    if [ -f holder.pid ]; then
        kill "$(cat holder.pid)" 2>/dev/null || true
        rm -f holder.pid
    fi
    echo "testbed in $dir stopped"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
start) start "$@" ;;
stop) stop "$@" ;;
*) usage ;;
esac
