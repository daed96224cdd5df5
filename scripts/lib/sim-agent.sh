# Sourced by the benchmark scripts that serve a generated fabric from one
# agent: a temporary directory removed at exit with the agent ($pid) it
# started, and the fat tree of a given size.

tmp=$(mktemp -d)
pid=""
cleanup() {
    [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
    [ -z "$pid" ] || wait "$pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# For scripts that start several agents: their pids in `pids`, stopped
# (then the directory removed) at exit once `trap stop_agents EXIT` is set.
pids=()
stop_agents() {
    local p
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    cleanup
}

# build_with_getload: a release build of the agent and the open-loop GET
# load generator (crates/ibsnmpd/examples/getload.rs); sets BIN and LOAD.
build_with_getload() {
    local target_dir=${CARGO_TARGET_DIR:-target}
    echo "== building (release)"
    cargo build --release -q -p ibsnmpd --bin ibsnmpd --example getload
    BIN=$(realpath "$target_dir/release/ibsnmpd")
    LOAD=$(realpath "$target_dir/release/examples/getload")
}

# fat_tree BIN HOSTS OUT: two levels of radix 36 up to 648 hosts, three
# above; radix 254 past 11,664 hosts (smaller radixes need more LIDs than a
# subnet has).
fat_tree() {
    local levels=2 radix=36
    [ "$2" -le 648 ] || levels=3
    [ "$2" -le 11664 ] || radix=254
    "$1" topology fat-tree --hosts "$2" --levels "$levels" --radix "$radix" -o "$3"
}

# wait_snmp PORT: until the agent on 127.0.0.1:PORT answers (a 48k-host
# fabric's first sweep takes a while; ten minutes at most).
wait_snmp() {
    for _ in $(seq 1 600); do
        snmpget -v2c -c public -t 1 -r 0 "127.0.0.1:$1" .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1 && return 0
        sleep 1
    done
    echo "the agent on port $1 never answered" >&2
    return 1
}
