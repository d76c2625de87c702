#!/usr/bin/env bash
# GPU check of the tile SpGEMM, in one device call: the GPU tests, compute-sanitizer memcheck
# on a small set, and timings against cuSPARSE (ALG1/2/3) on the issue-3 matrix set.
#   tools/gpu-spgemm-check.sh [build-dir] [out-dir] [tests|bench|all]
# Needs the test binaries and a tessera-spgemm with the GPU benchmark in build-dir/.
# BUDGET (seconds, default 450): steps that would start after it are skipped, so the whole
# script fits one device call.
set -u
BUILD=${1:-build-spgemm}
OUTDIR=${2:-${OUT:-/tmp/gpu-spgemm-check}}
MODE=${3:-all}
BUDGET=${BUDGET:-450}
mkdir -p "$OUTDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
DRIVER=$BUILD/drivers/tessera-spgemm
[ -x "$BUILD/drivers/tessera-spgemm-gpu" ] && DRIVER=$BUILD/drivers/tessera-spgemm-gpu
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUTDIR/gpu.txt"

step() {  # step NAME SECONDS COMMAND...: runs, logs to $OUTDIR/NAME.log, prints a summary line
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - SECONDS))
  if [ "$left" -lt 20 ]; then echo "== $name skipped (budget)"; return; fi
  [ "$limit" -gt "$left" ] && limit=$left
  local start=$SECONDS
  timeout "$limit" "$@" >"$OUTDIR/$name.log" 2>&1
  local rc=$?
  printf '== %-28s rc=%-3s %4ss\n' "$name" "$rc" "$((SECONDS - start))"
  grep -E "FAILED|Failure|ERROR SUMMARY|Expected|Which is|error" "$OUTDIR/$name.log" | head -12
}

if [ "$MODE" != bench ]; then
step test_convert 120 "$BUILD/tests/test_spgemm_convert_gpu"
step test_spgemm 180 "$BUILD/tests/test_spgemm_gpu"
grep -E "^\[  (PASSED|FAILED) |^\[==========\]" "$OUTDIR/test_spgemm.log" "$OUTDIR/test_convert.log"
step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/test_spgemm_gpu" \
  --gtest_filter='*SingleTilePairs*:*Cancellation*:*EmptyAndCulled*:*SkewedRows*:*SymbolicReuse*'
fi
[ "$MODE" = tests ] && exit 0

bench() {  # bench NAME SECONDS driver-args...
  local name=$1 limit=$2; shift 2
  step "$name" "$limit" "$DRIVER" --backend gpu --reps 5 --warmup 1 --json "$OUTDIR/$name.json" "$@"
  sed -n '/^GPU SpGEMM/,$p' "$OUTDIR/$name.log"
}
TESSERA_SPGEMM_TRACE=1 step trace_poisson3d128 60 "$DRIVER" --backend gpu --reps 1 --warmup 1 --gen poisson3d:128 --op AA
grep -E "^  symbolic" "$OUTDIR/trace_poisson3d128.log" | tail -12
bench poisson3d128_fp64 150 --gen poisson3d:128 --op AA --compare cusparse --check
bench poisson3d128_fma 60 --gen poisson3d:128 --op AA --path fma
bench poisson3d128_fp16 60 --gen poisson3d:128 --op AA --precision fp16
TESSERA_SPGEMM_TRACE=1 step trace_poisson3d27 60 "$DRIVER" --backend gpu --reps 1 --warmup 1 --gen poisson3d27:96 --op AA
grep -E "^  symbolic" "$OUTDIR/trace_poisson3d27.log" | tail -11
bench poisson3d27_96_fp64 200 --gen poisson3d27:96 --op AA --compare cusparse --check
bench elasticity3d48_fp64 200 --gen elasticity3d:48 --op AA --compare cusparse
bench random1M_fp64 100 --gen random:1000000:10 --op AA --compare cusparse
TESSERA_SPGEMM_TRACE=1 bench rmat18_fp64 120 --gen rmat:18:8 --op AA --compare cusparse
TESSERA_SPGEMM_TRACE=1 bench rmat20_fp64 200 --gen rmat:20:16 --op AA --compare cusparse
grep -E "^  symbolic" "$OUTDIR/rmat20_fp64.log" | head -20

# The device call returns at most 8 files: pack the logs and JSON.
(cd "$OUTDIR" && tar czf gpu-spgemm-check.tgz --exclude=gpu-spgemm-check.tgz *.log *.json *.txt 2>/dev/null && \
  find . -maxdepth 1 -type f ! -name gpu-spgemm-check.tgz ! -name summary.txt -delete)
