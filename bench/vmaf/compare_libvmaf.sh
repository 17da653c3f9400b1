#!/usr/bin/env bash
# Side by side, in one run: libvmaf's `vmaf` CLI (--threads 1, model vmaf_v0.6.1) and our
# bench/vmaf/vmaf_y4m (one thread, streaming) on the same corpus pair, alternating
# several times. Each run is one process timed by its CPU time (user + sys, from the
# kernel's rusage of the child): frames/s per thread = frames / CPU seconds, which shared,
# loaded cores disturb much less than wall time (wall time is printed too).
#
# libvmaf is a measuring tool here, not a dependency: build it outside this tree, e.g.
#   git -C VMAF_CHECKOUT checkout f85a8536      # Netflix vmaf, libvmaf 3.2.0
#   cd VMAF_CHECKOUT/libvmaf && meson setup build --buildtype=release && ninja -C build
# and pass build/tools/vmaf. Its default build on x86-64 has its AVX2 and AVX-512 kernels
# and picks them at run time; this script prints which ones this CPU gets. With
# --peer-avx2 it also times libvmaf with AVX-512 masked off (--cpumask 48).
#
#   bazel build --config=nocuda //bench/vmaf:vmaf_y4m
#   bench/vmaf/compare_libvmaf.sh /tmp/vmaf/libvmaf/build/tools/vmaf \
#       [--reps 5] [--sizes 1080,4k] [--repeat 10] [--ours bazel-bin/bench/vmaf/vmaf_y4m] \
#       [--json out.json] [--peer-avx2]
#
# Input: $EXACTQ_CORPUS (default /work/shared/corpus): p1080 (x264 crf27, 2 frames) and
# p4k (x265 crf26, 1 frame). The pair is repeated --repeat times into one Y4M in a
# temporary folder (so each process scores enough frames to swamp its start-up); the
# pooled mean vmaf of both tools is printed and must agree to libvmaf's 6 decimals.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
  sed -n '2,24p' "$0"
  exit 2
fi
PEER="$1"
shift
exec python3 - "$PEER" "$@" <<'PY'
import argparse, json, os, resource, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("peer")
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--sizes", default="1080")
ap.add_argument("--repeat", type=int, default=0, help="copies of the pair (default: 10 at 1080p, 4 at 4K)")
ap.add_argument("--ours", default="bazel-bin/bench/vmaf/vmaf_y4m")
ap.add_argument("--json", default="")
ap.add_argument("--peer-avx2", action="store_true")
a = ap.parse_args()

corpus = os.environ.get("EXACTQ_CORPUS", "/work/shared/corpus")
pairs = {"1080": ("p1080.ref.y4m", "p1080_x264_crf27.dist.y4m", 10),
         "4k": ("p4k.ref.y4m", "p4k_x265_crf26.dist.y4m", 4)}

def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()

cpu_model = sh("lscpu | sed -n 's/^Model name:[[:space:]]*//p'")
flags = set(open("/proc/cpuinfo").read().split("flags")[1].split("\n")[0].split())
avx512 = all(f in flags for f in ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"))
avx512icl = avx512 and all(f in flags for f in ("avx512vnni", "avx512_vbmi2", "avx512_bitalg", "gfni", "vpclmulqdq", "vaes"))
peer_simd = "AVX-512 (vif, adm, motion)" if avx512 else ("AVX2" if "avx2" in flags else "C")
peer_version = sh(f"{a.peer} --version 2>&1")
ours_commit = sh("git rev-parse --short HEAD 2>/dev/null") + ("-dirty" if sh("git status --porcelain --untracked-files=no 2>/dev/null") else "")

def timed(cmd):
    """Runs cmd; returns (cpu seconds of the child, wall seconds, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, out.stdout

def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])

report = {"benchmark": "vmaf_cpu_side_by_side", "device": cpu_model, "commit": ours_commit,
          "results": [], "cpu": cpu_model, "logical_cpus": os.cpu_count(),
          "peer": {"binary": a.peer, "version": peer_version, "simd": peer_simd,
                   "command": "vmaf -r REF -d DIS --threads 1 --model version=vmaf_v0.6.1 --json -o OUT"},
          "ours": {"binary": a.ours, "commit": ours_commit}, "load_start": load(), "sizes": {}}
print(f"cpu: {cpu_model}, {os.cpu_count()} logical CPUs; load {load()}")
print(f"libvmaf {peer_version} ({a.peer}): SIMD on this CPU: {peer_simd}")
print(f"ours: {a.ours} at {ours_commit}")

with tempfile.TemporaryDirectory() as tmp:
    for size in a.sizes.split(","):
        ref_name, dis_name, default_repeat = pairs[size]
        repeat = a.repeat or default_repeat
        paths = []
        for name in (ref_name, dis_name):
            data = open(os.path.join(corpus, name), "rb").read()
            nl = data.index(b"\n") + 1
            path = os.path.join(tmp, name)
            open(path, "wb").write(data[:nl] + data[nl:] * repeat)
            paths.append(path)
        ref, dis = paths
        out_json = os.path.join(tmp, "peer.json")
        peer_cmd = [a.peer, "-r", ref, "-d", dis, "--threads", "1", "--model", "version=vmaf_v0.6.1",
                    "--json", "-o", out_json, "-q"]
        runs = {"libvmaf": peer_cmd, "ours": [a.ours, ref, dis]}
        if a.peer_avx2:
            runs["libvmaf_avx2"] = peer_cmd + ["--cpumask", "48"]
        order = list(runs)
        samples = {k: [] for k in runs}
        frames = {}
        means = {}
        print(f"\n{size}: {ref_name} / {dis_name}, pair repeated {repeat}x")
        for rep in range(a.reps):
            for name in (order if rep % 2 == 0 else order[::-1]):
                cpu, wall, out = timed(runs[name])
                if name.startswith("libvmaf"):
                    j = json.load(open(out_json))
                    n = len(j["frames"])
                    means[name] = j["pooled_metrics"]["vmaf"]["mean"]
                else:
                    words = [l.split() for l in out.splitlines()]
                    n = int([w[1] for w in words if w[0] == "frames"][0])
                    means[name] = float([w[2] for w in words if w[:2] == ["mean", "vmaf"]][0])
                frames[name] = n
                samples[name].append({"cpu_s": cpu, "wall_s": wall, "load": load()})
                print(f"  rep {rep} {name:13s} {n} frames  cpu {cpu:7.3f} s  {n / cpu:7.2f} frames/s/thread"
                      f"  (wall {wall:6.2f} s)  load {load()}")
        res = {"frames": frames, "repeat": repeat, "runs": samples, "mean_vmaf": means}
        med = {}
        for name in order:
            cpu_med = statistics.median(s["cpu_s"] for s in samples[name])
            med[name] = frames[name] / cpu_med
            res[f"{name}_frames_per_s_per_thread_median"] = round(med[name], 3)
            res[f"{name}_cpu_ms_per_frame_median"] = round(1000 * cpu_med / frames[name], 2)
        res["ratio_ours_over_libvmaf"] = round(med["ours"] / med["libvmaf"], 3)
        for name in order:
            report["results"].append({"name": f"{size}_{name}_frames_per_s_per_thread",
                                      "value": round(med[name], 3), "unit": "frames/s"})
        report["results"].append({"name": f"{size}_ours_over_libvmaf",
                                  "value": res["ratio_ours_over_libvmaf"], "unit": "ratio"})
        agree = abs(means["ours"] - means["libvmaf"]) < 5e-7
        res["mean_vmaf_agrees"] = agree
        report["sizes"][size] = res
        print(f"  median frames/s per thread: ours {med['ours']:.2f}, libvmaf {med['libvmaf']:.2f}"
              + (f", libvmaf AVX2 only {med['libvmaf_avx2']:.2f}" if a.peer_avx2 else "")
              + f"; ours / libvmaf = {med['ours'] / med['libvmaf']:.3f}")
        print(f"  mean vmaf: ours {means['ours']:.6f}, libvmaf {means['libvmaf']:.6f}"
              f" ({'agree' if agree else 'DIFFER'})")
report["load_end"] = load()
print(f"\nload at the end {load()}")
if a.json:
    with open(a.json, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    print(f"wrote {a.json}")
PY
