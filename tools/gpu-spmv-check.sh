#!/usr/bin/env bash
# GPU check and benchmark of SpMV/SpMM (issue 4), for the lent H100: run from the repository
# root with a build folder made on another machine (relocatable, $ORIGIN run paths).
#   tools/gpu-spmv-check.sh [tests] [spmv] [spmm]   (default all three; BUILD=build-spmv,
#                                                    OUT=where logs go, SPMM_SET=matrices)
# tests: the gpu tests, then compute-sanitizer memcheck on the small cases.
# spmv : tessera-spmv --compare cusparse --check on the matrix set, fp64 (+ one fp32).
# spmm : tessera-spmm for k in {8, 32, 64}, both layouts, against cuSPARSE's best algorithm.
set -u
BUILD=${BUILD:-build-spmv}
OUT=${OUT:-gpu-spmv-out}
sections=${*:-tests spmv spmm}
SPMM_SET=${SPMM_SET:-rmat:20:16 elasticity3d:40 poisson3d:128}
SWEEP=${SWEEP---sweep}   # SWEEP= skips timing every kernel variant
want() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
export TESSERA_MATRIX_DIR=${TESSERA_MATRIX_DIR:-$PWD/.carry/matrices}
T=$BUILD/tests
D=$BUILD/drivers
status=0
note() { echo "== $*" | tee -a "$OUT/summary.log"; }
run() {  # run LOG CMD...: appends output to LOG, records the exit code
  local log=$1; shift
  echo "\$ $*" >>"$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  note "rc=$rc: $*"
  [ $rc -ne 0 ] && status=1
  return 0
}

nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee -a "$OUT/summary.log"

note "tests start $(date +%T)"
if want tests; then
  for t in test_spmv test_spmv_smoother test_spmm; do run "$OUT/tests.log" "$T/$t"; done
  CS="compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20"
  run "$OUT/sanitizer.log" $CS "$T/test_spmv" --gtest_filter='GpuSpmv.Fp64*:GpuSpmv.Plan*'
  run "$OUT/sanitizer.log" $CS "$T/test_spmv_smoother"
  run "$OUT/sanitizer.log" $CS "$D/tessera-spmv" --gen rmat:12:8 --compare cusparse --check --reps 2 --warmup 1
  for layout in row col; do
    for k in 1 13 128; do
      run "$OUT/sanitizer.log" $CS "$D/tessera-spmm" --gen rmat:11:8 --k $k --layout $layout --check $SWEEP --reps 1 --warmup 0
      run "$OUT/sanitizer.log" $CS "$D/tessera-spmm" --gen elasticity3d:6 --k $k --layout $layout --check $SWEEP --reps 1 --warmup 0
    done
  done
fi

note "spmv start $(date +%T)"
if want spmv; then
  for m in poisson3d:256 poisson3d27:160 elasticity3d:80 rmat:22:16; do
    run "$OUT/spmv.log" "$D/tessera-spmv" --gen $m --compare cusparse --check $SWEEP --reps 30 --json /tmp/spmv.json
    cat /tmp/spmv.json >>"$OUT/bench.json"
  done
  run "$OUT/spmv.log" "$D/tessera-spmv" --gen poisson3d:256 --precision fp32 --compare cusparse --check $SWEEP --reps 30 \
    --json /tmp/spmv.json
  cat /tmp/spmv.json >>"$OUT/bench.json"
fi

note "spmm start $(date +%T)"
if want spmm; then
  for m in $SPMM_SET; do
    for layout in row col; do
      for k in 8 32 64; do
        check=
        [ $k = 8 ] && check=--check  # larger k: the tests' k = 32, 33, 64 cases; saves host time here
        run "$OUT/spmm.log" "$D/tessera-spmm" --gen $m --k $k --layout $layout --compare cusparse $check $SWEEP --reps 10 \
          --json /tmp/spmm.json
        cat /tmp/spmm.json >>"$OUT/bench.json"
      done
    done
  done
fi
note "end $(date +%T)"
# The table lines of every benchmark, for the reply's tail.
grep -hE "^(tessera-sp|tessera |cusparse-|rows |check: .*FAIL)" "$OUT"/spmv.log "$OUT"/spmm.log 2>/dev/null | cut -c1-110
exit $status
