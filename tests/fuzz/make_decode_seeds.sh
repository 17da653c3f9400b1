#!/usr/bin/env bash
# Writes the decode fuzzer's seeds into DIR: tiny encodes (16x16, 3 frames) in the
# containers and codecs uploads use, made here with the ffmpeg CLI.
#   tests/fuzz/make_decode_seeds.sh DIR
set -euo pipefail
out=$1
mkdir -p "$out"
src=(-f lavfi -i testsrc2=size=16x16:rate=24 -frames:v 3)
enc() { ffmpeg -nostdin -v error -y "${src[@]}" "$@"; }
enc -pix_fmt yuv420p "$out/seed.y4m"
enc -c:v libx264 -preset veryfast -bf 2 -pix_fmt yuv420p "$out/h264.mp4"
enc -c:v libx264 -preset veryfast -pix_fmt yuv420p10le -f h264 "$out/h264_10.h264"
enc -c:v libx264 -preset veryfast -pix_fmt yuv420p "$out/h264.ts"
enc -c:v libx265 -preset ultrafast -x265-params log-level=none -pix_fmt yuv420p10le "$out/hevc.mkv"
enc -c:v libaom-av1 -cpu-used 8 -pix_fmt yuv420p "$out/av1.ivf"
enc -c:v ffv1 -pix_fmt yuv444p10le "$out/ffv1.mkv"
enc -c:v libvpx-vp9 -deadline realtime -pix_fmt yuv420p "$out/vp9.webm"
# The first byte of every input is the fuzzer's control byte (chunk size, spool limit).
for f in "$out"/*; do
  { printf '\003'; cat "$f"; } > "$f.seed" && rm "$f"
done
