#!/usr/bin/env bash
# Builds Dally (release) and starts a cloud and two gateways on loopback (`dally dev`) with the
# embedded defaults: cloud on 127.0.0.1:8090 (config/cloud.toml), gateway-a on :8080 and
# gateway-b on :8081 (config/gateway.toml; data in data/).
#   tools/run.sh                    # cloud + two gateways
#   tools/run.sh gateway [ARGS…]    # any other dally command, e.g. a gateway alone
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
swift build -c release --product dally
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$#" -eq 0 ]; then set -- dev; fi
exec .build/release/dally "$@"
