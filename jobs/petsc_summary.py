#!/usr/bin/env python3
"""One JSON per PETSc run of jobs/petsc-app.sbatch, from the -ksp_converged_reason lines of its log:
  Linear solve converged due to CONVERGED_RTOL iterations 7
  Linear solve did not converge due to DIVERGED_ITS iterations 10000
An application may solve several times: the run converged when it printed at least one reason and
every reason is CONVERGED_*. The run must also show (-ksp_view) the PC type it asked for.
Exit 0 converged with that PC, 1 not.
"""
import argparse
import json
import pathlib
import re
import sys

REASON = re.compile(r"^\s*Linear solve (?:converged|did not converge) due to (\w+) iterations (\d+)", re.M)
PC_VIEW = re.compile(r"^\s*PC Object:.*\n\s*type: (\w+)", re.M)  # -ksp_view: the PC that really ran


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log", required=True, type=pathlib.Path, help="the run's output (<name>.log)")
    p.add_argument("--json", required=True, type=pathlib.Path, help="JSON to write")
    p.add_argument("--app", required=True)
    p.add_argument("--pc", required=True, help="the run's -pc_type")
    p.add_argument("--ranks", required=True, type=int)
    args = p.parse_args()

    text = args.log.read_text(errors="replace") if args.log.is_file() else ""
    solves = [{"reason": reason, "iterations": int(its)} for reason, its in REASON.findall(text)]
    pc_view = PC_VIEW.search(text)
    pc_ran = pc_view[1] if pc_view else None
    converged = bool(solves) and all(s["reason"].startswith("CONVERGED_") for s in solves)
    doc = {"driver": "petsc-app", "app": args.app, "pc": args.pc, "pc_ran": pc_ran, "ranks": args.ranks,
           "solves": solves, "converged": converged, "log": str(args.log)}
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
    summary = ", ".join(f"{s['reason']} in {s['iterations']} iterations" for s in solves)
    print(f"-pc_type {args.pc}: {len(solves)} solve(s){': ' + summary if solves else ', no converged reason in the log'}")
    if pc_ran != args.pc:
        print(f"-pc_type {args.pc}: -ksp_view shows PC type {pc_ran!r}, not {args.pc!r}")
        return 1
    return 0 if converged else 1


if __name__ == "__main__":
    sys.exit(main())
