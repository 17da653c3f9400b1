#!/usr/bin/env python3
"""The raw feed: what moving raw pictures costs the server and the client, end to end.

Runs `exactq score REF DIST` (both raw Y4M, uploaded by the client) against a fresh
exactqd, --streams clients at once, and reports per frame pair: the server's CPU time, the
clients' CPU time, and frames per second end to end; medians over --reps repetitions.
With --baseline (another build's folder), both builds run alternately in the same run
and the ratios new / baseline are printed: compare builds on the same machine only.

  bazel build //server:exactqd //client:exactq
  bench/feed/feed_bench.py --size 3840x2160 --frames 24 --reps 5 --baseline /tmp/old-build
  (a build folder holds server/exactqd and client/exactq, as bazel-bin does)
"""

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICKS = os.sysconf("SC_CLK_TCK")


def write_y4m(path, w, h, frames):
    # Random samples: nothing a codec or a cache could take advantage of.
    picture = os.urandom(w * h * 3 // 2)
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F24:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            f.write(b"FRAME\n")
            f.write(picture)


def server_cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def run_once(build, work, ref, dis, args):
    port_file = os.path.join(work, "ports")
    if os.path.exists(port_file):
        os.remove(port_file)
    log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen([os.path.join(build, "server/exactqd"), "--listen=127.0.0.1:0",
                               "--metrics-listen=127.0.0.1:0", f"--port-file={port_file}"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file):
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit(f"exactqd did not start: {open(log.name).read()[-1000:]}")
            time.sleep(0.02)
        ports = dict(line.split("=") for line in open(port_file).read().split())
        cpu0 = server_cpu_seconds(server.pid)
        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        clients = []
        for i in range(args.streams):
            out = os.path.join(work, f"out{i}.json")
            clients.append((out, subprocess.Popen(
                [os.path.join(build, "client/exactq"), "score", ref, dis, "--server", f"127.0.0.1:{ports['grpc']}",
                 "--metrics", args.metrics, "--backend", args.backend, "--quiet", "--json", out])))
        for _, c in clients:
            if c.wait() != 0:
                sys.exit(f"exactq failed; server log: {open(log.name).read()[-1000:]}")
        wall = time.monotonic() - start
        cpu = server_cpu_seconds(server.pid) - cpu0
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        client_cpu = (children.ru_utime - children0.ru_utime) + (children.ru_stime - children0.ru_stime)
        frames = sum(len(json.load(open(out))["frames"]) for out, _ in clients)
    finally:
        server.terminate()
        server.wait(60)
    return {"frames": frames, "fps": frames / wall, "server_cpu_ms_per_frame": 1000 * cpu / frames,
            "client_cpu_ms_per_frame": 1000 * client_cpu / frames}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="3840x2160")
    p.add_argument("--frames", type=int, default=24)
    p.add_argument("--streams", type=int, default=1)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--metrics", default="psnr")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--bin", default=os.path.join(ROOT, "bazel-bin"), help="the build measured")
    p.add_argument("--baseline", default="", help="another build, run alternately in the same run")
    p.add_argument("--out", default="")
    args = p.parse_args()
    w, h = map(int, args.size.split("x"))
    work = tempfile.mkdtemp(prefix="exactq-feed-")
    try:
        ref, dis = os.path.join(work, "ref.y4m"), os.path.join(work, "dis.y4m")
        write_y4m(ref, w, h, args.frames)
        write_y4m(dis, w, h, args.frames)
        builds = {"new": os.path.abspath(args.bin)}
        if args.baseline:
            builds["baseline"] = os.path.abspath(args.baseline)
        rows = {name: [] for name in builds}
        keys = ("server_cpu_ms_per_frame", "client_cpu_ms_per_frame", "fps")
        for rep in range(args.reps):
            for name, build in builds.items():
                r = run_once(build, work, ref, dis, args)
                rows[name].append(r)
                print(f"rep {rep} {name:8} server {r['server_cpu_ms_per_frame']:6.2f} ms/frame  "
                      f"client {r['client_cpu_ms_per_frame']:6.2f} ms/frame  {r['fps']:7.2f} frames/s", flush=True)
        medians = {name: {k: statistics.median(r[k] for r in rs) for k in keys} for name, rs in rows.items()}
        result = {"size": args.size, "frames": args.frames, "streams": args.streams, "reps": args.reps,
                  "metrics": args.metrics, "backend": args.backend, "cores": os.cpu_count(),
                  "machine": platform.processor() or platform.machine(), "builds": builds, "medians": medians,
                  "rows": rows}
        for name, m in medians.items():
            print(f"median {name:8} server {m['server_cpu_ms_per_frame']:6.2f} ms/frame  "
                  f"client {m['client_cpu_ms_per_frame']:6.2f} ms/frame  {m['fps']:7.2f} frames/s")
        if "baseline" in medians:
            ratios = {k: medians["new"][k] / medians["baseline"][k] for k in keys}
            result["ratio_new_over_baseline"] = ratios
            print("new / baseline: " + "  ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
        if args.out:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                json.dump(result, f, indent=2)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
