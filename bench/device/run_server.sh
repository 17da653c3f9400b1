#!/bin/bash
# Runs on the lent H200 (bench/device/README.md) after pack.sh LABEL and, for the end-to-end
# benches, a media pack (.device/media4k.tar.xz: bench/decode's inputs and bench/ladder's
# renditions, made here by bench/device/pack_media.sh). The server-level runs, the most
# needed first:
#   1. the GPU parity suite through exactqd + exactq, cuda against cpu, bit for bit
#      (PARITY_SECONDS=0: not run)                         -> $OUT/server_parity{,_logs}.txt
#   0. the GPU's video decoder against the CPU's, byte for byte, and its device memory
#      against what the server admits for it                 -> $OUT/gpu_decode_test.txt
#   2. encoded sources end to end at 4K (bench/decode), decoded on the GPU and on the
#      CPU, and raw Y4M uploads, the 48-frame media played REPEAT (8) times over; the
#      server gets DECODE_SERVER_FLAGS (e.g. --gpu_wait=spin); DECODE_CODECS (default hevc;
#      e.g. hevc,av1) and DECODE_METRICS (default ssim/ssimulacra2) pick the rows
#                                                            -> $OUT/decode_h200_4k.{txt,json}
#   3. the ladder at 4K, one call against separate calls, decoded on the GPU, its scores
#      compared with the same ladder decoded (and scaled) on the CPU (LADDER_CHECK=cpu;
#      empty: no comparison; LADDER_SECONDS=0: not run)    -> $OUT/ladder_h200_4k.{txt,json}
#   4. the raw feed at 4K (bench/feed), ssim on the GPU, 8 streams; against the build
#      packed as $BASELINE when given (FEED_SECONDS=0: not run) -> $OUT/feed_h200_4k.{txt,json}
#   5. with SOAK_SECONDS set: the soak (bench/soak), 64 streams -> $OUT/soak_h200.{txt,json}
#
#   bash bench/device/run_server.sh LABEL
set -u
LABEL=${1:?usage: run_server.sh LABEL}
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
ROOT=$PWD
# Everything goes into $OUT/server_runs.tar.gz at exit (a call returns at most 8 files).
source "$ROOT/bench/device/bundle_out.sh" server_runs server_runs.txt decode_h200_4k.txt ladder_h200_4k.txt soak_h200.txt
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
  EXACTQ_DECODE_MEDIA=$W/media4k/samples EXACTQ_REQUIRE_GPU_DECODE=1 timeout 60 "$B/gpu_decoder_memory_test" \
    >> "$OUT/gpu_decode_test.txt" 2>&1
  echo "gpu_decoder_memory_test rc=$?" >> "$OUT/gpu_decode_test.txt"
  # How the server's threads wait for the GPU: blocked, not spinning (the CPU decoders need the cores).
  [ -x "$B/host_wait_event_cuda_test" ] && timeout 30 "$B/host_wait_event_cuda_test" >> "$OUT/gpu_decode_test.txt" 2>&1
  echo "host_wait_event_cuda_test rc=$?" >> "$OUT/gpu_decode_test.txt"
fi

if [ -d corpus ] && [ "${PARITY_SECONDS:-300}" != 0 ]; then
  timeout "${PARITY_SECONDS:-300}" python3 "$ROOT/tests/gpu/gpu_parity_suite.py" --bin "$B" --pairs corpus \
    --metrics psnr,ssim,ssimulacra2 --concurrent 2 --out "$W/parity_out" > "$OUT/server_parity.txt" 2>&1
  echo "rc=$?" >> "$OUT/server_parity.txt"
  for f in "$W"/parity_out/*.log "$W"/parity_out/*.ports; do
    [ -f "$f" ] && { echo "== $(basename "$f")"; tail -20 "$f"; }
  done > "$OUT/server_parity_logs.txt"
fi

LADDER_CHECK=${LADDER_CHECK-cpu}
if [ -d media4k ] && [ "${DECODE_SECONDS:-240}" != 0 ]; then
  timeout "${DECODE_SECONDS:-240}" python3 "$ROOT/bench/decode/bench_decode.py" --bin "$B" --inputs media4k \
    --size 3840x2160 --frames 48 --threads 4 --streams 8 --metrics "${DECODE_METRICS:-ssim/ssimulacra2}" \
    --codecs "${DECODE_CODECS:-hevc}" \
    --decode "${DECODE_DEVICES:-gpu,cpu}" --raw --backend cuda --repeat "${REPEAT:-8}" \
    --server-flags="${DECODE_SERVER_FLAGS:-}" --out "$OUT/decode_h200_4k.json" > "$OUT/decode_h200_4k.txt" 2>&1
  echo "rc=$?" >> "$OUT/decode_h200_4k.txt"
fi
if [ -d media4k ] && [ "${LADDER_SECONDS:-200}" != 0 ]; then
  timeout "${LADDER_SECONDS:-200}" python3 "$ROOT/bench/ladder/bench_ladder.py" --bin "$B" --media media4k \
    --size 3840x2160 --frames 48 --threads 4 --metrics ssimulacra2 --backend cuda --decode "${LADDER_DECODE:-gpu}" \
    --reps "${LADDER_REPS:-2}" --repeat "${REPEAT:-8}" ${LADDER_CHECK:+--check-decode "$LADDER_CHECK"} \
    --out "$OUT/ladder_h200_4k.json" > "$OUT/ladder_h200_4k.txt" 2>&1
  echo "rc=$?" >> "$OUT/ladder_h200_4k.txt"
fi
# bench/feed wants builds laid out as bazel-bin is.
layout() {
  mkdir -p "$W/layout_$1/server" "$W/layout_$1/client"
  ln -sf "$W/$1/exactqd" "$W/layout_$1/server/exactqd"
  ln -sf "$W/$1/exactq" "$W/layout_$1/client/exactq"
}
if [ -n "${BASELINE:-}" ] && [ -f "$ROOT/.device/bins_$BASELINE.tar.xz" ]; then
  tar xJf "$ROOT/.device/bins_$BASELINE.tar.xz"
  layout "$BASELINE"
fi
layout "$LABEL"
if [ "${FEED_SECONDS:-240}" != 0 ]; then
  timeout "${FEED_SECONDS:-240}" python3 "$ROOT/bench/feed/feed_bench.py" --bin "$W/layout_$LABEL" \
    ${BASELINE:+--baseline "$W/layout_$BASELINE"} --size 3840x2160 --frames 48 --reps 3 --streams 8 \
    --metrics ssim --backend cuda --out "$OUT/feed_h200_4k.json" > "$OUT/feed_h200_4k.txt" 2>&1
  echo "rc=$?" >> "$OUT/feed_h200_4k.txt"
fi
if [ -n "${SOAK_SECONDS:-}" ]; then
  timeout $((SOAK_SECONDS + 120)) python3 "$ROOT/bench/soak/soak.py" --bin "$B" --streams 64 \
    --seconds "$SOAK_SECONDS" --out "$OUT/soak_h200.json" > "$OUT/soak_h200.txt" 2>&1
  echo "rc=$?" >> "$OUT/soak_h200.txt"
fi
rm -rf "$W"
