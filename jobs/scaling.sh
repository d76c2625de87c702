# shellcheck shell=bash
# Sourced by weak-scaling.sbatch and strong-scaling.sbatch after common.sh: one sweep over rank
# counts inside one allocation (each step `launch`ed on that many tasks), one JSON per run, a
# manifest of the runs, then jobs/scaling_report.py for the summary table (Markdown + CSV) and
# the PNG plot. The sourcing script defines `scaling_problem RANKS`: the generator spec or file
# of the step on RANKS ranks.

: "${TESSERA_RANKS:=1 2 4}"        # rank counts of the sweep, each at most the job's tasks
: "${TESSERA_OPERATION:=amg}"      # amg, ptap, spgemm (A*A), spmv, or several: "amg ptap"
: "${TESSERA_CHECK:=1}"            # 1: ptap and spmv runs verify against the serial reference
: "${TESSERA_AMG_ARGS:=--solves 3 --setups 3}" # extra tessera-amg options (amg steps only): three
                                   # timed solves and setups; the report's repeated ms/iteration and
                                   # repeated setup are the steady state, without first-use costs
: "${TESSERA_PTAP_ARGS:=--whole-reps 3}" # extra tessera-spgemm options (ptap and spgemm steps);
                                   # the whole product is mostly host work: median of three
: "${TESSERA_SPMV_ARGS:=}"         # extra tessera-spmv options (spmv steps only)
: "${TESSERA_TOL:=1e-8}"           # AMG relative residual tolerance
: "${TESSERA_PYTHON:=}"            # python3 with matplotlib for the report; empty: found below

# The report runs after the whole sweep: find a python3 with matplotlib before the first step.
# A pyenv or venv python3 first on PATH often lacks it while Debian's /usr/bin/python3 has it.
scaling_find_python() {
  local py
  for py in ${TESSERA_PYTHON:-python3 /usr/bin/python3}; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then
      TESSERA_PYTHON=$py
      return
    fi
  done
  tessera_die "no python3 with matplotlib (${TESSERA_PYTHON:-python3, /usr/bin/python3}): apt-get install python3-matplotlib, or set TESSERA_PYTHON"
}

# Every rank count must be a positive integer that the allocation can hold; checked before the
# first step so that a typo does not cost a queue wait plus the steps before it.
scaling_check_ranks() {
  local r available=${SLURM_NTASKS:-}
  [ -n "$TESSERA_RANKS" ] || tessera_die "TESSERA_RANKS is empty"
  for r in $TESSERA_RANKS; do
    [[ $r =~ ^[1-9][0-9]*$ ]] || tessera_die "TESSERA_RANKS='$TESSERA_RANKS': '$r' is not a positive integer"
    if tessera_under_slurm && [ "$(tessera_launcher)" = srun ] && [ -n "$available" ] && [ "$r" -gt "$available" ]; then
      tessera_die "TESSERA_RANKS has $r ranks but the job has $available tasks: submit with more (--ntasks-per-node, -N)"
    fi
  done
}

# scaling_rows PROBLEM: global rows of a grid generator spec (local/gen/generators.hpp), empty for
# files and random graphs; the report then takes the rows from the driver's JSON where it has them.
scaling_rows() {
  local kind=${1%%:*} n=${1#*:}
  [[ $n =~ ^[0-9]+$ ]] || return 0
  case $kind in
    poisson2d) echo $((n * n)) ;;
    poisson3d | poisson3d27) echo $((n * n * n)) ;;
    elasticity2d) echo $((2 * n * n)) ;;
    elasticity3d) echo $((3 * n * n * n)) ;;
  esac
}

scaling_max_ranks() { tr ' ' '\n' <<<"$TESSERA_RANKS" | sort -n | tail -n 1; }

# scaling_command OP PROBLEM JSON: sets the array SCALING_COMMAND to the driver command of one step.
# All three run the distributed code path even on one rank, so every step measures the same code.
scaling_command() {
  local op=$1 check=()
  [ "$TESSERA_CHECK" = 1 ] && check=(--check)
  tessera_problem_args "$2"
  # shellcheck disable=SC2206  # the *_ARGS variables are option lists, split on purpose
  case $op in
    amg) SCALING_COMMAND=("$(tessera_driver tessera-amg)" "${TESSERA_PROBLEM_ARGS[@]}" --distributed
           --backend "$TESSERA_BACKEND" --tol "$TESSERA_TOL" --json "$3" $TESSERA_AMG_ARGS) ;;
    ptap) SCALING_COMMAND=("$(tessera_driver tessera-spgemm)" "${TESSERA_PROBLEM_ARGS[@]}" --op PtAP
            --backend "$TESSERA_BACKEND" "${check[@]}" --json "$3" $TESSERA_PTAP_ARGS) ;;
    spgemm) SCALING_COMMAND=("$(tessera_driver tessera-spgemm)" "${TESSERA_PROBLEM_ARGS[@]}" --op AA --distributed
              --backend "$TESSERA_BACKEND" "${check[@]}" --json "$3" $TESSERA_PTAP_ARGS) ;;
    spmv) SCALING_COMMAND=("$(tessera_driver tessera-spmv)" "${TESSERA_PROBLEM_ARGS[@]}" --distributed
            --backend "$TESSERA_BACKEND" "${check[@]}" --json "$3" $TESSERA_SPMV_ARGS) ;;
    *) tessera_die "TESSERA_OPERATION='$TESSERA_OPERATION': '$op' is not one of amg, ptap, spgemm, spmv" ;;
  esac
  # shellcheck disable=SC2206
  SCALING_COMMAND+=($TESSERA_ARGS)
}

# scaling_sweep MODE DEFAULT_NAME: every operation x every rank count, then the report. A failed
# step does not stop the sweep (the other points are still worth their allocation); the report
# then names the missing runs and the job exits non-zero.
scaling_sweep() {
  local mode=$1 tag op r problem json manifest failed=0 rc
  tag=$(tessera_job_tag "$2")
  manifest=$TESSERA_OUT/$tag-manifest.csv
  mkdir -p "$TESSERA_OUT"
  for op in $TESSERA_OPERATION; do scaling_command "$op" "$(scaling_problem 1)" /dev/null; done  # fail fast
  scaling_check_ranks
  scaling_find_python
  # shellcheck disable=SC2034  # read by tessera_report_job (common.sh)
  TESSERA_NTASKS=$(scaling_max_ranks)
  tessera_report_job
  echo "operation,ranks,problem,rows,json" >"$manifest"
  for op in $TESSERA_OPERATION; do
    for r in $TESSERA_RANKS; do
      problem=$(scaling_problem "$r")
      json=$tag-$op-np$r.json
      echo "$op,$r,$problem,$(scaling_rows "$problem"),$json" >>"$manifest"
      scaling_command "$op" "$problem" "$TESSERA_OUT/$json"
      tessera_log "$mode scaling: $op on $r rank(s), $problem: ${SCALING_COMMAND[*]##*/}"
      rc=0
      TESSERA_NTASKS=$r launch "${SCALING_COMMAND[@]}" || rc=$?
      if [ "$rc" -ne 0 ]; then
        tessera_log "FAILED: $op on $r rank(s) exited $rc"
        failed=1
      fi
    done
  done
  tessera_log "summary: $TESSERA_OUT/$tag-summary.{md,csv,png}"
  "$TESSERA_PYTHON" "$TESSERA_ROOT/jobs/scaling_report.py" --mode "$mode" --manifest "$manifest" \
    --out "$TESSERA_OUT/$tag-summary" || exit 1
  [ "$failed" -eq 0 ] || exit 1
}
