#!/usr/bin/env bash
# The distributed GPU check (issues 5, 6, 7, 8) on a machine with 2-4 GPUs. Parts (PARTS):
#   tests       the gpu-labelled MPI tests on 1 .. min(4, GPUs) ranks, one GPU per rank, and
#               the single-GPU AMG test (its cycle and PCG share code with the distributed ones);
#   memcheck    compute-sanitizer memcheck of the device SpMV, SpGEMM, numeric-refresh,
#               whole-matrix gather and solve tests on 2 ranks;
#   sweeps      weak scaling (SpMV, PtAP, AMG solve) and strong scaling (SpGEMM A*A) with the
#               jobs/ scripts launched through mpirun, backend gpu (SWEEPS picks which);
#   petsc       PETSc's ex45 with -pc_type tessera (GPU backend) beside gamg and hypre;
#   petsc-apps  PETSc's ex2, ex45, ex56 with the GPU PC on 1 .. min(2, GPUs) ranks, checked as
#               CI checks them (tests/petsc/check_petsc_run.py);
#   main        the README's main job on every GPU with --compare hypre,gamg (CPU baselines);
#   matrices    every matrix of the manifest on all the GPUs (tools/matrix-sweep.sh): through
#               tessera-amg (converged, stopped or refused with a reason, never a crash or a
#               hang), and the distributed A*A^T and SpMV checked against the serial reference.
# Default: "tests memcheck sweeps petsc main"; within the 10-minute limit of a device call, run
# PARTS="tests" (15 programs on 1-4 ranks), PARTS="memcheck sweeps", then PARTS="petsc main",
# then PARTS="matrices".
# Logs go to $OUT; the sweeps are packed in one tarball (the device tool returns few files).
#   tools/stage-device-carry.sh; . .carry/rt/env.sh; BUILD=.carry/build-gpu OUT=$OUT tools/gpu-dist-check.sh
set -u
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$PWD/gpu-dist-out}
PARTS=${PARTS:-tests memcheck sweeps petsc main}
SWEEPS=${SWEEPS:-weak-spmv weak-ptap weak-amg strong-spgemm}
# Every multi-rank gpu-labelled test program (tests/dist/tests.cmake, tests/amg/tests.cmake).
TESTS=${TESTS:-test_dist_nccl_transport test_dist_staged_transport test_dist_peer_halo test_dist_device_spmv
  test_dist_device_spgemm test_dist_device_numeric test_dist_device_whole_matrix test_dist_amg_device
  test_dist_device_eigen_estimate test_dist_device_graph_phases test_dist_device_operator_check
  test_dist_device_tentative test_dist_device_smoothing test_dist_device_resetup test_dist_device_solve}
WEAK_LOCAL_N=${WEAK_LOCAL_N:-128}       # poisson3d:128 per GPU: 2.1M rows, 14.6M nnz
AMG_LOCAL_N=${AMG_LOCAL_N:-192}         # poisson3d:192 per GPU (7.1M rows): the size issue 6's
                                        # one-GPU figures and the weak pairs of docs/performance.md use
STRONG_PROBLEM=${STRONG_PROBLEM:-poisson3d27:96}
mkdir -p "$OUT/sweeps"
export TESSERA_MATRIX_DIR=${TESSERA_MATRIX_DIR:-$PWD/.carry/matrices}  # the tests' real matrices
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # shared hosts
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi --list-gpus | wc -l)
max_ranks=$((gpus < 4 ? gpus : 4))
rank_counts=$(seq -s ' ' 1 "$max_ranks")
{
  nvidia-smi --query-gpu=index,name,memory.total --format=csv
  nvidia-smi topo -m 2>/dev/null | head -n $((gpus + 1))
} | tee "$OUT/device.txt"

part() { [[ " $PARTS " == *" $1 "* ]]; }

part tests && echo "===== tests on $rank_counts rank(s)"
part tests && for t in $TESTS; do
  if [ ! -x "$BUILD/tests/$t" ]; then echo "MISSING $t"; continue; fi
  for n in $rank_counts; do
    timeout 300 mpirun -np "$n" "$BUILD/tests/$t" --gtest_color=no >"$OUT/sweeps/$t.np$n.log" 2>&1
    rc=$?
    echo "$t np$n rc=$rc $(grep -cE '^\[       OK' "$OUT/sweeps/$t.np$n.log") ok, $(grep -cE '^\[  FAILED  \] [A-Z]' "$OUT/sweeps/$t.np$n.log") failed"
    [ "$rc" -ne 0 ] && grep -E "Failure|Expected|Which is|error|SKIPPED" "$OUT/sweeps/$t.np$n.log" | head -n 12
  done
done
# The distributed solve through the NCCL halo route too (the default within a node is peer).
part tests && [ -x "$BUILD/tests/test_dist_device_solve" ] && for n in 2 $max_ranks; do
  TESSERA_HALO_ROUTE=nccl timeout 300 mpirun -np "$n" -x TESSERA_HALO_ROUTE "$BUILD/tests/test_dist_device_solve" \
    --gtest_color=no >"$OUT/sweeps/test_dist_device_solve.nccl.np$n.log" 2>&1
  echo "test_dist_device_solve (nccl route) np$n rc=$?"
done
if part tests && [ -x "$BUILD/tests/test_amg_gpu" ]; then
  "$BUILD/tests/test_amg_gpu" --gtest_color=no >"$OUT/sweeps/test_amg_gpu.log" 2>&1
  echo "test_amg_gpu rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/sweeps/test_amg_gpu.log" | tr '\n' ' ')"
fi

part memcheck && echo "===== memcheck (2 ranks)"
part memcheck && for t in test_dist_peer_halo test_dist_device_spmv test_dist_device_spgemm test_dist_device_numeric \
  test_dist_device_whole_matrix test_dist_device_solve; do
  [ -x "$BUILD/tests/$t" ] || continue
  timeout 150 mpirun -np 2 compute-sanitizer --tool memcheck --error-exitcode 9 --report-api-errors no \
    "$BUILD/tests/$t" --gtest_color=no \
    >"$OUT/sweeps/memcheck-$t.log" 2>&1
  echo "$t memcheck rc=$? $(grep 'ERROR SUMMARY' "$OUT/sweeps/memcheck-$t.log" | sort | uniq -c | tr '\n' ' ')"
done

part sweeps && echo "===== scaling on $rank_counts GPU(s)"
sweep() {  # sweep NAME SCRIPT VAR=VALUE...   (only the NAMEs listed in SWEEPS)
  local name=$1 script=$2
  [[ " $SWEEPS " == *" $name "* ]] || return 0
  shift 2
  env "$@" TESSERA_BUILD="$BUILD" TESSERA_OUT="$OUT/sweeps/$name" TESSERA_BACKEND=gpu TESSERA_CHECK=0 \
    TESSERA_RANKS="$rank_counts" TESSERA_PYTHON=python3 SLURM_JOB_ID= \
    timeout "${SWEEP_SECONDS:-200}" bash "jobs/$script" >"$OUT/sweeps/$name.log" 2>&1
  echo "== $name rc=$?"
  cat "$OUT/sweeps/$name/"*summary.md 2>/dev/null || tail -n 15 "$OUT/sweeps/$name.log"
}
part sweeps && sweep weak-spmv weak-scaling.sbatch TESSERA_OPERATION=spmv TESSERA_LOCAL_N="$WEAK_LOCAL_N"
part sweeps && sweep weak-ptap weak-scaling.sbatch TESSERA_OPERATION=ptap TESSERA_LOCAL_N="$AMG_LOCAL_N"
part sweeps && sweep weak-amg weak-scaling.sbatch TESSERA_OPERATION=amg TESSERA_LOCAL_N="$AMG_LOCAL_N"
part sweeps && sweep strong-spgemm strong-scaling.sbatch TESSERA_OPERATION=spgemm TESSERA_PROBLEM="$STRONG_PROBLEM"

if part petsc && [ -x "$BUILD/tests/petsc_tutorial_ex45" ]; then
  echo "===== PETSc ex45 (3D Laplacian, DMDA) with gamg, hypre, tessera on $max_ranks rank(s)"
  (
    tools/petsc-compare.sh -n "$max_ranks" -b "$BUILD" -- "$BUILD/tests/petsc_tutorial_ex45" -da_grid_x 129 \
      -da_grid_y 129 -da_grid_z 129 -ksp_type cg -pc_tessera_backend gpu
  ) 2>&1 | tee "$OUT/petsc-compare.txt"
fi

if part petsc-apps; then
  echo "===== PETSc tutorials, PC tessera on the GPUs"
  plugin=$BUILD/amg/petsc/libtessera_petsc.so
  for ex in ex2 ex45 ex56; do
    case $ex in
      ex2) args=(-m 41 -n 37) ;;
      ex45) args=(-da_grid_x 17 -da_grid_y 15 -da_grid_z 13 -ksp_type cg) ;;
      ex56) args=(-ne 9 -use_mat_nearnullspace -two_solves -ksp_type cg) ;;
    esac
    for n in $(seq 1 $((max_ranks < 2 ? max_ranks : 2))); do
      [ -x "$BUILD/tests/petsc_tutorial_$ex" ] || { echo "MISSING petsc_tutorial_$ex"; continue; }
      timeout 120 python3 tests/petsc/check_petsc_run.py --np "$n" --mpiexec mpirun \
        --require "Tessera smoothed-aggregation AMG" --require "backend gpu" -- "$BUILD/tests/petsc_tutorial_$ex" \
        -dll_append "$plugin" -ksp_converged_reason -ksp_monitor_true_residual -ksp_rtol 1e-8 -ksp_view \
        -pc_type tessera -pc_tessera_coarse_size 200 -pc_tessera_backend gpu "${args[@]}" \
        >"$OUT/sweeps/petsc-$ex-np$n.log" 2>&1
      echo "petsc $ex np$n rc=$? $(tail -n 1 "$OUT/sweeps/petsc-$ex-np$n.log")"
    done
  done
  # PCTESSERA's re-setups and refusals on the GPUs: 1 rank builds the one-GPU hierarchy, 2 ranks
  # (and -pc_tessera_hierarchy distributed) the distributed one (tests/petsc/tests.cmake, GPU cases).
  bad_use=(-n 203 -pc_tessera_coarse_size 20 -ksp_view -error_output_stdout -pc_tessera_backend gpu)
  for run in "1 resetups" "1 nonfinite" "1 resetups -pc_tessera_hierarchy distributed" "2 resetups" "2 nonfinite"; do
    set -- $run
    n=$1 c=$2
    shift 2
    [ -x "$BUILD/tests/petsc_bad_use" ] && [ "$n" -le "$max_ranks" ] || continue
    log="$OUT/sweeps/petsc-bad-use-$c-np$n${1:+-distributed}.log"
    timeout 60 mpirun -np "$n" "$BUILD/tests/petsc_bad_use" -case "$c" "${bad_use[@]}" "$@" >"$log" 2>&1
    echo "petsc bad_use $c np$n $* rc=$? $(grep -E 'AMG: |PETSC ERROR: Tessera' "$log" | tail -n 1)"
  done
fi

if part main; then
  echo "===== README main job on $max_ranks GPU(s), ${MAIN_PROBLEM:=poisson3d:128}, with the CPU baselines"
  timeout 240 mpirun -np "$max_ranks" "$BUILD/drivers/tessera-amg" --gen "$MAIN_PROBLEM" --compare hypre,gamg \
    --json "$OUT/sweeps/main-job.json" 2>&1 | tee "$OUT/sweeps/main-job.log" | grep -vE "^\s*$" | tail -n 30
fi

if part matrices; then
  echo "===== every matrix of the manifest on $max_ranks GPU(s)"
  RANKS=$max_ranks BUILD=$BUILD JOBS=2 LIMIT=90 tools/matrix-sweep.sh "$OUT/sweeps/matrices" --backend gpu --distributed
  echo "matrix sweep (tessera-amg) rc=$?"
  for driver in "tessera-spgemm --op AAT" tessera-spmv; do
    set -- $driver
    RANKS=$max_ranks BUILD=$BUILD DRIVER=$1 OK_CODES="0 2" JOBS=2 LIMIT=90 \
      tools/matrix-sweep.sh "$OUT/sweeps/matrices-$1" "${@:2}" --check --backend gpu --distributed
    echo "matrix sweep ($driver --check) rc=$?"
  done
fi

(cd "$OUT" && tar czf "sweeps-${PARTS// /-}.tgz" sweeps && rm -rf sweeps)
