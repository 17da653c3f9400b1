#!/usr/bin/env python3
"""Soak: many streams of mixed geometry and metrics against one exactqd for minutes.

Starts exactqd, then keeps --streams clients busy (each runs `exactq score` on a pair
of Y4M files made here, again and again, cycling through the cases) for --seconds, while
a sampler records the server's RSS, its device memory (`/metrics`), active streams and
frames scored every --sample seconds. At the end it scores every case once more on the
CPU backend and compares each sampled answer with it, bit for bit (the JSON files keep
every bit). Prints a table and a summary; --out writes both as JSON.

What it checks, and exits 1 when one fails:
  - frames answered == frames sent, for every call;
  - every sampled answer has the CPU backend's bits;
  - RSS and device memory after the warm-up (--warmup seconds) stay flat: the median of
    the last third of the samples within --flat-tolerance of the first third's (a leak
    moves the whole last third; pictures in flight move single samples).

  bench/soak/soak.py --streams 64 --seconds 480 --bin DIR      # the issue's run, on a GPU host
  bench/soak/soak.py --streams 4 --seconds 60 --scale small   # a quick one on a laptop
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import statistics
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (width, height, layout, depth): 4:2:0, 4:2:2 and 4:4:4, 8 to 12 bits, odd sizes.
GEOMETRIES = {
    "full": [(1920, 1080, "420", 8), (1280, 720, "420", 10), (3840, 2160, "420", 8), (641, 359, "444", 10),
             (720, 576, "422", 8), (1920, 1080, "420", 12)],
    "small": [(320, 180, "420", 8), (161, 97, "444", 10), (256, 144, "422", 12), (64, 48, "420", 8)],
}
METRIC_SETS = ["psnr", "ssim", "ssimulacra2", "psnr,ssim", "psnr,ssim,ssimulacra2", "vmaf"]
Y4M_CHROMA = {("420", 8): "420jpeg", ("420", 10): "420p10", ("420", 12): "420p12", ("422", 8): "422",
              ("422", 10): "422p10", ("422", 12): "422p12", ("444", 8): "444", ("444", 10): "444p10",
              ("444", 12): "444p12"}


def write_y4m(path, w, h, layout, depth, frames, seed, noise):
    """A moving pattern (or, with noise, a noisy copy of it): deterministic in seed.

    Built from whole rows (7 shifts of a ramp, 8 noisy copies of each) and 8 distinct
    frames repeated, so that a 4K file takes seconds in plain Python, not minutes."""
    rng = random.Random(seed)
    cw, ch = {"420": ((w + 1) // 2, (h + 1) // 2), "422": ((w + 1) // 2, h), "444": (w, h)}[layout]
    wide = depth > 8
    top = (1 << depth) - 1

    def encode(values):
        return b"".join(v.to_bytes(2, "little") for v in values) if wide else bytes(values)

    def frame_bytes(n):
        out = [b"FRAME\n"]
        for pw, ph in ((w, h), (cw, ch), (cw, ch)):
            ramp = [((x * 3 + n * 5) % 200 + 20) << (depth - 8) for x in range(pw)]
            rows = []
            for shift in range(7):
                values = ramp[shift:] + ramp[:shift]
                copies = 8 if noise else 1
                rows.append([encode([min(top, max(0, v + rng.randint(-noise, noise) * (1 << (depth - 8))))
                                     for v in values]) if noise else encode(values) for _ in range(copies)])
            out.append(b"".join(rows[y % 7][rng.randrange(len(rows[y % 7]))] for y in range(ph)))
        return b"".join(out)

    distinct = [frame_bytes(n) for n in range(min(frames, 8))]
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F24:1 Ip A1:1 C{Y4M_CHROMA[(layout, depth)]}\n".encode())
        for n in range(frames):
            f.write(distinct[n % len(distinct)])


# Loopback scrapes never go through a proxy the environment may name (http_proxy).
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def scrape(port):
    text = LOOPBACK.open(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    def total(name):
        return sum(float(m.group(1)) for m in re.finditer(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))
    return {"device_memory_bytes": total("exactq_device_memory_used_bytes"),
            "active_streams": total("exactq_active_streams"),
            "frames_scored": total("exactq_frames_scored_total")}


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def frame_values(doc):
    """Every per-frame metric value of a libvmaf-shaped JSON answer, in order."""
    return [(frame["frameNum"], sorted(frame["metrics"].items())) for frame in doc["frames"]]


def slope(xs, ys):
    """Least-squares slope of ys over xs (0 when xs do not vary)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var > 0 else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--streams", type=int, default=64)
    p.add_argument("--seconds", type=float, default=480)
    p.add_argument("--frames", type=int, default=24, help="frames per input file")
    p.add_argument("--scale", choices=sorted(GEOMETRIES), default="full")
    p.add_argument("--metrics", default="/".join(METRIC_SETS), help="'/'-separated metric sets")
    p.add_argument("--backend", default="auto")
    p.add_argument("--server-args", default="", help="extra exactqd flags, space-separated")
    p.add_argument("--bin", default="", help="a folder with exactqd and exactq (default: bazel-bin)")
    p.add_argument("--sample", type=float, default=10, help="seconds between samples")
    p.add_argument("--warmup", type=float, default=60, help="seconds before memory must stay flat")
    p.add_argument("--flat-tolerance", type=float, default=0.10, help="allowed growth after warm-up (fraction)")
    p.add_argument("--check-every", type=int, default=10, help="keep every Nth answer for the CPU comparison")
    p.add_argument("--out", default="")
    args = p.parse_args()

    exactqd = os.path.join(args.bin, "exactqd") if args.bin else os.path.join(ROOT, "bazel-bin/server/exactqd")
    exactq = os.path.join(args.bin, "exactq") if args.bin else os.path.join(ROOT, "bazel-bin/client/exactq")
    work = tempfile.mkdtemp(prefix="exactq-soak-")
    server = None
    failures = []
    try:
        cases = []
        metric_sets = args.metrics.split("/")
        for i, (w, h, layout, depth) in enumerate(GEOMETRIES[args.scale]):
            ref = os.path.join(work, f"ref{i}.y4m")
            dis = os.path.join(work, f"dis{i}.y4m")
            write_y4m(ref, w, h, layout, depth, args.frames, i, 0)
            write_y4m(dis, w, h, layout, depth, args.frames, i, 3)
            for m in metric_sets:
                cases.append({"geometry": f"{w}x{h} {layout} {depth}-bit", "ref": ref, "dis": dis, "metrics": m})
        port_file = os.path.join(work, "ports")
        log = open(os.path.join(work, "server.log"), "w")
        server = subprocess.Popen([exactqd, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                                   f"--port-file={port_file}",
                                   # every client is 127.0.0.1: room for all the streams at once
                                   f"--max_streams_per_peer={args.streams}"] + args.server_args.split(),
                                  stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file) and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.05)
        time.sleep(0.2)  # the port file is written whole, but give it the moment
        ports = dict(line.split("=") for line in open(port_file).read().split())
        address = f"127.0.0.1:{ports['grpc']}"

        lock = threading.Lock()
        calls = {"calls": 0, "frames_sent": 0, "frames_answered": 0, "errors": 0}
        kept = []  # (case index, path of a kept answer)
        start = time.monotonic()
        stop_at = start + args.seconds

        def worker(k):
            n = 0
            while time.monotonic() < stop_at:
                c = (k + n * args.streams) % len(cases)
                case = cases[c]
                out = os.path.join(work, f"answer_{k}_{n}.json")
                r = subprocess.run([exactq, "score", case["ref"], case["dis"], "--server", address, "--metrics",
                                    case["metrics"], "--backend", args.backend, "--quiet", "--json", out],
                                   capture_output=True, text=True)
                with lock:
                    calls["calls"] += 1
                    calls["frames_sent"] += args.frames
                    if r.returncode != 0:
                        calls["errors"] += 1
                        failures.append(f"stream {k} call {n} ({case['geometry']}, {case['metrics']}): "
                                        f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
                    else:
                        doc = json.load(open(out))
                        answered = len(doc["frames"])
                        calls["frames_answered"] += answered
                        if answered != args.frames:
                            failures.append(f"stream {k} call {n}: {answered} frames answered of {args.frames}")
                        if (calls["calls"] % args.check_every) == 0:
                            kept.append((c, out))
                            out = None
                if out is not None and os.path.exists(out):
                    os.remove(out)
                n += 1

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.streams)]
        for t in threads:
            t.start()
        samples = []
        print(f"{'t (s)':>6} {'calls':>7} {'scored':>9} {'scored/s':>8} {'active':>6} {'RSS MB':>8} {'device MB':>9}",
              flush=True)
        last_frames, last_t = 0.0, start
        while any(t.is_alive() for t in threads):
            time.sleep(min(args.sample, max(0.1, stop_at - time.monotonic() + 0.5)))
            now = time.monotonic()
            m = scrape(ports["metrics"])
            s = {"t": now - start, "calls": calls["calls"], "frames_scored": m["frames_scored"],
                 "fps": (m["frames_scored"] - last_frames) / (now - last_t), "active_streams": m["active_streams"],
                 "rss_bytes": rss_bytes(server.pid), "device_memory_bytes": m["device_memory_bytes"]}
            last_frames, last_t = m["frames_scored"], now
            samples.append(s)
            print(f"{s['t']:6.0f} {s['calls']:7d} {s['frames_scored']:9.0f} {s['fps']:8.1f} {s['active_streams']:6.0f} "
                  f"{s['rss_bytes'] / 2**20:8.1f} {s['device_memory_bytes'] / 2**20:9.1f}", flush=True)
        for t in threads:
            t.join()

        # The sampled answers against the CPU backend, bit for bit (each case once, up to 8
        # at a time, within the per-peer limit the server was given).
        def cpu_answer(c):
            case = cases[c]
            out = os.path.join(work, f"cpu_{c}.json")
            for _ in range(600):  # a full CPU pool answers UNAVAILABLE: wait for a slot
                r = subprocess.run([exactq, "score", case["ref"], case["dis"], "--server", address, "--metrics",
                                    case["metrics"], "--backend", "cpu", "--quiet", "--json", out],
                                   capture_output=True, text=True)
                if r.returncode == 0:
                    return frame_values(json.load(open(out)))
                if "saturated" not in r.stderr:
                    break
                time.sleep(0.5)
            raise RuntimeError(f"the CPU answer of case {c} failed: {r.stderr.strip()[-300:]}")

        wanted = sorted({c for c, _ in kept})
        with concurrent.futures.ThreadPoolExecutor(min(8, args.streams)) as pool:
            cpu_answers = dict(zip(wanted, pool.map(cpu_answer, wanted)))
        mismatches = 0
        for c, path in kept:
            if frame_values(json.load(open(path))) != cpu_answers[c]:
                mismatches += 1
                failures.append(f"{path}: differs from the CPU backend ({cases[c]['geometry']}, {cases[c]['metrics']})")
        server.terminate()
        server.wait(60)

        # Flat: the median of the last third of the samples after the warm-up (to the end
        # of the run) within --flat-tolerance of the first third's. Pictures in flight come
        # and go from one sample to the next; a leak moves the whole last third.
        after = [s for s in samples if args.warmup <= s["t"] <= args.seconds]
        flat = {}
        for key in ("rss_bytes", "device_memory_bytes"):
            if len(after) >= 3:
                third = len(after) // 3
                first = statistics.median(s[key] for s in after[:third])
                last = statistics.median(s[key] for s in after[-third:])
                growth = (last - first) / first if first > 0 else 0.0
                flat[key] = {"median_first_third": first, "median_last_third": last, "growth": growth,
                             "min_after_warmup": min(s[key] for s in after),
                             "max_after_warmup": max(s[key] for s in after),
                             "slope_bytes_per_minute": 60 * slope([s["t"] for s in after], [s[key] for s in after])}
                if growth > args.flat_tolerance:
                    failures.append(f"{key} grew {100 * growth:.1f}% after the warm-up (median of the first third "
                                    f"{first / 2**20:.1f} MB, of the last {last / 2**20:.1f} MB)")
            else:
                failures.append(f"{key}: fewer than 3 samples after the warm-up; run longer")
        summary = dict(calls, answers_checked=len(kept), mismatches=mismatches, flat=flat,
                       seconds=args.seconds, streams=args.streams, backend=args.backend, scale=args.scale,
                       cores=os.cpu_count(), cases=len(cases))
        print(json.dumps(summary, indent=2))
        for f in failures[:20]:
            print("FAIL:", f)
        if args.out:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                json.dump({"summary": summary, "samples": samples, "failures": failures}, f, indent=2)
        sys.exit(1 if failures else 0)
    finally:
        if server is not None and server.poll() is None:  # a failure on the way: no server left behind
            server.kill()
            server.wait(60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
