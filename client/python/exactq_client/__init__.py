"""ExactQ's Python client: exact video quality scores from an exactqd server.

    from exactq_client import Client
    with Client("localhost:50051") as client:
        result = client.score_files("ref.y4m", "dist.y4m", metrics=["psnr"])
        print(result.pooled["psnr_y"]["mean"])

Frames held in memory (bytes in the wire layout, or numpy planes):
    client.score_frames(geometry(1920, 1080, "420", 10), [(ref, dist), ...])
Streaming, each frame as the server answers it:
    stream = client.stream(geometry, frames)
    for frame in stream: print(frame.index, frame.scores)
    stream.result.pooled
Encoded files the server decodes (uploaded, or read under its --source_root):
    client.score_sources(Upload("ref.mkv"), ServerPath("title/dist.mp4"))
"""

from .client import (Client, ExactQError, FrameScores, ScoreStream, ServerPath, SourceStream,  # noqa: F401
                     StreamResult, Upload)
from .pictures import geometry, picture_bytes, plane_shapes  # noqa: F401
from .y4m import Y4mReader  # noqa: F401
