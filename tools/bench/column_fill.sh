#!/usr/bin/env bash
# What a column added to a gateway's table costs that gateway (docs/OPERATIONS.md, "Changing
# a table's columns"): a real cloud holds ROWS rows of `bench` (name, note), every note set; a
# gateway that declares `name` only holds them all; it restarts declaring `note` too and pulls
# the table again from version 0 to fill the notes. Timed from its start until `/stats` says
# the fill is done, with the bytes it pulled, beside the same gateway pulling the table into an
# empty replica, once declaring `name` only and once both columns (the fill's floor).
#
#   SKIP_BUILD=1 ROWS=100000 tools/bench/column_fill.sh
#
# Knobs: ROWS [100000], BATCH_ROWS [5000] (rows per local batch request), SYNCHRONOUS [full],
# DALLY_BIN [.build/release/dally], RESULTS_DIR [.build/bench/column_fill].
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_DIR=$REPO/tools/bench
ROWS=${ROWS:-100000}
BATCH_ROWS=${BATCH_ROWS:-5000}
SYNCHRONOUS=${SYNCHRONOUS:-full}
RESULTS_DIR=${RESULTS_DIR:-$REPO/.build/bench/column_fill}
HOST=127.0.0.1
GW=http://$HOST:18080
CLOUD=http://$HOST:18090
CLIENT_TOKEN=bench-client-token-0123456789
ADMIN_TOKEN=bench-admin-token-0123456789
log() { printf '== %s\n' "$*" >&2; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then bash "$REPO/tools/deps.sh"; swift build -c release --product dally; fi
DALLY_BIN=${DALLY_BIN:-$REPO/.build/release/dally}
[ -x "$DALLY_BIN" ] || { echo "no binary at $DALLY_BIN" >&2; exit 1; }

TMP=$(mktemp -d /tmp/dally-column-fill.XXXXXX)
mkdir -p "$RESULTS_DIR" "$TMP/gw" "$TMP/cloud"
source "$BENCH_DIR/servers.sh"
GW_PORT=18080 CLOUD_PORT=18090 MAX_BODY_BYTES=67108864
table() {  # table COLUMNS: the bench table's declaration
  printf '[[tables]]\nname = "bench"\ncolumns = [%s]\nupload = { max_delay = "1s" }\ndownload = { period = "1h" }\n' "$1"
}
BOTH='"name TEXT", "note TEXT"'
NAME_ONLY='"name TEXT"'
TABLE=$(table "$BOTH")
write_configs
cp "$TMP/gateway.toml" "$TMP/gateway-both.toml"
sed "/^\[\[tables\]\]/,\$d" "$TMP/gateway-both.toml" >"$TMP/gateway-name.toml"
table "$NAME_ONLY" >>"$TMP/gateway-name.toml"
RESULTS=$RESULTS_DIR/results.txt
: >"$RESULTS"

start_gateway() {  # start_gateway CONFIG
  "$DALLY_BIN" gateway --config "$1" >>"$TMP/gateway.log" 2>&1 &
  GW_PID=$!
  wait_healthy "$GW" "$GW_PID" gateway
}
# timed LABEL CONFIG CONDITION: starts the gateway on CONFIG and polls its /stats every 25 ms
# until CONDITION (a Python expression over rows, filling, down) holds; prints the seconds
# from the launch, the bytes pulled.
timed() {
  local label=$1 config=$2 condition=$3
  local started
  started=$(date +%s.%N)
  start_gateway "$config"
  python3 - "$GW" "$ADMIN_TOKEN" "$started" "$ROWS" "$condition" "$label" <<'PY' | tee -a "$RESULTS"
import json, sys, time, urllib.request
url, token, started, rows_wanted, condition, label = sys.argv[1] + "/stats", sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
deadline = time.time() + 600
while time.time() < deadline:
    stats = json.load(urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}), timeout=5))
    table = stats["tables"]["bench"]
    rows, filling = table["rows"], table["filling_columns"]
    down = sum(uplink.get("bytes_down", 0) for uplink in stats.get("uplinks", []))
    if eval(condition, {}, {"rows": rows, "filling": filling, "down": down, "wanted": rows_wanted}):
        print(f"RESULT {label} rows={rows} seconds={time.time() - started:.2f} bytes_down={down}")
        break
    time.sleep(0.025)
else:
    sys.exit(f"{label}: not done in 600 s")
PY
}

"$DALLY_BIN" cloud --config "$TMP/cloud.toml" >>"$TMP/cloud.log" 2>&1 &
CLOUD_PID=$!
wait_healthy "$CLOUD" "$CLOUD_PID" cloud

log "writing $ROWS rows with notes through a gateway that declares both columns"
start_gateway "$TMP/gateway-both.toml"
python3 - "$GW" "$CLIENT_TOKEN" "$ROWS" "$BATCH_ROWS" <<'PY'
import http.client, json, sys
base, token, rows, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
host, port = base.removeprefix("http://").split(":")
connection = http.client.HTTPConnection(host, int(port), timeout=300)
for start in range(0, rows, size):
    created = [{"id": f"r{i:09d}", "values": {"name": f"row {i}", "note": f"a note the cloud holds for row {i}"}}
               for i in range(start, min(start + size, rows))]
    connection.request("POST", "/v1/tables/bench/batch", body=json.dumps({"created": created}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    answer = connection.getresponse()
    text = answer.read()
    if answer.status != 200:
        sys.exit(f"batch at {start}: {answer.status} {text[:300]!r}")
PY
until [ "$(pending)" = 0 ]; do sleep 0.2; done
stop "$GW_PID"

log "an empty replica pulls the table, declaring name only"
rm -rf "$TMP/gw"; mkdir -p "$TMP/gw"
timed pull_name_only "$TMP/gateway-name.toml" "rows >= wanted"
stop "$GW_PID"

log "the same replica restarts declaring note too: the fill"
timed fill "$TMP/gateway-both.toml" "not filling and rows >= wanted"
python3 - "$GW" "$CLIENT_TOKEN" <<'PY' | tee -a "$RESULTS"
import json, sys, urllib.request
request = urllib.request.Request(sys.argv[1] + "/v1/tables/bench/rows/r000000007", headers={"Authorization": f"Bearer {sys.argv[2]}"})
note = json.load(urllib.request.urlopen(request, timeout=5))["values"]["note"]
print(f"RESULT fill_checked note_of_r7={note!r}")
if note != "a note the cloud holds for row 7":
    sys.exit("the fill did not bring the note")
PY
stop "$GW_PID"

log "an empty replica pulls the table, declaring both columns (the fill's floor)"
rm -rf "$TMP/gw"; mkdir -p "$TMP/gw"
timed pull_both "$TMP/gateway-both.toml" "rows >= wanted"
stop "$GW_PID"
log "results in $RESULTS"
