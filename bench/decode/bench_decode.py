#!/usr/bin/env python3
"""End-to-end throughput of encoded sources against the decoder's own rate.

Makes a reference (testsrc2, raw Y4M under a --source_root) and HEVC and AV1 renditions
of it with the ffmpeg CLI, starts exactqd (CPU, or GPU when present and --backend says
so), and for each rendition and metric set scores it with `exactq` (reference by server
path, rendition uploaded) at 1 and N streams at once. Reports frames/s end to end,
bytes received per frame (and as a share of the raw picture), bytes copied to the GPU per
frame (the totals of the answers), the server's CPU seconds
per frame (/proc), and the decoder's own rate: `decode_rate` (the server's decoder alone,
the same threads and streams) on the same cores. Writes JSON (--out) and prints a table.

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

from repeat_media import repeat_files

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
ANNEX_B_HEVC = "dist_hevc.hevc"
IVF_AV1 = "dist_av1.ivf"
# What --repeat lengthens by concatenation (repeat_media.py).
REPEATABLE = {"hevc": ANNEX_B_HEVC, "av1": IVF_AV1}


def make_inputs(work, size, frames):
    """ref.y4m (testsrc2) and the renditions, made with the ffmpeg CLI; the HEVC one also
    as an Annex B elementary stream and the AV1 one as IVF, which --repeat lengthens
    (repeat_media.py)."""
    src = ["-f", "lavfi", "-i", f"testsrc2=size={size}:rate=24", "-frames:v", str(frames)]
    ref = os.path.join(work, "ref.y4m")
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", *src, "-pix_fmt", "yuv420p", ref])
    for name, codec in RENDITIONS.values():
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", ref, *codec, os.path.join(work, name)])
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", os.path.join(work, RENDITIONS["hevc"][0]), "-c", "copy",
         "-f", "hevc", os.path.join(work, ANNEX_B_HEVC)])
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", os.path.join(work, RENDITIONS["av1"][0]), "-c", "copy",
         "-f", "ivf", os.path.join(work, IVF_AV1)])


def decoder_rate(bin_dir, path, threads, device="cpu", streams=1, keep=True):
    """engine/decode's VideoDecoder alone (the server's decoder), `streams` copies of the
    file at once on `device`: their frames per second, best of 3. keep: pictures the GPU
    decodes stay there (the server's path when it scores on that GPU)."""
    rates = []
    for _ in range(3):
        try:
            out = run([os.path.join(bin_dir, "decode_rate"), path, str(threads), device, str(streams)] +
                      (["keep"] if keep else []))
        except subprocess.CalledProcessError as e:  # e.g. gpu for a codec the GPU does not decode
            print(f"decode_rate {os.path.basename(path)} on {device}: {e.stderr.strip()}", flush=True)
            return None
        rates.append(json.loads(out.stdout)["frames_per_second"])
    return max(rates)


def summary(rows, decoder_rates, args):
    """The named figures the issues' checks read: best end-to-end rate over the stream
    counts per decode path (HEVC rendition), and the GPU decoder's own rate."""
    def best(metrics, decode, rendition="hevc"):
        rates = [r["frames_per_second_end_to_end"] for r in rows
                 if r["metrics"] == metrics and r["decode"] == decode and r["rendition"] == rendition]
        return max(rates) if rates else None
    tag = {"3840x2160": "4k", "1920x1080": "1080p"}.get(args.size, args.size)
    out = {}
    for metrics in ("ssim", "ssimulacra2"):
        out[f"e2e_fps_{tag}_{metrics}_nvdec"] = best(metrics, "gpu")
        out[f"e2e_fps_{tag}_{metrics}_cpu_decode"] = best(metrics, "cpu")
        out[f"e2e_fps_{tag}_{metrics}_raw"] = best(metrics, "none", "raw")
    gpu_rates = [v for (name, device, _), v in decoder_rates.items() if name == "hevc" and device == "gpu" and v]
    out[f"nvdec_fps_{tag}_hevc"] = max(gpu_rates) if gpu_rates else None
    downloaded = [v for (name, device, _), v in decoder_rates.items()
                  if name == "hevc" and device == "gpu-download" and v]
    out[f"nvdec_fps_{tag}_hevc_downloaded"] = max(downloaded) if downloaded else None
    # The floor of encoded sources decoded on the CPU: end to end against the decoder alone.
    ratios = [r["ratio_to_decoder"] for r in rows if r["decode"] == "cpu" and r["ratio_to_decoder"]]
    out["cpu_decode_ratio_to_decoder_lowest"] = min(ratios) if ratios else None
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--frames", type=int, default=60)
    p.add_argument("--streams", type=int, default=2, help="streams at once for the N-stream rows")
    p.add_argument("--threads", type=int, default=0,
                   help="decoder threads per decoded side (0: each row's share of the server's default "
                        "budget, twice the cores over the streams, at most the cores)")
    p.add_argument("--metrics", default="psnr/ssim", help="'/'-separated metric sets, each comma-separated")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--out", default="")
    p.add_argument("--bin", default="", help="exactqd, exactq and decode_rate in one folder (default: bazel-bin)")
    p.add_argument("--make-inputs", default="", help="only make the inputs in this folder and stop")
    p.add_argument("--inputs", default="", help="a folder from --make-inputs (no ffmpeg needed)")
    p.add_argument("--decode", default="cpu", help="comma-separated decode devices to run: cpu, gpu, auto")
    p.add_argument("--codecs", default="hevc,av1", help="the renditions to run (of hevc, av1)")
    p.add_argument("--raw", action="store_true", help="also both sides as raw Y4M uploads (the reference twice)")
    p.add_argument("--repeat", type=int, default=1,
                   help="play the inputs this many times over (HEVC as Annex B, AV1 as IVF)")
    p.add_argument("--warmup", type=int, default=1,
                   help="1: each case's streams run once untimed before its rows (0: measure cold)")
    p.add_argument("--server-flags", default="", help="more exactqd flags, space-separated (e.g. --gpu_wait=spin)")
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
        renditions = {key: os.path.join(data, name) for key, (name, _) in RENDITIONS.items()
                      if key in args.codecs.split(",")}
        if args.repeat > 1:
            longer = os.path.join(work, "repeated")
            repeat_files(data, longer, ["ref.y4m", *(REPEATABLE[key] for key in renditions)], args.repeat)
            data = longer
            renditions = {key: os.path.join(data, REPEATABLE[key]) for key in renditions}
        w, h = map(int, args.size.split("x"))
        raw_frame = w * h * 3 // 2
        port_file = os.path.join(work, "ports")
        log = open(os.path.join(work, "server.log"), "w")
        server = subprocess.Popen([exactqd, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                                   f"--port-file={port_file}", f"--source-root={data}", f"--spool-dir={work}",
                                   f"--max-decode-threads={args.threads or os.cpu_count()}", "--frames-in-flight=2",
                                   *args.server_flags.split()],
                                  stdout=log, stderr=subprocess.STDOUT)
        while not os.path.exists(port_file):
            time.sleep(0.05)
        ports = dict(line.split("=") for line in open(port_file).read().split())
        address = f"127.0.0.1:{ports['grpc']}"
        def threads_for(streams):
            """Decoder threads per decoded side, for the stream and for the decoder alone."""
            cores = os.cpu_count()
            return args.threads or max(1, min(cores, 2 * cores // streams))

        def run_streams(path, device, metrics, streams):
            """`streams` clients at once scoring ref.y4m against `path`: their JSON, the wall
            time and the server's CPU seconds."""
            cpu0 = cpu_seconds(server.pid)
            start = time.monotonic()
            procs = []
            for i in range(streams):
                out = os.path.join(work, f"out{i}.json")
                if device == "none":  # both sides raw Y4M uploads: the path before encoded sources
                    command = [exactq, "score", path, path]
                else:
                    command = [exactq, "score", "ref.y4m", path, "--server-path-reference",
                               "--decode", device, "--decode-threads", str(threads_for(streams))]
                procs.append((out, subprocess.Popen(
                    command + ["--server", address, "--metrics", metrics, "--backend", args.backend,
                               "--quiet", "--json", out])))
            for _, proc in procs:
                if proc.wait() != 0:
                    sys.exit(f"exactq failed; server log: {open(log.name).read()[-2000:]}")
            wall = time.monotonic() - start
            cpu = cpu_seconds(server.pid) - cpu0
            return [json.load(open(out)) for out, _ in procs], wall, cpu

        rows = []
        decoder_rates = {}
        frame_scores = {}  # (rendition, metrics, decode) -> stream 0's frames, to compare decoders

        def write_result(complete):
            """Writes --out; returns, per rendition, metrics and decoder, whether every
            frame's scores equal those decoded on the CPU (a decoded pixel is a pixel)."""
            same_scores = {}
            for (name, metrics, device), frames in frame_scores.items():
                if device != "cpu" and (name, metrics, "cpu") in frame_scores:
                    same_scores[f"{name} {metrics} {device}=cpu, {len(frames)} frames"] = (
                        frames == frame_scores[(name, metrics, "cpu")])
            result = {"size": args.size, "frames": args.frames, "repeat": args.repeat, "threads": args.threads,
                      "warmup": args.warmup, "complete": complete,
                      "backend": args.backend, "server_flags": args.server_flags,
                      "cores": os.cpu_count(), "rows": rows, "summary": summary(rows, decoder_rates, args),
                      "scores_identical_across_decoders": same_scores,
                      "note": "reference: raw Y4M by server path (decoded by FFmpeg's Y4M demuxer); rendition uploaded"}
            if args.out:
                os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
                with open(args.out, "w") as f:
                    json.dump(result, f, indent=2)
            return same_scores

        cases = [(name, path, device) for name, path in renditions.items() for device in args.decode.split(",")]
        if args.raw:
            cases.append(("raw", os.path.join(data, "ref.y4m"), "none"))
        for name, path, device in cases:
            if device != "none":
                for streams in (1, args.streams):
                    decoder_rates[(name, device, streams)] = decoder_rate(
                        bin_dir, path, threads_for(streams), device, streams)
                if device == "gpu":  # the GPU decoder with its pictures downloaded, for comparison
                    decoder_rates[(name, "gpu-download", args.streams)] = decoder_rate(
                        bin_dir, path, threads_for(args.streams), device, args.streams, keep=False)
                if decoder_rates[(name, device, 1)] is None:
                    continue  # this decode device cannot take this rendition: said above
            if args.warmup:
                # Untimed: the first streams of a case grow the server's page-locked pool
                # and warm the page cache; a server that has run for a while has both.
                run_streams(path, device, args.metrics.split("/")[0], args.streams)
            for metrics in args.metrics.split("/"):
                for streams in (1, args.streams):
                    docs, wall, cpu = run_streams(path, device, metrics, streams)
                    frame_scores.setdefault((name, metrics, device), [
                        {k: v for k, v in f.items() if k not in ("timing", "backend", "device")}
                        for f in docs[0]["frames"]])
                    frames = sum(d["totals"]["frames"] for d in docs)
                    received = sum(d["totals"]["bytes_received"] for d in docs)
                    uploaded = sum(d["totals"].get("host_to_device_bytes", 0) for d in docs)
                    decoded_on = sorted({d.get("decode", {}).get("distorted", {}).get("device", "raw") for d in docs})
                    decode_fps = decoder_rates.get((name, device, streams))
                    rows.append({
                        "rendition": name, "decode": device, "decoded_on": ",".join(decoded_on),
                        "metrics": metrics, "streams": streams, "decoder_threads": threads_for(streams),
                        "frames_per_second_end_to_end": frames / wall,
                        "decoder_frames_per_second": decode_fps,
                        "ratio_to_decoder": frames / wall / decode_fps if decode_fps else None,
                        "bytes_received_per_frame": received / frames,
                        # Pictures copied to the GPU; a bitstream the GPU decodes crosses too
                        # (bytes received), a picture it decodes does not.
                        "host_to_device_bytes_per_frame": uploaded / frames,
                        "share_of_raw_bytes": received / frames / (2 * raw_frame),
                        "server_cpu_seconds_per_frame": cpu / frames,
                    })
                    write_result(complete=False)  # what a run cut short leaves
                    r = rows[-1]
                    ratio = f"{r['ratio_to_decoder']:.2f}" if decode_fps else "-"
                    print(f"{name:5} {device:4} on {r['decoded_on']:4} {metrics:22} streams={streams}  end-to-end "
                          f"{r['frames_per_second_end_to_end']:7.1f} fps  decoder {decode_fps or 0:7.1f} fps  "
                          f"ratio {ratio}  bytes/frame {r['bytes_received_per_frame']:9.0f} "
                          f"({100 * r['share_of_raw_bytes']:.2f}% of raw)  to the GPU {r['host_to_device_bytes_per_frame']:9.0f}"
                          f"  server cpu {1000 * r['server_cpu_seconds_per_frame']:.1f} ms/frame", flush=True)
        server.terminate()
        server.wait(60)
        for key, same in write_result(complete=True).items():
            print(f"scores {key}: {'identical' if same else 'DIFFERENT'}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
