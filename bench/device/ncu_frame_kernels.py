#!/usr/bin/env python3
"""Per-kernel durations of one ssimulacra2 frame from an ncu CSV (bench/device/run_checks.sh
with NCU=1, or `ncu --csv --metrics gpu__time_duration.sum,sm__cycles_active.avg`).

The frame is the kernels after the first GatherKernel launch up to and including the second
(the bench's first frame allocates and warms up). ncu serialises kernels, so a duration is
the kernel's own length: for the sum pipeline's small stages, the length of their longest
chain. SM time is sm__cycles_active.avg at the H200's 1.98 GHz.

  python3 bench/device/ncu_frame_kernels.py FILE.csv[.xz] ... [--per-launch]
"""
import collections
import csv
import lzma
import re
import sys

CLOCK_GHZ = 1.98
NS = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6}


def load(path):
    """{launch id: {"name", metric: value}}, durations in us."""
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages are not CSV
    rows = csv.reader(lines)
    header = {name: i for i, name in enumerate(next(rows))}
    launches = collections.OrderedDict()
    for row in rows:
        launch = launches.setdefault(int(row[header["ID"]]), {"name": row[header["Kernel Name"]]})
        metric = row[header["Metric Name"]]
        value = float(row[header["Metric Value"]].replace(",", ""))
        if metric == "gpu__time_duration.sum":
            value = value * NS[row[header["Metric Unit"]]] / 1e3
        launch[metric] = value
    return launches


def short_name(name):
    match = re.search(r"(Segment\w+Batch|\w+Kernel)", name)
    return match.group(1) if match else name.split("(")[0]


def frame_launches(launches):
    gathers = [i for i, k in launches.items() if "GatherKernel" in k["name"]]
    if len(gathers) < 2:
        sys.exit("fewer than two GatherKernel launches: profile more launches (--launch-count)")
    return [launches[i] for i in launches if gathers[0] < i <= gathers[1]]


def main(argv):
    per_launch = "--per-launch" in argv
    for path in [a for a in argv if not a.startswith("--")]:
        frame = frame_launches(load(path))
        by_kernel = collections.OrderedDict()
        for k in frame:
            by_kernel.setdefault(short_name(k["name"]), []).append(k)
        print(f"## {path}: {len(frame)} kernels, {sum(k['gpu__time_duration.sum'] for k in frame):.1f} us in all")
        for name, ks in by_kernel.items():
            durations = [k["gpu__time_duration.sum"] for k in ks]
            sm_us = sum(k.get("sm__cycles_active.avg", 0.0) for k in ks) / (CLOCK_GHZ * 1e3)
            median = sorted(durations)[len(durations) // 2]
            print(f"  {name:28s} n={len(ks):3d} sum={sum(durations):8.1f} us  max={max(durations):6.1f}"
                  f"  median={median:6.1f}  SM time={sm_us:7.1f} us")
            if per_launch:
                print("      " + " ".join(f"{d:.1f}" for d in durations))


if __name__ == "__main__":
    main(sys.argv[1:])
