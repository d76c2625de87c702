#!/usr/bin/env bash
# GPU check of the single-GPU AMG, in one device call: the gpu tests of amg/cuda (device setup
# phases vs the host, device hierarchy vs the host hierarchy, device cycle and PCG), the GPU
# kernel tests they build on, compute-sanitizer on the device setup and cycle tests, the phase
# timer, then tessera-amg on the issue-6 problems with the device setup (tile SpGEMM and
# cuSPARSE products, and the automatic choice, one engine per level), first run and repeated run
# (--resetup).
# Logs go to $OUT (one tgz).
#   BUILD=.carry/build-gpu OUT=$OUT tools/gpu-amg-check.sh     (tools/stage-device-carry.sh first)
set -u
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$PWD/gpu-amg-out}
mkdir -p "$OUT/amg"
export TESSERA_MATRIX_DIR=${TESSERA_MATRIX_DIR:-$PWD/.carry/matrices}  # the tests' real matrices
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/amg/device.txt"

echo "===== tests"
for t in test_amg_setup_phases_gpu test_amg_device_setup_gpu test_amg_device_coarse_gpu test_device_product_gpu \
  test_amg_gpu test_spmv test_spmm test_spmv_smoother test_spgemm_gpu test_spgemm_convert_gpu \
  test_spgemm_engine_choice_gpu test_device_buffer_gpu; do
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
memcheck test_spgemm_engine_choice_gpu '*'
memcheck test_spmv '*Stream*'

echo "===== setup phases, device vs host"
[ -x "$BUILD/tests/time_amg_setup_phases" ] && timeout 120 "$BUILD/tests/time_amg_setup_phases" 2>&1 | tail -n 20

echo "===== tessera-amg"
run() {  # run SPEC SPGEMM SECONDS [extra options]: device setup; --resetup keeps plans for the repeated run
  local spec=$1 spgemm=$2 limit=$3; shift 3
  local tag=${*//--/}
  tag=${tag// /-}  # "--null-space constant" -> null-space-constant
  local name=${spec//:/_}-$spgemm${tag:+-$tag}
  timeout "$limit" "$BUILD/drivers/tessera-amg" --gen "$spec" --backend gpu --setup device --spgemm "$spgemm" \
    --tol 1e-8 "$@" --json "$OUT/amg/$name.json" >"$OUT/amg/$name.log" 2>&1
  echo "== $spec --spgemm $spgemm $* rc=$?"
  grep -E "^(iterations|setup|re-setup|solve|FOM|device|grid complexity|setup phases|level [0-9]+ products)" \
    "$OUT/amg/$name.log"
}
# First run (no plans kept: the issue's first-run figure) and repeated run (--resetup) for each
# engine choice; auto is the default.
for spgemm in auto tile cusparse; do
  run poisson3d:192 $spgemm 120
  run poisson3d:192 $spgemm 120 --resetup
done
for spgemm in auto tile cusparse; do run poisson3d27:128 $spgemm 90; done
run poisson3d27:128 auto 90 --resetup
run elasticity3d:48 auto 90
run elasticity2d:1024 auto 90                           # 3 rigid-body modes, 2 dofs a node
run elasticity2d:1024 auto 90 --null-space constant     # the 2 constants: twice the iterations
(cd "$OUT" && tar czf amg-check.tgz amg && rm -rf amg)
