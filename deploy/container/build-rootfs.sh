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
#   OUT/rootfs/<path of each library>            each library, at its canonical path,
#                                                and the dynamic loader at its PT_INTERP path
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

# The package that owns a library. Debian 12 is merged-/usr: a file may be registered
# under /lib or /usr/lib, and ldd may report either spelling or a symlink.
owner() {
  local path=$1 real candidates c
  real=$(readlink -f "$path")
  candidates=("$path" "$real")
  for c in "$path" "$real"; do
    case "$c" in
      /usr/*) candidates+=("${c#/usr}") ;;
      *) candidates+=("/usr$c") ;;
    esac
  done
  for c in "${candidates[@]}"; do
    if pkg=$(dpkg -S "$c" 2>/dev/null | head -n1); then
      echo "${pkg%%: *}" | sed 's/:[a-z0-9_]*$//'  # "libc6:amd64: /path" -> libc6
      return 0
    fi
  done
  return 1
}

: > "$out/libraries.txt.tmp"
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
    pkg=$(owner "$path") || {
      echo "build-rootfs: $path belongs to no Debian package; the runtime image could not install it" >&2
      exit 1
    }
    echo "$path $pkg" >> "$out/libraries.txt.tmp"
  done < <(awk '/=>/ { if ($3 ~ /^\//) print $3; next } $1 ~ /^\// { print $1 }' <<<"$ldd_output")
done
sort -u "$out/libraries.txt.tmp" > "$out/libraries.txt"
rm -f "$out/libraries.txt.tmp"

# Stage each library at its canonical (/usr) path, its loader-visible name as a symlink
# when that differs (the loader at /lib64, libraries under /lib on merged-/usr).
while read -r path _; do
  real=$(readlink -f "$path")
  mkdir -p "$out/rootfs$(dirname "$real")"
  cp -p "$real" "$out/rootfs$real"
  if [ "$path" != "$real" ]; then
    mkdir -p "$out/rootfs$(dirname "$path")"
    # Relative inside the rootfs would also do; an absolute link is what the image has.
    [ -e "$out/rootfs$path" ] || [ -L "$out/rootfs$path" ] || ln -s "$real" "$out/rootfs$path"
  fi
done < "$out/libraries.txt"

awk '{ print $2 }' "$out/libraries.txt" | sort -u > "$out/runtime-packages.txt"
echo "build-rootfs: staged 2 binaries and $(wc -l < "$out/libraries.txt") libraries from" \
  "$(wc -l < "$out/runtime-packages.txt") packages into $out/rootfs"
