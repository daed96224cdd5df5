#!/usr/bin/env bash
# Issue 52.6: the shipped alert rules stay quiet on a healthy fabric. A real
# Prometheus, with packaging/prometheus/ibsnmpd-rules.yml, scrapes the agent
# serving the 2,000-host sim with its default settings for MINUTES minutes
# (default 10); no alert may be pending or firing at any time (ALERTS is
# read every few seconds). tests/run.sh runs it beside the other tests.
#
#   tests/alerts-quiet.sh BIN [MINUTES]   (BIN: a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${2:-10}
fail() { echo "alerts-quiet: FAILED: $*" >&2; exit 1; }
command -v prometheus >/dev/null || fail "prometheus not installed (.ci/run installs it)"

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# A copy: the test suite may build the binary again meanwhile.
cp "$1" "$tmp/ibsnmpd"
BIN=$tmp/ibsnmpd
# Ports below the ephemeral range, each checked free.
port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 12000))
        ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && { echo "$p"; return; }
    done
}

"$BIN" topology fat-tree --hosts 2000 --radix 64 -o "$tmp/fabric.net"
snmp=$(port) metrics=$(port) prom=$(port)
# The default settings, but for render slots: the test suite beside it
# takes the cores, and three groups scraped at once must not queue past
# their wait (a 503 is the endpoint working, not the fabric failing).
echo "metrics_max_renders = 3" >"$tmp/ibsnmpd.toml"
"$BIN" --listen "127.0.0.1:$snmp" --metrics "127.0.0.1:$metrics" --config "$tmp/ibsnmpd.toml" \
    --source "sim:$tmp/fabric.net" --state-dir "$tmp/state" 2>"$tmp/agent.log" &
pids+=($!)
cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 15s
  scrape_timeout: 14s
  evaluation_interval: 5s
rule_files: ["$PWD/packaging/prometheus/ibsnmpd-rules.yml"]
scrape_configs:
  - job_name: ibsnmpd
    http_sd_configs:
      - url: http://127.0.0.1:$metrics/sd
YML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
    --web.listen-address="127.0.0.1:$prom" >/dev/null 2>"$tmp/prometheus.log" &
pids+=($!)

query() { curl -sS -G --max-time 10 "http://127.0.0.1:$prom/api/v1/query" --data-urlencode "query=$1"; }
# Until Prometheus has scraped every group of the agent.
for _ in $(seq 1 120); do
    query 'count(up{job="ibsnmpd"} == 1) > 0 and count(infiniband_hca_port_state_id) > 1000' 2>/dev/null |
        grep -q '"result":\[{' && break
    sleep 1
done
query 'count(infiniband_hca_port_state_id)' | grep -q '"result":\[{' ||
    fail "Prometheus never scraped the agent: $(tail -5 "$tmp/prometheus.log") $(tail -5 "$tmp/agent.log")"

end=$((SECONDS + MINUTES * 60))
while [ $SECONDS -lt $end ]; do
    alerts=$(query 'ALERTS')
    echo "$alerts" | grep -q '"status":"success"' || fail "ALERTS: $alerts"
    echo "$alerts" | grep -q '"result":\[\]' || {
        # What the failed scrapes said, if a target is down.
        curl -sS --max-time 10 "http://127.0.0.1:$prom/api/v1/targets" |
            grep -o '"lastError":"[^"]\+"' | sort | uniq -c >&2
        fail "alerts on a healthy fabric ($(echo "$alerts" | grep -o '"alertname":"[A-Za-z]*","alertstate":"[a-z]*"' | sort | uniq -c | tr -s ' \n' ' ')): $(echo "$alerts" | head -c 1500)"
    }
    kill -0 "${pids[0]}" 2>/dev/null || fail "the agent stopped: $(tail -5 "$tmp/agent.log")"
    sleep 5
done
samples=$(query 'scrape_samples_scraped' | grep -o '"value":\[[^]]*\]' | head -3 | tr '\n' ' ')
echo "alerts-quiet: no alert pending or firing in $MINUTES minutes (samples per group scrape: $samples)"
