#!/usr/bin/env bash
# GPU check of the single-GPU AMG, in one device call: the gpu tests of amg/cuda (device setup
# phases vs the host, device hierarchy vs the host hierarchy, device cycle and PCG), the GPU
# kernel tests they build on, compute-sanitizer on the device setup and cycle tests, the phase
# timer, then tessera-amg on the issue-6 problems with the device setup (tile SpGEMM and
# cuSPARSE products) and once with the host setup for comparison. Logs go to $OUT (one tgz).
#   BUILD=.carry/build-gpu OUT=$OUT tools/gpu-amg-check.sh     (tools/stage-device-carry.sh first)
set -u
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$PWD/gpu-amg-out}
mkdir -p "$OUT/amg"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/amg/device.txt"

echo "===== tests"
for t in test_amg_setup_phases_gpu test_amg_device_setup_gpu test_amg_device_coarse_gpu test_device_product_gpu \
  test_amg_gpu test_spmv test_spmm test_spmv_smoother test_spgemm_gpu test_spgemm_convert_gpu; do
  [ -x "$BUILD/tests/$t" ] || { echo "MISSING $t"; continue; }
  timeout 300 "$BUILD/tests/$t" --gtest_color=no >"$OUT/amg/$t.log" 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/amg/$t.log" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which is|error:" "$OUT/amg/$t.log" | head -n 8
done

echo "===== memcheck"
memcheck() {  # memcheck TEST FILTER
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/$1" --gtest_color=no \
    --gtest_filter="$2" >"$OUT/amg/memcheck-$1.log" 2>&1
  echo "$1 ($2) rc=$? $(grep 'ERROR SUMMARY' "$OUT/amg/memcheck-$1.log" | tail -n 1)"
}
memcheck test_amg_setup_phases_gpu '*'
memcheck test_amg_device_setup_gpu 'Spgemm/AmgDeviceSetup.MatchesHostSetupLevelByLevel/tile:AmgDeviceSetupEdges.*'
memcheck test_amg_gpu 'AmgGpuCycle*:AmgGpuPcg.Zero*'
memcheck test_amg_device_coarse_gpu '*'
memcheck test_device_product_gpu '*'

echo "===== setup phases, device vs host"
[ -x "$BUILD/tests/time_amg_setup_phases" ] && timeout 120 "$BUILD/tests/time_amg_setup_phases" 2>&1 | tail -n 20

echo "===== tessera-amg"
run() {  # run SPEC SETUP SPGEMM SECONDS
  local name=${1//:/_}-$2-$3
  timeout "$4" "$BUILD/drivers/tessera-amg" --gen "$1" --backend gpu --setup "$2" --spgemm "$3" --tol 1e-8 --resetup \
    --json "$OUT/amg/$name.json" >"$OUT/amg/$name.log" 2>&1
  echo "== $1 --setup $2 --spgemm $3 rc=$?"
  grep -E "^(iterations|setup|re-setup|FOM|device|grid complexity|setup phases)" "$OUT/amg/$name.log"
}
run poisson3d:192 device tile 120
run poisson3d:192 device cusparse 120
run poisson3d27:128 device tile 90
run poisson3d27:128 device cusparse 90
run elasticity3d:48 device tile 90
run poisson3d:128 host tile 120
(cd "$OUT" && tar czf amg-check.tgz amg && rm -rf amg)
