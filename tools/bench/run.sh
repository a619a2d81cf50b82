#!/usr/bin/env bash
# Dally gateway benchmark runner (loopback only; every step bounded in time; stops by itself).
#
# What it does, in order:
#   1. installs wrk (and libsqlite3-dev / a C compiler) with apt-get if missing;
#   2. builds the gateway (`swift build -c release`) unless SKIP_BUILD=1;
#   3. writes a bench config into a fresh temp dir and starts `dally gateway --config FILE`
#      on 127.0.0.1:18080 with an empty data dir (after `ulimit -n $(ulimit -Hn)`);
#   4. waits (bounded) for GET /healthz, then runs
#        noop    wrk GET /healthz                    (the no-op route: HTTP ceiling)
#        put     wrk + put.lua, one new row per PUT  (single-row write path)
#        batch   wrk + batch.lua, BATCH_ROWS per POST (batch write path, rows/s)
#        read    wrk + read.lua, one page of READ_LIMIT rows per GET (read path, rows/s)
#        fanout  fanout.py: FANOUT_N long-polls woken by one PUT (latency, RSS)
#        sqlite  sqlite_insert.c: raw SQLite insert rate on the same disk (the floor)
#   5. prints a summary table; the gateway is stopped on exit (trap), whatever happens.
#
# Usage (from anywhere):
#   tools/bench/run.sh                                  # full run, ~2-3 min after the build
#   SKIP_BUILD=1 FANOUT_N=2000 BENCHES="put fanout" tools/bench/run.sh
#   STANDIN=1 SKIP_BUILD=1 FANOUT_N=1000 tools/bench/run.sh   # self-test against
#                                                        # standin_server.py (numbers meaningless)
# Env knobs (defaults in brackets):
#   BENCHES [noop put batch read fanout sqlite]   which steps to run
#   SKIP_BUILD [0]   DALLY_BIN [.build/release/dally]   STANDIN [0]
#   WRK_THREADS [2]
#   NOOP_CONNS [64]  NOOP_DURATION [10s]
#   PUT_CONNS [64]   PUT_DURATION [10s]
#   BATCH_CONNS [4]  BATCH_DURATION [10s]  BATCH_ROWS [1000]
#   READ_CONNS [4]   READ_DURATION [10s]   READ_LIMIT [1000]   READ_WHERE [none] (a where= filter)
#   FANOUT_N [10000] FANOUT_BATCH [250]
#   FANOUT_ARGS []   extra fanout.py flags, e.g. --keep-open (clients keep their connection
#                    after the answer, as keep-alive long-pollers do)
#   SQLITE_ROWS [200000] SQLITE_SINGLE_ROWS [5000] SQLITE_SECONDS [20]
#   RESULTS_DIR [/tmp/dally-bench-results/<timestamp>]  KEEP_TMP [0]
# Results: every tool's full output and results.txt (the RESULT lines) in RESULTS_DIR.
# The machine is small (2 cores) and wrk/fanout.py share it with the gateway: compare runs
# made the same way, and repeat a step when a number matters.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
cd "$REPO"

BENCHES=${BENCHES:-"noop put batch read fanout sqlite"}
HOST=127.0.0.1
PORT=18080
BASE="http://$HOST:$PORT"
CLIENT_TOKEN=bench-client-token-0123456789
ADMIN_TOKEN=bench-admin-token-0123456789
WRK_THREADS=${WRK_THREADS:-2}
NOOP_CONNS=${NOOP_CONNS:-64};   NOOP_DURATION=${NOOP_DURATION:-10s}
PUT_CONNS=${PUT_CONNS:-64};     PUT_DURATION=${PUT_DURATION:-10s}
BATCH_CONNS=${BATCH_CONNS:-4};  BATCH_DURATION=${BATCH_DURATION:-10s}; BATCH_ROWS=${BATCH_ROWS:-1000}
READ_CONNS=${READ_CONNS:-4};    READ_DURATION=${READ_DURATION:-10s};   export READ_LIMIT=${READ_LIMIT:-1000}
export READ_WHERE=${READ_WHERE:-}
FANOUT_N=${FANOUT_N:-10000};    FANOUT_BATCH=${FANOUT_BATCH:-250}
SQLITE_ROWS=${SQLITE_ROWS:-200000}; SQLITE_SINGLE_ROWS=${SQLITE_SINGLE_ROWS:-5000}; SQLITE_SECONDS=${SQLITE_SECONDS:-20}
STANDIN=${STANDIN:-0}
RESULTS_DIR=${RESULTS_DIR:-/tmp/dally-bench-results/$(date +%Y%m%d-%H%M%S)}
RUNTAG=$(date +%s)$$

want() { [[ " $BENCHES " == *" $1 "* ]]; }
NEED_GW=0; for b in noop put batch read fanout; do want "$b" && NEED_GW=1; done
log() { printf '== %s\n' "$*" >&2; }

# wrk durations like 10s / 1m / 500 → seconds, for the outer `timeout` bound
secs() { local d=$1; case $d in *ms) echo 1 ;; *s) echo "${d%s}" ;; *m) echo $(( ${d%m} * 60 )) ;; *h) echo 3600 ;; *) echo "$d" ;; esac; }

# ---------------------------------------------------------------- 1. tools
apt_updated=0
need_pkg() {  # need_pkg PACKAGE: apt-get install it (apt-get update once first)
  if [ "$apt_updated" = 0 ]; then apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}
if want noop || want put || want batch || want read; then command -v wrk >/dev/null || { log "installing wrk"; need_pkg wrk; }; fi
if want sqlite; then
  command -v cc >/dev/null || { log "installing gcc"; need_pkg gcc; }
  [ -f /usr/include/sqlite3.h ] || { log "installing libsqlite3-dev"; need_pkg libsqlite3-dev; }
fi
command -v curl >/dev/null || { log "installing curl"; need_pkg curl; }
command -v python3 >/dev/null || { log "installing python3"; need_pkg python3; }

# ---------------------------------------------------------------- 2. build
if [ "$NEED_GW" = 0 ]; then
  :  # only sqlite: no gateway needed
elif [ "$STANDIN" = 1 ]; then
  log "STANDIN=1: using tools/bench/standin_server.py, not the gateway (numbers are meaningless)"
elif [ "${SKIP_BUILD:-0}" != 1 ]; then
  bash "$REPO/tools/deps.sh"   # the libraries the build links: zstd, zlib, SQLite
  log "swift build -c release"
  swift build -c release
fi
DALLY_BIN=${DALLY_BIN:-$REPO/.build/release/dally}
if [ "$NEED_GW" = 1 ] && [ "$STANDIN" != 1 ] && [ ! -x "$DALLY_BIN" ]; then
  echo "no gateway binary at $DALLY_BIN (build it, or set DALLY_BIN, or STANDIN=1 for a self-test)" >&2
  exit 1
fi

# ---------------------------------------------------------------- 3. config + start
TMP=$(mktemp -d /tmp/dally-bench.XXXXXX)
mkdir -p "$RESULTS_DIR" "$TMP/data"
CONF=$TMP/bench.toml
cat >"$CONF" <<EOF
[server]
host = "$HOST"
port = $PORT
data_dir = "$TMP/data"
log_level = "warning"
[limits]
max_body_bytes = 16777216
max_rows_per_batch = 10000
max_wait = "120s"
[admin]
token = "$ADMIN_TOKEN"
[[clients]]
name = "bench"
token = "$CLIENT_TOKEN"
read = ["*"]
write = ["*"]
[[tables]]
name = "bench"
columns = ["name TEXT", "qty INTEGER", "price REAL", "paid BOOLEAN"]
EOF

GW_PID=
cleanup() {
  local rc=$?
  if [ -n "$GW_PID" ] && kill -0 "$GW_PID" 2>/dev/null; then
    kill -TERM "$GW_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$GW_PID" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$GW_PID" 2>/dev/null && { log "gateway ignored SIGTERM for 10 s: SIGKILL"; kill -KILL "$GW_PID" 2>/dev/null || true; }
    wait "$GW_PID" 2>/dev/null || true
  fi
  if [ -f "$TMP/gateway.log" ]; then cp "$TMP/gateway.log" "$RESULTS_DIR/gateway.log" 2>/dev/null || true; fi
  if [ "${KEEP_TMP:-0}" = 1 ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rss_mb() { awk '/^VmRSS:/ {printf "%.1f", $2/1024}' "/proc/$GW_PID/status" 2>/dev/null || echo na; }
alive() {
  kill -0 "$GW_PID" 2>/dev/null && return 0
  echo "the gateway died during '$1'; its log:" >&2
  tail -n 40 "$TMP/gateway.log" >&2 || true
  return 1
}

start_gateway() {
  if curl -s -o /dev/null --max-time 1 "$BASE/healthz"; then
    echo "something already answers on $BASE: stop it first" >&2
    exit 1
  fi

  ulimit -n "$(ulimit -Hn)"
  if [ "$STANDIN" = 1 ]; then
    python3 "$BENCH_DIR/standin_server.py" --port "$PORT" --lifetime 1800 >"$TMP/gateway.log" 2>&1 &
  else
    "$DALLY_BIN" gateway --config "$CONF" >"$TMP/gateway.log" 2>&1 &
  fi
  GW_PID=$!
  log "gateway pid $GW_PID, config $CONF, fds $(ulimit -n)"

  local ready=0 deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$GW_PID" 2>/dev/null || break
    if curl -fs --max-time 1 "$BASE/healthz" >/dev/null; then ready=1; break; fi
    sleep 0.2
  done
  if [ "$ready" != 1 ]; then
    echo "gateway did not answer /healthz within 60 s; its log:" >&2
    tail -n 40 "$TMP/gateway.log" >&2 || true
    exit 1
  fi
}

RESULTS=$RESULTS_DIR/results.txt
: >"$RESULTS"
if [ "$NEED_GW" = 1 ]; then
  start_gateway
  echo "RESULT gateway_rss phase=start rss_mb=$(rss_mb)" >>"$RESULTS"
fi

# run_wrk NAME CONNS DURATION TIMEOUT [wrk args...]
run_wrk() {
  local name=$1 conns=$2 dur=$3 tmo=$4; shift 4
  log "$name: wrk -t$WRK_THREADS -c$conns -d$dur $*"
  timeout $(( $(secs "$dur") + 60 )) env DALLY_TOKEN="$CLIENT_TOKEN" BENCH_RUNTAG="$RUNTAG" BATCH_ROWS="$BATCH_ROWS" \
    wrk -t"$WRK_THREADS" -c"$conns" -d"$dur" --timeout "$tmo" --latency "$@" >"$RESULTS_DIR/$name.txt" 2>&1 || true
  grep '^RESULT' "$RESULTS_DIR/$name.txt" | tee -a "$RESULTS" || { echo "$name: no RESULT line, see $RESULTS_DIR/$name.txt" >&2; tail -5 "$RESULTS_DIR/$name.txt" >&2; }
  echo "RESULT gateway_rss phase=$name rss_mb=$(rss_mb)" >>"$RESULTS"
  alive "$name"
}

# ---------------------------------------------------------------- 4. benches
want noop  && run_wrk noop  "$NOOP_CONNS"  "$NOOP_DURATION"  5s  -s "$BENCH_DIR/noop.lua"  "$BASE/healthz"
want put   && run_wrk put   "$PUT_CONNS"   "$PUT_DURATION"   10s -s "$BENCH_DIR/put.lua"   "$BASE"
want batch && run_wrk batch "$BATCH_CONNS" "$BATCH_DURATION" 60s -s "$BENCH_DIR/batch.lua" "$BASE"
if want read; then
  # One page's worth of rows of four columns, in one batch request (names with a quote to escape).
  python3 - "$BASE" "$CLIENT_TOKEN" "$READ_LIMIT" "$RUNTAG" <<'PY'
import http.client, json, sys
base, token, count, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
host, port = base.removeprefix("http://").split(":")
rows = [{"id": f"r{tag}-{i:06d}", "values": {"name": f"row {i} \"seeded\"", "qty": i, "price": 2.5, "paid": i % 2 == 0}}
        for i in range(count)]
connection = http.client.HTTPConnection(host, int(port), timeout=60)
connection.request("POST", "/v1/tables/bench/batch", body=json.dumps({"created": rows}),
                   headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
answer = connection.getresponse()
text = answer.read()
if answer.status != 200:
    sys.exit(f"seeding the read bench: {answer.status} {text[:300]!r}")
PY
  run_wrk read "$READ_CONNS" "$READ_DURATION" 10s -s "$BENCH_DIR/read.lua" "$BASE"
fi

if want fanout; then
  log "fanout: $FANOUT_N long-polls"
  timeout 600 python3 "$BENCH_DIR/fanout.py" --base "$BASE" --n "$FANOUT_N" --batch "$FANOUT_BATCH" \
      --pid "$GW_PID" --token "$CLIENT_TOKEN" --admin-token "$ADMIN_TOKEN" ${FANOUT_ARGS:-} \
      --json-out "$RESULTS_DIR/fanout.jsonl" >"$RESULTS_DIR/fanout.txt" 2>&1 || true
  grep '^RESULT' "$RESULTS_DIR/fanout.txt" | tee -a "$RESULTS" || { echo "fanout: no RESULT line" >&2; tail -5 "$RESULTS_DIR/fanout.txt" >&2; }
  grep -v '^RESULT\|^{' "$RESULTS_DIR/fanout.txt" >&2 || true  # its warnings, if any
  alive fanout
fi

if want sqlite; then
  log "sqlite: raw insert rate (${SQLITE_ROWS} rows batched, ${SQLITE_SINGLE_ROWS} single, ≤${SQLITE_SECONDS}s each)"
  cc -O2 -o "$TMP/sqlite_insert" "$BENCH_DIR/sqlite_insert.c" -lsqlite3
  # the db sits next to the gateway's data dir, so both see the same disk
  timeout $(( 2 * SQLITE_SECONDS + 60 )) "$TMP/sqlite_insert" "$TMP/sqlite-bench.sqlite" \
      "$SQLITE_ROWS" "$SQLITE_SINGLE_ROWS" "$SQLITE_SECONDS" 1000 >"$RESULTS_DIR/sqlite.txt" 2>&1 || true
  grep '^RESULT' "$RESULTS_DIR/sqlite.txt" | tee -a "$RESULTS" || { echo "sqlite: no RESULT line" >&2; cat "$RESULTS_DIR/sqlite.txt" >&2; }
fi

# ---------------------------------------------------------------- 5. summary
echo
echo "Dally bench summary ($( [ "$STANDIN" = 1 ] && echo "STAND-IN server, not the gateway" || echo "$DALLY_BIN" ); $(nproc) cores; results in $RESULTS_DIR)"
awk '
  function v(k,   i, kv) { for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "-" }
  BEGIN { printf "%-8s %14s %14s %9s %9s %9s %9s %7s  %s\n", "bench", "req/s", "rows/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "non2xx", "notes" }
  $1 != "RESULT" { next }
  $2 == "noop" || $2 == "put" {
    printf "%-8s %14s %14s %9s %9s %9s %9s %7s  %s\n", $2, v("rps"), ($2 == "put" ? v("rps") : "-"),
      v("p50_ms"), v("p90_ms"), v("p99_ms"), v("max_ms"), v("non2xx"), "sock_errors=" v("sock_errors") }
  $2 == "batch" {
    printf "%-8s %14s %14s %9s %9s %9s %9s %7s  %s\n", $2, v("rps"), v("saved_rows_per_s"),
      v("p50_ms"), v("p90_ms"), v("p99_ms"), v("max_ms"), v("non2xx"),
      v("rows_per_request") " rows/req, error_responses=" v("error_responses") ", sock_errors=" v("sock_errors") }
  $2 == "read" {
    printf "%-8s %14s %14s %9s %9s %9s %9s %7s  %s\n", $2, v("rps"), v("rows_per_s"),
      v("p50_ms"), v("p90_ms"), v("p99_ms"), v("max_ms"), v("non2xx"), v("rows_per_request") " rows/page" }
  $2 == "fanout" {
    printf "%-8s %14s %14s %9s %9s %9s %9s %7s  %s\n", $2, "-", "-", v("p50_ms"), v("p90_ms"), v("p99_ms"), v("max_ms"), "-",
      "answered " v("answered") "/" v("n") " (held " v("held") "), RSS MB idle/holding/after " v("rss_idle_mb") "/" v("rss_holding_mb") "/" v("rss_after_mb") }
  $2 == "sqlite" {
    printf "%-8s %14s %14s %9s %9s %9s %9s %7s  %s\n", $2, v("single_tx_per_s"), v("batched_rows_per_s"), "-", "-", "-", "-", "-",
      "raw SQLite: req/s = one tx+fsync per row, rows/s = tx of " v("batch") }
  $2 == "gateway_rss" { rss = rss " " v("phase") "=" v("rss_mb") }
  END { if (rss != "") print "gateway RSS MB after each phase:" rss }
' "$RESULTS"
