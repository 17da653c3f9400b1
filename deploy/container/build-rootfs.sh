#!/usr/bin/env bash
# The container's runtime stage, performed into a folder: stages the binaries and every
# shared library they load (found with ldd, never listed by hand), and names the Debian
# packages that own those libraries (dpkg -S). The Dockerfile runs this in its build
# stage and installs exactly those packages into debian:12-slim; CI runs it through
# tests/deploy/container_rootfs_test, which runs the staged binaries on the staged
# libraries alone.
#
#   deploy/container/build-rootfs.sh OUT [EXACTQD [EXACTQ]]
#
# defaults: bazel-bin/server/exactqd and bazel-bin/client/exactq (after the README's
# `bazel build //server:exactqd //client:exactq`). Writes:
#   OUT/rootfs/usr/local/bin/{exactqd,exactq}   the binaries
#   OUT/rootfs/usr/lib*/...                      each library, as a file named as ldd
#                                                names it, in its /usr directory
#   OUT/rootfs/{lib,lib64}                       merged-/usr links, as in debian:12
#   OUT/libraries.txt                            "library-path package" per line
#   OUT/runtime-packages.txt                     the owning packages, one a line, sorted
# NVIDIA driver libraries (libcuda, libnvidia-*) are never staged: the node provides them.
set -euo pipefail

usage() { echo "usage: $0 OUT [EXACTQD [EXACTQ]]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 3 ] || usage
out=$1
exactqd=${2:-bazel-bin/server/exactqd}
exactq=${3:-bazel-bin/client/exactq}
for b in "$exactqd" "$exactq"; do
  [ -x "$b" ] || { echo "build-rootfs: $b is not an executable (build it first)" >&2; exit 1; }
done

rm -rf "$out/rootfs"
mkdir -p "$out/rootfs/usr/local/bin"
install -m 0755 "$exactqd" "$out/rootfs/usr/local/bin/exactqd"
install -m 0755 "$exactq" "$out/rootfs/usr/local/bin/exactq"

# Every library path ldd resolves, for both binaries.
libs=()
for binary in "$out/rootfs/usr/local/bin/exactqd" "$out/rootfs/usr/local/bin/exactq"; do
  # ldd's lines: "libX.so => /path (addr)", "/lib64/ld-linux-x86-64.so.2 (addr)",
  # "linux-vdso.so.1 (addr)" (the kernel's; no file), or "libX.so => not found".
  ldd_output=$(ldd "$binary")
  if grep -q "not found" <<<"$ldd_output"; then
    echo "build-rootfs: $binary: missing libraries on this machine:" >&2
    grep "not found" <<<"$ldd_output" >&2
    exit 1
  fi
  while read -r path; do
    [ -n "$path" ] || continue
    case "$(basename "$path")" in
      libcuda.so*|libnvidia-*) echo "build-rootfs: $path comes from the node's driver; not staged" >&2; continue ;;
    esac
    libs+=("$path")
  done < <(awk '/=>/ { if ($3 ~ /^\//) print $3; next } $1 ~ /^\// { print $1 }' <<<"$ldd_output")
done
mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)

# The package that owns each library, from one dpkg -S call. Debian 12 is merged-/usr:
# a file may be registered under /lib or /usr/lib, and ldd may report either spelling
# or a symlink, so each library is looked up under all of them.
candidates() {
  local path=$1 real c
  real=$(readlink -f "$path")
  for c in "$path" "$real"; do
    echo "$c"
    case "$c" in
      /usr/*) echo "${c#/usr}" ;;
      *) echo "/usr$c" ;;
    esac
  done
}
declare -A owner_of=()
while IFS= read -r line; do
  pkg=${line%%: /*}     # "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6"
  owner_of["/${line#*: /}"]=${pkg%%:*}
done < <(for l in "${libs[@]}"; do candidates "$l"; done | sort -u | xargs dpkg -S 2>/dev/null || true)

: > "$out/libraries.txt"
for path in "${libs[@]}"; do
  pkg=""
  while read -r c; do
    if [ -n "${owner_of[$c]:-}" ]; then pkg=${owner_of[$c]}; break; fi
  done < <(candidates "$path")
  if [ -z "$pkg" ]; then
    echo "build-rootfs: $path belongs to no Debian package; the runtime image could not install it" >&2
    exit 1
  fi
  echo "$path $pkg" >> "$out/libraries.txt"
done

# Stage each library as a plain file under the name the loader asks for, in its /usr
# directory, with Debian 12's merged-/usr links (/lib -> usr/lib, /lib64 -> usr/lib64)
# so that the loader's PT_INTERP path (/lib64/ld-linux-x86-64.so.2) resolves inside OUT.
mkdir -p "$out/rootfs/usr/lib" "$out/rootfs/usr/lib64"
ln -sfn usr/lib "$out/rootfs/lib"
ln -sfn usr/lib64 "$out/rootfs/lib64"
while read -r path _; do
  dir=$(readlink -f "$(dirname "$path")")
  mkdir -p "$out/rootfs$dir"
  cp -L "$path" "$out/rootfs$dir/$(basename "$path")"
done < "$out/libraries.txt"

awk '{ print $2 }' "$out/libraries.txt" | sort -u > "$out/runtime-packages.txt"
echo "build-rootfs: staged 2 binaries and $(wc -l < "$out/libraries.txt") libraries from" \
  "$(wc -l < "$out/runtime-packages.txt") packages into $out/rootfs"
