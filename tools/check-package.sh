#!/usr/bin/env bash
# Installs the release tarball on a bare Debian root, as a new user would, and runs it there:
# a minimal Debian 12 file system (debootstrap, cached in .build-debian-root) with only
# libsqlite3-0, zlib1g and libzstd1 added; the gateway started in it with the shipped
# configuration, /healthz asked from outside, its idle RSS read, then stopped with SIGTERM.
#   tools/package.sh && tools/check-package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tarball=$(ls -t dist/dally-*-linux-*.tar.gz | head -1)
root=.build-debian-root
if [ ! -x "$root/bin/sh" ]; then
  command -v debootstrap >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  debootstrap --variant=minbase --include=libsqlite3-0,zlib1g,libzstd1 bookworm "$root" http://deb.debian.org/debian >/dev/null
fi
# A real system has /proc; the Swift runtime, linked statically, reads the command line there.
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
rm -rf "$root/opt/dally" && mkdir -p "$root/opt/dally"
tar -C "$root/opt/dally" --strip-components=1 -xzf "$tarball"
echo "installed $(basename "$tarball") into a bare Debian root ($(du -shx "$root" | cut -f1))"
echo "libraries the binary resolves there:"
chroot "$root" /usr/bin/ldd /opt/dally/bin/dally | sed 's/^/  /'
chroot "$root" /opt/dally/bin/dally --version
cd_root() { chroot "$root" /bin/sh -c "cd /opt/dally && $1"; }
cd_root "bin/dally gateway --config config/gateway.toml --check"
port=18555
cd_root "exec bin/dally gateway --config config/gateway.toml --port $port --data-dir /var/lib/dally-check" \
  > /tmp/dally-check-package.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; umount "$root/proc" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
echo "healthz: $(curl -s "http://127.0.0.1:$port/healthz")"
gateway=$(pgrep -f "dally gateway --config config/gateway.toml --port $port" | head -1)
echo "idle RSS: $(awk '/VmRSS/ {print $2, $3}' "/proc/$gateway/status")"
kill -TERM "$gateway"
wait $pid || true
tail -1 /tmp/dally-check-package.log
