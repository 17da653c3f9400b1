#!/bin/bash
# Device mutation check of the exact sum's CUDA pipelines: runs the CUDA suite built with
# every mutant of internal/device_mutants.cuh compiled in, first with none (it must pass,
# on a GPU: a skipped suite proves nothing), then once per mutant (EXACTQ_MUTANT=N), each
# of which must make it fail. Prints caught/missed per mutant; exit 0 = every one caught.
#
#   engine/exact/build_cuda_binaries.sh /tmp/exactq_exact       # anywhere with nvcc
#   engine/exact/device_mutations.sh /tmp/exactq_exact/ordered_sum_cuda_mutants_test   # on a GPU host
# Extra arguments go to the test binary (e.g. --gtest_filter=...); ONLY_MUTANTS="8 9" runs
# those mutants alone.
set -u
cd "$(dirname "$0")/../.."
BIN=${1:?usage: device_mutations.sh PATH/ordered_sum_cuda_mutants_test [gtest arguments]}
shift
MUTANTS=$(sed -n 's/^inline constexpr int kDeviceMutants = \([0-9]*\);$/\1/p' engine/exact/internal/device_mutants.cuh)
[ -n "$MUTANTS" ] || { echo "kDeviceMutants not found in internal/device_mutants.cuh"; exit 2; }
LOG=$(mktemp -d)
trap 'rm -rf "$LOG"' EXIT
# Each suite runs in the background and is waited for, so that a TERM or INT (a caller's
# time limit) stops it too instead of leaving it on the GPU.
CHILD=
trap '[ -n "$CHILD" ] && kill "$CHILD" 2>/dev/null; exit 143' TERM INT
run() {  # LOG_FILE MUTANT: the suite with that mutant (0: none)
  local log=$1 mutant=$2
  shift 2
  env EXACTQ_MUTANT="$mutant" timeout 900 "$BIN" "$@" >"$log" 2>&1 &
  CHILD=$!
  wait "$CHILD"
}

run "$LOG/0.txt" 0 "$@"
rc=$?
if [ $rc -ne 0 ]; then
  echo "the suite fails without a mutant (exit $rc):"
  tail -20 "$LOG/0.txt"
  exit 2
fi
if grep -q '^\[  SKIPPED \]' "$LOG/0.txt"; then
  echo "the suite skipped tests without a mutant (no GPU?): a mutation check needs it to run"
  grep '^\[  SKIPPED \]' "$LOG/0.txt" | head -5
  exit 2
fi

caught=0
for n in ${ONLY_MUTANTS:-$(seq 1 "$MUTANTS")}; do
  run "$LOG/$n.txt" "$n" "$@"
  rc=$?
  failed=$(grep -E '^\[  FAILED  \] [A-Za-z0-9_/.]+' "$LOG/$n.txt" | sed 's/ (.*//; s/\[  FAILED  \] //' | sort -u | head -4 |
    tr '\n' ' ')
  mutant=$(sed -n "s@^//   $n \(.*\)@\1@p" engine/exact/internal/device_mutants.cuh)
  if [ $rc -ne 0 ]; then
    caught=$((caught + 1))
    echo "MUTANT $n ($mutant): caught (exit $rc) ${failed:+by $failed}"
  else
    echo "MUTANT $n ($mutant): MISSED"
  fi
done
RUN=$(echo ${ONLY_MUTANTS:-$(seq 1 "$MUTANTS")} | wc -w)
echo "$caught of $RUN device mutants caught"
[ "$caught" -eq "$RUN" ]
