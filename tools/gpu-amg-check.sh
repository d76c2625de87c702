#!/usr/bin/env bash
# GPU check of the single-GPU AMG backend, in one device call: the gpu tests of amg/cuda,
# compute-sanitizer on the cycle and PCG tests, then tessera-amg on the issue-6 problems with
# the tile SpGEMM and with cuSPARSE for the setup products. Logs go to $OUT (packed in one tgz).
#   BUILD=build-gpu OUT=... tools/gpu-amg-check.sh
set -u
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$PWD/gpu-amg-out}
mkdir -p "$OUT/amg"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/amg/device.txt"
"$BUILD/tests/test_amg_gpu" --gtest_color=no >"$OUT/amg/tests.log" 2>&1
echo "test_amg_gpu rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|Expected|Which is" "$OUT/amg/tests.log" | head -20
compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/test_amg_gpu" --gtest_color=no \
  --gtest_filter='AmgGpuCycle*:AmgGpuPcg.Zero*' >"$OUT/amg/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep "ERROR SUMMARY" "$OUT/amg/memcheck.log"
run() {  # run SPEC SPGEMM SECONDS
  local name=${1//:/_}-$2
  timeout "$3" "$BUILD/drivers/tessera-amg" --gen "$1" --backend gpu --spgemm "$2" --tol 1e-8 --resetup \
    --json "$OUT/amg/$name.json" >"$OUT/amg/$name.log" 2>&1
  echo "== $1 --spgemm $2 rc=$?"
  grep -E "^(iterations|setup|FOM|device|grid complexity|re-setup)" "$OUT/amg/$name.log"
}
run poisson3d:192 tile 150
run poisson3d:192 cusparse 150
run poisson3d27:128 tile 100
run poisson3d27:128 cusparse 100
run elasticity3d:48 tile 90
(cd "$OUT" && tar czf amg-check.tgz amg && rm -rf amg)
