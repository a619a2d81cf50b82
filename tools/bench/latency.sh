#!/usr/bin/env bash
# Local write latency while the gateway syncs (loopback only; every step bounded; stops by itself).
#
# A real `dally cloud` (127.0.0.1:18090) and a real `dally gateway` (127.0.0.1:18080, one table
# `bench` with max_delay 2s, one uplink to the cloud) from the release build; wrk drives the
# gateway from outside, so latencies are measured as a client sees them:
#   put-sync      single-row PUTs, cloud up: every 2 s a batch goes up and its answer comes back
#   batch-sync    1,000-row batch requests, cloud up
#   put-nosync    the same PUTs with the cloud stopped (the gateway's own ceiling)
#   batch-nosync  the same batches with the cloud stopped
#   put-drain     the same PUTs while a backlog of BACKLOG_ROWS rows, written while the cloud
#                 was down, drains to it; the drain's time and rate are reported beside
# Each wrk run is closed-loop with the same connections and duration, so "the same offered
# load" means the same clients; compare the throughput as well as the latencies.
#
# Usage:
#   tools/bench/latency.sh                         # build (release) + ~3 min
#   SKIP_BUILD=1 DURATION=60s tools/bench/latency.sh
# Env knobs [defaults]: DURATION [20s] PUT_CONNS [8] BATCH_CONNS [2] BATCH_ROWS [1000]
#   BACKLOG_ROWS [100000] SYNCHRONOUS [full] PIECE_ROWS [256] DALLY_BIN [.build/release/dally]
#   RESULTS_DIR [/tmp/dally-bench-results/latency-<timestamp>] KEEP_TMP [0]
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
cd "$REPO"

DURATION=${DURATION:-20s}
PUT_CONNS=${PUT_CONNS:-8}
BATCH_CONNS=${BATCH_CONNS:-2}
BATCH_ROWS=${BATCH_ROWS:-1000}
BACKLOG_ROWS=${BACKLOG_ROWS:-100000}
SYNCHRONOUS=${SYNCHRONOUS:-full}
PIECE_ROWS=${PIECE_ROWS-256}   # empty: leave the key out (builds before it existed)
RESULTS_DIR=${RESULTS_DIR:-/tmp/dally-bench-results/latency-$(date +%Y%m%d-%H%M%S)}
HOST=127.0.0.1
GW=http://$HOST:18080
CLOUD=http://$HOST:18090
CLIENT_TOKEN=bench-client-token-0123456789
ADMIN_TOKEN=bench-admin-token-0123456789
RUNTAG=$(date +%s)$$
log() { printf '== %s\n' "$*" >&2; }
secs() { local d=$1; case $d in *s) echo "${d%s}" ;; *m) echo $(( ${d%m} * 60 )) ;; *) echo "$d" ;; esac; }

command -v wrk >/dev/null || { log "installing wrk"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
command -v curl >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  bash "$REPO/tools/deps.sh"   # the libraries the build links: zstd, zlib, SQLite
  log "swift build -c release --product dally"
  swift build -c release --product dally
fi
DALLY_BIN=${DALLY_BIN:-$REPO/.build/release/dally}
[ -x "$DALLY_BIN" ] || { echo "no binary at $DALLY_BIN" >&2; exit 1; }

TMP=$(mktemp -d /tmp/dally-latency.XXXXXX)
mkdir -p "$RESULTS_DIR" "$TMP/gw" "$TMP/gw-drain" "$TMP/cloud"
TABLE='[[tables]]
name = "bench"
columns = ["name TEXT", "qty INTEGER", "price REAL", "paid BOOLEAN"]
upload = { max_delay = "2s" }
download = { period = "1h" }'
source "$BENCH_DIR/servers.sh"
GW_PORT=18080 CLOUD_PORT=18090 MAX_BODY_BYTES=16777216 GW_STORE_EXTRA="${PIECE_ROWS:+sync_piece_rows = $PIECE_ROWS}"
write_configs
ulimit -n "$(ulimit -Hn)"
start_cloud() {
  "$DALLY_BIN" cloud --config "$TMP/cloud.toml" >>"$TMP/cloud.log" 2>&1 &
  CLOUD_PID=$!
  wait_healthy "$CLOUD" "$CLOUD_PID" cloud
}
RESULTS=$RESULTS_DIR/results.txt
: >"$RESULTS"
run_wrk() {  # run_wrk NAME CONNS SCRIPT
  log "$1: wrk -t1 -c$2 -d$DURATION $3"
  timeout $(( $(secs "$DURATION") + 60 )) env DALLY_TOKEN="$CLIENT_TOKEN" BENCH_RUNTAG="$RUNTAG$1" BATCH_ROWS="$BATCH_ROWS" \
    wrk -t1 -c"$2" -d"$DURATION" --timeout 10s --latency -s "$BENCH_DIR/$3" "$GW" >"$RESULTS_DIR/$1.txt" 2>&1 || true
  grep '^RESULT' "$RESULTS_DIR/$1.txt" | sed "s/^RESULT [a-z]*/RESULT $1/" | tee -a "$RESULTS" \
    || { echo "$1: no RESULT line" >&2; tail -5 "$RESULTS_DIR/$1.txt" >&2; }
}

start_cloud
"$DALLY_BIN" gateway --config "$TMP/gateway.toml" >>"$TMP/gateway.log" 2>&1 &
GW_PID=$!
wait_healthy "$GW" "$GW_PID" gateway

run_wrk put-sync "$PUT_CONNS" put.lua
run_wrk batch-sync "$BATCH_CONNS" batch.lua
stop "$CLOUD_PID"; CLOUD_PID=
run_wrk put-nosync "$PUT_CONNS" put.lua
run_wrk batch-nosync "$BATCH_CONNS" batch.lua

# The backlog: a fresh gateway, BACKLOG_ROWS rows written while the cloud is down, then the
# cloud comes back (the rows of the runs above are left behind with the first gateway).
stop "$GW_PID"
sed -i "s|^data_dir = \"$TMP/gw\"|data_dir = \"$TMP/gw-drain\"|" "$TMP/gateway.toml"
"$DALLY_BIN" gateway --config "$TMP/gateway.toml" >>"$TMP/gateway.log" 2>&1 &
GW_PID=$!
wait_healthy "$GW" "$GW_PID" gateway
log "backlog: writing $BACKLOG_ROWS rows with the cloud down"
python3 - "$GW" "$CLIENT_TOKEN" "$BACKLOG_ROWS" "$RUNTAG" <<'PY'
import json, sys, urllib.request
base, token, total, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
for start in range(0, total, 5000):
    rows = [{"id": f"b{tag}-{i}", "values": {"name": f"backlog {i}", "qty": i % 1000, "price": 2.5, "paid": False}}
            for i in range(start, min(start + 5000, total))]
    body = json.dumps({"created": rows, "updated": [], "deleted": []}).encode()
    request = urllib.request.Request(f"{base}/v1/tables/bench/batch", data=body, method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=120).read()
PY
before=$(pending)
log "backlog: $before rows pending; starting the cloud and the load together"
start_cloud
drain_start=$(date +%s.%N)
run_wrk put-drain "$PUT_CONNS" put.lua
left=$(pending)
deadline=$((SECONDS + 600))
while [ "$left" -gt 0 ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; left=$(pending); done
drain_s=$(python3 -c "import time; print(f'{time.time() - $drain_start:.1f}')")
echo "RESULT drain rows=$before seconds=$drain_s rows_per_s=$(python3 -c "print(round($before / $drain_s))") left=$left" | tee -a "$RESULTS"
curl -fs -H "Authorization: Bearer $ADMIN_TOKEN" "$GW/stats" >"$RESULTS_DIR/gateway-stats.json" || true

echo
echo "Local write latency ($DALLY_BIN; $(nproc) cores; synchronous=$SYNCHRONOUS; results in $RESULTS_DIR)"
awk '
  function v(k,   i, kv) { for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "-" }
  BEGIN { printf "%-13s %10s %12s %8s %8s %8s %8s %7s\n", "run", "req/s", "rows/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "non2xx" }
  $1 != "RESULT" { next }
  $2 == "drain" { drain = sprintf("backlog drain: %s rows in %s s (%s rows/s); left %s", v("rows"), v("seconds"), v("rows_per_s"), v("left")); next }
  { printf "%-13s %10s %12s %8s %8s %8s %8s %7s\n", $2, v("rps"), (v("saved_rows_per_s") == "-" ? v("rps") : v("saved_rows_per_s")),
      v("p50_ms"), v("p90_ms"), v("p99_ms"), v("max_ms"), v("non2xx") }
  END { print drain }
' "$RESULTS"
