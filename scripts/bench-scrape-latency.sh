#!/usr/bin/env bash
# SNMP GET latency while /metrics is flooded with gzip scrapes (issue 36.5).
#
#   scripts/bench-scrape-latency.sh [HOSTS] [CLIENTS] [RATE] [SECONDS]
#
# ibsnmpd (release) serves the sim source on a generated fat tree of HOSTS
# hosts (default 4000) with /metrics on. crates/ibsnmpd/examples/getload.rs
# sends open-loop SNMPv2c GETs at RATE per second (default 1000) for
# SECONDS (default 20) and reports latency percentiles: first with no
# scrape (the baseline), then while CLIENTS (default 50) curl loops scrape
# /metrics with Accept-Encoding: gzip back to back. The endpoint's render
# slots (metrics_max_renders, default half the cores) and queue answer the rest 503, so
# SNMP keeps its latency; the scrape outcomes are counted. The goal: GET
# p99 within 5 ms under the flood. A benchmark, not a test: it prints
# figures and never fails on them. Run it on an otherwise idle machine.
set -euo pipefail

cd "$(dirname "$0")/.."
HOSTS=${1:-4000}
CLIENTS=${2:-50}
RATE=${3:-1000}
SECS=${4:-20}

# shellcheck source=scripts/lib/sim-agent.sh
. scripts/lib/sim-agent.sh
build_with_getload

echo "== topology: $HOSTS hosts"
fat_tree "$BIN" "$HOSTS" "$tmp/fabric.net"

port=$((20000 + RANDOM % 20000))
mport=$((port + 1))
OIDS=(
    1.3.6.1.2.1.1.3.0
    1.3.6.1.2.1.2.2.1.10.1
    1.3.6.1.2.1.31.1.1.1.6.1
)

"$BIN" --source "sim:$tmp/fabric.net" --listen "127.0.0.1:$port" \
    --metrics "127.0.0.1:$mport" --state-dir "$tmp/state" \
    --sweep-interval 3600 --log-level warn 2>"$tmp/agent.log" &
pid=$!
wait_snmp "$port"
size=$(curl -s --compressed -o /dev/null -w '%{size_download}' "http://127.0.0.1:$mport/metrics")
echo "== one gzip scrape: $size octets on the wire"

printf '%-28s ' "no scrape:"
"$LOAD" "127.0.0.1:$port" public "$RATE" "$SECS" "${OIDS[@]}"

# The flood: CLIENTS threads of one Python process scraping back to back
# with Accept-Encoding: gzip, each from its own loopback address (as many
# Prometheus servers: the per-client cap does not apply), reading every
# body whole. A refused scrape (503, or closed) is tried again after 0.2 s,
# so the figures are the agent's rather than the client's. One process,
# not CLIENTS curl loops: forking curl hundreds of times a second would
# take the cores the agent needs and measure the machine instead.
python3 - "$mport" "$CLIENTS" "$((SECS + 3))" >"$tmp/scrapes" <<'PY' &
import collections, http.client, sys, threading, time
port, clients, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
end = time.time() + secs
counts = collections.Counter()
lock = threading.Lock()
def scrape(i):
    while time.time() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                           source_address=(f"127.0.1.{i}", 0))
            c.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
            r = c.getresponse()
            r.read()
            status = str(r.status)
            c.close()
        except OSError:
            status = "closed"
        with lock:
            counts[status] += 1
        if status != "200":
            time.sleep(0.2)
threads = [threading.Thread(target=scrape, args=(i + 1,)) for i in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("; ".join(f"{n} x {s}" for s, n in sorted(counts.items())))
PY
flood=$!
sleep 2
c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
printf '%-28s ' "$CLIENTS gzip scrapers:"
"$LOAD" "127.0.0.1:$port" public "$RATE" "$SECS" "${OIDS[@]}"
c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
wait "$flood" || true
echo "    agent CPU $(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l | cut -c1-5) s over the run; RSS $(awk '/VmRSS/ {print $2/1024 " MB"}' "/proc/$pid/status")"
echo "    scrapes (HTTP status): $(cat "$tmp/scrapes")"
