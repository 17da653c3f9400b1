#!/bin/bash
# Runs on the lent H200 (bench/device/README.md) after pack.sh LABEL [and BASELINE]: the
# runtime's checks, the most needed first.
#   1. psnr parity, the frame pipeline's GPU tests (every twin on one device frame) and
#      the exact scaler's twin against its CPU definition
#                                                                -> $OUT/runtime_parity.txt
#   2. the server's GPU parity suite: exactqd + exactq on every corpus pair, cuda against
#      cpu, bit for bit, psnr,ssim,ssimulacra2                   -> $OUT/server_parity.txt
#   3. the three-metric request at 4K with 16 frames in flight (8 streams x 2): bytes per
#      frame and the engine's time per frame against each metric alone on resident
#      frames, then the request on resident frames; once per GPU_WAITS (default: block,
#      the server's, then spin, CUDA's)                          -> $OUT/runtime_request_WAIT.{txt,json}
#   4. with BASELINE: each metric alone and the three together at 4K, 16 frames in
#      flight, LABEL and BASELINE alternating, ROUNDS rounds     -> $OUT/runtime_ab.txt
#
#   bash bench/device/run_runtime.sh LABEL [BASELINE]
#   RUNTIME_TESTS= leaves step 1 out (after run_checks.sh, which runs those tests too);
#   SKIP_SERVER_PARITY=1 and SKIP_REQUEST=1 leave steps 2 and 3 out
set -u
LABEL=${1:?usage: run_runtime.sh LABEL [BASELINE]}
BASELINE=${2:-}
ROUNDS=${ROUNDS:-2}
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
ROOT=$PWD
# Everything goes into $OUT/runtime.tar.gz at exit (a call returns at most 8 files).
source "$ROOT/bench/device/bundle_out.sh" runtime server_parity.txt runtime_request_block.txt runtime_request_spin.txt
W=$(mktemp -d)
cd "$W" || exit 1
for f in "$ROOT"/.device/bins_*.tar.xz "$ROOT"/.device/corpus.tar.xz; do
  [ -f "$f" ] && tar xJf "$f"
done
[ -d corpus ] && export EXACTQ_CORPUS=$W/corpus
B=$W/$LABEL
read -r COMMIT DIRTY < "$B/COMMIT"
echo "build $LABEL: commit $COMMIT (dirty: $DIRTY); baseline: ${BASELINE:-none} $(cat "$W/$BASELINE/COMMIT" 2>/dev/null)" \
  > "$OUT/runtime_parity.txt"
for t in ${RUNTIME_TESTS-psnr_cuda_test frame_pipeline_test bicubic_scaler_cuda_test}; do
  [ -x "$B/$t" ] || continue
  timeout 300 "$B/$t" > "$OUT/$t.log" 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]|^\[  SKIPPED \]' "$OUT/$t.log" | tr '\n' ' ')" >> "$OUT/runtime_parity.txt"
done

# exactqd links prometheus-cpp's and civetweb's shared libraries, carried in LABEL/lib
# (FFmpeg is linked in); a machine where it still cannot start says so here.
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$B/nvdec_probe" > "$OUT/nvdec_probe.txt" 2>&1
echo "rc=$?" >> "$OUT/nvdec_probe.txt"
if ! "$B/exactqd" --version > "$W/exactqd_version.txt" 2>&1; then
  { echo "server parity skipped: exactqd does not start here:"; head -3 "$W/exactqd_version.txt"; } > "$OUT/server_parity.txt"
elif [ -d corpus ] && [ "${SKIP_SERVER_PARITY:-0}" != 1 ]; then
  timeout 400 python3 "$ROOT/tests/gpu/gpu_parity_suite.py" --bin "$B" --pairs corpus --metrics psnr,ssim,ssimulacra2 \
    --out "$W/parity_out" > "$OUT/server_parity.txt" 2>&1
  echo "rc=$?" >> "$OUT/server_parity.txt"
  for f in "$W"/parity_out/*.log "$W"/parity_out/*.ports; do
    [ -f "$f" ] && { echo "== $(basename "$f")"; tail -20 "$f"; }
  done > "$OUT/server_parity_logs.txt"
fi

# Once per way of waiting for the GPU (GPU_WAITS), the server's (block) first.
[ "${SKIP_REQUEST:-0}" = 1 ] && GPU_WAITS=" "
for wait in ${GPU_WAITS:-block spin}; do
  timeout 300 "$B/runtime_bench" --cpu=0 --sizes=4k --streams=8 --frames_in_flight=2 --resident=1 --upload_traffic=1 \
    --reps=5 --seconds=1 \
    --metrics=psnr+ssim+ssimulacra2 --gpu_wait="$wait" --json="$OUT/runtime_request_$wait.json" --commit="$COMMIT" \
    --dirty="$DIRTY" > "$OUT/runtime_request_$wait.txt" 2>&1
  echo "rc=$?" >> "$OUT/runtime_request_$wait.txt"
done

if [ -n "$BASELINE" ]; then
  for round in $(seq "$ROUNDS"); do
    for v in "$BASELINE" "$LABEL"; do
      echo "=== round=$round $v" >> "$OUT/runtime_ab.txt"
      timeout 200 "$W/$v/runtime_bench" --cpu=0 --sizes=4k --streams=8 --frames_in_flight=2 --reps=3 --seconds=1 \
        --metrics=psnr,ssim,ssimulacra2,psnr+ssim+ssimulacra2 >> "$OUT/runtime_ab.txt" 2>&1
    done
  done
fi
rm -rf "$W"
