#!/usr/bin/env bash
# The main job, from nothing: install, build, start exactqd on free loopback ports,
# score the committed sample pair through the real client, stop the server.
# Usage: tools/demo.sh [REF DIST [client flags...]]   (default: samples/sample.*.y4m)
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup-debian.sh
bazel build //server:exactqd //client:exactq
bin=$(bazel info bazel-bin)

work=$(mktemp -d)
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
"$bin/server/exactqd" --listen=127.0.0.1:0 --metrics-listen=127.0.0.1:0 \
  --port-file="$work/ports" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 300); do [ -s "$work/ports" ] && break; sleep 0.1; done
[ -s "$work/ports" ] || { cat "$work/server.log"; echo "demo: the server did not start" >&2; exit 1; }
grpc_port=$(sed -n 's/^grpc=//p' "$work/ports")
metrics_port=$(sed -n 's/^metrics=//p' "$work/ports")
echo "demo: exactqd serving on 127.0.0.1:$grpc_port (metrics on :$metrics_port)"

ref=${1:-samples/sample.ref.y4m}
dist=${2:-samples/sample.dist.y4m}
shift $(( $# >= 2 ? 2 : $# ))
"$bin/client/exactq" score "$ref" "$dist" --server "127.0.0.1:$grpc_port" \
  --metrics psnr,ssim,ssimulacra2,vmaf --json "$work/scores.json" "$@"
echo "demo: libvmaf-shaped JSON:"
cat "$work/scores.json"
