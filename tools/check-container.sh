#!/usr/bin/env bash
# Builds and runs the Containerfile's runtime stage with podman, as a user would run the image:
# as uid 10001, data in a volume, the config file mounted read-only, HEALTHCHECK asked, then
# `podman stop` (SIGTERM to PID 1) and its exit status read.
#
# The stage is taken from the Containerfile itself (every line after its second FROM), so the
# recipe and this check cannot drift apart. Only two things differ from a full `podman build .`:
#   - the base image is the bare Debian 12 root that tools/check-package.sh makes with
#     debootstrap (`podman import`), because no registry is reachable from the build machine;
#   - the binary comes from the release tarball (tools/package.sh, the same command as the
#     Containerfile's first stage: a static Swift runtime, stripped) instead of that first
#     stage, whose Swift image cannot be pulled offline either.
# This sandbox refuses setrlimit inside containers (crun and runc alike), so containers run
# through a small OCI runtime wrapper that drops `process.rlimits` from the bundle before
# calling runc. On an ordinary host, run the plain `podman build` and `podman run` shown at
# the top of the Containerfile.
#   tools/package.sh && tools/check-package.sh && tools/check-container.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=.build-debian-root
tarball=$(ls -t dist/dally-*-linux-*.tar.gz 2>/dev/null | head -1)
[ -n "$tarball" ] || { echo "no release tarball: run tools/package.sh first" >&2; exit 1; }
[ -x "$root/bin/sh" ] || { echo "no Debian root: run tools/check-package.sh first" >&2; exit 1; }
need=()
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v runc >/dev/null 2>&1 || need+=(runc)
[ ${#need[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null

work=$(mktemp -d)
name=dally-check-$$
volume=dally-check-data-$$
cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  podman rmi -f localhost/dally-check:latest localhost/dally-check-base:bookworm >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The OCI runtime wrapper (see above).
cat > "$work/runc" <<EOF
#!/bin/sh
# Drops rlimits from a container's config.json (create) or an exec's process.json.
drop() {
  python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); c.pop("rlimits",None); c.get("process",{}).pop("rlimits",None); json.dump(c,open(p,"w"))' "\$1"
}
prev=""
for a in "\$@"; do
  case "\$prev" in
    --bundle|-b) drop "\$a/config.json" ;;
    --process|-p) drop "\$a" ;;
  esac
  prev="\$a"
done
exec $(command -v runc) "\$@"
EOF
chmod +x "$work/runc"
pod() { podman --runtime "$work/runc" "$@"; }

# The base image: the bare Debian root, without the tarball check-package.sh put in it.
tar -C "$root" --exclude=./opt/dally --exclude=./proc/* --exclude=./var/lib/dally-check -cf "$work/base.tar" .
podman import "$work/base.tar" localhost/dally-check-base:bookworm >/dev/null

# The build context: the runtime stage, its binary at the path the first stage leaves it.
mkdir -p "$work/ctx/out" "$work/ctx/config"
tar -C "$work" -xzf "$tarball"
cp "$work"/dally-*/bin/dally "$work/ctx/out/dally"
cp config/gateway.toml config/cloud.toml "$work/ctx/config/"
{ grep '^ARG BASE=' Containerfile; awk '/^FROM /{n++} n>=2' Containerfile; } | sed 's#^COPY --from=build /out/dally#COPY out/dally#' > "$work/ctx/Containerfile"
echo "runtime stage of the Containerfile:"
sed 's/^/  /' "$work/ctx/Containerfile"
buildah build --isolation chroot --format docker --build-arg BASE=localhost/dally-check-base:bookworm \
  -t localhost/dally-check:latest "$work/ctx" >"$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 1; }
echo "image: $(podman image inspect localhost/dally-check:latest --format '{{.Size}}') bytes," \
  "user $(podman image inspect localhost/dally-check:latest --format '{{.Config.User}}')," \
  "healthcheck: $(podman image inspect localhost/dally-check:latest --format '{{.Config.Healthcheck.Test}}')"

# Run it as the Containerfile's own comment says: a volume for the data, the config mounted.
podman volume create "$volume" >/dev/null
port=18556
pod run -d --name "$name" --network host --health-interval disable -v "$volume:/var/lib/dally" \
  -v "$PWD/config/gateway.toml:/etc/dally/gateway.toml:ro" localhost/dally-check:latest \
  gateway --config /etc/dally/gateway.toml --host 127.0.0.1 --port "$port" --data-dir /var/lib/dally >/dev/null
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
echo "healthz from outside: $(curl -s "http://127.0.0.1:$port/healthz")"
uid=$(pod exec "$name" sh -c 'id -u')
pid1=$(pod exec "$name" sh -c 'tr "\0" " " < /proc/1/cmdline')
data=$(pod exec "$name" sh -c 'ls /var/lib/dally | tr "\n" " "')
echo "process user inside: $uid; PID 1: $pid1"
echo "data in the volume: $data"
[ "$uid" = 10001 ] || { echo "the server runs as uid $uid, not 10001" >&2; exit 1; }
# The image's HEALTHCHECK asks the default port; ask the same command on this run's port.
health=$(podman image inspect localhost/dally-check:latest --format '{{index .Config.Healthcheck.Test 1}}')
pod exec "$name" sh -c "${health//8080/$port}" >/dev/null
echo "HEALTHCHECK command: passes"
pod stop -t 10 "$name" >/dev/null
status=$(podman inspect "$name" --format '{{.State.ExitCode}}')
last=$(podman logs "$name" 2>&1 | tail -1)
echo "after podman stop: exit status $status, last log line:"
echo "  $last"
[ "$status" = 0 ] && [[ "$last" == *"gateway stopped"* ]] || { echo "SIGTERM did not stop the gateway cleanly" >&2; exit 1; }
