#!/bin/bash
# Builds the GPU parity tests and the ssimulacra2 bench here (Debian, no GPU needed) for
# sm_90 and packs them for the lent H200, which has no Bazel: .device/bins_LABEL.tar.xz
# (static binaries, stripped, with the commit they were built from), and the corpus once
# as .device/corpus.tar.xz. .device/ is git-ignored; carry it in the device call and run
# bench/device/run_checks.sh there (bench/device/README.md).
#
#   bench/device/pack.sh LABEL          # e.g. pack.sh head; pack.sh base after a checkout
set -euo pipefail
cd "$(dirname "$0")/../.."
LABEL=${1:?usage: bench/device/pack.sh LABEL}
[[ $LABEL =~ ^[A-Za-z0-9_]+$ ]] || { echo "LABEL: letters, digits and _ only" >&2; exit 2; }
OUTPUT_BASE=${EXACTQ_DEVICE_OUTPUT_BASE:-/tmp/bazel-static}
CORPUS=${EXACTQ_CORPUS:-$PWD/../shared/corpus}
TARGETS=(//engine/metrics/ssimulacra2/cuda:ssimulacra2_cuda_test //bench/ssimulacra2:ssimulacra2_cuda_bench
         //engine/metrics/ssim/cuda:ssim_cuda_test //engine/runtime:frame_pipeline_test
         //engine/metrics/psnr/cuda:psnr_cuda_test //bench/runtime:runtime_bench //server:exactqd //client:exactq
         //engine/scale/cuda:bicubic_scaler_cuda_test)
BAZEL=(bazel --output_base="$OUTPUT_BASE")
"${BAZEL[@]}" build --config=static -c opt --symlink_prefix=/ "${TARGETS[@]}"
BIN=$("${BAZEL[@]}" info --config=static -c opt bazel-bin)

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
engine/exact/build_cuda_binaries.sh "$STAGE/exact" >/dev/null
mkdir "$STAGE/$LABEL"
cp "$BIN/engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_test" "$BIN/bench/ssimulacra2/ssimulacra2_cuda_bench" \
   "$BIN/engine/metrics/ssim/cuda/ssim_cuda_test" "$BIN/engine/runtime/frame_pipeline_test" \
   "$BIN/engine/metrics/psnr/cuda/psnr_cuda_test" "$BIN/bench/runtime/runtime_bench" \
   "$BIN/server/exactqd" "$BIN/client/exactq" "$BIN/engine/scale/cuda/bicubic_scaler_cuda_test" \
   "$STAGE/exact/ordered_sum_cuda_test" "$STAGE/$LABEL/"
chmod u+w "$STAGE/$LABEL"/*
strip "$STAGE/$LABEL"/*
dirty=false
[ -n "$(git status --porcelain --untracked-files=no)" ] && dirty=true
echo "$(git rev-parse --short HEAD) $dirty" > "$STAGE/$LABEL/COMMIT"
mkdir -p .device
tar -C "$STAGE" -cJf ".device/bins_$LABEL.tar.xz" "$LABEL"
echo "packed .device/bins_$LABEL.tar.xz ($(du -h ".device/bins_$LABEL.tar.xz" | cut -f1)): $(cat "$STAGE/$LABEL/COMMIT")"
if [ ! -f .device/corpus.tar.xz ]; then
  if [ -d "$CORPUS" ]; then
    tar -C "$(dirname "$CORPUS")" -cf - "$(basename "$CORPUS")" --transform "s|^$(basename "$CORPUS")|corpus|" |
      xz -T2 -6 > .device/corpus.tar.xz
    echo "packed .device/corpus.tar.xz ($(du -h .device/corpus.tar.xz | cut -f1))"
  else
    echo "no corpus at $CORPUS: the GPU runs will use synthetic 1080p and 4K pairs and skip the corpus tests"
  fi
fi
