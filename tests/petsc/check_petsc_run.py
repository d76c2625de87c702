#!/usr/bin/env python3
"""Runs one PETSc application under mpiexec and checks what it printed.

Usage: check_petsc_run.py --np N [--require REGEX ...] [--max-true-residual R] [--needs-gpu]
                          -- program args...

Passes when every KSP solve reported CONVERGED_RTOL or CONVERGED_ATOL (-ksp_converged_reason),
the last line of every -ksp_monitor_true_residual sequence has ||r||/||b|| <= R (the residual
PETSc recomputes from x, not the preconditioned one), and every --require regex matched.

Each rank's output goes to its own file (Open MPI's --output-filename) and is read back whole:
through one pipe, a line that rank 1 prints (say, with -info) can land in the middle of rank 0's
residual line, and a checker reading the merged stream would then see a residual it cannot parse.
The solver's own lines (monitor, converged reason, -ksp_view) come from rank 0.

With --needs-gpu the run is skipped (exit 77, ctest's SKIP_RETURN_CODE) where nvidia-smi lists no
GPU, as the gpu-labelled tests skip.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

DIVERGED = re.compile(r"Linear solve (did not converge|converged) due to (\w+)")
TRUE_RESIDUAL = re.compile(r"^\s*(\d+) KSP .*true resid norm \S+ \|\|r\(i\)\|\|/\|\|b\|\| (\S+)")


def final_true_residuals(lines):
    """The relative true residual at the end of each monitored solve (iteration counts reset)."""
    finals, last, last_iter = [], None, -1
    for line in lines:
        m = TRUE_RESIDUAL.match(line)
        if not m:
            continue
        try:
            it, rel = int(m.group(1)), float(m.group(2))
        except ValueError:  # a damaged line must fail the check, never pass it
            it, rel = int(m.group(1)), float("nan")
        if it <= last_iter and last is not None:
            finals.append(last)
        last, last_iter = rel, it
    if last is not None:
        finals.append(last)
    return finals


def read_rank_outputs(outdir, np):
    """Each rank's stdout+stderr, rank 0 first; None when a rank left no file."""
    texts = []
    for rank in range(np):
        found = glob.glob(os.path.join(outdir, "*", f"rank.{rank}", "stdout"))
        if len(found) != 1:
            return None
        with open(found[0], errors="replace") as f:
            texts.append(f.read())
    return texts


SKIP_CODE = 77


def gpu_listed():
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return any(line.startswith("GPU") for line in listed.splitlines())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--require", action="append", default=[])
    p.add_argument("--max-true-residual", type=float, default=1e-6)
    p.add_argument("--timeout", type=int, default=500)
    p.add_argument("--needs-gpu", action="store_true")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command and a.command[0] == "--" else a.command
    if a.needs_gpu and not gpu_listed():
        print("SKIPPED: no GPU visible (nvidia-smi -L)")
        return SKIP_CODE
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(prefix="petsc-run-") as outdir:
        full = [a.mpiexec, "-n", str(a.np), "--oversubscribe", "--merge-stderr-to-stdout",
                "--output-filename", outdir + ":nocopy"] + command
        print("running:", " ".join(full), flush=True)
        run = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env, timeout=a.timeout)
        ranks = read_rank_outputs(outdir, a.np)
    print(run.stdout, end="")  # mpiexec's own messages
    failures = []
    if run.returncode != 0:
        failures.append(f"exit status {run.returncode}")
    if ranks is None:
        print("FAILED: no per-rank output under --output-filename")
        return 1
    out = ranks[0]
    lines = out.splitlines()
    # Echo what matters (the -info stream can be long).
    for rank, text in enumerate(ranks):
        for line in text.splitlines():
            if (rank == 0 and not line.startswith("[")) or "Tessera" in line or "ERROR" in line:
                print(line)
    reasons = DIVERGED.findall(out)
    if not reasons:
        failures.append("no 'Linear solve ... due to' line (run with -ksp_converged_reason)")
    bad = [r for _, r in reasons if r not in ("CONVERGED_RTOL", "CONVERGED_ATOL")]
    if bad:
        failures.append(f"solve ended with {', '.join(bad)}")
    finals = final_true_residuals(lines)
    if not finals:
        failures.append("no true residual printed (run with -ksp_monitor_true_residual)")
    for i, rel in enumerate(finals):
        if not rel <= a.max_true_residual:
            failures.append(f"solve {i}: true relative residual {rel:g} > {a.max_true_residual:g}")
    everything = "".join(ranks)
    for regex in a.require:
        if not re.search(regex, everything, re.MULTILINE):
            failures.append(f"output lacks /{regex}/")
    print(f"solves: {len(reasons)}, final true relative residuals: {finals}")
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
