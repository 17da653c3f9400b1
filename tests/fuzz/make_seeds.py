#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus: valid and nearly valid streams, hand-encoded in the
protobuf wire format (standard library only), so the fuzzer starts inside the protocol."""
import os
import sys


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(num, wire, payload):
    key = varint((num << 3) | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def header(w, h, chroma, depth, metric=b"psnr"):
    fmt = field(1, 0, chroma) + field(2, 0, depth)
    geometry = field(1, 0, w) + field(2, 0, h) + field(3, 2, fmt)
    body = field(1, 2, b"seed") + field(2, 2, geometry) + field(3, 2, field(1, 2, metric))
    return field(1, 2, body)


def chunk(frame, picture, offset, data, last):
    body = field(1, 0, frame) + field(2, 0, picture) + field(3, 0, offset) + field(4, 2, data) + field(5, 0, int(last))
    return field(2, 2, body)


def stream(*messages):
    out = b""
    for m in messages:
        assert len(m) < 256, len(m)
        out += bytes([len(m)]) + m
    return out


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    seeds = {
        "one_frame_420": stream(header(4, 4, 2, 8), chunk(0, 1, 0, b"a" * 24, True), chunk(0, 2, 0, b"b" * 24, True)),
        "split_chunks": stream(header(4, 4, 2, 8), chunk(0, 1, 0, b"a" * 10, False), chunk(0, 1, 10, b"a" * 14, True),
                               chunk(0, 2, 0, b"b" * 24, True)),
        "ten_bit_444": stream(header(3, 3, 4, 10), chunk(0, 1, 0, b"\x01\x00" * 27, True),
                              chunk(0, 2, 0, b"\xff\x03" * 27, True)),
        "gray_odd": stream(header(5, 3, 1, 12), chunk(0, 1, 0, b"\x00\x01" * 15, True), chunk(0, 2, 0, b"\x00\x02" * 15, True)),
        "gap": stream(header(4, 4, 2, 8), chunk(0, 1, 0, b"a" * 10, False), chunk(0, 1, 12, b"a" * 12, True)),
        "two_headers": stream(header(4, 4, 2, 8), header(8, 8, 3, 16)),
    }
    for name, data in seeds.items():
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
