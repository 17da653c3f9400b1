#!/usr/bin/env python3
"""End-to-end throughput of encoded sources against the decoder's own rate.

Makes a reference (testsrc2, raw Y4M under a --source_root) and HEVC and AV1 renditions
of it with the ffmpeg CLI, starts exactqd (CPU, or GPU when present and --backend says
so), and for each rendition and metric set scores it with `exactq` (reference by server
path, rendition uploaded) at 1 and N streams at once. Reports frames/s end to end,
bytes received per frame (and as a share of the raw picture), the server's CPU seconds
per frame (/proc), and the decoder's own rate: `ffmpeg -threads T -i X -f null -` on the
same cores. Writes JSON (--out) and prints a table.

  bazel build --config=nocuda //server:exactqd //client:exactq
  bench/decode/bench_decode.py --size 1920x1080 --frames 60 --out bench/decode/results/local.json

On a machine without ffmpeg or Bazel (the lent GPU machine): make the inputs here with
--make-inputs DIR, carry DIR and the binaries, and run there with --inputs DIR --bin BIN.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


RENDITIONS = {
    "hevc": ("dist_hevc.mkv", ["-c:v", "libx265", "-preset", "ultrafast", "-crf", "28", "-x265-params", "log-level=none"]),
    "av1": ("dist_av1.mkv", ["-c:v", "libsvtav1", "-preset", "12", "-crf", "40"]),
}


def make_inputs(work, size, frames):
    """ref.y4m (testsrc2) and the renditions, made with the ffmpeg CLI."""
    src = ["-f", "lavfi", "-i", f"testsrc2=size={size}:rate=24", "-frames:v", str(frames)]
    ref = os.path.join(work, "ref.y4m")
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", *src, "-pix_fmt", "yuv420p", ref])
    for name, codec in RENDITIONS.values():
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", ref, *codec, os.path.join(work, name)])


def decoder_rate(bin_dir, path, threads):
    """engine/decode's VideoDecoder alone (the server's decoder), best of 3."""
    rates = []
    for _ in range(3):
        out = run([os.path.join(bin_dir, "decode_rate"), path, str(threads)])
        rates.append(json.loads(out.stdout)["frames_per_second"])
    return max(rates)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--frames", type=int, default=60)
    p.add_argument("--streams", type=int, default=2, help="streams at once for the N-stream rows")
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="decoder threads per side")
    p.add_argument("--metrics", default="psnr/ssim", help="'/'-separated metric sets, each comma-separated")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--out", default="")
    p.add_argument("--bin", default="", help="exactqd, exactq and decode_rate in one folder (default: bazel-bin)")
    p.add_argument("--make-inputs", default="", help="only make the inputs in this folder and stop")
    p.add_argument("--inputs", default="", help="a folder from --make-inputs (no ffmpeg needed)")
    args = p.parse_args()
    if args.make_inputs:
        os.makedirs(args.make_inputs, exist_ok=True)
        make_inputs(args.make_inputs, args.size, args.frames)
        return
    if args.bin:
        exactqd, exactq, bin_dir = (os.path.join(args.bin, b) for b in ("exactqd", "exactq", ""))
    else:
        exactqd = os.path.join(ROOT, "bazel-bin/server/exactqd")
        exactq = os.path.join(ROOT, "bazel-bin/client/exactq")
        bin_dir = os.path.join(ROOT, "bazel-bin/bench/decode")
    work = tempfile.mkdtemp(prefix="exactq-bench-decode-")
    try:
        data = os.path.abspath(args.inputs) if args.inputs else work  # the server's --source-root
        if not args.inputs:
            make_inputs(work, args.size, args.frames)
        renditions = {key: os.path.join(data, name) for key, (name, _) in RENDITIONS.items()}
        w, h = map(int, args.size.split("x"))
        raw_frame = w * h * 3 // 2
        port_file = os.path.join(work, "ports")
        log = open(os.path.join(work, "server.log"), "w")
        server = subprocess.Popen([exactqd, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                                   f"--port-file={port_file}", f"--source-root={data}", f"--spool-dir={work}",
                                   f"--max-decode-threads={args.threads}", "--frames-in-flight=2"],
                                  stdout=log, stderr=subprocess.STDOUT)
        while not os.path.exists(port_file):
            time.sleep(0.05)
        ports = dict(line.split("=") for line in open(port_file).read().split())
        address = f"127.0.0.1:{ports['grpc']}"
        rows = []
        for name, path in renditions.items():
            decode_fps = decoder_rate(bin_dir, path, args.threads)
            for metrics in args.metrics.split("/"):
                for streams in (1, args.streams):
                    cpu0 = cpu_seconds(server.pid)
                    start = time.monotonic()
                    procs = []
                    for i in range(streams):
                        out = os.path.join(work, f"out{i}.json")
                        procs.append((out, subprocess.Popen(
                            [exactq, "score", "ref.y4m", path, "--server-path-reference", "--server", address,
                             "--metrics", metrics, "--backend", args.backend,
                             "--decode-threads", str(args.threads), "--quiet", "--json", out])))
                    for _, proc in procs:
                        if proc.wait() != 0:
                            sys.exit(f"exactq failed; server log: {open(log.name).read()[-2000:]}")
                    wall = time.monotonic() - start
                    cpu = cpu_seconds(server.pid) - cpu0
                    docs = [json.load(open(out)) for out, _ in procs]
                    frames = sum(d["totals"]["frames"] for d in docs)
                    received = sum(d["totals"]["bytes_received"] for d in docs)
                    rows.append({
                        "rendition": name, "metrics": metrics, "streams": streams,
                        "frames_per_second_end_to_end": frames / wall,
                        "decoder_frames_per_second": decode_fps,
                        "ratio_to_decoder": frames / wall / decode_fps,
                        "bytes_received_per_frame": received / frames,
                        "share_of_raw_bytes": received / frames / (2 * raw_frame),
                        "server_cpu_seconds_per_frame": cpu / frames,
                    })
                    r = rows[-1]
                    print(f"{name:5} {metrics:10} streams={streams}  end-to-end {r['frames_per_second_end_to_end']:7.1f} "
                          f"fps  decoder {decode_fps:7.1f} fps  ratio {r['ratio_to_decoder']:.2f}  "
                          f"bytes/frame {r['bytes_received_per_frame']:9.0f} ({100 * r['share_of_raw_bytes']:.2f}% of raw)"
                          f"  server cpu {1000 * r['server_cpu_seconds_per_frame']:.1f} ms/frame", flush=True)
        server.terminate()
        server.wait(60)
        result = {"size": args.size, "frames": args.frames, "threads": args.threads, "backend": args.backend,
                  "cores": os.cpu_count(), "rows": rows,
                  "note": "reference: raw Y4M by server path (decoded by FFmpeg's Y4M demuxer); rendition uploaded"}
        if args.out:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                json.dump(result, f, indent=2)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
