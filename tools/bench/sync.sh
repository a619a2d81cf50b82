#!/usr/bin/env bash
# Dally sync benchmarks (loopback only, one process each, temp data dirs, stop by themselves).
#
# What it does:
#   1. builds the release benchmark binary into its own scratch path, so that other builders' debug
#      builds in .build are left alone:
#        swift build -c release --product dally-bench --scratch-path $SCRATCH      (unless SKIP_BUILD=1)
#   2. runs, printing each command and its figures:
#        apply        dally-bench apply        the cloud's batch apply rate: store alone, over HTTP
#                                              from 1 and from 4 gateways, and raw SQLite (the limit)
#        propagation  dally-bench propagation  PUT on gateway A -> long-poll answer on gateway B,
#                                              and the sync-now round trip
#   3. collects the RESULT lines in $RESULTS_DIR/results.txt (each bench's output beside it).
#
# Usage (from anywhere):
#   tools/bench/sync.sh                                   # build (~6 min on 2 cores) + ~1-2 min
#   SKIP_BUILD=1 tools/bench/sync.sh
#   SKIP_BUILD=1 BENCHES=apply APPLY_ARGS="--updates 0.3 --synchronous normal" tools/bench/sync.sh
# Env knobs (defaults in brackets):
#   BENCHES [apply propagation]   SKIP_BUILD [0]   SCRATCH [/tmp/bench-build]
#   BENCH_BIN [$SCRATCH/release/dally-bench]
#   APPLY_ARGS []         extra flags of `dally-bench apply` (--rows-per-batch, --batches,
#                         --columns, --updates, --synchronous, --gateways, --level)
#   PROPAGATION_ARGS []   extra flags of `dally-bench propagation` (--samples, --warmup,
#                         --wait, --synchronous)
#   BENCH_TIMEOUT [1800]  seconds each bench may take before it is stopped
#   RESULTS_DIR [/tmp/dally-bench-results/sync-<timestamp>]
# The figures are measurements, not pass/fail: the machine has 2 cores shared by the clients
# and the servers, and its fsync rate varies from run to run; compare runs made the same way.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
cd "$REPO"

BENCHES=${BENCHES:-"apply propagation"}
SCRATCH=${SCRATCH:-/tmp/bench-build}
BENCH_BIN=${BENCH_BIN:-$SCRATCH/release/dally-bench}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-1800}
RESULTS_DIR=${RESULTS_DIR:-/tmp/dally-bench-results/sync-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RESULTS_DIR"
RESULTS=$RESULTS_DIR/results.txt
: >"$RESULTS"

log() { printf '== %s\n' "$*" >&2; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  bash "$REPO/tools/deps.sh"   # the libraries the build links: zstd, zlib, SQLite
  log "swift build -c release --product dally-bench --scratch-path $SCRATCH"
  swift build -c release --product dally-bench --scratch-path "$SCRATCH"
fi
if [ ! -x "$BENCH_BIN" ]; then
  echo "no binary at $BENCH_BIN (build it, or set BENCH_BIN / SCRATCH)" >&2
  exit 1
fi

# run NAME ARGS...: prints the command, runs it (bounded), keeps its output, collects RESULT lines
run() {
  local name=$1; shift
  echo
  echo "\$ $*"
  local rc=0
  timeout --signal=TERM --kill-after=30 "$BENCH_TIMEOUT" "$@" 2>"$RESULTS_DIR/$name.log" | tee "$RESULTS_DIR/$name.txt" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "$name failed (exit $rc); its standard error:" >&2
    tail -n 30 "$RESULTS_DIR/$name.log" >&2 || true
    return 0
  fi
  grep '^RESULT' "$RESULTS_DIR/$name.txt" >>"$RESULTS" || true
}

want() { [[ " $BENCHES " == *" $1 "* ]]; }
# shellcheck disable=SC2086  # the *_ARGS are word lists on purpose
want apply && run apply "$BENCH_BIN" apply ${APPLY_ARGS:-}
# shellcheck disable=SC2086
want propagation && run propagation "$BENCH_BIN" propagation ${PROPAGATION_ARGS:-}

echo
echo "Dally sync bench ($BENCH_BIN; $(nproc) cores; results in $RESULTS_DIR)"
cat "$RESULTS"
