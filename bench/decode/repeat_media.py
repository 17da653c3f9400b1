"""Longer inputs from short ones, for end-to-end runs where a stream's start (connection,
decoder set-up) would otherwise set the rate: a raw Y4M's frames played `times` over after
its one header, and HEVC Annex B elementary streams concatenated (each copy starts with
its parameter sets and an IDR picture, so the result is one valid stream). Frame i of a
repeated rendition still pairs with frame i of the repeated reference."""

import os


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


def repeat_files(src_dir, dst_dir, names, times):
    """Each of `names` (.y4m or an Annex B .hevc) from src_dir into dst_dir, `times` over."""
    os.makedirs(dst_dir, exist_ok=True)
    for name in names:
        repeat = repeat_y4m if name.endswith(".y4m") else repeat_annex_b
        repeat(os.path.join(src_dir, name), os.path.join(dst_dir, name), times)
