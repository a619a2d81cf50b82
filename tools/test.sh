#!/usr/bin/env bash
# Installs what is missing, then runs every test (unit and end-to-end on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
DALLY_DEPS=test bash tools/deps.sh
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
swift build --build-tests
.build/debug/dally gateway --config config/gateway.toml --check
.build/debug/dally cloud --config config/cloud.toml --check
swift test --skip-build "$@"
