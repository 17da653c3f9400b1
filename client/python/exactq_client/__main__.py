"""python3 -m exactq_client score REF DIST [--server HOST:PORT] [--metrics psnr,...]
                                 [--backend auto|cuda|cpu] [--json FILE|-] [--quiet]
   python3 -m exactq_client capabilities [--server HOST:PORT]"""

import argparse
import json
import math
import os
import sys

from google.protobuf import text_format

from .client import Client, ExactQError, ServerPath, Upload


def _number(x):
    return x if math.isfinite(x) else None  # libvmaf writes non-finite values as null


def to_json(result):
    """libvmaf's shape (frames[].frameNum, frames[].metrics, pooled_metrics), plus the
    backend of each frame, versions and totals, as the C++ client writes it."""
    return {
        "version": result.server_version,
        "job_id": result.job_id,
        "metric_versions": result.metric_versions,
        "fps": result.totals.frames_per_second,
        "frames": [{"frameNum": f.index, "backend": f.backend,
                    "metrics": {k: _number(v) for k, v in f.scores.items()}}
                   for f in result.frames],
        "pooled_metrics": {name: {k: _number(v) for k, v in stats.items()}
                           for name, stats in result.pooled.items()},
        "totals": result.totals.to_dict(),
    }


def _is_y4m(path):
    """By the signature; a pipe is not looked into (it would lose the bytes read)."""
    if not os.path.isfile(path):
        return True
    with open(path, "rb") as f:
        return f.read(9) == b"YUV4MPEG2"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="exactq_client", description="ExactQ's Python client.")
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="score two Y4M files")
    score.add_argument("reference")
    score.add_argument("distorted")
    score.add_argument("--metrics", default="psnr",
                       help="comma-separated, each optionally with options: ssim:enable_db=true")
    score.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
    score.add_argument("--json", help="write libvmaf-shaped JSON here ('-' for stdout)")
    score.add_argument("--job-id")
    score.add_argument("--quiet", action="store_true", help="print no table")
    score.add_argument("--server-paths", action="store_true",
                       help="send both as paths for the server to read under its --source_root")
    caps = commands.add_parser("capabilities", help="what the server can do")
    for p in (score, caps):
        p.add_argument("--server", default="localhost:50051")
        p.add_argument("--connect-timeout", type=float, default=10)
    args = parser.parse_args(argv)

    with Client(args.server) as client:
        try:
            client.wait_ready(args.connect_timeout)
        except Exception:  # noqa: BLE001 - grpc.FutureTimeoutError
            print(f"exactq_client: cannot reach {args.server}", file=sys.stderr)
            return 1
        try:
            if args.command == "capabilities":
                print(text_format.MessageToString(client.capabilities()), end="")
                return 0
            if args.server_paths:
                result = client.score_sources(ServerPath(args.reference), ServerPath(args.distorted),
                                              metrics=args.metrics, backend=args.backend, job_id=args.job_id)
            elif not (_is_y4m(args.reference) and _is_y4m(args.distorted)):
                # Encoded files (mkv, mp4, ...): the server decodes both, a Y4M beside one too.
                result = client.score_sources(Upload(args.reference), Upload(args.distorted),
                                              metrics=args.metrics, backend=args.backend, job_id=args.job_id)
            else:
                result = client.score_files(args.reference, args.distorted, metrics=args.metrics,
                                            backend=args.backend, job_id=args.job_id)
        except ExactQError as e:
            print(f"exactq_client: {e.code.name}: server: {e.details}", file=sys.stderr)
            return 1
        except (OSError, ValueError) as e:
            print(f"exactq_client: {e}", file=sys.stderr)
            return 1
    if not args.quiet:
        for f in result.frames:
            scores = "  ".join(f"{k} {v:.6f}" for k, v in f.scores.items())
            print(f"frame {f.index:5d}  {scores}  [{f.backend}]")
        for name, stats in result.pooled.items():
            print(f"{name}: mean {stats['mean']:.6f}  harmonic mean {stats['harmonic_mean']:.6f}")
    if args.json:
        text = json.dumps(to_json(result), indent=2) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
