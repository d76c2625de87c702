#!/usr/bin/env python3
"""Where a GPU sat idle, from a tools/gpu_timeline.cpp recording.

    python3 tools/gpu_timeline_gaps.py run.csv MARKER [--top N] [--min-gap-us U]

MARKER is part of a kernel's (mangled) name that runs once an iteration, e.g. 11step_kernel
(device PCG's step): the periods between its consecutive starts are the iterations, and a period
of more than 1.5 median periods (the work between two solves) starts a new solve. For each solve
this prints the iterations' mean period, the GPU's busy time in them (the union of kernels,
copies and memsets) and its idle time; then, over the last solve, the idle gaps of at least U
microseconds grouped by the GPU work before and after them, with how late the host called the
runtime for the work after (its launch's start minus the gap's start; positive: the GPU waited
for the host) and the host call in progress at the gap's start.
"""
import argparse
import bisect
import collections
import re
import shutil
import statistics
import subprocess


def read(path):
    gpu, api = [], {}
    api_by_start = []
    with open(path) as f:
        for line in f:
            kind, start, end, _stream, corr, name = line.rstrip("\n").split(",", 5)
            rec = (int(start), int(end), int(corr), name)
            if kind == "R":
                api[rec[2]] = rec
                api_by_start.append(rec)
            else:
                gpu.append(rec)
    gpu.sort()
    api_by_start.sort()
    return gpu, api, api_by_start


def short_names(names):
    """Demangled, template arguments and parameters dropped: tessera::...::name."""
    names = sorted(set(names))
    plain = names
    if shutil.which("c++filt"):
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout
        plain = out.split("\n")[: len(names)]
    result = {}
    for mangled, s in zip(names, plain):
        while True:  # innermost <...> and (...) first
            t = re.sub(r"<[^<>]*>", "", re.sub(r"\([^()]*\)", "", s))
            if t == s:
                break
            s = t
        s = s.replace("void ", "").strip()
        result[mangled] = "::".join(s.split("::")[-2:])
    return result


def busy_union(gpu, lo, hi, first):
    """Busy time of the GPU in [lo, hi), and its idle gaps as (start, end, before, after) indices."""
    busy, gaps = 0, []
    i = first
    cursor, before = lo, None
    while i < len(gpu) and gpu[i][0] < hi:
        s, e = max(gpu[i][0], lo), min(gpu[i][1], hi)
        if e > cursor:
            if s > cursor:
                gaps.append((cursor, s, before, i))
                busy += e - s
            else:
                busy += e - cursor
            cursor = e
            before = i
        i += 1
    if cursor < hi:
        gaps.append((cursor, hi, before, None))
    return busy, gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("marker")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--min-gap-us", type=float, default=1.0)
    args = ap.parse_args()
    gpu, api, api_by_start = read(args.csv)
    names = short_names(r[3] for r in gpu)
    starts = [r[0] for r in gpu]
    marks = [r[0] for r in gpu if args.marker in r[3]]
    if len(marks) < 3:
        raise SystemExit(f"fewer than 3 kernels named *{args.marker}*")
    periods = [b - a for a, b in zip(marks, marks[1:])]
    cut = 1.5 * statistics.median(periods)
    solves, current = [], [marks[0]]
    for a, b in zip(marks, marks[1:]):
        if b - a > cut:
            solves.append(current)
            current = []
        current.append(b)
    solves.append(current)
    print(f"{len(gpu)} GPU records, {len(api)} runtime calls; {len(solves)} solves by {args.marker}")
    print("solve  iterations  period_ms  busy_ms  idle_ms  idle_%")
    last_gaps, last_iters = [], 0
    for n, marks_s in enumerate(solves):
        if len(marks_s) < 2:
            continue
        total_busy, total_gaps = 0, []
        for a, b in zip(marks_s, marks_s[1:]):
            # Work that started before the iteration may still run in it: start 64 records back.
            busy, gaps = busy_union(gpu, a, b, max(0, bisect.bisect_left(starts, a) - 64))
            total_busy += busy
            total_gaps += gaps
        iters = len(marks_s) - 1
        span = marks_s[-1] - marks_s[0]
        print(f"{n:5d}  {iters:10d}  {span / iters / 1e6:9.4f}  {total_busy / iters / 1e6:7.4f}  "
              f"{(span - total_busy) / iters / 1e6:7.4f}  {100 * (span - total_busy) / span:6.2f}")
        last_gaps, last_iters = total_gaps, iters
    if last_iters == 0:
        raise SystemExit("no solve of two or more iterations")
    groups = collections.defaultdict(lambda: [0, 0, 0.0, collections.Counter()])
    for s, e, before, after in last_gaps:
        if e - s < args.min_gap_us * 1e3:
            continue
        b = names[gpu[before][3]] if before is not None else "-"
        a = names[gpu[after][3]] if after is not None else "(window end)"
        launch = api.get(gpu[after][2]) if after is not None else None
        g = groups[(b, a, launch[3] if launch else "-")]
        g[0] += 1
        g[1] += e - s
        g[2] += (launch[0] - s) if launch else 0.0
        last = bisect.bisect_right(api_by_start, (s, float("inf")))
        held = [c for c in api_by_start[max(0, last - 64):last] if c[1] >= s]  # calls spanning the gap's start
        g[3][held[-1][3] if held else "none"] += 1
    print(f"\nlast solve's idle gaps >= {args.min_gap_us} us, per iteration ({last_iters} iterations):")
    print("idle_us/it  gaps/it  mean_us  host_late_us  before -> after [launched by] (host call at gap start)")
    for (b, a, call), (count, total, late, during) in sorted(groups.items(), key=lambda kv: -kv[1][1])[: args.top]:
        held = ", ".join(f"{c} x{m}" for c, m in during.most_common(2))
        print(f"{total / last_iters / 1e3:10.1f}  {count / last_iters:7.2f}  {total / count / 1e3:7.1f}  "
              f"{late / count / 1e3:12.1f}  {b} -> {a} [{call}] ({held})")


if __name__ == "__main__":
    main()
