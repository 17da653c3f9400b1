#!/usr/bin/python3
"""How far the exact scaler's pixels are from FFmpeg's `scale=W:H:flags=bicubic`.

For each reference Y4M given: FFmpeg makes a lower rung (WxH / DIVISOR, bicubic), then
the rung is scaled back to the reference's size by FFmpeg (bicubic) and by the exact
scaler (scale_y4m); the two results are compared per plane: mean and largest absolute
difference in code values, over every frame. Standard library, numpy and the ffmpeg
command line.

  compare_ffmpeg.py --scale_y4m bazel-bin/engine/scale/scale_y4m REF.y4m [REF.y4m ...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def read_y4m(path):
    with open(path, "rb") as f:
        data = f.read()
    header, _, rest = data.partition(b"\n")
    tags = {t[:1]: t[1:] for t in header.split()[1:]}
    w, h = int(tags[b"W"]), int(tags[b"H"])
    chroma = tags.get(b"C", b"420jpeg").decode()
    if not chroma.startswith("420") or "p1" in chroma:
        raise ValueError(f"{path}: only 8-bit 4:2:0 is compared ({chroma})")
    cw, ch = (w + 1) // 2, (h + 1) // 2
    frame_bytes = w * h + 2 * cw * ch
    frames = []
    pos = 0
    while pos < len(rest):
        assert rest[pos:pos + 6] == b"FRAME\n" or rest[pos:pos + 5] == b"FRAME", path
        pos = rest.index(b"\n", pos) + 1
        buf = np.frombuffer(rest, dtype=np.uint8, count=frame_bytes, offset=pos)
        pos += frame_bytes
        frames.append((buf[:w * h].reshape(h, w), buf[w * h:w * h + cw * ch].reshape(ch, cw),
                       buf[w * h + cw * ch:].reshape(ch, cw)))
    return w, h, frames


def ffmpeg_scale(src, dst, w, h):
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", src, "-vf", f"scale={w}:{h}:flags=bicubic",
                    "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", dst], check=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale_y4m", required=True)
    parser.add_argument("--divisor", type=float, default=2.0)
    parser.add_argument("refs", nargs="+")
    args = parser.parse_args()
    print(f"rung = reference / {args.divisor} (ffmpeg bicubic); back to the reference size by ffmpeg bicubic "
          "and by the exact scaler")
    print(f"{'reference':<28} {'rung':>10} {'plane':>5} {'mean |diff|':>12} {'max |diff|':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for ref in args.refs:
            w, h, _ = read_y4m(ref)
            rw, rh = int(round(w / args.divisor / 2)) * 2, int(round(h / args.divisor / 2)) * 2
            rung = os.path.join(tmp, "rung.y4m")
            ffmpeg_scale(ref, rung, rw, rh)
            theirs = os.path.join(tmp, "ffmpeg.y4m")
            ours = os.path.join(tmp, "exactq.y4m")
            ffmpeg_scale(rung, theirs, w, h)
            subprocess.run([args.scale_y4m, rung, str(w), str(h), ours], check=True)
            _, _, a = read_y4m(theirs)
            _, _, b = read_y4m(ours)
            assert len(a) == len(b)
            for p, name in enumerate(["Y", "Cb", "Cr"]):
                d = np.concatenate([np.abs(fa[p].astype(np.int32) - fb[p].astype(np.int32)).ravel()
                                    for fa, fb in zip(a, b)])
                print(f"{os.path.basename(ref):<28} {f'{rw}x{rh}':>10} {name:>5} {d.mean():12.4f} {d.max():10d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
