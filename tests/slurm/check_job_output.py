#!/usr/bin/env python3
"""Checks what one jobs/ script produced: its log and every JSON it wrote.

Each driver has one rule below: the JSON keys that make a result complete, the values that mean
success, and the line its log must print. A script that runs a driver with no rule fails here:
add the rule together with the script.
"""
import argparse
import json
import pathlib
import re
import sys

# driver -> (required dotted keys, {dotted key: required value}, regex its log must contain)
RULES = {
    "tessera-spgemm": (
        ["A.rows", "A.nnz", "A.tiles", "C.rows", "C.nnz", "C.tiles", "op", "precision", "backend",
         "intermediate_products", "time.convert_and_tile_s", "check.max_relative_error", "check.bound"],
        {"check.pass": True, "check.pattern_equal": True},
        r"^check: .* PASS$",
    ),
}


def lookup(doc, dotted):
    node = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(dotted)
        node = node[part]
    return node


def check_json(path, backend, log_text):
    errors = []
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        return [f"{path.name}: not a complete JSON document ({e})"]
    driver = doc.get("driver")
    if driver not in RULES:
        return [f"{path.name}: no rule for driver {driver!r}: add one to {pathlib.Path(__file__).name}"]
    keys, values, log_pattern = RULES[driver]
    for key in keys:
        try:
            lookup(doc, key)
        except KeyError:
            errors.append(f"{path.name}: missing key '{key}'")
    for key, want in {**values, "backend": backend}.items():
        try:
            got = lookup(doc, key)
        except KeyError:
            errors.append(f"{path.name}: missing key '{key}'")
            continue
        if got != want:
            errors.append(f"{path.name}: {key} is {got!r}, expected {want!r}")
    if not re.search(log_pattern, log_text, re.MULTILINE):
        errors.append(f"log has no line matching '{log_pattern}' ({driver})")
    return errors


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--log", required=True, type=pathlib.Path, help="the job's output file")
    p.add_argument("--json-dir", required=True, type=pathlib.Path, help="the job's TESSERA_OUT")
    p.add_argument("--backend", required=True, help="backend every result must report")
    p.add_argument("--ranks-bound-to-gpu", type=int, default=0,
                   help="ranks whose binding line must show a single CUDA_VISIBLE_DEVICES entry")
    args = p.parse_args()

    errors = []
    log_text = args.log.read_text(errors="replace") if args.log.is_file() else ""
    if not log_text:
        errors.append(f"{args.log}: missing or empty")
    if re.search(r"^check: .* FAIL$", log_text, re.MULTILINE):
        errors.append("log reports a failed check")
    results = sorted(args.json_dir.glob("*.json"))
    if not results:
        errors.append(f"{args.json_dir}: no JSON result written")
    for path in results:
        errors += check_json(path, args.backend, log_text)
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
