"""Longer inputs from short ones, for end-to-end runs where a stream's start (connection,
decoder set-up) would otherwise set the rate: a raw Y4M's frames played `times` over after
its one header, and HEVC Annex B elementary streams concatenated (each copy starts with
its parameter sets and an IDR picture, so the result is one valid stream), and AV1 in
IVF with its frames' timestamps carried on (each copy starts with a key frame and its
sequence header). Frame i of a repeated rendition still pairs with frame i of the
repeated reference."""

import os
import struct


def repeat_y4m(src, dst, times):
    with open(src, "rb") as f:
        header = f.readline()
        frames = f.read()
    with open(dst, "wb") as f:
        f.write(header)
        for _ in range(times):
            f.write(frames)


def repeat_annex_b(src, dst, times):
    with open(src, "rb") as f:
        stream = f.read()
    with open(dst, "wb") as f:
        for _ in range(times):
            f.write(stream)


def repeat_ivf(src, dst, times):
    """IVF: a 32-byte header (frame count at 24), then frames of a 12-byte header (size,
    64-bit timestamp) and their bytes."""
    with open(src, "rb") as f:
        data = f.read()
    header, frames, at = bytearray(data[:32]), [], 32
    while at < len(data):
        size, pts = struct.unpack_from("<IQ", data, at)
        frames.append((pts, data[at + 12:at + 12 + size]))
        at += 12 + size
    step = frames[1][0] - frames[0][0] if len(frames) > 1 else 1
    span = frames[-1][0] - frames[0][0] + step
    struct.pack_into("<I", header, 24, len(frames) * times)
    with open(dst, "wb") as f:
        f.write(header)
        for copy in range(times):
            for pts, payload in frames:
                f.write(struct.pack("<IQ", len(payload), pts + copy * span))
                f.write(payload)


def repeat_files(src_dir, dst_dir, names, times):
    """Each of `names` (.y4m, an Annex B .hevc or an .ivf) from src_dir into dst_dir,
    `times` over."""
    os.makedirs(dst_dir, exist_ok=True)
    for name in names:
        repeat = {".y4m": repeat_y4m, ".ivf": repeat_ivf}.get(os.path.splitext(name)[1], repeat_annex_b)
        repeat(os.path.join(src_dir, name), os.path.join(dst_dir, name), times)
