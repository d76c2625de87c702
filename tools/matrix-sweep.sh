#!/usr/bin/env bash
# Every matrix of the manifest through a driver: the robustness sweep of rule 4 (bad input gets a
# clear error and a non-zero exit, never a crash or a hang). With tessera-amg (the default) each
# run ends converged (exit 0), not converged with the solver's reason (exit 1), or refused with the
# setup's reason (exit 2). With a --check driver (tessera-spgemm, -spmv, -spmm) a run passes its
# check against the serial reference (exit 0) or refuses its input (exit 2), and exit 1 (FAIL) is a
# defect: OK_CODES="0 2". Any other exit (a signal, the time limit) is a defect too; defects are
# listed at the end, and the script exits 1.
#   [BUILD=build] [DRIVER=tessera-amg] [OK_CODES="0 1 2"] [RANKS=1] [JOBS=2] [LIMIT=120] \
#     tools/matrix-sweep.sh OUT [driver options...]
# e.g. tools/matrix-sweep.sh sweep-host --backend host --distributed
#      RANKS=3 tools/matrix-sweep.sh sweep-np3 --backend host --distributed
#      BUILD=.carry/build-gpu JOBS=4 tools/matrix-sweep.sh $OUT/sweep --backend gpu
#      DRIVER=tessera-spgemm OK_CODES="0 2" RANKS=2 tools/matrix-sweep.sh OUT --op AAT --check --distributed
# RANKS > 1 runs each matrix under mpirun with that many ranks. OUT gets one log a matrix and
# summary.txt (a line a matrix: name, exit code, the driver's verdict). The matrices are
# TESSERA_MATRIX_DIR's, else ../shared/matrices. docs/performance.md (fifty-eighth session) has
# sweeps of all 151 on the host and on the H100.
set -u
[ $# -ge 1 ] || { sed -n '2,19p' "$0" >&2; exit 2; }
OUT=$1
shift
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
LIMIT=${LIMIT:-120}
RANKS=${RANKS:-1}
OK_CODES=${OK_CODES:-0 1 2}
DIR=${TESSERA_MATRIX_DIR:-$(dirname "$0")/../../shared/matrices}
DRIVER=$BUILD/drivers/${DRIVER:-tessera-amg}
[ -x "$DRIVER" ] || { echo "matrix-sweep: no $DRIVER (BUILD=...)" >&2; exit 2; }
[ -f "$DIR/MANIFEST.tsv" ] || { echo "matrix-sweep: no $DIR/MANIFEST.tsv (TESSERA_MATRIX_DIR=...)" >&2; exit 2; }
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

one() {  # one NAME: runs the driver on NAME, prints its summary line
  local name=$1 log=$OUT/$1.log rc
  if [ "$RANKS" = 1 ]; then
    timeout "$LIMIT" "$DRIVER" --A "$DIR/$name.mtx.gz" "${ARGS[@]}" >"$log" 2>&1
  else
    timeout "$LIMIT" mpirun --oversubscribe -np "$RANKS" "$DRIVER" --A "$DIR/$name.mtx.gz" "${ARGS[@]}" >"$log" 2>&1
  fi
  rc=$?
  echo "$name rc=$rc $(grep -E '^(NOT )?converged|^check|error:' "$log" | head -n 1 | cut -c1-160)"
}
export -f one
export OUT DRIVER DIR LIMIT RANKS
# Bash cannot export an array: the children get the options as one quoted string.
export SWEEP_ARGS="$(printf '%q ' "$@")"
awk -F'\t' 'NR > 1 {print $1}' "$DIR/MANIFEST.tsv" |
  xargs -P "$JOBS" -I{} bash -c 'eval "ARGS=($SWEEP_ARGS)"; one "$1"' _ {} | sort >"$OUT/summary.txt"

echo "$(wc -l <"$OUT/summary.txt") matrices: exit 0 (converged, or passed its check)" \
  "$(grep -c ' rc=0 ' "$OUT/summary.txt"), exit 1 (not converged, or FAILED its check)" \
  "$(grep -c ' rc=1 ' "$OUT/summary.txt"), exit 2 (input refused) $(grep -c ' rc=2 ' "$OUT/summary.txt")"
defects=$(grep -v -E " rc=(${OK_CODES// /|}) " "$OUT/summary.txt")
[ -z "$defects" ] && exit 0
echo "defects (exit 124: the $LIMIT s limit):"
echo "$defects"
exit 1
