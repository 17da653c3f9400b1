#!/bin/bash
# Makes the 4K inputs of the end-to-end benches here (the device has no ffmpeg CLI) and
# packs them as .device/media4k.tar.xz for run_server.sh: bench/decode's reference
# (testsrc2, raw Y4M) with its HEVC and AV1 renditions, and bench/ladder's HEVC renditions
# of the same reference at 2160p, 1440p, 1080p and 720p (bicubic, as bench_ladder.py
# makes them).
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
done
mkdir -p .device
tar -C "$(dirname "$MEDIA")" -cf - media4k | xz -T2 -6 > .device/media4k.tar.xz
echo "packed .device/media4k.tar.xz ($(du -h .device/media4k.tar.xz | cut -f1)): $FRAMES frames"
