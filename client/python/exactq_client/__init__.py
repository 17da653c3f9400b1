"""ExactQ's Python client: exact video quality scores from an exactqd server.

    from exactq_client import Client
    with Client("localhost:50051") as client:
        result = client.score_files("ref.y4m", "dist.y4m", metrics=["psnr"])
        print(result.pooled["psnr_y"]["mean"])

Frames held in memory (bytes in the wire layout, or numpy planes):
    client.score_frames(geometry(1920, 1080, "420", 10), [(ref, dist), ...])
Results are dataclasses (StreamResult, FrameScores, PooledScore, Totals); numpy planes
go in (to_wire) and come out (from_wire).
Streaming, each frame as the server answers it:
    stream = client.stream(geometry, frames)
    for frame in stream: print(frame.index, frame.scores)
    stream.result.pooled
Encoded files the server decodes (uploaded, or read under its --source_root):
    client.score_sources(Upload("ref.mkv"), ServerPath("title/dist.mp4"))
A ladder: every rendition against one reference in one call (the reference decoded once,
smaller renditions scaled by the exact scaler):
    ladder = client.score_ladder("ref.mkv", ["2160p.mp4", "1080p.mp4", "720p.mp4"])
    for r in ladder.renditions: print(r.source, r.result.pooled["psnr_y"]["mean"] if r.result else r.error)
"""

from .client import (Client, ExactQError, FrameScores, LadderCall, LadderResult, PooledScore,  # noqa: F401
                     RenditionResult, ScoreStream, ServerPath, SourceStream, StreamResult, Totals, Upload,
                     paired_frames, same_geometry)
from .pictures import from_wire, geometry, picture_bytes, plane_shapes, to_wire  # noqa: F401
from .y4m import Y4mReader  # noqa: F401

__version__ = "0.1.0"
