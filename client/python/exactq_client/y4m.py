"""A Y4M (YUV4MPEG2) reader: the header's geometry and colour range, then one picture
per FRAME in the wire layout (Y4M stores samples as the wire does)."""

from . import pictures

_COLORSPACES_8BIT = {"420jpeg": "420", "420mpeg2": "420", "420paldv": "420", "420": "420",
                     "422": "422", "444": "444", "mono": "400"}


def parse_colorspace(name):
    """'420jpeg' -> ('420', 8); '422p10' -> ('422', 10); 'mono12' -> ('400', 12)."""
    lowered = name.lower()
    if lowered in _COLORSPACES_8BIT:
        return _COLORSPACES_8BIT[lowered], 8
    for prefix, chroma in (("mono", "400"), ("420p", "420"), ("422p", "422"), ("444p", "444")):
        if lowered.startswith(prefix):
            depth = lowered[len(prefix):]
            if depth.isdigit() and not depth.startswith("0") and 8 < int(depth) <= 16:
                return chroma, int(depth)
    raise ValueError(f"Y4M colour space {name!r} is not supported")


class Y4mReader:
    """Iterates over the pictures of a Y4M file (path or binary file object)."""

    def __init__(self, source):
        self._owns = isinstance(source, (str, bytes)) or hasattr(source, "__fspath__")
        self._file = open(source, "rb") if self._owns else source
        line = self._file.readline()
        if not line.startswith(b"YUV4MPEG2") or not line.endswith(b"\n"):
            raise ValueError("not a Y4M stream: the header does not start with YUV4MPEG2")
        width = height = None
        chroma, depth, color_range = "420", 8, None
        for tag in line.decode("ascii").split()[1:]:
            key, value = tag[0], tag[1:]
            if key == "W":
                width = int(value)
            elif key == "H":
                height = int(value)
            elif key == "C":
                chroma, depth = parse_colorspace(value)
            elif tag.startswith("XCOLORRANGE="):
                color_range = {"LIMITED": "limited", "FULL": "full"}.get(value[len("COLORRANGE="):])
                if color_range is None:
                    raise ValueError(f"Y4M tag {tag!r}: expected LIMITED or FULL")
        if not width or not height:
            raise ValueError("Y4M header without W and H")
        self.geometry = pictures.geometry(width, height, chroma, depth, color_range)
        self._size = pictures.picture_bytes(self.geometry)

    def __iter__(self):
        return self

    def __next__(self):
        line = self._file.readline()
        if not line:
            self.close()
            raise StopIteration
        if not line.startswith(b"FRAME"):
            raise ValueError(f"expected FRAME, got {line[:20]!r}")
        data = self._file.read(self._size)
        if len(data) != self._size:
            raise ValueError(f"truncated frame: {len(data)} of {self._size} bytes")
        return data

    def close(self):
        if self._owns:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
