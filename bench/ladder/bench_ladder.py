#!/usr/bin/env python3
"""A ladder in one call against the same renditions in separate calls, end to end.

Makes (or takes, --media DIR) a reference and HEVC renditions of it at the reference's
size and at 2/3, 1/2 and 1/3 of it (2160p, 1440p, 1080p, 720p for a 4K reference),
starts exactqd with the files under its --source_root, and in one run, alternating,
`--reps` times:
  ladder:   one `exactq ladder REF R1 .. RN --server-paths` call (the reference decoded once);
  separate: N `exactq ladder REF Ri --server-paths` calls at once (each decodes the
            reference again: what scoring the renditions one stream each costs).
It reports rendition-frames per second (frames scored over every rendition, over the
wall time from the clients' start to their end), the reference decodes (counted from
the server's "ladder start" log lines), the server's CPU seconds per rendition-frame,
and the decoders' own rate: engine/decode's `decode_rate` decoding the reference and
every rendition at once with the same thread counts (rendition-frames per second the
decoders alone allow on these cores). Medians over the repetitions; JSON with --out.

  bazel build -c opt //server:exactqd //client:exactq //bench/decode:decode_rate
  bench/ladder/bench_ladder.py --size 1280x720 --frames 24 --metrics psnr --out r.json
  bench/ladder/bench_ladder.py --bin DIR --media DIR ...   # prebuilt binaries and files
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "decode"))
from repeat_media import repeat_files  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRACTIONS = ((1, 1), (2, 3), (1, 2), (1, 3))


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def even(x):
    return max(2, x - x % 2)


def make_media(work, size, frames, reference_codec):
    """The reference and its renditions with the ffmpeg CLI; their file names."""
    w, h = map(int, size.split("x"))
    src = ["-f", "lavfi", "-i", f"testsrc2=size={size}:rate=24", "-frames:v", str(frames), "-pix_fmt", "yuv420p"]
    hevc = ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none"]
    if reference_codec == "y4m":
        reference = "ref.y4m"
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", *src, os.path.join(work, reference)])
    else:  # a high-quality HEVC mezzanine
        reference = "ref.mkv"
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", *src, *hevc, "-crf", "8", os.path.join(work, reference)])
    renditions = []
    for num, den in FRACTIONS:
        rw, rh = even(w * num // den), even(h * num // den)
        name = f"r{rh}p.mkv"
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", os.path.join(work, reference), "-vf",
             f"scale={rw}:{rh}:flags=bicubic", *hevc, "-crf", "28", os.path.join(work, name)])
        renditions.append(name)
    return reference, renditions


def decoders_alone(decode_rate, media, files, threads):
    """Wall seconds for decoding every file at once, each with `threads` threads."""
    start = time.monotonic()
    procs = [subprocess.Popen([decode_rate, os.path.join(media, f), str(threads)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for f in files]
    frames = []
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"decode_rate failed: {err}")
        frames.append(json.loads(out)["frames"])
    return time.monotonic() - start, frames


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", default="1280x720")
    p.add_argument("--frames", type=int, default=24)
    p.add_argument("--metrics", default="psnr")
    p.add_argument("--backend", default="auto")
    p.add_argument("--decode", default="", help="where the server decodes: cpu, gpu or auto (default: its own)")
    p.add_argument("--threads", type=int, default=2, help="decoder threads per source")
    p.add_argument("--frames-in-flight", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--reference-codec", choices=("y4m", "hevc"), default="hevc")
    p.add_argument("--bin", default="", help="folder with exactqd, exactq, decode_rate (default: bazel-bin)")
    p.add_argument("--media", default="", help="folder with ref.* and r*p.mkv made earlier (default: make them)")
    p.add_argument("--repeat", type=int, default=1,
                   help="play the media this many times over: a Y4M reference and Annex B renditions "
                        "(r*p.hevc in --media; repeat_media.py)")
    p.add_argument("--check-decode", default="",
                   help="after the runs, the ladder once more with this --decode (cpu): every frame's scores must "
                        "be the same")
    p.add_argument("--out", default="")
    args = p.parse_args()
    binary = {name: os.path.join(args.bin, name) if args.bin else os.path.join(ROOT, "bazel-bin", sub, name)
              for name, sub in (("exactqd", "server"), ("exactq", "client"), ("decode_rate", "bench/decode"))}
    work = tempfile.mkdtemp(prefix="exactq-bench-ladder-")
    try:
        if args.media:
            media = os.path.abspath(args.media)
            names = sorted(os.listdir(media))
            reference = next(n for n in names if n.startswith("ref."))
            suffix = "p.hevc" if args.repeat > 1 else "p.mkv"
            renditions = sorted((n for n in names if n.startswith("r") and n.endswith(suffix)),
                                key=lambda n: -int(n[1:-len(suffix)]))
            if args.repeat > 1:
                if reference != "ref.y4m" or not renditions:
                    sys.exit("--repeat needs ref.y4m and r*p.hevc renditions in --media")
                repeat_files(media, os.path.join(work, "repeated"), [reference, *renditions], args.repeat)
                media = os.path.join(work, "repeated")
        else:
            media = work
            reference, renditions = make_media(work, args.size, args.frames, args.reference_codec)
        port_file = os.path.join(work, "ports")
        log_path = os.path.join(work, "server.log")
        log = open(log_path, "w")
        server = subprocess.Popen([binary["exactqd"], "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                                   f"--port-file={port_file}", f"--source-root={media}",
                                   f"--max-decode-threads={args.threads}",
                                   f"--frames-in-flight={args.frames_in_flight}", "--max-buffered-bytes=64000000000"],
                                  stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file):
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"exactqd did not start: {open(log_path).read()[-3000:]}")
            time.sleep(0.05)
        ports = dict(line.split("=") for line in open(port_file).read().split())
        address = f"127.0.0.1:{ports['grpc']}"

        def ladder_call(rendition_names, out, decode=args.decode):
            return subprocess.Popen(
                [binary["exactq"], "ladder", reference, *rendition_names, "--server-paths", "--server", address,
                 "--metrics", args.metrics, "--backend", args.backend, "--decode-threads", str(args.threads),
                 *(["--decode", decode] if decode else []), "--quiet", "--json", out],
                cwd=media, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        def scores(path):
            """Each rendition's frames without their timing: what must not depend on the decoder."""
            return [[{k: v for k, v in f.items() if k not in ("timing", "backend", "device")} for f in r["frames"]]
                    for r in json.load(open(path))["renditions"]]

        def starts():
            return open(log_path).read().count("ladder start")

        def measure(mode):
            before_log, cpu0 = starts(), cpu_seconds(server.pid)
            start = time.monotonic()
            if mode == "ladder":
                calls = [(os.path.join(work, "ladder.json"), ladder_call(renditions, os.path.join(work, "ladder.json")))]
            else:
                calls = [(os.path.join(work, f"sep{i}.json"), ladder_call([r], os.path.join(work, f"sep{i}.json")))
                         for i, r in enumerate(renditions)]
            for out, proc in calls:
                text, _ = proc.communicate()
                if proc.returncode != 0:
                    sys.exit(f"exactq ladder failed: {text}\nserver log: {open(log_path).read()[-3000:]}")
            wall = time.monotonic() - start
            frames, devices = 0, set()
            for out, _ in calls:
                doc = json.load(open(out))
                for r in doc["renditions"]:
                    frames += len(r["frames"])
                    devices.update(f["backend"] for f in r["frames"])
            return {"mode": mode, "wall_seconds": wall, "rendition_frames": frames,
                    "rendition_frames_per_second": frames / wall, "reference_decodes": starts() - before_log,
                    "server_cpu_seconds_per_rendition_frame": (cpu_seconds(server.pid) - cpu0) / frames,
                    "backends": sorted(devices)}

        measure("ladder")  # warm-up: page cache, the GPU's context, pinned memory
        first_scores = scores(os.path.join(work, "ladder.json"))
        same_across_runs = True  # every run of the ladder gives the warm-up's scores
        runs = {"ladder": [], "separate": [], "decoders_alone": []}
        for rep in range(args.reps):
            for mode in (("ladder", "separate") if rep % 2 == 0 else ("separate", "ladder")):
                runs[mode].append(measure(mode))
                if mode == "ladder":
                    same_across_runs = same_across_runs and scores(os.path.join(work, "ladder.json")) == first_scores
                r = runs[mode][-1]
                print(f"rep {rep} {mode:8}  {r['rendition_frames_per_second']:8.1f} rendition-frames/s  "
                      f"reference decodes {r['reference_decodes']}  server CPU "
                      f"{1000 * r['server_cpu_seconds_per_rendition_frame']:.1f} ms/rendition-frame  "
                      f"{'/'.join(r['backends'])}", flush=True)
            wall, frames = decoders_alone(binary["decode_rate"], media, [reference, *renditions], args.threads)
            runs["decoders_alone"].append(frames[0] * len(renditions) / wall)
            print(f"rep {rep} decoders alone (all {1 + len(renditions)} files at once) "
                  f"{runs['decoders_alone'][-1]:8.1f} rendition-frames/s", flush=True)
        same_scores = None
        if args.check_decode:
            # The same ladder decoded (and scaled) elsewhere must give every frame's bits.
            check = os.path.join(work, "check.json")
            proc = ladder_call(renditions, check, decode=args.check_decode)
            text, _ = proc.communicate()
            if proc.returncode != 0:
                sys.exit(f"exactq ladder --decode {args.check_decode} failed: {text}")
            same_scores = scores(check) == scores(os.path.join(work, "ladder.json"))
            print(f"scores: the ladder decoded with --decode {args.check_decode} against "
                  f"{args.decode or 'the default'}: {'identical' if same_scores else 'DIFFERENT'}", flush=True)
        print(f"scores: {1 + args.reps} runs of the ladder: {'identical' if same_across_runs else 'DIFFERENT'}",
              flush=True)
        server.terminate()
        server.wait(60)

        def median(mode, key="rendition_frames_per_second"):
            return statistics.median(r[key] for r in runs[mode])

        ladder, separate, alone = median("ladder"), median("separate"), statistics.median(runs["decoders_alone"])
        summary = {
            "ladder_rendition_frames_per_second": ladder,
            "separate_rendition_frames_per_second": separate,
            "ladder_over_separate": ladder / separate,
            "decoders_alone_rendition_frames_per_second": alone,
            "ladder_over_decoders_alone": ladder / alone,
            "reference_decodes": {"ladder": runs["ladder"][0]["reference_decodes"],
                                  "separate": runs["separate"][0]["reference_decodes"]},
            "scores_identical_to_check_decode": same_scores,
            "scores_identical_across_runs": same_across_runs,
        }
        print(json.dumps(summary, indent=2))
        result = {"size": args.size, "frames": args.frames, "repeat": args.repeat,
                  "metrics": args.metrics, "backend": args.backend,
                  "decode": args.decode or "server default", "threads_per_source": args.threads, "frames_in_flight": args.frames_in_flight,
                  "reference": reference, "renditions": renditions, "reps": args.reps,
                  "machine": {"cores": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
                              "load_average": os.getloadavg()},
                  "summary": summary, "runs": runs}
        if args.out:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                json.dump(result, f, indent=2)
        if same_scores is False or not same_across_runs:
            sys.exit("the ladder's scores changed with the decoder or from run to run")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
