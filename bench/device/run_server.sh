#!/bin/bash
# Runs on the lent H200 (bench/device/README.md) after pack.sh LABEL and, for the end-to-end
# benches, a media pack (.device/media4k.tar.xz: bench/decode's inputs and bench/ladder's
# renditions, made here by bench/device/pack_media.sh). The server-level runs, the most
# needed first:
#   1. the GPU parity suite through exactqd + exactq, cuda against cpu, bit for bit
#                                                          -> $OUT/server_parity{,_logs}.txt
#   0. the GPU's video decoder against the CPU's, byte for byte  -> $OUT/gpu_decode_test.txt
#   2. encoded sources end to end at 4K (bench/decode), decoded on the CPU and on the
#      GPU, and raw Y4M uploads                            -> $OUT/decode_h200_4k.{txt,json}
#   3. the ladder at 4K, one call against separate calls   -> $OUT/ladder_h200_4k.{txt,json}
#
#   bash bench/device/run_server.sh LABEL
set -u
LABEL=${1:?usage: run_server.sh LABEL}
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
ROOT=$PWD
W=$(mktemp -d)
cd "$W" || exit 1
for f in "$ROOT/.device/bins_$LABEL.tar.xz" "$ROOT"/.device/corpus*.tar.xz "$ROOT"/.device/media4k.tar.xz; do
  [ -f "$f" ] && tar xJf "$f"
done
B=$W/$LABEL
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "build $LABEL: $(cat "$B/COMMIT"); $(nproc) cores" > "$OUT/server_runs.txt"

# The GPU's video decoder against the CPU's, byte for byte, on the packed samples.
if [ -x "$B/gpu_decode_test" ] && [ -d media4k/samples ]; then
  EXACTQ_DECODE_MEDIA=$W/media4k/samples EXACTQ_REQUIRE_GPU_DECODE=1 timeout 120 "$B/gpu_decode_test" \
    > "$OUT/gpu_decode_test.txt" 2>&1
  echo "rc=$?" >> "$OUT/gpu_decode_test.txt"
fi

if [ -d corpus ]; then
  timeout "${PARITY_SECONDS:-300}" python3 "$ROOT/tests/gpu/gpu_parity_suite.py" --bin "$B" --pairs corpus \
    --metrics psnr,ssim,ssimulacra2 --concurrent 2 --out "$W/parity_out" > "$OUT/server_parity.txt" 2>&1
  echo "rc=$?" >> "$OUT/server_parity.txt"
  for f in "$W"/parity_out/*.log "$W"/parity_out/*.ports; do
    [ -f "$f" ] && { echo "== $(basename "$f")"; tail -20 "$f"; }
  done > "$OUT/server_parity_logs.txt"
fi

if [ -d media4k ]; then
  timeout "${DECODE_SECONDS:-240}" python3 "$ROOT/bench/decode/bench_decode.py" --bin "$B" --inputs media4k \
    --size 3840x2160 --frames 48 --threads 4 --streams 8 --metrics "ssim/ssimulacra2/psnr,ssim,ssimulacra2" \
    --decode "${DECODE_DEVICES:-cpu,gpu}" --raw --backend cuda --out "$OUT/decode_h200_4k.json" > "$OUT/decode_h200_4k.txt" 2>&1
  echo "rc=$?" >> "$OUT/decode_h200_4k.txt"
  timeout "${LADDER_SECONDS:-200}" python3 "$ROOT/bench/ladder/bench_ladder.py" --bin "$B" --media media4k \
    --size 3840x2160 --frames 48 --threads 4 --metrics ssimulacra2 --backend cuda --reps 2 \
    --out "$OUT/ladder_h200_4k.json" > "$OUT/ladder_h200_4k.txt" 2>&1
  echo "rc=$?" >> "$OUT/ladder_h200_4k.txt"
fi
rm -rf "$W"
