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


def start_server(bin_dir, out_dir, name, extra):
    port_file = os.path.join(out_dir, name + ".ports")
    if os.path.exists(port_file):
        os.remove(port_file)
    log = open(os.path.join(out_dir, name + ".log"), "w")
    server = subprocess.Popen([os.path.join(bin_dir, "exactqd"), "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                               "--port-file=" + port_file] + extra, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        if os.path.exists(port_file) or server.poll() is not None:
            break
        time.sleep(0.1)
    if not os.path.exists(port_file):
        raise RuntimeError(f"exactqd {' '.join(extra)} did not start: " + open(os.path.join(out_dir, name + ".log")).read())
    text = open(port_file).read()
    ports = dict(line.split("=", 1) for line in text.split())
    if not ports.get("grpc") or not ports.get("metrics"):
        raise RuntimeError(f"exactqd wrote a port file without both ports: {text!r}")
    return server, ports


def score(bin_dir, address, ref, dist, metrics, backend, out):
    run = subprocess.run([os.path.join(bin_dir, "exactq"), "score", ref, dist, "--server", address, "--metrics", metrics,
                          "--backend", backend, "--json", out, "--quiet"], capture_output=True, text=True)
    return run.returncode, run.stderr.strip(), (json.load(open(out)) if run.returncode == 0 else None)


def concurrent_streams(args, address, pairs, cpu_results):
    """Every pair `args.concurrent` times at once with --backend cuda: many streams of mixed
    geometries and metrics on the GPU together; each frame must be cuda and have the bits of
    the pair's cpu run."""
    runs = []
    for copy in range(args.concurrent):
        for name, ref, dist in pairs:
            out = os.path.join(args.out, f"{name}.concurrent{copy}.json")
            proc = subprocess.Popen([os.path.join(args.bin, "exactq"), "score", ref, dist, "--server", address,
                                     "--metrics", args.metrics, "--backend", "cuda", "--json", out, "--quiet"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            runs.append((name, out, proc))
    failures = 0
    for name, out, proc in runs:
        _, err = proc.communicate(timeout=600)
        got = json.load(open(out)) if proc.returncode == 0 else None
        cpu = cpu_results[name]
        same = got is not None and len(got["frames"]) == len(cpu["frames"]) and all(
            fg["backend"] == "cuda" and bits(fg["metrics"].get(k)) == bits(v)
            for fg, fc in zip(got["frames"], cpu["frames"]) for k, v in fc["metrics"].items())
        if not same:
            print(f"FAIL concurrent {name}: rc {proc.returncode} {err.strip()}")
            failures += 1
    print(f"concurrent: {len(runs)} streams at once ({len(pairs)} pairs x {args.concurrent}), "
          f"{len(runs) - failures} with the cpu bits on cuda: {'ok' if failures == 0 else 'FAIL'}")
    return failures


def fault_injection(args, ref, dist):
    """A GPU that fails after 2 frames: auto finishes on the CPU with the same bits;
    forced cuda reports the failure; failing allocations send auto to the CPU."""
    failures = 0
    _, _, cpu = score(args.bin, START_ADDRESS[0], ref, dist, args.metrics, "cpu", os.path.join(args.out, "fault.cpu.json"))
    for fault, expect in (("gpu_fail_after=2", ["cuda", "cuda"]), ("gpu_alloc_fail", [])):
        server, ports = start_server(args.bin, args.out, "fault", ["--fault-injection=" + fault])
        address = "127.0.0.1:" + ports["grpc"]
        try:
            rc, err, auto = score(args.bin, address, ref, dist, args.metrics, "auto", os.path.join(args.out, "fault.auto.json"))
            backends = [f["backend"] for f in auto["frames"]] if auto else []
            want = (expect + ["cpu"] * len(cpu["frames"]))[: len(cpu["frames"])]
            same = auto is not None and all(
                bits(fa["metrics"][k]) == bits(v) for fa, fc in zip(auto["frames"], cpu["frames"]) for k, v in fc["metrics"].items())
            ok = rc == 0 and backends == want and same
            print(f"fault {fault}: auto backends {backends} (want {want}), bits {'==' if same else 'DIFF'}: {'ok' if ok else 'FAIL'}")
            failures += 0 if ok else 1
            if fault.startswith("gpu_fail_after"):
                # The failed device is out of the pool for --gpu-retry-seconds: a forced
                # cuda stream is refused naming the cause.
                rc, err, _ = score(args.bin, address, ref, dist, args.metrics, "cuda", os.path.join(args.out, "fault.cuda.json"))
                ok = rc != 0 and ("failed" in err or "cooling_down" in err)
                print(f"fault {fault}: forced cuda -> rc {rc}: {err}: {'ok' if ok else 'FAIL'}")
                failures += 0 if ok else 1
        finally:
            server.terminate()
            server.wait(timeout=30)
    failures += lost_gpu(args, ref, dist, cpu)
    return failures


# Loopback scrapes never go through a proxy the environment may name (http_proxy).
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def metrics_page(port):
    return LOOPBACK.open(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()


def lost_gpu(args, ref, dist, cpu):
    """A poisoned context after 2 GPU frames (gpu_lost_after=2): the stream finishes on
    the CPU with the same bits, the device is lost for good (usable GPUs 0, NOT_SERVING
    logged), later streams go to the CPU (no_gpu) and a forced cuda is refused."""
    failures = 0
    server, ports = start_server(args.bin, args.out, "lost", ["--fault-injection=gpu_lost_after=2", "--gpu-retry-seconds=1"])
    address = "127.0.0.1:" + ports["grpc"]
    try:
        page = metrics_page(ports["metrics"])
        ok = "\nexactq_usable_gpus 1\n" in page and "\nexactq_configured_gpus 1\n" in page
        print(f"lost: before, usable GPUs 1 of 1: {'ok' if ok else 'FAIL'}")
        failures += 0 if ok else 1
        rc, err, auto = score(args.bin, address, ref, dist, args.metrics, "auto", os.path.join(args.out, "lost.auto.json"))
        backends = [f["backend"] for f in auto["frames"]] if auto else []
        want = (["cuda", "cuda"] + ["cpu"] * len(cpu["frames"]))[: len(cpu["frames"])]
        same = auto is not None and all(
            bits(fa["metrics"][k]) == bits(v) for fa, fc in zip(auto["frames"], cpu["frames"]) for k, v in fc["metrics"].items())
        ok = rc == 0 and backends == want and same
        print(f"lost: auto backends {backends} (want {want}), bits {'==' if same else 'DIFF'}: {'ok' if ok else 'FAIL'}")
        failures += 0 if ok else 1
        time.sleep(2)  # past the retry time: a lost device must still be out
        page = metrics_page(ports["metrics"])
        log = open(os.path.join(args.out, "lost.log")).read()
        ok = "\nexactq_usable_gpus 0\n" in page and "NOT_SERVING" in log and "lost for good" in log
        print(f"lost: after, usable GPUs 0, NOT_SERVING logged: {'ok' if ok else 'FAIL'}")
        failures += 0 if ok else 1
        rc, err, again = score(args.bin, address, ref, dist, args.metrics, "auto", os.path.join(args.out, "lost.again.json"))
        ok = rc == 0 and again is not None and all(f["backend"] == "cpu" for f in again["frames"])
        print(f"lost: a new auto stream is scored on the CPU: {'ok' if ok else 'FAIL'}")
        failures += 0 if ok else 1
        rc, err, _ = score(args.bin, address, ref, dist, args.metrics, "cuda", os.path.join(args.out, "lost.cuda.json"))
        ok = rc != 0 and "lost" in err
        print(f"lost: forced cuda -> rc {rc}: {err}: {'ok' if ok else 'FAIL'}")
        failures += 0 if ok else 1
    finally:
        server.terminate()
        server.wait(timeout=30)
    return failures


START_ADDRESS = [None]


def reference_of(pairs_dir, name):
    """The reference of NAME_*.dist.y4m: the longest leading part of the name, cut at an
    underscore, with a NAME.ref.y4m (psyn_bars_x265_crf28 -> psyn_bars.ref.y4m)."""
    parts = name.split("_")
    for n in range(len(parts) - 1, 0, -1):
        ref = os.path.join(pairs_dir, "_".join(parts[:n]) + ".ref.y4m")
        if os.path.exists(ref):
            return ref
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="folder with exactqd and exactq")
    parser.add_argument("--pairs", required=True, help="folder with NAME.ref.y4m and NAME_*.dist.y4m files")
    parser.add_argument("--metrics", default="psnr")
    parser.add_argument("--out", default=tempfile.mkdtemp())
    parser.add_argument("--fault-pair", default="", help="REF,DIST of several frames for the fault-injection checks")
    parser.add_argument("--concurrent", type=int, default=4, help="then every pair this many times at once on cuda")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # All clients come from 127.0.0.1: room for the concurrent streams (every corpus pair
    # times --concurrent, more than the server's defaults admit).
    limit = f"{max(64, 64 * args.concurrent)}"
    server, ports = start_server(args.bin, args.out, "main", ["--max_streams=" + limit, "--max_streams_per_peer=" + limit])
    try:
        address = "127.0.0.1:" + ports["grpc"]
        START_ADDRESS[0] = address
        failures = 0
        compared = 0
        rows = []
        pairs = []
        cpu_results = {}
        for dist in sorted(glob.glob(os.path.join(args.pairs, "*.dist.y4m"))):
            name = os.path.basename(dist)[: -len(".dist.y4m")]
            ref = reference_of(args.pairs, name)
            if ref is None:
                print(f"FAIL {name}: no reference (NAME.ref.y4m for a leading part of its name)")
                failures += 1
                continue
            results = {}
            refusals = {}
            for backend in ("cuda", "cpu"):
                out = os.path.join(args.out, f"{name}.{backend}.json")
                started = time.monotonic()
                run = subprocess.run([os.path.join(args.bin, "exactq"), "score", ref, dist, "--server", address,
                                      "--metrics", args.metrics, "--backend", backend, "--json", out, "--quiet"],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    refusals[backend] = run.stderr.strip()
                else:
                    results[backend] = (json.load(open(out)), time.monotonic() - started)
            if refusals:
                # A pair a metric does not take (vmaf below 17x17) must be refused alike on both.
                alike = len(refusals) == 2 and "INVALID_ARGUMENT: " in refusals["cuda"] and \
                    refusals["cuda"] == refusals["cpu"]
                print(f"{'refused alike' if alike else 'FAIL'} {name}: " +
                      "; ".join(f"{b}: {e}" for b, e in refusals.items()))
                failures += 0 if alike else 1
                continue
            gpu, cpu = results["cuda"][0], results["cpu"][0]
            pairs.append((name, ref, dist))
            cpu_results[name] = cpu
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
            # The pictures' bytes copied to the GPU (the totals' count): some on cuda, never
            # more than both raw files hold; none on the CPU.
            uploaded = {b: results[b][0]["totals"].get("host_to_device_bytes") for b in results}
            if uploaded["cpu"] != 0 or not 0 < (uploaded["cuda"] or 0) <= os.path.getsize(ref) + os.path.getsize(dist):
                print(f"FAIL {name}: bytes uploaded to the GPU: cuda {uploaded['cuda']}, cpu {uploaded['cpu']}")
                same = False
            failures += 0 if same else 1
            rows.append((name, len(cpu["frames"]), "==" if same else "DIFF", results["cuda"][1], results["cpu"][1]))
        page = metrics_page(ports["metrics"])
        cuda_frames = [l for l in page.splitlines() if l.startswith("exactq_frames_scored_total") and 'backend="cuda"' in l]
        print(f"{'pair':32} {'frames':>6} {'bits':>5} {'cuda s':>8} {'cpu s':>8}")
        for r in rows:
            print(f"{r[0]:32} {r[1]:6} {r[2]:>5} {r[3]:8.3f} {r[4]:8.3f}")
        print("\n".join(cuda_frames))
        print(f"{compared} values compared, {failures} failing pairs")
        if args.concurrent > 0 and pairs:
            failures += concurrent_streams(args, address, pairs, cpu_results)
        if args.fault_pair:
            ref, dist = args.fault_pair.split(",")
            failures += fault_injection(args, ref, dist)
        return 1 if failures or compared == 0 else 0
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
