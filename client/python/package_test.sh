#!/usr/bin/env bash
# Installs client/python as a package the way the README says, offline, on Debian's
# grpcio, protobuf and numpy (python3 -m venv --system-site-packages, then pip install
# --no-build-isolation --no-index), and runs package_check.py with the venv's Python
# against the real exactqd. The sources are copied first (runfiles are symlinks, and
# the build writes beside them).
set -euo pipefail
root=$PWD
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/exactq-package.XXXXXX")
mkdir -p "$work/src/client" "$work/src/proto/exactq/v1"
cp -rL client/python "$work/src/client/python"
rm -rf "$work/src/client/python/exactq"  # stubs the Bazel build made, if any: pip makes its own
cp -L proto/exactq/v1/exactq.proto "$work/src/proto/exactq/v1/"
/usr/bin/python3 -m venv --system-site-packages "$work/V"
"$work/V/bin/pip" install --quiet --no-build-isolation --no-index "$work/src/client/python"
cd "$work"
# -I: the script's folder (the sources) stays off sys.path, so imports come from the venv.
exec env EXACTQ_RUNFILES="$root" EXACTQ_VENV="$work/V" "$work/V/bin/python" -I -B \
  "$root/client/python/package_check.py"
