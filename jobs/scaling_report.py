#!/usr/bin/env python3
"""Summary of a weak- or strong-scaling sweep: a table (Markdown and CSV) and a PNG plot.

Reads the manifest that jobs/scaling.sh writes (one line per run: operation, ranks, problem, rows,
JSON file) and the JSON of every run. Any missing, unreadable or incomplete JSON, a run whose
rank count differs from the manifest, an AMG solve that did not converge or a failed --check makes
it list every such problem and exit 1 without writing a summary: a table with holes reads as a
result.

Per operation, the time of a run and its parts (from the driver's JSON, slowest rank):
  amg   setup_seconds + solve_seconds             parts: setup, solve; also the solve's ms per
        iteration, first solve and (tessera-amg --solves N) the median of the repeated solves;
        (tessera-amg --setups N) the median of the repeated whole setups, and on the GPUs of
        each repeated setup plus the hierarchy's upload for the device solve
  ptap  time.symbolic_and_numeric_s               parts: compute, exchange (stats.max_*_seconds)
  spgemm (A*A) the same keys as ptap
  spmv  time.median_s                             parts: compute, exchange (stats.max_*_seconds)
With p0 the smallest rank count of the operation and T(p) the time on p ranks:
  strong: speedup T(p0)/T(p), efficiency speedup * p0/p
  weak:   efficiency T(p0)/T(p); load-normalized efficiency divides each time by the rows per
          rank first, since integer grid sides make the load per rank vary slightly with p.
          For amg also the growth over p0 of the repeated setup (plus upload where measured) and
          of the repeated solve's ms per iteration: issue 6's weak-scaling bounds are on these.
"""
import argparse
import csv
import json
import pathlib
import sys

# operation -> (total time as a sum of dotted keys, {part name: dotted key}, other required keys)
OPERATIONS = {
    "amg": (["setup_seconds", "solve_seconds"], {"setup": "setup_seconds", "solve": "solve_seconds"},
            ["iterations", "converged", "relative_residual", "ranks"]),
    "ptap": (["time.symbolic_and_numeric_s"],
             {"compute": "stats.max_compute_seconds", "exchange": "stats.max_exchange_seconds"}, ["ranks"]),
    "spgemm": (["time.symbolic_and_numeric_s"],
               {"compute": "stats.max_compute_seconds", "exchange": "stats.max_exchange_seconds"}, ["ranks"]),
    "spmv": (["time.median_s"],
             {"compute": "stats.max_compute_seconds", "exchange": "stats.max_exchange_seconds"}, ["ranks"]),
}
PARTS = ["setup", "solve", "compute", "exchange"]
COLUMNS = ["operation", "ranks", "problem", "rows", "rows_per_rank", "time_s"] + [f"{p}_s" for p in PARTS] + [
    "repeated_setup_s", "repeated_setup_upload_s", "iterations", "ms_per_iteration", "repeated_ms_per_iteration",
    "speedup", "efficiency", "efficiency_load_normalized", "setup_growth", "iteration_growth", "json"]


class Incomplete(Exception):
    pass


def lookup(doc, dotted):
    node = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise Incomplete(f"missing key '{dotted}'")
        node = node[part]
    return node


def read_manifest(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise SystemExit(f"scaling_report: cannot read the manifest: {e}")
    if not rows:
        raise SystemExit(f"scaling_report: {path} lists no runs")
    for i, row in enumerate(rows, start=2):
        if row.get("operation") not in OPERATIONS or not (row.get("ranks") or "").isdigit() or not row.get("json"):
            raise SystemExit(f"scaling_report: {path}:{i}: malformed line {row}")
    return rows


def load_run(entry, folder):
    """One table row from a manifest entry and its JSON; Incomplete says what is wrong."""
    op, ranks = entry["operation"], int(entry["ranks"])
    path = folder / entry["json"]
    try:
        doc = json.loads(path.read_text())
    except OSError:
        raise Incomplete("no JSON written (the step failed or was killed)")
    except ValueError as e:
        raise Incomplete(f"not a complete JSON document ({e})")
    total_keys, parts, required = OPERATIONS[op]
    for key in required:
        lookup(doc, key)
    if doc["ranks"] != ranks:
        raise Incomplete(f"ran on {doc['ranks']} rank(s), the manifest says {ranks}")
    if op == "amg" and doc["converged"] is not True:
        raise Incomplete(f"the solve did not converge ({doc.get('message', 'no message')})")
    if "check" in doc and lookup(doc, "check.pass") is not True:
        raise Incomplete("its --check failed")
    rows = doc.get("rows") or (int(entry["rows"]) if entry.get("rows") else None)
    run = {"operation": op, "ranks": ranks, "problem": entry["problem"], "rows": rows,
           "rows_per_rank": rows / ranks if rows else None, "json": entry["json"],
           "time_s": sum(float(lookup(doc, k)) for k in total_keys),
           "iterations": doc.get("iterations") if op == "amg" else None}
    for name, key in parts.items():
        run[f"{name}_s"] = float(lookup(doc, key))
    if op == "amg" and "repeated_setup_seconds" in doc:
        run["repeated_setup_s"] = float(doc["repeated_setup_seconds"])
    if op == "amg" and "setup_plus_upload_seconds" in doc:
        run["repeated_setup_upload_s"] = float(lookup(doc, "setup_plus_upload_seconds.repeated_median"))
    if op == "amg" and doc["iterations"]:
        run["ms_per_iteration"] = 1e3 * float(doc["solve_seconds"]) / doc["iterations"]
        if "repeated_ms_per_iteration" in doc:
            run["repeated_ms_per_iteration"] = float(doc["repeated_ms_per_iteration"])
    return run


def add_scaling_columns(runs, mode):
    for op in dict.fromkeys(r["operation"] for r in runs):
        mine = sorted((r for r in runs if r["operation"] == op), key=lambda r: r["ranks"])
        base = mine[0]
        for r in mine:
            ratio = base["time_s"] / r["time_s"] if r["time_s"] > 0 else float("nan")
            if mode == "strong":
                r["speedup"] = ratio
                r["efficiency"] = ratio * base["ranks"] / r["ranks"]
            else:
                r["efficiency"] = ratio
                if r["rows_per_rank"] and base["rows_per_rank"]:
                    r["efficiency_load_normalized"] = ratio * r["rows_per_rank"] / base["rows_per_rank"]
                r["setup_growth"] = growth(r, base, ["repeated_setup_upload_s", "repeated_setup_s", "setup_s"])
                r["iteration_growth"] = growth(r, base, ["repeated_ms_per_iteration", "ms_per_iteration"])


def growth(run, base, keys):
    """run's value over base's minus 1, from the first key both have (None where neither has one)."""
    for key in keys:
        if run.get(key) is not None and base.get(key):
            return run[key] / base[key] - 1.0
    return None


def cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_tables(runs, mode, prefix):
    used = [c for c in COLUMNS if any(r.get(c) is not None for r in runs)]
    with open(f"{prefix}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(used)
        for r in runs:
            w.writerow([cell(r.get(c)) for c in used])
    shown = [c for c in used if c != "json"]
    lines = [f"{mode} scaling (times in seconds, slowest rank)", "",
             "| " + " | ".join(shown) + " |", "|" + "---|" * len(shown)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in shown) + " |" for r in runs]
    text = "\n".join(lines) + "\n"
    pathlib.Path(f"{prefix}.md").write_text(text)
    return text


def plot(runs, mode, prefix):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("scaling_report: matplotlib is missing: apt-get install python3-matplotlib")
    matplotlib.use("Agg")  # headless: compute nodes have no display
    import matplotlib.pyplot as plt

    ops = list(dict.fromkeys(r["operation"] for r in runs))
    fig, axes = plt.subplots(len(ops), 2, figsize=(11, 4 * len(ops)), squeeze=False)
    for (left, right), op in zip(axes, ops):
        mine = sorted((r for r in runs if r["operation"] == op), key=lambda r: r["ranks"])
        ranks = [r["ranks"] for r in mine]
        if mode == "strong":
            left.plot(ranks, [r["speedup"] for r in mine], "o-", label="speedup")
            left.plot(ranks, [p / ranks[0] for p in ranks], "k--", label="ideal")
            left.set_ylabel(f"speedup over {ranks[0]} rank(s)")
        else:
            left.plot(ranks, [r["efficiency"] for r in mine], "o-", label="efficiency")
            if all(r.get("efficiency_load_normalized") is not None for r in mine):
                left.plot(ranks, [r["efficiency_load_normalized"] for r in mine], "s:", label="load-normalized")
            left.axhline(1.0, color="k", linestyle="--", label="ideal")
            top = max([1.0] + [r.get("efficiency_load_normalized") or r["efficiency"] for r in mine])
            left.set_ylim(0, 1.1 * top)
            left.set_ylabel(f"weak efficiency vs {ranks[0]} rank(s)")
        left.set_xscale("log", base=2)
        left.set_xticks(ranks, [str(p) for p in ranks])
        left.set_xlabel("ranks (GPUs)")
        left.set_title(f"{op}: {mine[0]['problem']}" + (" ... " + mine[-1]["problem"] if mode == "weak" else ""))
        left.legend()
        left.grid(alpha=0.3)

        bottom = [0.0] * len(mine)
        labels = [str(p) for p in ranks]
        for part in PARTS:
            values = [r.get(f"{part}_s") for r in mine]
            if any(v is None for v in values):
                continue
            right.bar(labels, values, bottom=bottom, label=part)
            bottom = [b + v for b, v in zip(bottom, values)]
        other = [max(r["time_s"] - b, 0.0) for r, b in zip(mine, bottom)]
        if any(o > 1e-3 * r["time_s"] for o, r in zip(other, mine)):
            right.bar(labels, other, bottom=bottom, label="other")
        right.set_xlabel("ranks (GPUs)")
        right.set_ylabel("seconds (slowest rank)")
        right.set_title(f"{op}: time breakdown")
        right.legend()
    fig.tight_layout()
    fig.savefig(f"{prefix}.png", dpi=120)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", required=True, choices=["weak", "strong"])
    p.add_argument("--manifest", required=True, type=pathlib.Path, help="CSV written by jobs/scaling.sh")
    p.add_argument("--out", required=True, help="prefix of the .md, .csv and .png written")
    args = p.parse_args()

    runs, errors = [], []
    for entry in read_manifest(args.manifest):
        try:
            runs.append(load_run(entry, args.manifest.parent))
        except Incomplete as e:
            errors.append(f"{entry['operation']} on {entry['ranks']} rank(s), {entry['json']}: {e}")
    if errors:
        for e in errors:
            print(f"scaling_report: {e}", file=sys.stderr)
        print(f"scaling_report: {len(errors)} of {len(runs) + len(errors)} run(s) incomplete: no summary written",
              file=sys.stderr)
        return 1
    add_scaling_columns(runs, args.mode)
    print(write_tables(runs, args.mode, args.out), end="")
    plot(runs, args.mode, args.out)
    print(f"scaling_report: wrote {args.out}.md, {args.out}.csv, {args.out}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
