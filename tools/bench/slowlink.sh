#!/usr/bin/env bash
# One slow-link case through a relay written apart from Dally's (shaped_relay.py): a real
# `dally cloud` and `dally gateway` (release build) on 127.0.0.1, the gateway's only uplink
# (class satellite) through the relay. One sync-now, then /stats polled every 20 ms until the
# object is uploaded (or the rows accepted): a cut is retried by the gateway on its own, as in
# the field. Prints one RESULT line.
#
#   bash tools/deps.sh && swift build -c release --product dally   # zstd, zlib, SQLite first
#   tools/bench/slowlink.sh                                   # 0.5 MiB at 128,000 B/s, 600 ms
#   CUT_FRACTION=0.5 SEED=4 tools/bench/slowlink.sh           # cut once half the bytes went up
#   CUT_FRACTION=0.2,0.4,0.6,0.8 RATE=16000 tools/bench/slowlink.sh   # cut four times
#   RATE=16000 MIB=3 tools/bench/slowlink.sh
#   ROWS=20000 CUT_FRACTION=0.4 tools/bench/slowlink.sh       # a backlog of wide rows instead
#   TRACE=1 KEEP_TMP=1 tools/bench/slowlink.sh                # the relay's request timeline, kept
#   HEADS=1 TRACE=1 KEEP_TMP=1 tools/bench/slowlink.sh        # and every head with its size
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${DALLY_BIN:-.build/release/dally}
RATE=${RATE:-128000}; ONE_WAY=${ONE_WAY:-0.3}; MIB=${MIB:-0.5}; ROWS=${ROWS:-0}
CUT_FRACTION=${CUT_FRACTION:-0}; SEED=${SEED:-1}; LOG=${LOG_LEVEL:-warning}
[ -x "$BIN" ] || { echo "no $BIN: bash tools/deps.sh && swift build -c release --product dally" >&2; exit 2; }
D=$(mktemp -d /tmp/dally-slowlink.XXXX)
# Three ports free now, below the kernel's ephemeral range (32768 up), where an outgoing
# connection may hold any port: a random one there failed one run in a few to bind.
read -r CLOUD_PORT RELAY_PORT GW_PORT < <(python3 - <<'P'
import random, socket
while True:
    base, held = random.randrange(10000, 30000), []
    try:
        for port in range(base, base + 3):
            held.append(socket.socket())
            held[-1].bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        for s in held:
            s.close()
    print(base, base + 1, base + 2)
    break
P
)
TABLES='
[[tables]]
name = "files"
columns = ["name TEXT", "blob OBJECT"]
upload = { max_delay = "1h", networks = ["satellite"] }
upload_objects = { max_delay = "1h", networks = ["satellite"] }
[[tables]]
name = "orders"
columns = ["customer TEXT", "total REAL", "notes TEXT"]
upload = { max_delay = "1h", networks = ["satellite"] }'
cat > "$D/cloud.toml" <<T
[server]
port = $CLOUD_PORT
data_dir = "$D/cloud"
log_level = "$LOG"
[store]
synchronous = "normal"
[admin]
token = "slowlink-admin-token"
[[gateways]]
id = "edge"
secret = "slowlink-edge-secret"
$TABLES
T
cat > "$D/gateway.toml" <<T
[server]
port = $GW_PORT
data_dir = "$D/gateway"
log_level = "$LOG"
[store]
synchronous = "normal"
[admin]
token = "slowlink-admin-token"
[network]
classes = ["satellite"]
[[clients]]
name = "bench"
token = "slowlink-client-token"
read = ["*"]
write = ["*"]
[cloud]
url = "http://127.0.0.1:$CLOUD_PORT"
gateway_id = "edge"
secret = "slowlink-edge-secret"
notify_networks = []
[[uplinks]]
name = "sat"
class = "satellite"
url = "http://127.0.0.1:$RELAY_PORT"
$TABLES
T
if [ "$ROWS" != 0 ]; then WANT=$ROWS; KEY=rows_accepted; TABLE=orders; else WANT=1; KEY=objects_uploaded; TABLE=files; fi
SIZE=$(python3 -c "print(int($MIB * 1048576))")
# Rows: each cut falls at its fraction of the backlog's bytes up (about 118 bytes a row, compressed).
CUT=$(python3 -c "print(','.join(str(int(($ROWS * 118 if $ROWS else $SIZE) * float(f))) for f in '$CUT_FRACTION'.split(',')))")
PIDS=()
cleanup() {
  kill "${PIDS[@]}" 2>/dev/null || true
  wait "${PIDS[@]}" 2>/dev/null || true
  [ -n "${KEEP_TMP:-}" ] && echo "kept $D" >&2 || rm -rf "$D"
}
trap cleanup EXIT
"$BIN" cloud --config "$D/cloud.toml" > "$D/cloud.log" 2>&1 & PIDS+=($!)
LISTEN=$RELAY_PORT UPSTREAM=$CLOUD_PORT RATE=$RATE ONE_WAY=$ONE_WAY CUT=$CUT COUNTS="$D/counts.json" TRACE=${TRACE:-0} HEADS=${HEADS:-0} \
  python3 tools/bench/shaped_relay.py > "$D/relay.log" 2>&1 & PIDS+=($!)
G=http://127.0.0.1:$GW_PORT
CLIENT="Authorization: Bearer slowlink-client-token"; ADMIN="Authorization: Bearer slowlink-admin-token"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$CLOUD_PORT/healthz" > /dev/null && [ -s "$D/counts.json" ] && break; sleep 0.1; done
"$BIN" gateway --config "$D/gateway.toml" > "$D/gateway.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do curl -sf "$G/healthz" > /dev/null && break; sleep 0.1; done
# The gateway's start-up pull crosses the link first; a sync-now of each table waits it out.
for t in files orders; do curl -s -X POST "$G/v1/tables/$t/sync" -H "$CLIENT" > /dev/null; done
counter() { curl -s "$G/stats" -H "$ADMIN" | grep -o "\"$1\": *[0-9]*" | tr -dc 0-9; }
if [ "$ROWS" != 0 ]; then
  # Held back while written, so that the case times the whole backlog.
  curl -s -X PUT "$G/v1/admin/uplinks/sat" -H "$ADMIN" -d '{"availability":"unavailable"}' > /dev/null
  python3 - "$G" "$ROWS" "$SEED" <<'P'
import json, random, sys, urllib.request
gateway, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(seed)
for start in range(0, count, 500):
    rows = [{"id": f"o{i}", "values": {"customer": f"c{i % 97}", "total": i % 1000 + .5, "notes": random.randbytes(100).hex()}}
            for i in range(start, min(start + 500, count))]
    request = urllib.request.Request(f"{gateway}/v1/tables/orders/batch", data=json.dumps({"created": rows}).encode(),
                                     method="POST", headers={"Authorization": "Bearer slowlink-client-token"})
    urllib.request.urlopen(request).read()
P
  curl -s -X PUT "$G/v1/admin/uplinks/sat" -H "$ADMIN" -d '{"availability":"auto"}' > /dev/null
else
  python3 -c "import random, sys; random.seed($SEED); sys.stdout.buffer.write(random.randbytes($SIZE))" > "$D/object"
  curl -s -X PUT "$G/v1/tables/files/rows/f1/objects/blob" -H "$CLIENT" --data-binary @"$D/object" > /dev/null
fi
BEFORE=$(cat "$D/counts.json")
START=$(date +%s.%N)
curl -s -X POST "$G/v1/tables/$TABLE/sync" -H "$CLIENT" > "$D/sync.json" & SYNC=$!
END=
for _ in $(seq 30000); do
  NOW=$(date +%s.%N)
  if [ "$(counter $KEY)" -ge "$WANT" ] 2>/dev/null; then END=$NOW; break; fi
  sleep 0.02
done
wait $SYNC || true
[ -n "$END" ] || { echo "$TABLE did not finish syncing" >&2; exit 1; }
AFTER=$(cat "$D/counts.json")
UPLINK=$(curl -s "$G/stats" -H "$ADMIN")
python3 - "$BEFORE" "$AFTER" "$START" "$END" "$SIZE" "$RATE" "$ROWS" "$CUT_FRACTION" "$SEED" "$UPLINK" <<'P'
import json, sys
before, after = json.loads(sys.argv[1]), json.loads(sys.argv[2])
seconds = float(sys.argv[4]) - float(sys.argv[3])
size, rate, rows, cut, seed = int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7]), sys.argv[8], sys.argv[9]
uplink = json.loads(sys.argv[10])["uplinks"][0]
up, down = after["up"] - before["up"], after["down"] - before["down"]
what = f"rows={rows}" if rows else f"object_bytes={size}"
# Rows: against their own bytes on the link (a clean run's, near enough); objects: against their size.
ideal = (up if rows else size) / rate
print(f"RESULT slowlink rate={rate:.0f} {what} cut={cut} seed={seed} seconds={seconds:.2f} ideal={ideal:.2f} "
      f"x_ideal={seconds / ideal:.3f} bytes_up={up} bytes_down={down} x_size={up / size if not rows else 0:.4f} "
      f"connections={after['connections'] - before['connections']} failures={uplink.get('failures')} "
      f"wasted_bytes={uplink.get('wasted_bytes')} resumed_bytes={uplink.get('resumed_bytes')} "
      f"measured_up={uplink.get('link', {}).get('bytes_per_second_up')}")
P
