#!/bin/bash
# Runs on the lent H200 (bench/device/README.md), from the repository root of the carried
# tree: unpacks .device/bins_*.tar.xz and .device/corpus.tar.xz (bench/device/pack.sh made
# them), then for the build LABEL, in this order (the most needed first, in case the
# device time runs out):
#   1. the GPU parity suites: ordered sum, ssimulacra2 (every corpus frame == the CPU),
#      SSIM, PSNR, vmaf, the scaler, frame pipeline, the device frame buffer, device
#      pictures and the device scaler                            -> $OUT/parity.txt
#   2. the ssimulacra2 bench's rates with 16 in flight at 270p, 1080p and 4K, LABEL and
#      each BASELINE label alternating in the same run, ROUNDS rounds -> $OUT/ab.txt
#      (and a summary table                                        -> $OUT/ab_table.txt)
#   3. the committed-run form of the bench (--check=1, four sizes, both modes)
#                                                   -> $OUT/run.json, $OUT/run.txt
#   4. compute-sanitizer memcheck and racecheck on small cases     -> $OUT/sanitizers.txt
#   5. with NCU=1, ncu's per-kernel durations of one 1080p and one 270p frame
#                                                   -> $OUT/ncu_*.csv.xz
#
#   bash bench/device/run_checks.sh LABEL [BASELINE...]
# Environment: ROUNDS (default 2), SKIP_JSON=1, SKIP_SANITIZERS=1, SANITIZE_ONLY=REGEX, NCU=1, SKIP_PARITY=1;
# AB_FLAGS="--a=1;--a=0" runs the rates of step 2 once per ;-separated set of bench flags
# (with or without baselines); AB_MODES (default exact_segments) the bench's --modes there.
set -u
LABEL=${1:?usage: run_checks.sh LABEL [BASELINE...]}
shift
BASELINES=("$@")
ROUNDS=${ROUNDS:-2}
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
ROOT=$PWD
# Everything goes into $OUT/checks.tar.gz at exit (a call returns at most 8 files).
source "$ROOT/bench/device/bundle_out.sh" checks parity.txt
W=$(mktemp -d)
cd "$W" || exit 1
for f in "$ROOT"/.device/bins_*.tar.xz "$ROOT"/.device/corpus.tar.xz; do
  [ -f "$f" ] && tar xJf "$f"
done
[ -d corpus ] && export EXACTQ_CORPUS=$W/corpus
B=$W/$LABEL
[ -x "$B/ssimulacra2_cuda_bench" ] || { echo "no build $LABEL in .device/bins_$LABEL.tar.xz" >&2; exit 2; }
read -r COMMIT DIRTY < "$B/COMMIT"
{
  echo "build $LABEL: commit $COMMIT (dirty: $DIRTY); baselines: ${BASELINES[*]:-none}"
  for b in "${BASELINES[@]}"; do echo "baseline $b: commit $(cat "$W/$b/COMMIT" 2>/dev/null || echo '?')"; done
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1
} >> "$OUT/parity.txt"
mkdir -p "$OUT/logs"

# 1. Parity.
[ "${SKIP_PARITY:-0}" = 1 ] || for t in ordered_sum_cuda_test ssimulacra2_cuda_test ssim_cuda_test psnr_cuda_test vmaf_cuda_test \
                                          bicubic_scaler_cuda_test frame_pipeline_test device_frame_buffer_cuda_test \
                                          device_picture_scoring_test device_scaler_test host_wait_event_cuda_test; do
  start=$(date +%s)
  timeout 300 "$B/$t" > "$W/$t.log" 2>&1
  rc=$?
  echo "$t rc=$rc $(($(date +%s) - start))s $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ tests?|^\[  SKIPPED \] [0-9]+ tests?' "$W/$t.log" | tr '\n' ' ')" >> "$OUT/parity.txt"
  grep -m1 -iE 'skipping|no (usable )?GPU' "$W/$t.log" >> "$OUT/parity.txt"
  grep -E 'Failure|^\[  FAILED  \] [A-Z]|bit-identical|redid' "$W/$t.log" | head -20 >> "$OUT/parity.txt"
  tail -c 200000 "$W/$t.log" | xz -6 > "$OUT/logs/$t.log.xz"
done

# 2. Rates against the baselines (and, with AB_FLAGS, of each build under each set of bench
# flags), alternating.
IFS=';' read -r -a FLAG_SETS <<< "${AB_FLAGS:-}"
[ ${#FLAG_SETS[@]} -eq 0 ] && FLAG_SETS=("")
if [ ${#BASELINES[@]} -gt 0 ] || [ -n "${AB_FLAGS:-}" ]; then
  for round in $(seq "$ROUNDS"); do
    for v in "${BASELINES[@]}" "$LABEL"; do
      for flags in "${FLAG_SETS[@]}"; do
        echo "=== round=$round $v${flags:+ ${flags// /_}}" >> "$OUT/ab.txt"
        # shellcheck disable=SC2086
        timeout 120 "$W/$v/ssimulacra2_cuda_bench" --reps=5 --frames=100 --instances=16 --sizes=270p,1080p,4k \
          --modes=${AB_MODES:-exact_segments} --check=0 $flags >> "$OUT/ab.txt" 2>&1
      done
    done
  done
  # One line per size, build (and flags) and mode: its rates in the rounds.
  awk '/^=== /{v = $3 ($4 == "" ? "" : " " $4)} /^[0-9]+x[0-9]+ 8-bit/{size = $1}
       /^ *[a-z_]+ .*16 in flight \(/{mode = $1}
       /16 in flight \(/{match($0, /: [0-9.]+ frames\/s/); k = size " " v " " mode; rate[k] = rate[k] " " substr($0, RSTART + 2, RLENGTH - 11)}
       END {for (k in rate) print k ":" rate[k]}' "$OUT/ab.txt" | sort > "$OUT/ab_table.txt"
fi

# 3. The committed-run form.
if [ "${SKIP_JSON:-0}" != 1 ]; then
  timeout 300 "$B/ssimulacra2_cuda_bench" --reps=10 --frames=60 --instances=1,8,16 --sizes=270p,540p,1080p,4k \
    --modes=exact_segments,inexact_tree --stream=pan --check=1 --json="$OUT/run.json" --commit="$COMMIT" \
    --dirty="$DIRTY" > "$OUT/run.txt" 2>&1
  echo "rc=$?" >> "$OUT/run.txt"
fi

# 4. Sanitizers on small cases (racecheck is slow).
if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  sanitize() {  # tool test filter; SANITIZE_ONLY: a regex on "tool test" picks some
    [[ "$1 $2" =~ ${SANITIZE_ONLY:-.} ]] || return 0
    timeout 200 "$CS" --tool "$1" --print-limit 30 "$B/$2" --gtest_filter="$3" > "$W/sanitize.log" 2>&1
    echo "$1 $2 $(grep -E '^\[  (PASSED|FAILED)|ERROR SUMMARY|RACECHECK SUMMARY' "$W/sanitize.log" | tr '\n' ' ')" \
      >> "$OUT/sanitizers.txt"
    head -c 100000 "$W/sanitize.log" | xz -6 > "$OUT/logs/${1}_$2.log.xz"
  }
  sanitize memcheck ordered_sum_cuda_test '*OnSmallPlanes*:*BothPipelinesOnSmallFrames*'
  sanitize memcheck ssimulacra2_cuda_test '*IdenticalPairs*:*LowerThird*'
  sanitize racecheck ordered_sum_cuda_test '*OnSmallPlanes*'
  sanitize racecheck ssimulacra2_cuda_test '*LowerThird*'
  sanitize memcheck vmaf_cuda_test '*EveryDepthAndSize*:*NegModel*'
  sanitize memcheck device_frame_buffer_cuda_test '*'
  sanitize memcheck device_scaler_test '*'
  sanitize racecheck vmaf_cuda_test '*NegModel*'
fi

# 5. ncu, kernels serialised (bench/device/ncu_frame_kernels.py reads the files).
if [ "${NCU:-0}" = 1 ]; then
  NCU_BIN=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for size in 1080p 270p; do
    timeout 200 "$NCU_BIN" --clock-control none --metrics gpu__time_duration.sum,sm__cycles_active.avg --csv \
      --launch-count 330 "$B/ssimulacra2_cuda_bench" --reps=1 --frames=2 --instances=1 --sizes=$size \
      --modes=exact_segments --check=0 --graph=0 2>&1 | xz -9 > "$OUT/ncu_${LABEL}_$size.csv.xz"
  done
fi
rm -rf "$W"
