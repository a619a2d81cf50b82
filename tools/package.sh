#!/usr/bin/env bash
# Builds the release tarball: `dally` linked with the Swift runtime statically and stripped,
# the commented configurations, the systemd units and INSTALL.md, in
# dist/dally-<version>-linux-<arch>.tar.gz. The binary then needs only the Debian packages
# libsqlite3-0, zlib1g and libzstd1 (tools/check-package.sh proves it on a bare Debian root).
#   tools/package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
command -v strip >/dev/null 2>&1 || { echo "strip (binutils) is needed" >&2; exit 1; }
version=$(sed -n 's/.*current = "\(.*\)".*/\1/p' Sources/DallyCore/DallyVersion.swift)
arch=$(uname -m)
name="dally-$version-linux-$arch"
# A scratch path of its own, so that the ordinary release build is left as it is.
swift build -c release --product dally --static-swift-stdlib --scratch-path .build-package
stage="dist/$name"
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/config" "$stage/deploy"
cp .build-package/release/dally "$stage/bin/dally"
strip "$stage/bin/dally"
cp config/gateway.toml config/cloud.toml "$stage/config/"
cp deploy/dally-gateway.service deploy/dally-cloud.service "$stage/deploy/"
cp deploy/INSTALL.md "$stage/INSTALL.md"
tar -C dist -czf "dist/$name.tar.gz" "$name"
echo "dist/$name.tar.gz: $(stat -c %s "dist/$name.tar.gz") bytes; binary $(stat -c %s "$stage/bin/dally") bytes"
echo "shared libraries the binary needs:"
ldd "$stage/bin/dally" | awk '{print "  " $1}'
