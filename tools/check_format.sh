#!/usr/bin/env bash
# Fails when a C++ or CUDA file differs from what clang-format (Debian 12's, 14) makes of
# it with the repository's .clang-format. `tools/check_format.sh --fix` formats them.
# Data tables (the VMAF models' coefficients, the golden values) are left as written.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.cc' '*.cu' '*.cuh' '*.inc' |
  grep -v -E '(_model\.inc|golden_values\.inc)$')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/exactq-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/exactq-format.$$ | cut -d: -f1 | sort -u | sed 's/^/unformatted: /' | head -50
  rm -f /tmp/exactq-format.$$
  echo "check_format: run tools/check_format.sh --fix (clang-format $(clang-format --version | grep -oE '[0-9]+\.[0-9.]+'))" >&2
  exit 1
fi
rm -f /tmp/exactq-format.$$
echo "check_format: ${#files[@]} files formatted"
