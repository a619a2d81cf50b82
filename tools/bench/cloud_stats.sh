#!/usr/bin/env bash
# What the cloud's GET /stats costs as its tables grow (loopback only; stops by itself).
#
# A real `dally cloud` (127.0.0.1:18090, the shipped config/cloud.toml, its SQLite store) starts
# once in a temporary directory so that it creates its tables, and stops; ROWS rows (one in
# twenty a tombstone, random ids, the `orders` columns) are then written straight into its
# `orders` table with the sqlite3 command line, as a cloud that has taken them over years would
# hold them; the cloud starts again and GET /stats is timed SAMPLES times, one at a time, with
# curl, beside GET /healthz (a route that reads nothing: the limit). The counts /stats answers
# are checked against the rows written.
#
# Usage:
#   tools/bench/cloud_stats.sh                       # build (release) + ~1 min at 1,000,000 rows
#   SKIP_BUILD=1 ROWS=100000 tools/bench/cloud_stats.sh
# Env knobs [defaults]: ROWS [1000000] SAMPLES [10] DALLY_BIN [.build/release/dally]
#   KEEP_TMP [0]
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
cd "$REPO"

ROWS=${ROWS:-1000000}
SAMPLES=${SAMPLES:-10}
CLOUD=http://127.0.0.1:18090
ADMIN_TOKEN=dev-cloud-admin-token-change-me
log() { printf '== %s\n' "$*" >&2; }

for tool in curl sqlite3; do
  command -v $tool >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $tool >/dev/null; }
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  bash "$REPO/tools/deps.sh"   # the libraries the build links: zstd, zlib, SQLite
  log "swift build -c release --product dally"
  swift build -c release --product dally
fi
DALLY_BIN=${DALLY_BIN:-$REPO/.build/release/dally}
[ -x "$DALLY_BIN" ] || { echo "no binary at $DALLY_BIN" >&2; exit 1; }

TMP=$(mktemp -d /tmp/dally-cloud-stats.XXXXXX)
CLOUD_PID=
cleanup() {
  [ -n "$CLOUD_PID" ] && kill "$CLOUD_PID" 2>/dev/null && wait "$CLOUD_PID" 2>/dev/null
  [ "${KEEP_TMP:-0}" = 1 ] && log "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

start_cloud() {
  "$DALLY_BIN" cloud --config config/cloud.toml --port 18090 --data-dir "$TMP/cloud" >>"$TMP/cloud.log" 2>&1 &
  CLOUD_PID=$!
  for _ in $(seq 1 100); do
    curl -sf "$CLOUD/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the cloud did not start: $TMP/cloud.log" >&2
  exit 1
}
stop_cloud() { kill "$CLOUD_PID"; wait "$CLOUD_PID" 2>/dev/null || true; CLOUD_PID=; }

start_cloud
stop_cloud
log "writing $ROWS rows into the cloud's orders table"
sqlite3 "$TMP/cloud/cloud.sqlite" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < $ROWS)
INSERT INTO t_orders (id, version, updated_at, deleted, origin, batch, c_customer, c_total, c_paid, c_items)
SELECT lower(hex(randomblob(16))), v, 1796000000000 + v, v % 20 = 0, 'gateway-a', 'seeded',
       CASE WHEN v % 20 = 0 THEN NULL ELSE 'customer ' || v END,
       CASE WHEN v % 20 = 0 THEN NULL ELSE v * 1.5 END,
       CASE WHEN v % 20 = 0 THEN NULL ELSE v % 2 END,
       CASE WHEN v % 20 = 0 THEN NULL ELSE '[{"sku":"x","qty":2,"note":"some note text here"}]' END
FROM n;
INSERT OR REPLACE INTO cloud_tables (tbl, version) VALUES ('orders', $ROWS);
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL

start_cloud
times=() noop=()
for _ in $(seq 1 "$SAMPLES"); do
  times+=("$(curl -sf -o "$TMP/stats.json" -w '%{time_total}' -H "Authorization: Bearer $ADMIN_TOKEN" "$CLOUD/stats")")
  noop+=("$(curl -sf -o /dev/null -w '%{time_total}' "$CLOUD/healthz")")
done
expected_tombstones=$((ROWS / 20))
read -r live tombstones < <(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tables"]["orders"]; print(t["live"], t["tombstones"])' "$TMP/stats.json")
if [ "$live" != $((ROWS - expected_tombstones)) ] || [ "$tombstones" != "$expected_tombstones" ]; then
  echo "the cloud counted $live live and $tombstones tombstones; written: $((ROWS - expected_tombstones)) and $expected_tombstones" >&2
  exit 1
fi
in_ms() { printf '%s\n' "$@" | awk '{printf "%.1f ", $1 * 1000}'; }
median_ms() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR + 1) / 2)] * 1000}'; }
echo "RESULT cloud_stats_rows $ROWS"
echo "RESULT cloud_stats_ms $(in_ms "${times[@]}")"
echo "RESULT cloud_stats_median_ms $(median_ms "${times[@]}")"
# The limit, in the same run: a route that reads nothing (curl's own connection included).
echo "RESULT cloud_healthz_median_ms $(median_ms "${noop[@]}")"
