#!/bin/bash
# Makes the 4K inputs of the end-to-end benches here (the device has no ffmpeg CLI) and
# packs them as .device/media4k.tar.xz for run_server.sh: bench/decode's reference
# (testsrc2, raw Y4M) with its HEVC and AV1 renditions, and bench/ladder's HEVC renditions
# of the same reference at 2160p, 1440p, 1080p and 720p (bicubic, as bench_ladder.py
# makes them), each HEVC file also as an Annex B stream for the benches' --repeat.
#
#   bench/device/pack_media.sh [FRAMES]        # default 48
set -euo pipefail
cd "$(dirname "$0")/../.."
FRAMES=${1:-48}
MEDIA=$(mktemp -d)/media4k
trap 'rm -rf "$(dirname "$MEDIA")"' EXIT
python3 bench/decode/bench_decode.py --make-inputs "$MEDIA" --size 3840x2160 --frames "$FRAMES"
for size in 3840x2160 2560x1440 1920x1080 1280x720; do
  ffmpeg -nostdin -v error -y -i "$MEDIA/ref.y4m" -vf "scale=${size%x*}:${size#*x}:flags=bicubic" -c:v libx265 \
    -preset ultrafast -x265-params log-level=none -crf 28 "$MEDIA/r${size#*x}p.mkv"
  # The same bitstream as Annex B, which bench_ladder.py --repeat lengthens by concatenation.
  ffmpeg -nostdin -v error -y -i "$MEDIA/r${size#*x}p.mkv" -c copy -f hevc "$MEDIA/r${size#*x}p.hevc"
done
# engine/decode:gpu_decode_test's inputs (EXACTQ_DECODE_MEDIA=media4k/samples): the codecs
# and depths the GPU decoder takes, and AV1, which the H200's does not.
mkdir "$MEDIA/samples"
while read -r name args; do
  ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=24 -frames:v 8 $args "$MEDIA/samples/$name"
done <<'SAMPLES'
h264_8bit.mkv -pix_fmt yuv420p -c:v libx264 -preset ultrafast -crf 30
hevc_8bit.mkv -pix_fmt yuv420p -c:v libx265 -preset ultrafast -crf 30 -x265-params log-level=none
hevc_10bit.mkv -pix_fmt yuv420p10le -c:v libx265 -preset ultrafast -crf 30 -x265-params log-level=none
vp9_8bit.webm -pix_fmt yuv420p -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 2M
vp9_10bit.webm -pix_fmt yuv420p10le -c:v libvpx-vp9 -profile:v 2 -deadline realtime -cpu-used 8 -b:v 2M
av1_8bit.mkv -pix_fmt yuv420p -c:v libsvtav1 -preset 12 -crf 40
SAMPLES
cp "$MEDIA/dist_hevc.mkv" "$MEDIA/samples/hevc_8bit_4k.mkv"
mkdir -p .device
tar -C "$(dirname "$MEDIA")" -cf - media4k | xz -T2 -6 > .device/media4k.tar.xz
echo "packed .device/media4k.tar.xz ($(du -h .device/media4k.tar.xz | cut -f1)): $FRAMES frames"
