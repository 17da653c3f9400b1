#!/usr/bin/env bash
# Builds the decode fuzzer with clang (libFuzzer + ASan + UBSan) against the system
# libraries (Debian's FFmpeg) and runs it for a fixed time (default 60 s) from seeds
# that tests/fuzz/make_decode_seeds.sh encodes.
#   tests/fuzz/run_decode_fuzzer.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -ffp-contract=off -I.)
clang++ "${flags[@]}" -o "$work/decode_fuzzer" tests/fuzz/decode_fuzzer.cc \
  engine/decode/spool_file.cc engine/decode/byte_source.cc engine/decode/video_decoder.cc \
  engine/decode/av_frame_conversion.cc engine/decode/gpu_decoding.cc engine/decode/source_timing.cc \
  engine/decode/cuda_decode_device_none.cc engine/decode/device_surfaces_none.cc \
  engine/format/frame.cc engine/format/frame_buffer.cc engine/format/frame_geometry.cc engine/format/pixel_format.cc engine/format/color.cc \
  $(pkg-config --libs libavformat libavcodec libavutil absl_status absl_statusor absl_strings absl_str_format)
tests/fuzz/make_decode_seeds.sh "$work/corpus"
# Inputs that once failed, replayed first on every run (decode_regressions/README.md).
cp tests/fuzz/decode_regressions/*.seed "$work/corpus/"
mkdir -p "$work/tmp"
echo "fuzz: running decode_fuzzer for ${seconds}s"
TMPDIR="$work/tmp" "$work/decode_fuzzer" -max_total_time="$seconds" -max_len=16384 -timeout=20 -rss_limit_mb=4096 \
  -print_final_stats=1 "$work/corpus"
