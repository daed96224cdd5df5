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

# fat_tree BIN HOSTS OUT: two levels of radix 36 up to 648 hosts, three
# above; radix 254 past 11,664 hosts (smaller radixes need more LIDs than a
# subnet has).
fat_tree() {
    local levels=2 radix=36
    [ "$2" -le 648 ] || levels=3
    [ "$2" -le 11664 ] || radix=254
    "$1" topology fat-tree --hosts "$2" --levels "$levels" --radix "$radix" -o "$3"
}
