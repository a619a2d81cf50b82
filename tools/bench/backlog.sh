#!/usr/bin/env bash
# A long outage's backlog: how fast it drains when the cloud comes back, and what /stats costs
# while it waits (loopback only; every step bounded; stops by itself).
#
# A real `dally gateway` (127.0.0.1:18080, one table `bench`) from the release build takes
# BACKLOG_ROWS rows in 5,000-row batch requests while its cloud is down; GET /stats is timed
# (STATS_SAMPLES requests, one at a time) with the outbox empty, at a tenth of the backlog and
# at all of it. Then a real `dally cloud` (127.0.0.1:18090) starts and the drain is timed until
# the outbox is empty. In the same run, `dally-bench apply` measures the cloud's own apply rate
# for rows of the same columns in batches of the same size (max_batch_rows): the store alone,
# and over HTTP from one gateway sending one batch at a time — the limits the drain is held to.
#
# Usage:
#   tools/bench/backlog.sh                            # build (release) + ~5 min at 1,000,000 rows
#   SKIP_BUILD=1 BACKLOG_ROWS=100000 tools/bench/backlog.sh
# Env knobs [defaults]: BACKLOG_ROWS [1000000] BATCH_ROWS [5000] (rows per write request)
#   SYNC_BATCH_ROWS [BATCH_ROWS] (the gateway's max_batch_rows; the cloud takes up to 10,000)
#   STATS_SAMPLES [20]
#   OUTAGE_SECONDS [0]: how much longer the cloud stays down once the rows are written (a long
#   outage, after which the gateway's retry backoff and probe run at their longest)
#   PROBE_INTERVAL [1s] RETRY_MAX [1s]: the uplink's probe_interval and retry_max (60s each:
#   the defaults)
#   DOWN_PROBE_INTERVAL [unset: the default, 100ms on this wired uplink]: its down_probe_interval
#   IDS [uuid]: row ids random (uuid, v4-like) or time-ordered (ordered, v7-like); the cloud's
#   apply rate is measured with the same kind
#   APPLY_RUNS [3 up to 200,000 rows, else 1]: runs of `dally-bench apply`; above 1, the median
#   of the store's and of `http x1`'s rates is printed too (RESULT apply_store_median,
#   apply_http_1_median) and is the reference the drain is held to (one run's rate moves by
#   ±10 % with the box; a million rows' runs take a minute each)
#   PIN_CORES [0]: 1 runs the gateway (and this script's clients) on core 0 and the cloud, and
#   the store's own apply rate, on core 1 (taskset): each process on a core of its own, as on two
#   machines, instead of the two sharing both cores
#   SYNCHRONOUS [full] DALLY_BIN [.build/release/dally] DALLY_BENCH_BIN [.build/release/dally-bench]
#   RESULTS_DIR [/tmp/dally-bench-results/backlog-<timestamp>] KEEP_TMP [0]
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
cd "$REPO"

BACKLOG_ROWS=${BACKLOG_ROWS:-1000000}
BATCH_ROWS=${BATCH_ROWS:-5000}
SYNC_BATCH_ROWS=${SYNC_BATCH_ROWS:-$BATCH_ROWS}
STATS_SAMPLES=${STATS_SAMPLES:-20}
IDS=${IDS:-uuid}
case $IDS in uuid|ordered) ;; *) echo "IDS must be uuid or ordered" >&2; exit 2 ;; esac
SYNCHRONOUS=${SYNCHRONOUS:-full}
RESULTS_DIR=${RESULTS_DIR:-/tmp/dally-bench-results/backlog-$(date +%Y%m%d-%H%M%S)}
HOST=127.0.0.1
GW=http://$HOST:18080
CLOUD=http://$HOST:18090
CLIENT_TOKEN=bench-client-token-0123456789
ADMIN_TOKEN=bench-admin-token-0123456789
COLUMNS='"name TEXT", "qty INTEGER", "price REAL", "paid BOOLEAN"'
log() { printf '== %s\n' "$*" >&2; }

command -v curl >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  bash "$REPO/tools/deps.sh"   # the libraries the build links: zstd, zlib, SQLite
  log "swift build -c release --product dally / dally-bench"
  swift build -c release --product dally
  swift build -c release --product dally-bench
fi
DALLY_BIN=${DALLY_BIN:-$REPO/.build/release/dally}
DALLY_BENCH_BIN=${DALLY_BENCH_BIN:-$REPO/.build/release/dally-bench}
[ -x "$DALLY_BIN" ] || { echo "no binary at $DALLY_BIN" >&2; exit 1; }

CORES=$(nproc)
GW_CORE=() CLOUD_CORE=()
if [ "${PIN_CORES:-0}" = 1 ]; then
  [ "$CORES" -ge 2 ] || { echo "PIN_CORES=1 needs two cores" >&2; exit 2; }
  GW_CORE=(taskset -c 0) CLOUD_CORE=(taskset -c 1)
  taskset -cp 0 $$ >/dev/null
fi
TMP=$(mktemp -d /tmp/dally-backlog.XXXXXX)
mkdir -p "$RESULTS_DIR" "$TMP/gw" "$TMP/cloud"
TABLE="[[tables]]
name = \"bench\"
columns = [$COLUMNS]
upload = { max_delay = \"1s\" }
download = { period = \"1h\" }"
source "$BENCH_DIR/servers.sh"
GW_PORT=18080 CLOUD_PORT=18090 MAX_BODY_BYTES=67108864 GW_CLOUD_EXTRA="max_batch_rows = $SYNC_BATCH_ROWS"
write_configs
RESULTS=$RESULTS_DIR/results.txt
: >"$RESULTS"
time_stats() {  # time_stats LABEL: STATS_SAMPLES sequential GET /stats, p50 and max in ms
  local rows
  rows=$(pending)
  for _ in $(seq "$STATS_SAMPLES"); do
    curl -fs -o /dev/null --max-time 10 -w '%{time_total}\n' -H "Authorization: Bearer $ADMIN_TOKEN" "$GW/stats"
  done | sort -n | awk -v label="$1" -v rows="$rows" '{ t[NR] = $1 * 1000 }
    END { printf "RESULT stats_%s pending=%d p50_ms=%.2f max_ms=%.2f samples=%d\n", label, rows, t[int((NR + 1) / 2)], t[NR], NR }' \
    | tee -a "$RESULTS"
}
write_rows() {  # write_rows FROM TO: rows FROM..<TO in BATCH_ROWS-row batch requests
  python3 - "$GW" "$CLIENT_TOKEN" "$1" "$2" "$BATCH_ROWS" "$IDS" <<'PY'
import http.client, json, sys, time, uuid
base, token, first, end, size, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
stamp = int(time.time() * 1000)
def row_id(i):
    # ordered: a millisecond stamp then a counter, as UUIDv7 orders ids by time.
    return str(uuid.uuid4()) if kind == "uuid" else f"{stamp:012x}-{i:012x}"
host, port = base.removeprefix("http://").split(":")
connection = http.client.HTTPConnection(host, int(port), timeout=300)
for start in range(first, end, size):
    rows = [{"id": row_id(i), "values": {"name": f"backlog {i}", "qty": i % 1000, "price": 2.5, "paid": False}}
            for i in range(start, min(start + size, end))]
    body = json.dumps({"created": rows}).encode()
    connection.request("POST", "/v1/tables/bench/batch", body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    answer = connection.getresponse()
    text = answer.read()
    if answer.status != 200:
        sys.exit(f"batch at {start}: {answer.status} {text[:300]!r}")
PY
}

"${GW_CORE[@]}" "$DALLY_BIN" gateway --config "$TMP/gateway.toml" >>"$TMP/gateway.log" 2>&1 &
GW_PID=$!
wait_healthy "$GW" "$GW_PID" gateway
time_stats empty
tenth=$((BACKLOG_ROWS / 10))
log "backlog: writing $BACKLOG_ROWS rows with the cloud down"
write_started=$(date +%s.%N)
write_rows 0 "$tenth"
time_stats tenth
write_rows "$tenth" "$BACKLOG_ROWS"
write_s=$(python3 -c "import time; print(f'{time.time() - $write_started:.1f}')")
echo "RESULT write rows=$BACKLOG_ROWS seconds=$write_s rows_per_s=$(python3 -c "print(round($BACKLOG_ROWS / $write_s))")" | tee -a "$RESULTS"
time_stats full
echo "RESULT rss_after_write gateway_mb=$(rss_mb "$GW_PID")" | tee -a "$RESULTS"

if [ "${OUTAGE_SECONDS:-0}" -gt 0 ]; then
  log "outage: the cloud stays down ${OUTAGE_SECONDS}s more"
  sleep "$OUTAGE_SECONDS"
fi
before=$(pending)
log "drain: $before rows pending; starting the cloud"
# When the cloud was up (its first /healthz answer, polled every 10 ms by a poller started
# before the cloud, so that its own start-up is not in the figure): a real outage's end as the
# gateway meets it, a cloud that answers again, without the cloud process's start-up.
python3 - "$CLOUD" >"$TMP/up_at" <<'PY' &
import sys, time, urllib.request
deadline = time.time() + 60
while time.time() < deadline:
    try:
        urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=1).read()
        print(f"{time.time():.3f}")
        break
    except OSError:
        time.sleep(0.01)
else:
    print("-")
PY
UP_POLLER=$!
# When the cloud held every row (its /stats `live`, polled every 25 ms once it answers): the
# drain as the cloud sees it, whatever the gateway still does with its answers.
python3 - "$CLOUD" "$ADMIN_TOKEN" "$before" >"$TMP/held_at" <<'PY' &
import json, sys, time, urllib.request
url, token, rows = sys.argv[1] + "/stats", sys.argv[2], int(sys.argv[3])
deadline = time.time() + 1800
while time.time() < deadline:
    try:
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        table = json.load(urllib.request.urlopen(request, timeout=5))["tables"].get("bench", {})
        if table.get("live", 0) >= rows:
            print(f"{time.time():.3f}")
            break
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(0.025)
else:
    print("-")
PY
HELD_POLLER=$!
sleep 0.3
"${CLOUD_CORE[@]}" "$DALLY_BIN" cloud --config "$TMP/cloud.toml" >>"$TMP/cloud.log" 2>&1 &
CLOUD_PID=$!
drain_start=$(date +%s.%N)
gw_cpu_start=$(cpu_seconds "$GW_PID")
wait "$UP_POLLER"
up_at=$(cat "$TMP/up_at")
wait_healthy "$CLOUD" "$CLOUD_PID" cloud
# Until the first batch is accepted the gateway is finding out that the cloud is back (its
# retry backoff and probe: retry_max and probe_interval 1 s here unless RETRY_MAX and
# PROBE_INTERVAL say, e.g. 60s for the defaults, where the probe then looks every
# down_probe_interval while the cloud is down); after it, the drain proper.
read -r first_at first_left drain_end left found_at < <(python3 "$BENCH_DIR/drain_watch.py" "$GW" "$ADMIN_TOKEN" bench "$before" 1800)
drain_s=$(python3 -c "print(f'{$drain_end - $drain_start:.2f}')")
echo "RESULT drain rows=$before seconds=$drain_s rows_per_s=$(python3 -c "print(round($before / $drain_s))") left=$left" | tee -a "$RESULTS"
if [ "$first_at" != - ]; then
  echo "RESULT drain_phases first_batch_after_s=$(python3 -c "print(f'{$first_at - $drain_start:.2f}')")" \
    "rows_per_s_after_first=$(python3 -c "print(round(($first_left - $left) / max($drain_end - $first_at, 0.001)))")" | tee -a "$RESULTS"
fi
# The drain from the moment the cloud answered: the catch-up after an outage as a gateway
# lives it (the probe finding the cloud back, then the rows), without the cloud's start-up.
if [ "$up_at" != - ]; then
  echo "RESULT drain_up up_after_s=$(python3 -c "print(f'{$up_at - $drain_start:.2f}')")" \
    "seconds=$(python3 -c "print(f'{$drain_end - $up_at:.2f}')")" \
    "rows_per_s=$(python3 -c "print(round(($before - $left) / max($drain_end - $up_at, 0.001)))")" | tee -a "$RESULTS"
fi
# The drain once the gateway knew its cloud was back (its probe's answer, `down_probe_interval`
# after the cloud's start at most): the pipeline's own rate, beside the store's, which is timed
# from an open store too.
if [ "$found_at" != - ]; then
  echo "RESULT drain_found found_after_s=$(python3 -c "print(f'{$found_at - $drain_start:.2f}')")" \
    "seconds=$(python3 -c "print(f'{$drain_end - $found_at:.2f}')")" \
    "rows_per_s=$(python3 -c "print(round(($before - $left) / max($drain_end - $found_at, 0.001)))")" | tee -a "$RESULTS"
fi
wait "$HELD_POLLER"
held_at=$(cat "$TMP/held_at")
if [ "$held_at" != - ]; then
  echo "RESULT drain_held seconds=$(python3 -c "print(f'{$held_at - $drain_start:.2f}')")" \
    "rows_per_s=$(python3 -c "print(round($before / max($held_at - $drain_start, 0.001)))")" | tee -a "$RESULTS"
fi
# Every row arrived, once: the cloud holds `before` live rows, and its table's version (one per
# change applied) is `before` too.
curl -fs -H "Authorization: Bearer $ADMIN_TOKEN" "$CLOUD/stats" | python3 -c '
import json, sys
table = json.load(sys.stdin)["tables"]["bench"]
live, version = table["live"], table["version"]
print(f"RESULT drain_arrived expected={sys.argv[1]} cloud_live={live} cloud_version={version}")
' "$before" | tee -a "$RESULTS"
# CPU each side spent on the drain (the cloud's from its start): which one the two cores wait on.
echo "RESULT drain_cpu gateway_s=$(python3 -c "print(round($(cpu_seconds "$GW_PID") - $gw_cpu_start, 2))") cloud_s=$(cpu_seconds "$CLOUD_PID")" | tee -a "$RESULTS"
echo "RESULT rss_after_drain gateway_mb=$(rss_mb "$GW_PID") cloud_mb=$(rss_mb "$CLOUD_PID")" | tee -a "$RESULTS"
curl -fs -H "Authorization: Bearer $ADMIN_TOKEN" "$GW/stats" >"$RESULTS_DIR/gateway-stats.json" || true
# How long the gateway's writer was held by each sync step over the run (its transactions, in
# ms, with their count): where the gateway's side of the drain goes (settling answers, recording
# batches). Includes the opening batch the writes' own sync attempts recorded.
python3 - "$RESULTS_DIR/gateway-stats.json" <<'PY' | tee -a "$RESULTS" || true
import json, sys
steps = json.load(open(sys.argv[1]))["store"]["writer"]["sync_steps"]
parts = [f"{name}_ms={round(s['count'] * s['mean_ms'])} {name}_n={s['count']}" for name, s in sorted(steps.items())]
print("RESULT drain_writer " + " ".join(parts))
PY
stop "$GW_PID"; GW_PID=
stop "$CLOUD_PID"; CLOUD_PID=

if [ -x "$DALLY_BENCH_BIN" ]; then
  batches=$(( (BACKLOG_ROWS + SYNC_BATCH_ROWS - 1) / SYNC_BATCH_ROWS ))
  [ "$batches" -gt 200 ] && batches=200
  runs=${APPLY_RUNS:-$([ "$BACKLOG_ROWS" -le 200000 ] && echo 3 || echo 1)}
  for run in $(seq "$runs"); do
    log "the cloud's own apply rate ($run of $runs): dally-bench apply, $batches batches of $SYNC_BATCH_ROWS rows"
    out="$RESULTS_DIR/apply.txt"
    [ "$runs" -gt 1 ] && out="$RESULTS_DIR/apply-$run.txt"
    "${CLOUD_CORE[@]}" "$DALLY_BENCH_BIN" apply --rows-per-batch "$SYNC_BATCH_ROWS" --batches "$batches" --ids "$IDS" \
      --columns "name TEXT,qty INTEGER,price REAL,paid BOOLEAN" --synchronous "$SYNCHRONOUS" \
      >"$out" 2>&1 || true
    grep '^RESULT' "$out" | tee -a "$RESULTS" || true
  done
  if [ "$runs" -gt 1 ]; then
    # One run's rate moves by ±15 % with the box; the median of the runs is the reference.
    for part in store http_1; do
      grep -h "^RESULT apply_${part} " "$RESULTS_DIR"/apply-*.txt | sed 's/.* rows_per_s=\([0-9]*\).*/\1/' | sort -n \
        | awk -v part="$part" '{ r[NR] = $1 } END { if (NR) printf "RESULT apply_%s_median rows_per_s=%d runs=%d\n", part, r[int((NR + 1) / 2)], NR }' \
        | tee -a "$RESULTS"
    done
  fi
fi

# Each drain figure against the store's rate in this run (the median when APPLY_RUNS > 1).
python3 - "$RESULTS" <<'PY' | tee -a "$RESULTS"
import re, sys
text = open(sys.argv[1]).read()
def rate(name):
    found = re.findall(rf"^RESULT {name} .*?rows_per_s=(\d+)", text, re.M)
    return int(found[-1]) if found else None
store = rate("apply_store_median") or rate("apply_store")
if store:
    parts = [f"{label}={rate(name) / store:.3f}" for label, name in
             (("from_launch", "drain"), ("from_up", "drain_up"), ("from_found", "drain_found"),
                                       ("cloud_held", "drain_held")) if rate(name)]
    print(f"RESULT drain_to_store store_rows_per_s={store} " + " ".join(parts))
PY

echo
echo "Backlog ($DALLY_BIN; $CORES cores$([ "${PIN_CORES:-0}" = 1 ] && echo ", gateway on core 0 and cloud on core 1"); synchronous=$SYNCHRONOUS; ids=$IDS; results in $RESULTS_DIR)"
cat "$RESULTS"
