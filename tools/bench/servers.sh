# Shared by the benchmark scripts that run a real gateway and cloud (sourced, not run): stop
# and clean up the servers, wait for one to answer, and read the gateway's outbox depth.
# Expects GW, CLOUD (URLs), TMP (the run's scratch directory, logs in it), RESULTS_DIR and
# ADMIN_TOKEN; the caller sets GW_PID and CLOUD_PID as it starts the servers. It also writes
# the two servers' configuration files (write_configs).
GW_PID= CLOUD_PID=
stop() {  # stop PID: SIGTERM, then SIGKILL after 10 s
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  stop "$GW_PID"; stop "$CLOUD_PID"
  cp "$TMP"/*.log "$RESULTS_DIR/" 2>/dev/null || true
  if [ "${KEEP_TMP:-0}" = 1 ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_healthy() {  # wait_healthy URL PID NAME
  local deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$2" 2>/dev/null || { echo "$3 died; its log:" >&2; tail -20 "$TMP/$3.log" >&2; exit 1; }
    curl -fs --max-time 1 "$1/healthz" >/dev/null && return 0
    sleep 0.2
  done
  echo "$3 did not answer within 60 s" >&2; exit 1
}
cpu_seconds() {  # cpu_seconds PID: user + system CPU the process has used so far
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}
rss_mb() {  # rss_mb PID: the process's resident memory in MB
  awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0
}
pending() {  # rows waiting in the gateway's outbox
  curl -fs --max-time 5 -H "Authorization: Bearer $ADMIN_TOKEN" "$GW/stats" \
    | python3 -c 'import json,sys; t=json.load(sys.stdin)["tables"]["bench"]; print(t["outbox_pending"] + t["outbox_in_flight"])'
}

# write_configs: $TMP/cloud.toml and $TMP/gateway.toml for one bench table ($TABLE): the cloud
# on $CLOUD_PORT, the gateway `bench-gw` on $GW_PORT with one wired uplink to it, both on $HOST
# with `synchronous = $SYNCHRONOUS` and bodies up to $MAX_BODY_BYTES. Optional lines:
# $GW_STORE_EXTRA (the gateway's [store]), $GW_CLOUD_EXTRA (its [cloud]); the uplink's
# probe_interval is $PROBE_INTERVAL [1s], its down_probe_interval $DOWN_PROBE_INTERVAL if set.
write_configs() {
  cat >"$TMP/cloud.toml" <<EOF
[server]
host = "$HOST"
port = $CLOUD_PORT
data_dir = "$TMP/cloud"
log_level = "${LOG_LEVEL:-warning}"
log_format = "${LOG_FORMAT:-text}"
[store]
synchronous = "$SYNCHRONOUS"
[limits]
max_body_bytes = $MAX_BODY_BYTES
[admin]
token = "$ADMIN_TOKEN"
[[gateways]]
id = "bench-gw"
secret = "bench-gateway-secret-0123456789"
$TABLE
EOF
  cat >"$TMP/gateway.toml" <<EOF
[server]
host = "$HOST"
port = $GW_PORT
data_dir = "$TMP/gw"
log_level = "${LOG_LEVEL:-warning}"
log_format = "${LOG_FORMAT:-text}"
[store]
synchronous = "$SYNCHRONOUS"
${GW_STORE_EXTRA:-}
[limits]
max_body_bytes = $MAX_BODY_BYTES
[admin]
token = "$ADMIN_TOKEN"
[[clients]]
name = "bench"
token = "$CLIENT_TOKEN"
read = ["*"]
write = ["*"]
[cloud]
url = "$CLOUD"
gateway_id = "bench-gw"
secret = "bench-gateway-secret-0123456789"
retry_max = "${RETRY_MAX:-1s}"
${GW_CLOUD_EXTRA:-}
[[uplinks]]
name = "lan"
class = "wired"
probe_interval = "${PROBE_INTERVAL:-1s}"
${DOWN_PROBE_INTERVAL:+down_probe_interval = \"$DOWN_PROBE_INTERVAL\"}
$TABLE
EOF
}
