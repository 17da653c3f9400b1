#!/bin/bash
# Builds a decode-only, static FFmpeg (libavformat, libavcodec, libavutil) and dav1d from
# Debian 12's own source packages, for the binaries carried to the lent H200: Debian ships
# FFmpeg shared only with ~60 codec libraries (about 47 MiB packed), the device has none of
# them and no apt. The same FFmpeg version as Debian's libav*-dev, so the headers match;
# decoders are bit-exact, so the frames equal those of Debian's shared libraries (the
# decode tests check that on the device). The CUDA decoders (NVDEC hwaccels and *_cuvid)
# are in, through libffmpeg-nvenc-dev's headers; they load the driver at run time.
# Nothing built here is committed: it lives under PREFIX.
#
#   bench/device/build_ffmpeg.sh [PREFIX]      # default /tmp/exactq-ffmpeg-device
#   then: bench/device/pack.sh LABEL picks it up (EXACTQ_FFMPEG_STATIC=PREFIX)
set -euo pipefail
PREFIX=${1:-/tmp/exactq-ffmpeg-device}
SRC=${EXACTQ_FFMPEG_SRC:-/tmp/exactq-ffmpeg-src}
JOBS=${JOBS:-$(nproc)}

if [ ! -f /etc/apt/sources.list.d/exactq-src.sources ] && ! grep -rqs '^Types: deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d; then
  cat > /etc/apt/sources.list.d/exactq-src.sources <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  apt-get update -qq
fi
apt-get install -y -qq nasm meson ninja-build libffmpeg-nvenc-dev dpkg-dev pkg-config >/dev/null

mkdir -p "$SRC"
cd "$SRC"
ls -d ffmpeg-*/ >/dev/null 2>&1 || apt-get source -qq ffmpeg
ls -d dav1d-*/ >/dev/null 2>&1 || apt-get source -qq dav1d
FFMPEG_DIR=$(ls -d "$SRC"/ffmpeg-*/ | head -1)
DAV1D_DIR=$(ls -d "$SRC"/dav1d-*/ | head -1)

# dav1d: the AV1 decoder the server picks for AV1 (engine/decode/video_decoder.cc).
rm -rf "$SRC/dav1d-build"
meson setup "$SRC/dav1d-build" "$DAV1D_DIR" --prefix="$PREFIX" --libdir=lib --buildtype=release \
  -Ddefault_library=static -Denable_tools=false -Denable_tests=false >/dev/null
ninja -C "$SRC/dav1d-build" -j"$JOBS" install >/dev/null

cd "$FFMPEG_DIR"
make distclean >/dev/null 2>&1 || true
PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" ./configure --prefix="$PREFIX" --enable-static --disable-shared --enable-pic \
  --pkg-config-flags=--static --disable-programs --disable-doc --disable-debug --disable-autodetect \
  --disable-everything --disable-avdevice --disable-swscale --disable-swresample --disable-postproc \
  --disable-avfilter --disable-network \
  --enable-protocol=file,pipe \
  --enable-demuxer=mov,matroska,ivf,mpegts,mpegps,h264,hevc,obu,m4v,yuv4mpegpipe,rawvideo \
  --enable-decoder=h264,hevc,vp8,vp9,av1,libdav1d,ffv1,prores,mpeg1video,mpeg2video,mpeg4,rawvideo \
  --enable-parsers --enable-bsfs --enable-libdav1d \
  --enable-ffnvcodec --enable-nvdec --enable-cuvid \
  --enable-hwaccel=h264_nvdec,hevc_nvdec,vp9_nvdec,av1_nvdec \
  --enable-decoder=h264_cuvid,hevc_cuvid,vp9_cuvid,av1_cuvid >/dev/null
make -j"$JOBS" >/dev/null
make install >/dev/null
echo "FFmpeg (decode only, static) in $PREFIX: $(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --modversion libavcodec)"
