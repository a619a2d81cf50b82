#!/usr/bin/env bash
# Builds Dally (release) and starts the gateway with config/gateway.toml (or the file given).
#   tools/run.sh                       # gateway on 127.0.0.1:8080, data in data/gateway
#   tools/run.sh path/to/gateway.toml
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
swift build -c release --product dally
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec .build/release/dally gateway --config "${1:-config/gateway.toml}"
