#!/usr/bin/env bash
# What JSONParser costs a write body whose numbers are short (prices, counts) and one whose
# numbers have 16–19 significant digits (times in seconds with microseconds, ratios), at two
# revisions of DallyCore: each built alone with `swiftc -O` around json_numbers.swift, run in
# turn ROUNDS times (the best of seven passes over 20,000 documents each).
#
# Usage: BASE=<rev> [HEAD_REV=<rev, default the work tree>] [ROUNDS=3] tools/bench/json_numbers.sh
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
BASE=${BASE:?BASE=<revision to compare against>}
ROUNDS=${ROUNDS:-3}
TMP=$(mktemp -d /tmp/dally-json-numbers.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/base" "$TMP/head"
cp "$BENCH_DIR/json_numbers.swift" "$TMP/main.swift"  # top-level code: it must be main.swift
git -C "$REPO" archive "$BASE" Sources/DallyCore | tar -x -C "$TMP/base" --strip-components=2
if [ -n "${HEAD_REV:-}" ]; then
  git -C "$REPO" archive "$HEAD_REV" Sources/DallyCore | tar -x -C "$TMP/head" --strip-components=2
else
  cp -r "$REPO/Sources/DallyCore/." "$TMP/head/"
fi
for side in base head; do
  swiftc -O -module-name Bench "$TMP/main.swift" $(find "$TMP/$side" -name '*.swift') -o "$TMP/bench-$side"
done
for round in $(seq "$ROUNDS"); do
  for side in base head; do
    "$TMP/bench-$side" | sed "s/^/round $round $side: /"
  done
done
