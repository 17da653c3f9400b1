#!/usr/bin/env bash
# Builds the request fuzzer with clang (libFuzzer + ASan + UBSan) against the system
# libraries and runs it for a fixed time (default 60 s) from the seed corpus.
#   tests/fuzz/run_fuzzer.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
protoc -Iproto --cpp_out="$work" proto/exactq/v1/exactq.proto
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -ffp-contract=off -I. -I"$work")
clang++ "${flags[@]}" -o "$work/request_fuzzer" tests/fuzz/request_fuzzer.cc \
  server/frame_assembler.cc server/wire_conversion.cc \
  engine/format/frame.cc engine/format/frame_buffer.cc engine/format/frame_geometry.cc engine/format/pixel_format.cc engine/format/color.cc \
  "$work/exactq/v1/exactq.pb.cc" \
  $(pkg-config --libs protobuf absl_status absl_statusor absl_strings absl_str_format)
python3 tests/fuzz/make_seeds.py "$work/corpus"
echo "fuzz: running request_fuzzer for ${seconds}s"
"$work/request_fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 "$work/corpus"
