#!/usr/bin/env python3
"""GPU parity through the real server and client, for a machine with a GPU.

Starts exactqd, scores every reference/distorted pair in a folder with
`--backend cuda` and with `--backend cpu`, and requires the same bits per frame and
output (struct-packed doubles compared, not printed digits). Also checks that the cuda
run was computed on the GPU and that /metrics counted it. Standard library only.

  gpu_parity_suite.py --bin DIR --pairs DIR [--metrics psnr,ssim] [--out DIR]
"""
import argparse
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


def bits(value):
    return struct.pack("<d", value) if value is not None else b"null"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="folder with exactqd and exactq")
    parser.add_argument("--pairs", required=True, help="folder with NAME.ref.y4m and NAME_*.dist.y4m files")
    parser.add_argument("--metrics", default="psnr")
    parser.add_argument("--out", default=tempfile.mkdtemp())
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    port_file = os.path.join(args.out, "ports")
    log = open(os.path.join(args.out, "exactqd.log"), "w")
    server = subprocess.Popen([os.path.join(args.bin, "exactqd"), "--listen=127.0.0.1:0",
                               "--metrics-listen=127.0.0.1:0", "--port-file=" + port_file],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        ports = dict(line.split("=") for line in open(port_file).read().split())
        address = "127.0.0.1:" + ports["grpc"]
        failures = 0
        compared = 0
        rows = []
        for dist in sorted(glob.glob(os.path.join(args.pairs, "*.dist.y4m"))):
            name = os.path.basename(dist)[: -len(".dist.y4m")]
            ref = os.path.join(args.pairs, name.split("_")[0] + ".ref.y4m")
            results = {}
            for backend in ("cuda", "cpu"):
                out = os.path.join(args.out, f"{name}.{backend}.json")
                started = time.monotonic()
                run = subprocess.run([os.path.join(args.bin, "exactq"), "score", ref, dist, "--server", address,
                                      "--metrics", args.metrics, "--backend", backend, "--json", out, "--quiet"],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    print(f"FAIL {name} {backend}: {run.stderr.strip()}")
                    failures += 1
                    break
                results[backend] = (json.load(open(out)), time.monotonic() - started)
            if len(results) != 2:
                continue
            gpu, cpu = results["cuda"][0], results["cpu"][0]
            same = True
            for fg, fc in zip(gpu["frames"], cpu["frames"]):
                if fg["backend"] != "cuda":
                    print(f"FAIL {name} frame {fg['frameNum']}: computed on {fg['backend']}, not cuda")
                    same = False
                for key, value in fc["metrics"].items():
                    compared += 1
                    if bits(fg["metrics"].get(key)) != bits(value):
                        print(f"FAIL {name} frame {fg['frameNum']} {key}: cuda {fg['metrics'].get(key)!r} cpu {value!r}")
                        same = False
            if len(gpu["frames"]) != len(cpu["frames"]):
                same = False
            failures += 0 if same else 1
            rows.append((name, len(cpu["frames"]), "==" if same else "DIFF", results["cuda"][1], results["cpu"][1]))
        page = urllib.request.urlopen(f"http://127.0.0.1:{ports['metrics']}/metrics").read().decode()
        cuda_frames = [l for l in page.splitlines() if l.startswith("exactq_frames_scored_total") and 'backend="cuda"' in l]
        print(f"{'pair':32} {'frames':>6} {'bits':>5} {'cuda s':>8} {'cpu s':>8}")
        for r in rows:
            print(f"{r[0]:32} {r[1]:6} {r[2]:>5} {r[3]:8.3f} {r[4]:8.3f}")
        print("\n".join(cuda_frames))
        print(f"{compared} values compared, {failures} failing pairs")
        return 1 if failures or compared == 0 else 0
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
