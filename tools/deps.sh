#!/usr/bin/env bash
# Installs the system libraries Dally builds against, when they are missing and apt is there.
# Run by tools/run.sh and tools/test.sh (DALLY_DEPS=test adds what the tests drive); safe to
# run again.
set -euo pipefail
needed=()
for pkg in libsqlite3-dev zlib1g-dev libzstd-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || needed+=("$pkg")
done
# The tests drive real tools: promtool (from the prometheus package) lints /metrics; openssl
# makes the private CA and certificates of the TLS tests and reads what a server presents;
# python3 starts `dally client` in the object test so that its peak memory is its own;
# PostgreSQL runs the cloud store's contract suite and the multi-node tests (a throwaway
# cluster per test process, started by the tests themselves: see PostgresCluster); nginx stands
# in front of a cloud as docs/OPERATIONS.md shows (NginxFront).
if [ "${DALLY_DEPS:-}" = test ]; then
  command -v promtool >/dev/null 2>&1 || needed+=(prometheus)
  command -v openssl >/dev/null 2>&1 || needed+=(openssl)
  command -v python3 >/dev/null 2>&1 || needed+=(python3)
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || needed+=(postgresql)
  [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || needed+=(nginx)
fi
if [ ${#needed[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "installing ${needed[*]}" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${needed[@]}" >/dev/null
  else
    echo "missing ${needed[*]} and no apt-get: install them with your package manager" >&2
    exit 1
  fi
fi
command -v swift >/dev/null 2>&1 || { echo "swift is not on PATH: install Swift 6.1 or later" >&2; exit 1; }
