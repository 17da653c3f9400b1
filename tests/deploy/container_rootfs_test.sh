#!/usr/bin/env bash
# The container's runtime stage without a container engine: deploy/container/build-rootfs.sh
# stages the real binaries and the libraries ldd finds; then the staged binaries run on
# the staged libraries alone (the staged loader, --library-path to the staged folder,
# the system cache ignored): --helpfull, and a real exactqd serving the staged exactq
# client, whose every mapped shared object must come from the staging folder.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
work=${TEST_TMPDIR:-$(mktemp -d)}
out="$work/staging"
rootfs="$out/rootfs"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

deploy/container/build-rootfs.sh "$out" server/exactqd client/exactq

# The package list: non-empty, each an installed Debian package, glibc and gRPC among them.
[ -s "$out/runtime-packages.txt" ] || fail "runtime-packages.txt is empty"
while read -r pkg; do
  dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || fail "runtime package $pkg is not an installed Debian package"
done < "$out/runtime-packages.txt"
grep -qx libc6 "$out/runtime-packages.txt" || fail "libc6 missing from the runtime packages"
grep -q '^libgrpc++' "$out/runtime-packages.txt" || fail "no libgrpc++ among the runtime packages"
echo "runtime packages: $(tr '\n' ' ' < "$out/runtime-packages.txt")"

interp=$(readelf -l "$rootfs/usr/local/bin/exactqd" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
[ -n "$interp" ] || fail "exactqd has no PT_INTERP"
loader="$rootfs$interp"
[ -f "$loader" ] || fail "the loader $interp is not staged"
libdir="$rootfs/usr/lib/x86_64-linux-gnu"
staged() { "$loader" --inhibit-cache --library-path "$libdir" "$@"; }

# Every library each binary needs resolves inside the staging folder.
for b in exactqd exactq; do
  listing=$(staged --list "$rootfs/usr/local/bin/$b")
  ! grep -q "not found" <<<"$listing" || fail "$b: $(grep 'not found' <<<"$listing")"
  outside=$(grep '=>' <<<"$listing" | awk '{print $3}' | grep -v "^$rootfs/" || true)
  [ -z "$outside" ] || fail "$b loads libraries from outside the staging folder: $outside"
done

# (absl's --help exits 1 by design; --version exits 0.)
help=$(staged "$rootfs/usr/local/bin/exactqd" --helpfull 2>&1 || true)
grep -q -- "--listen" <<<"$help" || fail "staged exactqd --helpfull lists no --listen flag: $help"
staged "$rootfs/usr/local/bin/exactqd" --version > /dev/null || fail "staged exactqd --version failed"
help=$(staged "$rootfs/usr/local/bin/exactq" --help 2>&1 || true)
grep -q -- "--server" <<<"$help" || fail "staged exactq --help lists no --server flag: $help"

# A real run: the staged server on loopback, the staged client scoring the sample pair.
ports="$work/ports"
# (the loader itself, not the shell function, so that $! is the server's pid)
"$loader" --inhibit-cache --library-path "$libdir" "$rootfs/usr/local/bin/exactqd" \
  --listen=127.0.0.1:0 --metrics-listen=127.0.0.1:0 --port-file="$ports" 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 300); do [ -s "$ports" ] && break; sleep 0.1; done
[ -s "$ports" ] || { cat "$work/server.log" >&2; fail "the staged exactqd did not start"; }
grpc_port=$(sed -n 's/^grpc=//p' "$ports")
staged "$rootfs/usr/local/bin/exactq" score samples/sample.ref.y4m samples/sample.dist.y4m \
  --server "127.0.0.1:$grpc_port" --quiet --json "$work/scores.json" \
  || { cat "$work/server.log" >&2; fail "the staged client could not score through the staged server"; }
grep -q '"psnr_y"' "$work/scores.json" || fail "no psnr_y in the staged client's JSON"

# What the running server really mapped (dlopen included), not only what ldd predicts.
mapped=$(awk '$6 ~ /\.so/ {print $6}' "/proc/$server_pid/maps" | sort -u)
[ -n "$mapped" ] || fail "no shared objects mapped by the running server"
# (The NVIDIA driver's libraries come from the node, by design, where a GPU is present.)
outside=$(grep -v "^$rootfs/" <<<"$mapped" | grep -Ev '/(libcuda\.so|libnvidia-)[^/]*$' || true)
[ -z "$outside" ] || fail "the running server mapped objects from outside the staging folder: $outside"
echo "running server mapped $(wc -l <<<"$mapped") shared objects, all staged"

kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" -eq 0 ] || { cat "$work/server.log" >&2; fail "the staged exactqd exited with $status on SIGTERM"; }

# The same rootfs as a root directory, where the sandbox lets us (as in the image).
if chroot "$rootfs" /usr/local/bin/exactqd --version > /dev/null 2> "$work/chroot.err"; then
  echo "chroot: the staged exactqd runs with the staging folder as its root"
else
  echo "chroot: skipped ($(head -n1 "$work/chroot.err"))"
fi
echo "PASS"
