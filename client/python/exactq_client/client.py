"""The gRPC side: a Client for exactq.v1.Scorer (stream, unary, capabilities)."""

import json
import os
import threading
from dataclasses import asdict, dataclass, field, fields
from typing import Dict, List, Optional

import grpc

from . import pictures
from ._stubs import pb, pb_grpc
from .y4m import Y4mReader

BACKENDS = {"auto": pb.BACKEND_AUTO, "cuda": pb.BACKEND_CUDA, "cpu": pb.BACKEND_CPU}
BACKEND_NAMES = {v: k for k, v in BACKENDS.items()}
STAGES = ("received", "queued", "host_to_device", "compute", "device_to_host", "total")
POOLED = ("min", "max", "mean", "harmonic_mean", "p1", "p5", "p10", "median")


class ExactQError(Exception):
    """A call the server (or the channel) ended with a gRPC status other than OK."""

    def __init__(self, code, details):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


class _Mapping:
    """Dataclasses that also read as the dicts earlier versions returned:
    result.pooled["psnr_y"]["mean"] == result.pooled["psnr_y"].mean."""

    def __getitem__(self, key):
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return [f.name for f in fields(self) if f.name != "raw"]

    def items(self):
        return [(k, getattr(self, k)) for k in self.keys()]

    def to_dict(self):
        return {k: getattr(self, k) for k in self.keys()}


@dataclass
class FrameScores(_Mapping):
    index: int
    scores: Dict[str, float]   # output name -> score, in the server's order
    backend: str               # "cpu" or "cuda": what computed the frame
    device: str
    fallback_reason: str       # why auto placement chose the CPU; "" otherwise
    timing_ns: Dict[str, int]  # stage -> nanoseconds
    raw: object = field(repr=False, default=None)

    @classmethod
    def from_proto(cls, frame):
        return cls(index=frame.frame_index,
                   scores={s.name: s.value for s in frame.scores},
                   backend=BACKEND_NAMES.get(frame.backend, str(frame.backend)),
                   device=frame.device, fallback_reason=frame.fallback_reason,
                   timing_ns={s: getattr(frame.timing, s + "_ns") for s in STAGES}, raw=frame)


@dataclass
class PooledScore(_Mapping):
    """One output's statistics over the frames (proto PooledScore)."""
    min: float
    max: float
    mean: float
    harmonic_mean: float
    p1: float
    p5: float
    p10: float
    median: float


@dataclass
class Totals(_Mapping):
    frames: int
    frames_cuda: int
    frames_cpu: int
    bytes_received: int
    wall_ns: int
    frames_per_second: float
    host_to_device_bytes: int = 0  # the pictures' bytes the server copied to a GPU


@dataclass
class StreamResult(_Mapping):
    job_id: str
    frames: List[FrameScores]       # in frame order
    pooled: Dict[str, PooledScore]  # output name -> statistics
    totals: Totals
    server_version: str
    metric_versions: Dict[str, int]  # metric name -> definition version
    raw: object = field(repr=False, default=None)


def _normalised_format(geometry):
    f = pb.PixelFormat()
    f.CopyFrom(geometry.format)
    if f.range == pb.COLOR_RANGE_UNSPECIFIED:
        f.range = pb.COLOR_RANGE_LIMITED  # the proto: unspecified is limited
    if f.matrix == pb.COLOR_MATRIX_UNSPECIFIED:
        f.matrix = pb.COLOR_MATRIX_BT709  # the proto: unspecified is BT.709
    return f


def same_geometry(a, b):
    """Whether two exactq.v1.Geometry describe the same pictures, reading unspecified
    range as limited and unspecified matrix as BT.709 (the proto's defaults)."""
    return (a.width, a.height) == (b.width, b.height) and _normalised_format(a) == _normalised_format(b)


def describe(geometry):
    f = _normalised_format(geometry)
    return (f"{geometry.width}x{geometry.height} {pb.ChromaLayout.Name(f.chroma)} "
            f"{f.bit_depth}-bit {pb.ColorRange.Name(f.range)}")


def paired_frames(reference, distorted):
    """(reference, distorted) pictures of two iterables; ValueError when one ends first,
    naming the frame (the C++ client's message)."""
    ref_iter, dist_iter = iter(reference), iter(distorted)
    index = 0
    while True:
        ref = next(ref_iter, None)
        dist = next(dist_iter, None)
        if ref is None and dist is None:
            return
        if ref is None or dist is None:
            shorter, longer = ("reference", "distorted") if ref is None else ("distorted", "reference")
            raise ValueError(f"the {shorter} file ended at frame {index} but the {longer} file "
                             "has more frames")
        yield ref, dist
        index += 1


def metric_requests(metrics):
    """['psnr', 'ssim:enable_db=true'] or {'ssim': {'enable_db': 'true'}} -> [MetricRequest]."""
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m]
    if isinstance(metrics, dict):
        return [pb.MetricRequest(name=n, options={k: str(v) for k, v in (o or {}).items()})
                for n, o in metrics.items()]
    requests = []
    for m in metrics:
        name, *options = m.split(":")
        pairs = dict(o.split("=", 1) for o in options)
        requests.append(pb.MetricRequest(name=name, options=pairs))
    return requests


def _header(geometry, metrics, backend, job_id, expected_frames=0):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {backend!r}")
    return pb.StreamHeader(job_id=job_id, geometry=geometry, metrics=metric_requests(metrics),
                           backend=BACKENDS[backend], expected_frames=expected_frames)


def _error(e):
    return ExactQError(e.code(), e.details())


class ScoreStream:
    """One ScoreStream call. Iterate over it for each frame's FrameScores as the server
    answers (in frame order); afterwards `result` holds the whole StreamResult. Frames
    are sent from a gRPC thread as flow control allows, in chunks of the size the server
    accepted, so a slow server slows the reading of `frames`, never grows memory."""

    def __init__(self, stub, header, frames, timeout=None):
        self._header = header
        self._frames = frames
        self._accepted = threading.Event()
        self._finished = threading.Event()
        self._chunk_bytes = None
        self._send_error = None
        self.accepted = None
        self.result = None
        self._call = stub.ScoreStream(self._requests(), timeout=timeout)

    def _requests(self):
        yield pb.ScoreRequest(header=self._header)
        while not self._accepted.wait(0.05):
            if self._finished.is_set():
                return
        geometry = self._header.geometry
        try:
            for index, (reference, distorted) in enumerate(self._frames):
                for picture, data in ((pb.PICTURE_REFERENCE, reference), (pb.PICTURE_DISTORTED, distorted)):
                    data = pictures.to_wire(geometry, data)
                    for offset in range(0, len(data), self._chunk_bytes):
                        if self._finished.is_set():
                            return
                        piece = data[offset:offset + self._chunk_bytes]
                        yield pb.ScoreRequest(chunk=pb.FrameChunk(
                            frame_index=index, picture=picture, offset=offset, data=piece,
                            last=offset + len(piece) == len(data)))
        except Exception as e:  # noqa: BLE001 - given back to the caller's thread
            # Only whole pictures were sent: ending the requests half-closes the call, so
            # the server answers every frame sent; then the caller gets this error (as
            # the C++ client does), with `result` holding what was scored.
            self._send_error = e

    def __iter__(self):
        frames = []
        summary = None
        try:
            for response in self._call:
                kind = response.WhichOneof("kind")
                if kind == "accepted":
                    self.accepted = response.accepted
                    self._chunk_bytes = max(1, response.accepted.max_chunk_bytes or (1 << 20))
                    self._accepted.set()
                elif kind == "frame":
                    scores = FrameScores.from_proto(response.frame)
                    frames.append(scores)
                    yield scores
                elif kind == "summary":
                    summary = response.summary
        except grpc.RpcError as e:
            if self._send_error is not None:
                raise self._send_error from None
            raise _error(e) from None
        finally:
            self._finished.set()
            self._call.cancel()  # a no-op after a normal end
        if self._send_error is not None:
            if summary is not None:
                self.result = _result(summary, frames)
            raise self._send_error
        if summary is None:
            raise ExactQError(grpc.StatusCode.INTERNAL, "the stream ended without a summary")
        self.result = _result(summary, frames)

    def wait(self):
        """Consume every answer; the StreamResult."""
        for _ in self:
            pass
        return self.result


# Encoded uploads go in pieces well under every server's max_chunk_bytes default (1 MiB).
UPLOAD_CHUNK_BYTES = 256 << 10


def default_job_id(reference, distorted, limit=256):
    """"REF vs DIST" within the server's job_id limit: the paths, else their file names,
    else cut at a character boundary."""
    job = f"{reference} vs {distorted}"
    if len(job.encode()) <= limit:
        return job
    job = f"{os.path.basename(reference)} vs {os.path.basename(distorted)}"
    return job.encode()[:limit].decode(errors="ignore")


class Upload:
    """A side the server decodes from the bytes sent: an encoded file (mkv, mp4, ivf,
    ts, Y4M, ...) by path, or a binary file object (a pipe works: it is read once)."""

    def __init__(self, source, name=None):
        self.source = source
        self.name = name if name is not None else (source if isinstance(source, str) else "upload")


class ServerPath:
    """A side the server reads itself, under one of its --source_root directories."""

    def __init__(self, path):
        self.path = path


def _decode_device(decode):
    if decode not in ("", "auto", "gpu", "cpu"):
        raise ValueError(f"decode must be 'auto', 'gpu', 'cpu' or '' (the server's), got {decode!r}")
    return decode


def _source_proto(source):
    if isinstance(source, ServerPath):
        return pb.Source(server_path=pb.ServerPath(path=source.path))
    size = 0
    if isinstance(source.source, str):
        try:
            size = os.path.getsize(source.source)
        except OSError:
            size = 0
    return pb.Source(upload=pb.EncodedUpload(name=source.name, size_bytes=size))


class SourceStream(ScoreStream):
    """A ScoreStream whose sides the server decodes (uploads or server paths). The
    uploads' bytes go up at once, alternating between the two files, while the server
    decodes; iterate as over a ScoreStream."""

    def __init__(self, stub, header, uploads, timeout=None):
        self._uploads = uploads  # [(picture, Upload)]
        super().__init__(stub, header, (), timeout)

    def _requests(self):
        yield pb.ScoreRequest(header=self._header)
        try:
            for upload, offset, data, last in _upload_chunks(self._uploads, self._finished):
                yield pb.ScoreRequest(encoded_chunk=pb.EncodedChunk(
                    picture=upload[0], offset=offset, data=data, last=last))
        except Exception as e:  # noqa: BLE001 - given back to the caller's thread
            self._send_error = e
            self._call.cancel()


def _upload_chunks(uploads, finished):
    """(entry, offset, data, last) for every upload's chunks, one chunk of each file in
    turn so that every decoder on the server starts early. `uploads`: tuples whose last
    item is the Upload; stops when `finished` is set."""
    opened = []
    try:
        for entry in uploads:
            source = entry[-1].source
            f = open(source, "rb") if isinstance(source, str) else source
            opened.append([entry, f, 0, isinstance(source, str)])
        pending = list(opened)
        while pending:
            for item in list(pending):
                entry, f, offset, _ = item
                if finished.is_set():
                    return
                data = f.read(UPLOAD_CHUNK_BYTES)
                last = len(data) < UPLOAD_CHUNK_BYTES
                yield entry, offset, data, last
                item[2] = offset + len(data)
                if last:
                    pending.remove(item)
    finally:
        for _, f, _, owned in opened:
            if owned:
                f.close()


def _result(summary, frames):
    t = summary.totals
    return StreamResult(
        job_id=summary.job_id, frames=frames,
        pooled={p.name: PooledScore(**{k: getattr(p, k) for k in POOLED}) for p in summary.pooled},
        totals=Totals(frames=t.frames, frames_cuda=t.frames_cuda, frames_cpu=t.frames_cpu,
                      bytes_received=t.bytes_received, wall_ns=t.wall_ns,
                      frames_per_second=t.frames_per_second,
                      host_to_device_bytes=t.timing_sum.host_to_device_bytes),
        server_version=summary.provenance.server_version,
        metric_versions={m.name: m.definition_version for m in summary.provenance.metrics},
        raw=summary)


@dataclass
class RenditionResult(_Mapping):
    """One rendition of a ladder: what the server decoded, its frames, and its
    StreamResult (`result`) or the error that ended it (`error`, an ExactQError)."""
    source: str
    width: int
    height: int
    scaled: bool               # scaled to the reference's size before scoring
    decoder: str
    frames: List[FrameScores]
    result: Optional[StreamResult]
    error: Optional[ExactQError]


@dataclass
class LadderResult(_Mapping):
    reference: str
    width: int
    height: int
    scaler_version: int        # the exact scaler's definition; 0 when nothing was scaled
    renditions: List[RenditionResult]
    raw: object = field(repr=False, default=None)  # the LadderAccepted


def _source_name(source):
    return source.path if isinstance(source, ServerPath) else source.name


class LadderCall:
    """One ScoreLadder call: uploads go up from a gRPC thread, one chunk of each file in
    turn; iterate for (rendition index, FrameScores) as the server answers; afterwards
    `result` is the LadderResult."""

    def __init__(self, stub, header, sources, timeout=None):
        self._finished = threading.Event()
        self._send_error = None
        self._header = header
        self._sources = sources  # [reference, rendition 0, ...]
        self.accepted = None
        self.result = None
        self._call = stub.ScoreLadder(self._requests(), timeout=timeout)

    def _requests(self):
        yield pb.LadderRequest(header=self._header)
        uploads = [(pb.PICTURE_REFERENCE if i == 0 else pb.PICTURE_DISTORTED, max(0, i - 1), s)
                   for i, s in enumerate(self._sources) if isinstance(s, Upload)]
        try:
            for (picture, rendition, _), offset, data, last in _upload_chunks(uploads, self._finished):
                yield pb.LadderRequest(chunk=pb.LadderChunk(rendition=rendition, chunk=pb.EncodedChunk(
                    picture=picture, offset=offset, data=data, last=last)))
        except Exception as e:  # noqa: BLE001 - given back to the caller's thread
            self._send_error = e
            self._call.cancel()

    def __iter__(self):
        renditions = self._sources[1:]
        frames = [[] for _ in renditions]
        ends = [None] * len(renditions)
        try:
            for response in self._call:
                kind = response.WhichOneof("kind")
                if kind == "accepted":
                    self.accepted = response.accepted
                elif kind == "frame":
                    scores = FrameScores.from_proto(response.frame.frame)
                    frames[response.frame.rendition].append(scores)
                    yield response.frame.rendition, scores
                elif kind == "rendition_end":
                    ends[response.rendition_end.rendition] = response.rendition_end
        except grpc.RpcError as e:
            if self._send_error is not None:
                raise self._send_error from None
            raise _error(e) from None
        finally:
            self._finished.set()
            self._call.cancel()  # a no-op after a normal end
        if self._send_error is not None:
            raise self._send_error
        if self.accepted is None:
            raise ExactQError(grpc.StatusCode.INTERNAL, "the ladder ended without being accepted")
        out = []
        for i, source in enumerate(renditions):
            end, accepted = ends[i], self.accepted.renditions[i]
            ok = end is not None and end.code == 0
            error = None
            if not ok:
                code = grpc.StatusCode.INTERNAL
                for c in grpc.StatusCode:
                    if end is not None and c.value[0] == end.code:
                        code = c
                error = ExactQError(code, end.message if end is not None else "no end for this rendition")
            out.append(RenditionResult(
                source=_source_name(source), width=accepted.geometry.width, height=accepted.geometry.height,
                scaled=accepted.scaled, decoder=accepted.decoder, frames=frames[i],
                result=_result(end.summary, frames[i]) if ok else None, error=error))
        self.result = LadderResult(
            reference=_source_name(self._sources[0]), width=self.accepted.geometry.width,
            height=self.accepted.geometry.height, scaler_version=self.accepted.provenance.scaler_version,
            renditions=out, raw=self.accepted)

    def wait(self):
        """Consume every answer; the LadderResult."""
        for _ in self:
            pass
        return self.result


class Client:
    """exactq.v1.Scorer at `target`: 'host:port', or 'dns:///exactqd.NS.svc.cluster.local:50051'
    for a headless Kubernetes Service, whose pods the default round_robin policy spreads
    calls over. `credentials`: grpc.ssl_channel_credentials(...) for TLS."""

    def __init__(self, target="localhost:50051", *, credentials=None, options=(),
                 load_balancing="round_robin"):
        options = list(options)
        if load_balancing:
            options.append(("grpc.service_config",
                            json.dumps({"loadBalancingConfig": [{load_balancing: {}}]})))
        if credentials is None:
            self._channel = grpc.insecure_channel(target, options=options)
        else:
            self._channel = grpc.secure_channel(target, credentials, options=options)
        self._stub = pb_grpc.ScorerStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def wait_ready(self, timeout=10):
        """Block until the channel connects (grpc.FutureTimeoutError after timeout s)."""
        grpc.channel_ready_future(self._channel).result(timeout=timeout)

    def capabilities(self, timeout=30):
        """The server's exactq.v1.Capabilities (metrics, formats, limits, devices)."""
        try:
            return self._stub.GetCapabilities(pb.GetCapabilitiesRequest(), timeout=timeout)
        except grpc.RpcError as e:
            raise _error(e) from None

    def stream(self, geometry, frames, metrics=("psnr",), backend="auto", job_id="",
               expected_frames=0, timeout=None):
        """A ScoreStream over `frames`: an iterable of (reference, distorted) pictures,
        each bytes in the wire layout or a sequence of numpy planes (Y, Cb, Cr)."""
        header = _header(geometry, metrics, backend, job_id, expected_frames)
        return ScoreStream(self._stub, header, frames, timeout)

    def score_frames(self, geometry, frames, **kwargs):
        """Score frames held in memory; the StreamResult."""
        return self.stream(geometry, frames, **kwargs).wait()

    def score_files(self, reference_path, distorted_path, metrics=("psnr",), backend="auto",
                    job_id=None, timeout=None):
        """Score two Y4M files frame by frame; the StreamResult. The files must have the
        same geometry (a file without a range tag is limited range, as the proto says
        of an unspecified range). Files of different lengths raise ValueError naming the
        frame where the shorter ended, as the C++ client does, after the frames sent
        before it are answered (the stream's `result` holds them: use `stream()` and
        `paired_frames()` to keep it)."""
        with Y4mReader(reference_path) as ref, Y4mReader(distorted_path) as dist:
            if not same_geometry(ref.geometry, dist.geometry):
                raise ValueError(f"{reference_path} and {distorted_path} differ in geometry: "
                                 f"{describe(ref.geometry)} against {describe(dist.geometry)}")
            job = job_id if job_id is not None else default_job_id(reference_path, distorted_path)
            geometry = pb.Geometry()
            geometry.CopyFrom(ref.geometry)
            if geometry.format.range == pb.COLOR_RANGE_UNSPECIFIED:
                geometry.format.range = dist.geometry.format.range
            return self.stream(geometry, paired_frames(ref, dist), metrics=metrics, backend=backend,
                               job_id=job, timeout=timeout).wait()

    def score_sources(self, reference, distorted, metrics=("psnr",), backend="auto", job_id=None,
                      decode_threads=0, decode="", timeout=None):
        """Score two sides the server decodes: each an Upload (an encoded file's bytes;
        a plain path string means an upload of that file) or a ServerPath (read by the
        server under its --source_root). Geometry and format come from the bitstream
        (`stream.accepted.geometry`); where each side was decoded in
        `stream.accepted.reference_decode`/`distorted_decode`. `decode`: "auto", "gpu",
        "cpu", or "" for the server's --decode. The StreamResult."""
        return self.stream_sources(reference, distorted, metrics=metrics, backend=backend, job_id=job_id,
                                   decode_threads=decode_threads, decode=decode, timeout=timeout).wait()

    def stream_sources(self, reference, distorted, metrics=("psnr",), backend="auto", job_id=None,
                       decode_threads=0, decode="", timeout=None):
        """As score_sources, streaming: iterate for each frame as the server answers."""
        reference = Upload(reference) if isinstance(reference, str) else reference
        distorted = Upload(distorted) if isinstance(distorted, str) else distorted
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {backend!r}")
        names = [s.path if isinstance(s, ServerPath) else s.name for s in (reference, distorted)]
        header = pb.StreamHeader(
            job_id=job_id if job_id is not None else default_job_id(names[0], names[1]),
            metrics=metric_requests(metrics), backend=BACKENDS[backend], decode_threads=decode_threads,
            decode=_decode_device(decode), reference_source=_source_proto(reference),
            distorted_source=_source_proto(distorted))
        uploads = [(picture, s) for picture, s in ((pb.PICTURE_REFERENCE, reference),
                                                   (pb.PICTURE_DISTORTED, distorted)) if isinstance(s, Upload)]
        return SourceStream(self._stub, header, uploads, timeout)

    def score_ladder(self, reference, renditions, metrics=("psnr",), backend="auto", job_id=None,
                     scale="bicubic", decode_threads=0, decode="", timeout=None):
        """Score every rendition against one reference in one call; the server decodes
        the reference once. Each source is an Upload (a path string means an upload of
        that file) or a ServerPath. Renditions of another size are scaled to the
        reference's by the exact scaler (scale="bicubic"), or refused (scale="none").
        The LadderResult: per rendition its StreamResult, or the error that ended it
        (another frame count, a corrupt file) while the others went on."""
        return self.stream_ladder(reference, renditions, metrics=metrics, backend=backend, job_id=job_id,
                                  scale=scale, decode_threads=decode_threads, decode=decode,
                                  timeout=timeout).wait()

    def stream_ladder(self, reference, renditions, metrics=("psnr",), backend="auto", job_id=None,
                      scale="bicubic", decode_threads=0, decode="", timeout=None):
        """As score_ladder, streaming: iterate for (rendition, FrameScores) as answered."""
        sources = [Upload(s) if isinstance(s, str) else s for s in [reference, *renditions]]
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {backend!r}")
        if scale not in ("bicubic", "none"):
            raise ValueError(f"scale must be 'bicubic' or 'none', got {scale!r}")
        if not renditions:
            raise ValueError("a ladder needs at least one rendition")
        header = pb.LadderHeader(
            job_id=job_id if job_id is not None else default_job_id(_source_name(sources[0]),
                                                                     f"{len(renditions)} renditions"),
            metrics=metric_requests(metrics), backend=BACKENDS[backend], scale=scale,
            decode_threads=decode_threads, decode=_decode_device(decode),
            reference_source=_source_proto(sources[0]),
            rendition_sources=[_source_proto(s) for s in sources[1:]])
        return LadderCall(self._stub, header, sources, timeout)

    def score_pair(self, geometry, reference, distorted, metrics=("psnr",), backend="auto",
                   job_id="", timeout=60):
        """One pair in one unary call (pictures up to Limits.max_unary_picture_bytes)."""
        request = pb.ScorePairRequest(
            header=_header(geometry, metrics, backend, job_id),
            reference=pictures.to_wire(geometry, reference),
            distorted=pictures.to_wire(geometry, distorted))
        try:
            response = self._stub.ScorePair(request, timeout=timeout)
        except grpc.RpcError as e:
            raise _error(e) from None
        return FrameScores.from_proto(response.frame)
