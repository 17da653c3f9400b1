#!/bin/bash
# Builds the GPU parity tests, the benches, the server and the client here (Debian, no GPU
# needed) for sm_90 and packs them for the lent H200, which has no Bazel and no FFmpeg:
# .device/bins_LABEL.tar.xz (stripped binaries with our code and FFmpeg linked in, from
# bench/device/build_ffmpeg.sh's decode-only build, made here on first use; libstdc++,
# prometheus-cpp and civetweb shared, their Debian copies in lib/; with the commit they
# were built from), and the corpus
# once as .device/corpus.tar.xz. .device/ is git-ignored; carry it in the device call and run
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
         //engine/scale/cuda:bicubic_scaler_cuda_test //bench/decode:decode_rate //engine/decode:gpu_decode_test
         //engine/decode:gpu_decoder_memory_test
         //engine/metrics/vmaf/cuda:vmaf_cuda_test //bench/vmaf:vmaf_cuda_bench
         //engine/runtime:device_picture_scoring_test //engine/scale/cuda:device_scaler_test
         //engine/platform:device_frame_buffer_cuda_test //engine/platform:host_wait_event_cuda_test)
FFMPEG_PREFIX=/tmp/exactq-ffmpeg-device  # the prefix --config=device names (.bazelrc)
[ -f "$FFMPEG_PREFIX/lib/libavcodec.a" ] || bench/device/build_ffmpeg.sh "$FFMPEG_PREFIX"
BAZEL=(bazel --output_base="$OUTPUT_BASE")
"${BAZEL[@]}" build --config=device -c opt --symlink_prefix=/ "${TARGETS[@]}"
BIN=$("${BAZEL[@]}" info --config=device -c opt bazel-bin)

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
engine/exact/build_cuda_binaries.sh "$STAGE/exact" >/dev/null
mkdir "$STAGE/$LABEL"
cp "$BIN/engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_test" "$BIN/bench/ssimulacra2/ssimulacra2_cuda_bench" \
   "$BIN/engine/metrics/ssim/cuda/ssim_cuda_test" "$BIN/engine/runtime/frame_pipeline_test" \
   "$BIN/engine/metrics/psnr/cuda/psnr_cuda_test" "$BIN/bench/runtime/runtime_bench" \
   "$BIN/server/exactqd" "$BIN/client/exactq" "$BIN/engine/scale/cuda/bicubic_scaler_cuda_test" \
   "$BIN/bench/decode/decode_rate" "$BIN/engine/decode/gpu_decode_test" "$BIN/engine/decode/gpu_decoder_memory_test" \
   "$STAGE/exact/ordered_sum_cuda_test" \
   "$BIN/engine/metrics/vmaf/cuda/vmaf_cuda_test" "$BIN/bench/vmaf/vmaf_cuda_bench" \
   "$BIN/engine/runtime/device_picture_scoring_test" "$BIN/engine/scale/cuda/device_scaler_test" \
   "$BIN/engine/platform/device_frame_buffer_cuda_test" "$BIN/engine/platform/host_wait_event_cuda_test" \
   "$STAGE/$LABEL/"
# The probe of the GPU's video decoder; its headers come with build_ffmpeg.sh's packages.
g++ -O2 -std=c++17 -Wall -Werror -static-libstdc++ -static-libgcc -o "$STAGE/$LABEL/nvdec_probe" \
  bench/device/nvdec_probe.cc -ldl
# The CUDA suite of the exact sum with its device mutants, for engine/exact/device_mutations.sh.
cp "$STAGE/exact/ordered_sum_cuda_mutants_test" "$STAGE/$LABEL/"
chmod u+w "$STAGE/$LABEL"/*
strip "$STAGE/$LABEL"/*
# Debian ships prometheus-cpp and civetweb shared only; exactqd finds them with
# LD_LIBRARY_PATH=LABEL/lib (run_runtime.sh sets it), and Debian's libstdc++ beside them,
# which exactqd then shares with them (one copy: two served a truncated /metrics page).
# Without LD_LIBRARY_PATH the binaries take the device's own, newer libstdc++.
mkdir "$STAGE/$LABEL/lib"
for lib in libprometheus-cpp-pull.so.1.0 libprometheus-cpp-core.so.1.0 libcivetweb-cpp.so.1 libcivetweb.so.1 libz.so.1 libatomic.so.1 libstdc++.so.6; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$STAGE/$LABEL/lib/"
done
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
