#!/usr/bin/env bash
# compute-sanitizer's initcheck, racecheck and synccheck over the gpu test programs and the AMG
# driver, several programs at a time, each under a time limit (the other scripts run memcheck).
# Logs go to $OUT/sanitize, one per run, and $OUT/sanitize/summary.txt says for each run how many
# reports fell in Tessera's kernels and how many in cuSPARSE's; the exit status is 1 if any fell in
# Tessera's (or a run failed or timed out), else 0.
#
# Why reports are split by library: cuSPARSE's SpGEMM reads bytes of its work buffers that it has
# not written (initcheck), and its SpGEMM and SpMV kernels write shared memory from several threads
# without a barrier between (racecheck). Neither is Tessera's to fix, and neither changes a result:
# with every work buffer filled with 0x00, 0x07 or 0xff first, the cuSPARSE tests pass alike and
# initcheck reports nothing (docs/performance.md, eighty-third session).
#
# racecheck runs 10-100x slower than the program: it takes the small cases only.
#   BUILD=build-gpu OUT=$OUT [LIMIT=150] [PARALLEL=8] [ONLY=regex] tools/gpu-sanitize.sh
set -u
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$PWD/gpu-sanitize-out}
LIMIT=${LIMIT:-150}
DIR=$OUT/sanitize
mkdir -p "$DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export TESSERA_DEVICE_TRANSPORT=staged  # ranks share the GPU here; NCCL would refuse them
export TESSERA_MATRIX_DIR=${TESSERA_MATRIX_DIR:-$PWD/.carry/matrices}

# tool ranks program [gtest filter or driver arguments...]
jobs() {
  local t
  for t in test_hash_spgemm_gpu test_spgemm_convert_gpu test_device_product_gpu test_spgemm_engine_choice_gpu \
    test_amg_dense_inverse_gpu test_amg_device_coarse_gpu test_amg_setup_phases_gpu \
    test_amg_gpu test_vector_ops_gpu test_spmv_smoother test_row_subset_product test_csr_arrays_upload_gpu \
    test_pinned_host_buffer_gpu test_spmm test_spmv; do
    echo "initcheck 1 tests/$t"
  done
  # Less the real matrices' runs, which take initcheck past the limit.
  echo "initcheck 1 tests/test_spgemm_gpu --gtest_filter=-TileSpgemmGpu.EveryRealMatrixOfTheManifest"
  local setup=Spgemm/AmgDeviceSetup.MatchesHostSetupLevelByLevel/tile:AmgDeviceSetupEdges.*
  echo "initcheck 1 tests/test_amg_device_setup_gpu --gtest_filter=$setup"
  for t in test_dist_device_tentative test_dist_amg_device test_dist_device_numeric test_dist_device_eigen_estimate \
    test_dist_device_operator_check; do
    echo "initcheck 2 tests/$t"
  done
  echo "initcheck 2 tests/test_dist_device_graph_phases --gtest_filter=-*SuiteSparse*"
  echo "initcheck 1 drivers/tessera-amg --backend gpu --gen elasticity3d:6 --solves 3 --resetup"
  echo "initcheck 2 drivers/tessera-amg --distributed --backend gpu --gen poisson3d:20 --setups 2 --solves 2"
  # The kernels with shared memory or warp-level exchanges, on their small cases.
  local small=(
    "test_spgemm_gpu TileSpgemmGpu.SmallFp64TensorCore"
    "test_spgemm_gpu TileSpgemmGpu.SmallFp64Fma"
    "test_spgemm_gpu TileSpgemmGpu.SmallFp32"
    "test_spgemm_gpu TileSpgemmGpu.SmallFp16*:TileSpgemmGpu.SmallSingleTilePairsAreExact"
    "test_spgemm_gpu TileSpgemmGpu.SkewedRowsUseEveryBinAndAList:TileSpgemmGpu.RectangularProducts"
    "test_spgemm_gpu TileSpgemmGpu.EmptyAndCulledProducts:TileSpgemmGpu.CancellationKeepsOrDropsZeros"
    "test_spgemm_gpu TileSpgemmGpu.SymbolicReuseWithNewValues"
    "test_hash_spgemm_gpu HashSpgemm.RandomRectangularFreshSeeds:HashSpgemm.EmptyAndDegenerateShapes"
    "test_hash_spgemm_gpu HashSpgemm.LongBRowsAmongShortOnesAreSummedInCsrOrderBitForBit"
    "test_hash_spgemm_gpu HashSpgemm.LongRowsUseTheGlobalTables"
    "test_hash_spgemm_gpu HashSpgemm.GlobalRowsInSeveralChunks"
    "test_hash_spgemm_gpu HashSpgemm.ValuesAreSummedInCsrOrderBitForBit"
    "test_hash_spgemm_gpu HashSpgemm.NumericRerunOnNewValues"
    "test_spmv *Stream*:GpuSpmv.Fp64NnzSplitIsBitwiseRepeatable"
    "test_spmv GpuSpmv.PlanPicksKernelFromRowStatistics:GpuSpmv.LargerShapesAdmitLongerRows"
    "test_spmm GpuSpmm.TilesAreFp64AndChosenForWellFilledTiles:GpuSpmm.Fp64NnzSplitIsBitwiseRepeatable"
    "test_spmm GpuSpmm.PlanServesNewValuesOfTheSamePattern:GpuSpmm.ColumnToRowMajorCopiesEveryEntry"
    "test_spmm GpuSpmm.NonFiniteXReachesOnlyTheRowsThatUseIt"
    "test_amg_dense_inverse_gpu DenseInverse.FromCholeskyMatchesTheHostSolvesOnTheIdentity"
    "test_amg_dense_inverse_gpu DenseInverse.ResidualRowSumsMatchTheHost"
    "test_amg_dense_inverse_gpu DenseInverse.DenseMultiplyMatchesTheHostAndRepeats"
    "test_spgemm_convert_gpu TileConvertGpu.*"
    "test_amg_device_coarse_gpu DeviceCoarseSolver.TinyRefactorStreamAndBadInput"
    "test_amg_setup_phases_gpu *"
    "test_vector_ops_gpu *")
  local entry
  for entry in "${small[@]}"; do
    for t in racecheck synccheck; do echo "$t 1 tests/${entry%% *} --gtest_filter=${entry#* }"; done
  done
}

# One run: its log, then one summary line. A report is Tessera's unless the first host frame
# below the driver's launch is in libcusparse.
one() {
  local tool=$1 ranks=$2
  shift 2
  local name log start=$SECONDS rc
  name=$(echo "$tool-np$ranks-$*" | tr -c 'A-Za-z0-9_.-' '_' | cut -c1-150)
  log=$DIR/$name.log
  # The sanitizer's reports go to a file per process (%p: its id), where ranks cannot interleave them.
  shopt -s nullglob
  rm -f "$log".sanitizer.*
  local cs=(compute-sanitizer --tool "$tool" --error-exitcode 9 --report-api-errors no --print-limit 1000
    --log-file "$log.sanitizer.%p")
  [ "$tool" = racecheck ] && cs+=(--racecheck-report all)
  if [ "$ranks" = 1 ]; then
    timeout "$LIMIT" "${cs[@]}" "$BUILD/$1" "${@:2}" >"$log" 2>&1
  else
    timeout "$LIMIT" mpirun -np "$ranks" "${cs[@]}" "$BUILD/$1" "${@:2}" >"$log" 2>&1
  fi
  rc=$?
  awk -v what="$tool np$ranks $* rc=$rc $((SECONDS - start))s" '
    function close_report() { if (open) { if (library) cusparse++; else own++ } open = 0 }
    FNR == 1 { close_report() }
    # A report opens with one of these words (initcheck, racecheck, synccheck, memcheck).
    /^========= (Uninitialized|Error:|Warning:|Barrier|Invalid|Program hit)/ {
      close_report(); open = 1; library = 0; first = 1; next
    }
    /^========= +Host Frame:/ && open && first && !/libcuda\.so/ { library = /libcusparse/; first = 0 }
    /(ERROR|RACECHECK) SUMMARY/ { close_report() }
    /^\[  (PASSED|FAILED)  \]/ { gtest = gtest " " $0 }
    END {
      close_report()
      printf "%s | reports: %d in Tessera'"'"'s kernels, %d in cuSPARSE'"'"'s |%s\n", what, own, cusparse, gtest
    }
  ' "$log" "$log".sanitizer.*
}
export -f one
export BUILD DIR LIMIT

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$DIR/device.txt"
jobs | grep -E -- "${ONLY:-.}" >"$DIR/jobs.txt"  # ONLY=regex: the runs whose line matches it
xargs -P "${PARALLEL:-8}" -L 1 bash -c 'one "$@"' _ <"$DIR/jobs.txt" | tee "$DIR/summary.txt"
# A run that failed for any reason (a test failure, a timeout, a report) shows a non-zero rc.
# cuSPARSE's reports make rc 9 too: such a run passes only if all its reports are cuSPARSE's.
bad=$(awk '!/rc=0 / && !(/rc=9 / && / 0 in Tessera/ && /[1-9][0-9]* in cuSPARSE/)' "$DIR/summary.txt" | wc -l)
own=$(grep -vc " 0 in Tessera" "$DIR/summary.txt")
echo "runs: $(wc -l <"$DIR/summary.txt"); failed, timed out or with reports in Tessera's kernels: $bad" \
  "(reports in Tessera's kernels in $own)"
[ "$bad" = 0 ]
