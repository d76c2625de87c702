#!/usr/bin/env python3
"""Checks what one jobs/ script produced: its log and every JSON it wrote.

Each kind of result has one rule below: the JSON keys that make it complete, the values that
mean success, the line its log must print and any further check. A result with no rule fails
here: add the rule together with the script. --scaling also requires the sweep's manifest and
its summary (Markdown, CSV with one row per run, PNG).
"""
import argparse
import csv
import json
import pathlib
import re
import sys
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Rule:
    keys: list                      # dotted keys that must exist
    values: dict                    # dotted key -> required value
    log_pattern: str                # regex the job log must contain (re.MULTILINE)
    has_backend: bool = True        # the JSON reports the backend it ran on
    extra: Callable = field(default=lambda doc, args: [])  # further checks -> list of errors


def amg_checks(doc, args):
    # The JSON does not record the tolerance yet: the scripts' default (--amg-tol) stands in.
    tol = doc.get("tol", args.amg_tol)
    errors = []
    if not doc["relative_residual"] <= tol:
        errors.append(f"relative_residual {doc['relative_residual']:.3e} above the tolerance {tol:g}")
    for baseline in doc.get("compare", []):
        if baseline.get("converged") is not True:
            errors.append(f"baseline {baseline.get('solver')!r} did not converge")
    return errors


def distributed_checks(doc, args):
    # --check is optional in the scaling sweeps (TESSERA_CHECK=0); when it ran it must pass.
    if "check" in doc and doc["check"].get("pass") is not True:
        return [f"check.pass is {doc['check'].get('pass')!r}"]
    return []


def petsc_checks(doc, args):
    errors = []
    if not doc["solves"]:
        errors.append("no -ksp_converged_reason line in the run's log")
    errors += [f"a solve ended with {s['reason']}" for s in doc["solves"] if not s["reason"].startswith("CONVERGED_")]
    if doc.get("pc_ran") != doc["pc"]:
        errors.append(f"asked for -pc_type {doc['pc']}, -ksp_view shows {doc.get('pc_ran')!r}")
    return errors


DISTRIBUTED_KEYS = ["ranks", "partition", "stats.max_compute_seconds", "stats.max_exchange_seconds",
                    "stats.ranks", "stats.imbalance.rows"]
RULES = {
    "tessera-spgemm": Rule(
        ["A.rows", "A.nnz", "A.tiles", "C.rows", "C.nnz", "C.tiles", "op", "precision", "backend",
         "intermediate_products", "time.convert_and_tile_s", "check.max_relative_error", "check.bound"],
        {"check.pass": True, "check.pattern_equal": True},
        r"^check: .* PASS$"),
    "tessera-spgemm (distributed)": Rule(
        DISTRIBUTED_KEYS + ["op", "time.symbolic_and_numeric_s", "time.numeric_median_s"], {},
        r"^C = \w+( \(\w+\))?, per rank:$", extra=distributed_checks),
    "tessera-spmv (distributed)": Rule(
        DISTRIBUTED_KEYS + ["rows", "nnz", "time.median_s", "gbs"], {},
        r"^y = A x, per rank:$", extra=distributed_checks),
    "tessera-amg": Rule(
        ["matrix", "rows", "nnz", "iterations", "relative_residual", "setup_seconds", "solve_seconds",
         "operator_complexity", "grid_complexity", "levels"],
        {"converged": True},
        r"^converged: converged after", extra=amg_checks),
    "petsc-app": Rule(
        ["app", "pc", "ranks", "solves"], {"converged": True},
        r"^\s*Linear solve converged due to CONVERGED_\w+", has_backend=False, extra=petsc_checks),
}


def kind_of(doc):
    driver = doc.get("driver")
    if driver is None and "operator_complexity" in doc:
        return "tessera-amg"  # its JSON has no "driver" field yet
    if driver in ("tessera-spgemm", "tessera-spmv") and "stats" in doc and "ranks" in doc:
        return f"{driver} (distributed)"
    return driver


def lookup(doc, dotted):
    node = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(dotted)
        node = node[part]
    return node


def check_json(path, args, log_text):
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        return [f"{path.name}: not a complete JSON document ({e})"]
    kind = kind_of(doc)
    if kind not in RULES:
        return [f"{path.name}: no rule for driver {kind!r}: add one to {pathlib.Path(__file__).name}"]
    rule = RULES[kind]
    errors = [f"{path.name}: missing key '{k}'" for k in rule.keys if not has_key(doc, k)]
    complete = not errors
    wanted = {**rule.values, **({"backend": args.backend} if rule.has_backend else {})}
    for key, want in wanted.items():
        if not has_key(doc, key):
            errors.append(f"{path.name}: missing key '{key}'")
        elif lookup(doc, key) != want:
            errors.append(f"{path.name}: {key} is {lookup(doc, key)!r}, expected {want!r}")
    if complete:  # the extra checks read the keys checked above
        errors += [f"{path.name}: {e}" for e in rule.extra(doc, args)]
    if not re.search(rule.log_pattern, log_text, re.MULTILINE):
        errors.append(f"log has no line matching '{rule.log_pattern}' ({kind})")
    return errors


def has_key(doc, dotted):
    try:
        lookup(doc, dotted)
        return True
    except KeyError:
        return False


def check_scaling(folder):
    """The sweep's manifest lists every run; its summary must exist with one CSV row per run."""
    manifests = sorted(folder.glob("*-manifest.csv"))
    if not manifests:
        return [f"{folder}: no scaling manifest (*-manifest.csv)"]
    errors = []
    for manifest in manifests:
        with open(manifest, newline="") as f:
            runs = list(csv.DictReader(f))
        if not runs:
            errors.append(f"{manifest.name}: lists no runs")
        errors += [f"{manifest.name}: run {r['json']} wrote no JSON" for r in runs if not (folder / r["json"]).is_file()]
        prefix = manifest.name.removesuffix("-manifest.csv") + "-summary"
        for suffix in (".md", ".csv", ".png"):
            summary = folder / (prefix + suffix)
            if not summary.is_file() or summary.stat().st_size == 0:
                errors.append(f"{summary.name}: missing or empty")
        png = folder / (prefix + ".png")
        if png.is_file() and not png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"):
            errors.append(f"{png.name}: not a PNG file")
        table = folder / (prefix + ".csv")
        if table.is_file():
            with open(table, newline="") as f:
                rows = list(csv.DictReader(f))
            if len(rows) != len(runs):
                errors.append(f"{table.name}: {len(rows)} row(s) for {len(runs)} run(s)")
    return errors


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--log", required=True, type=pathlib.Path, help="the job's output file")
    p.add_argument("--json-dir", required=True, type=pathlib.Path, help="the job's TESSERA_OUT")
    p.add_argument("--backend", required=True, help="backend every result must report")
    p.add_argument("--ranks-bound-to-gpu", type=int, default=0,
                   help="ranks whose binding line must show a single CUDA_VISIBLE_DEVICES entry")
    p.add_argument("--amg-tol", type=float, default=1e-8, help="AMG tolerance the job ran with")
    p.add_argument("--scaling", action="store_true", help="also require the sweep's manifest and summary")
    args = p.parse_args()

    errors = []
    log_text = args.log.read_text(errors="replace") if args.log.is_file() else ""
    if not log_text:
        errors.append(f"{args.log}: missing or empty")
    if re.search(r"^check: .* FAIL$", log_text, re.MULTILINE):
        errors.append("log reports a failed check")
    if re.search(r"FAILED: |NOT converged|Linear solve did not converge", log_text):
        errors.append("log reports a failed run")
    results = sorted(args.json_dir.glob("*.json"))
    if not results:
        errors.append(f"{args.json_dir}: no JSON result written")
    for path in results:
        errors += check_json(path, args, log_text)
    if args.scaling:
        errors += check_scaling(args.json_dir)
    bound = re.findall(r"^rank \d+ \(node-local \d+\) on .*: CUDA_VISIBLE_DEVICES=(\d+)$", log_text,
                       re.MULTILINE)
    if len(bound) < args.ranks_bound_to_gpu:
        errors.append(f"expected {args.ranks_bound_to_gpu} rank(s) bound to one GPU each, log shows {len(bound)}")

    for e in errors:
        print(f"check_job_output: {e}", file=sys.stderr)
    if not errors:
        print(f"check_job_output: {len(results)} result(s) complete, backend {args.backend}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
