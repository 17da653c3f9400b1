"""Pictures on the wire (proto/exactq/v1/exactq.proto, "SAMPLE LAYOUT ON THE WIRE"):
planar Y, Cb, Cr, rows packed, one byte per sample at 8 bits, 16-bit little endian
above. Geometry helpers, picture sizes, and conversion of planes held as numpy arrays."""

from ._stubs import pb

CHROMA = {"400": pb.CHROMA_400, "420": pb.CHROMA_420, "422": pb.CHROMA_422, "444": pb.CHROMA_444}
RANGE = {None: pb.COLOR_RANGE_UNSPECIFIED, "limited": pb.COLOR_RANGE_LIMITED,
         "full": pb.COLOR_RANGE_FULL}
MATRIX = {None: pb.COLOR_MATRIX_UNSPECIFIED, "bt709": pb.COLOR_MATRIX_BT709,
          "bt601": pb.COLOR_MATRIX_BT601}


def geometry(width, height, chroma="420", bit_depth=8, color_range=None, matrix=None):
    """An exactq.v1.Geometry: chroma '400', '420', '422' or '444'; bit_depth 8..16;
    color_range None (limited), 'limited' or 'full'; matrix None (BT.709), 'bt709', 'bt601'."""
    if chroma not in CHROMA:
        raise ValueError(f"chroma must be one of {sorted(CHROMA)}, got {chroma!r}")
    return pb.Geometry(width=width, height=height, format=pb.PixelFormat(
        chroma=CHROMA[chroma], bit_depth=bit_depth, range=RANGE[color_range],
        matrix=MATRIX[matrix]))


def plane_shapes(geom):
    """[(height, width)] of each plane, Y first."""
    w, h = geom.width, geom.height
    chroma = geom.format.chroma
    if chroma == pb.CHROMA_400:
        return [(h, w)]
    cw = (w + 1) // 2 if chroma in (pb.CHROMA_420, pb.CHROMA_422) else w
    ch = (h + 1) // 2 if chroma == pb.CHROMA_420 else h
    return [(h, w), (ch, cw), (ch, cw)]


def bytes_per_sample(geom):
    return 1 if geom.format.bit_depth <= 8 else 2


def picture_bytes(geom):
    """Exactly bytes_per_sample * (W*H + 2*cw*ch)."""
    return bytes_per_sample(geom) * sum(h * w for h, w in plane_shapes(geom))


def to_wire(geom, picture):
    """A picture in the wire layout: bytes-like as it is (its size checked), or a
    sequence of planes (numpy arrays, Y first) converted (uint8 at 8 bits, samples
    as 16-bit little endian above)."""
    if isinstance(picture, (bytes, bytearray, memoryview)):
        data = bytes(picture)
    else:
        data = _planes_to_bytes(geom, picture)
    expected = picture_bytes(geom)
    if len(data) != expected:
        raise ValueError(f"a {geom.width}x{geom.height} picture is {expected} bytes, got {len(data)}")
    return data


def _planes_to_bytes(geom, planes):
    import numpy as np  # optional: only for pictures held as arrays

    shapes = plane_shapes(geom)
    planes = list(planes)
    if len(planes) != len(shapes):
        raise ValueError(f"expected {len(shapes)} planes, got {len(planes)}")
    depth = geom.format.bit_depth
    dtype = np.dtype(np.uint8) if depth <= 8 else np.dtype("<u2")
    out = []
    for i, (plane, shape) in enumerate(zip(planes, shapes)):
        array = np.asarray(plane)
        if array.shape != shape:
            raise ValueError(f"plane {i}: expected shape {shape}, got {array.shape}")
        if array.dtype.kind not in "ui":
            raise ValueError(f"plane {i}: integer samples expected, got {array.dtype}")
        if array.size and (int(array.min()) < 0 or int(array.max()) >= (1 << depth)):
            raise ValueError(f"plane {i}: samples outside 0..{(1 << depth) - 1}")
        out.append(np.ascontiguousarray(array, dtype=dtype).tobytes())
    return b"".join(out)


def from_wire(geom, data):
    """The planes (numpy arrays, Y first; uint8 at 8 bits, uint16 above) of a picture in
    the wire layout: what to_wire takes back."""
    import numpy as np  # optional: only for pictures held as arrays

    data = bytes(data)
    expected = picture_bytes(geom)
    if len(data) != expected:
        raise ValueError(f"a {geom.width}x{geom.height} picture is {expected} bytes, got {len(data)}")
    dtype = np.dtype(np.uint8) if geom.format.bit_depth <= 8 else np.dtype("<u2")
    planes, offset = [], 0
    for shape in plane_shapes(geom):
        count = shape[0] * shape[1]
        plane = np.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(shape)
        planes.append(plane.astype(np.uint16) if dtype.itemsize == 2 else plane.copy())
        offset += count * dtype.itemsize
    return planes
