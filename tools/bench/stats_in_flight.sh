#!/usr/bin/env bash
# What GET /stats costs while a drain has batches in flight (loopback only; bounded; stops by
# itself).
#
# Runs tools/bench/backlog.sh (a real gateway and cloud, BACKLOG_ROWS rows written while the
# cloud is down, then the drain) and, once the gateway holds IN_FLIGHT rows or more in flight,
# stops the cloud (SIGSTOP): the gateway keeps its batches in flight, waiting for answers, on
# an otherwise idle box. /stats is then timed SAMPLES times, one request at a time, and the cloud
# resumed (SIGCONT): the drain finishes and backlog.sh checks that every row arrived once. The
# drain figures of that run include the pause: take them from backlog.sh run alone.
#
# Usage:
#   SKIP_BUILD=1 tools/bench/stats_in_flight.sh
# Env knobs [defaults]: BACKLOG_ROWS [100000] IN_FLIGHT [10000] SAMPLES [40]; every other knob
#   goes to backlog.sh (DALLY_BIN, DALLY_BENCH_BIN, SKIP_BUILD, SYNC_BATCH_ROWS, …)
# Prints: RESULT stats_in_flight in_flight=… p50_ms=… max_ms=… min_ms=… samples=…
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BACKLOG_ROWS=${BACKLOG_ROWS:-100000}
IN_FLIGHT=${IN_FLIGHT:-10000}
SAMPLES=${SAMPLES:-40}
# backlog.sh's addresses and token.
GW=http://127.0.0.1:18080
AUTH="Authorization: Bearer bench-admin-token-0123456789"
OUT=$(mktemp /tmp/dally-stats-in-flight.XXXXXX)

in_flight() {
  curl -s -m 2 -H "$AUTH" "$GW/stats" \
    | python3 -c "import json, sys; print(json.load(sys.stdin)['tables']['bench']['outbox_in_flight'])" 2>/dev/null \
    || echo 0
}

APPLY_RUNS=${APPLY_RUNS:-1} STATS_SAMPLES=${STATS_SAMPLES:-1} OUTAGE_SECONDS=${OUTAGE_SECONDS:-2} \
  PROBE_INTERVAL=${PROBE_INTERVAL:-60s} RETRY_MAX=${RETRY_MAX:-60s} "$BENCH_DIR/backlog.sh" >"$OUT" 2>&1 &
BACKLOG=$!
# backlog.sh ended before the pause (a failed build, a server that died): say why at once.
ended() { kill -0 "$BACKLOG" 2>/dev/null && return 1; echo "backlog.sh ended early; its output:" >&2; tail -20 "$OUT" >&2; }
cloud=""
deadline=$((SECONDS + 600))
while [ -z "$cloud" ]; do
  ended && exit 1
  [ $SECONDS -lt $deadline ] || { echo "the cloud never started" >&2; exit 1; }
  cloud=$(pgrep -f " cloud --config /tmp/dally-backlog" | head -1 || true)
  sleep 0.01
done
while [ "$(in_flight)" -lt "$IN_FLIGHT" ]; do
  ended && exit 1
  [ $SECONDS -lt $deadline ] || { kill -CONT "$cloud"; echo "never $IN_FLIGHT rows in flight" >&2; exit 1; }
  sleep 0.02
done
kill -STOP "$cloud"
trap 'kill -CONT "$cloud" 2>/dev/null || true' EXIT
sleep 0.5  # what was under way when the cloud stopped settles
held=$(in_flight)
for _ in $(seq "$SAMPLES"); do
  curl -s -o /dev/null -w "%{time_total}\n" -H "$AUTH" "$GW/stats"
done | sort -n | awk -v held="$held" '{ t[NR] = $1 * 1000 } END {
  printf "RESULT stats_in_flight in_flight=%d p50_ms=%.2f max_ms=%.2f min_ms=%.2f samples=%d\n", held, t[int((NR + 1) / 2)], t[NR], t[1], NR }'
kill -CONT "$cloud"
wait "$BACKLOG"
grep -h "^RESULT drain_arrived" "$OUT" | head -1
rm -f "$OUT"
