#!/usr/bin/env python3
"""An independent implementation of `ssim` (metrics-spec.md section A), for deriving
test expectations. Written from the spec alone, in Python: integers are exact and every
float operation is one binary64 rounding, so each line below is one step of the
definition with no compiler in between.

It reproduces the VMAF fork's score bit for bit on every 8..12-bit frame of the shared
corpus and gives 0.9824021046501512 on pcifp16_downup (the value the corpus README
quotes from another independent implementation):

  ssim_oracle.py corpus REF.y4m DIS.y4m   # per-frame scores of a Y4M pair
  ssim_oracle.py cases                    # the synthetic cases of ssim_reference_test.cc

Slow (pure Python): fine up to CIF.
"""
import math
import struct
import sys

TAPS = [2, 9, 28, 55, 68, 55, 28, 9, 2]
K1 = 0.01 * 0.01
K2 = 0.03 * 0.03


def kept(pos, size):
    """Tap indices of a window centred at pos that fall inside [0, size)."""
    return range(max(0, 4 - pos), 9 - max(0, pos + 5 - size))


def sums(ref, dis, bpc):
    """(term_sum, weight_sum) of a frame pair given as lists of rows."""
    H, W = len(ref), len(ref[0])
    hor = []
    for y in range(H):
        row = []
        for x in range(W):
            m = [0] * 6
            for k in kept(x, W):
                t, s, d = TAPS[k], ref[y][x - 4 + k], dis[y][x - 4 + k]
                m[0] += t * s; m[1] += t * d
                m[2] += t * s * s; m[3] += t * s * d; m[4] += t * d * d
                m[5] += t
            row.append(m)
        hor.append(row)
    sm = float((1 << bpc) - 1)
    c1f = (sm * sm) * K1
    c2f = (sm * sm) * K2
    S = 0.0
    SW = 0.0
    for y in range(H):
        for x in range(W):
            m = [0] * 6
            for k in kept(y, H):
                for i in range(6):
                    m[i] += TAPS[k] * hor[y - 4 + k][x][i]
            mux, muy, x2, xy, y2, w = (float(v) for v in m)  # exact: all < 2^53
            c1 = (c1f * w) * w
            c2 = (c2f * w) * w
            mx2 = mux * mux
            mxy = mux * muy
            my2 = muy * muy
            a = 2.0 * mxy + c1
            b = c2 + 2.0 * (xy * w - mxy)
            num = (w * a) * b
            den = ((mx2 + my2) + c1) * ((((x2 * w - mx2) + y2 * w) - my2) + c2)
            S = S + num / den
            SW = SW + w
    return S, SW


def read_y4m(path):
    data = open(path, 'rb').read()
    nl = data.index(b'\n')
    W = H = None
    cs = '420jpeg'
    for tok in data[:nl].split()[1:]:
        tok = tok.decode()
        if tok[0] == 'W': W = int(tok[1:])
        elif tok[0] == 'H': H = int(tok[1:])
        elif tok[0] == 'C': cs = tok[1:]
    bpc = int(cs.split('p')[1]) if 'p' in cs[3:] else 8
    bps = 2 if bpc > 8 else 1
    sub = cs[:3]
    cw = {'420': (W + 1) // 2, '422': (W + 1) // 2, '444': W, 'mon': 0}[sub]
    ch = {'420': (H + 1) // 2, '422': H, '444': H, 'mon': 0}[sub]
    frame_bytes = (W * H + 2 * cw * ch) * bps
    frames = []
    pos = nl + 1
    while pos < len(data):
        pos = data.index(b'\n', pos) + 1
        luma = data[pos:pos + W * H * bps]
        v = list(struct.unpack('<%dH' % (W * H), luma)) if bps == 2 else list(luma)
        frames.append([v[r * W:(r + 1) * W] for r in range(H)])
        pos += frame_bytes
    return bpc, frames


# The synthetic frames of ssim_reference_test.cc (same formulas there).
def hash32(x, y, seed):
    return ((x * 73856093) ^ (y * 19349663) ^ (seed * 83492791)) & 0xFFFFFFFF


def base8(x, y):  # a smooth ramp in 20..219
    return (x * 7 + y * 5) % 200 + 20


def frame(kind, W, H, bpc, seed=1):
    sh = bpc - 8
    rows = []
    for y in range(H):
        row = []
        for x in range(W):
            b = base8(x, y)
            if kind == 'ramp': v = b << sh
            elif kind == 'noisy': v = (b + hash32(x, y, seed) % 23) << sh
            elif kind == 'inverted': v = (255 - b) << sh
            elif kind == 'random': v = hash32(x, y, seed) % (1 << bpc)
            elif kind == 'black': v = 0
            elif kind == 'white': v = (1 << bpc) - 1
            else: raise ValueError(kind)
            row.append(v)
        rows.append(row)
    return rows


CASES = [
    # name, W, H, bpc, ref kind, dis kind
    ('IdenticalBlack1x1', 1, 1, 8, 'black', 'black'),
    ('IdenticalWhite1x1', 1, 1, 8, 'white', 'white'),
    ('IdenticalRamp64x48', 64, 48, 8, 'ramp', 'ramp'),
    ('IdenticalRandom64x48At10', 64, 48, 10, 'random', 'random'),
    ('BlackWhite1x1', 1, 1, 8, 'black', 'white'),
    ('Noisy1x1', 1, 1, 8, 'ramp', 'noisy'),
    ('Noisy7x5', 7, 5, 8, 'ramp', 'noisy'),
    ('Noisy9x9', 9, 9, 8, 'ramp', 'noisy'),
    ('Noisy1x9', 1, 9, 8, 'ramp', 'noisy'),
    ('Noisy9x1', 9, 1, 8, 'ramp', 'noisy'),
    ('Noisy13x11At10', 13, 11, 10, 'ramp', 'noisy'),
    ('Noisy17x33At12', 17, 33, 12, 'ramp', 'noisy'),
    ('Noisy31x17At16', 31, 17, 16, 'ramp', 'noisy'),
    ('Inverted64x48', 64, 48, 8, 'ramp', 'inverted'),
    ('Inverted7x5At16', 7, 5, 16, 'ramp', 'inverted'),
]


def main():
    if sys.argv[1] == 'corpus':
        bpc, ref = read_y4m(sys.argv[2])
        _, dis = read_y4m(sys.argv[3])
        for r, d in zip(ref, dis):
            S, SW = sums(r, d, bpc)
            print(repr(S / SW), float.hex(S / SW))
        return
    for name, W, H, bpc, rk, dk in CASES:
        S, SW = sums(frame(rk, W, H, bpc), frame(dk, W, H, bpc), bpc)
        v = S / SW
        print('  {"%s", %d, %d, %d, Kind::k%s, Kind::k%s, %s, %s, %s},  // %r' % (
            name, W, H, bpc, rk.capitalize(), dk.capitalize(), float.hex(S), float.hex(SW),
            float.hex(v), v))


if __name__ == '__main__':
    main()
