#!/usr/bin/env bash
# One call on the GPU machine checks everything and times everything, writing logs under $OUT:
#   - the SpGEMM part (tools/gpu-spgemm-check.sh: tile SpGEMM tests, memcheck, timings vs cuSPARSE),
#   - the SpMV/SpMM part (tools/gpu-spmv-check.sh: tests, memcheck, timings vs cuSPARSE),
#   - the device transport tests of dist/: NCCL on 1 rank and on one rank per GPU, the
#     host-staged transport on 1 and 4 ranks (4 ranks share the GPUs of a smaller machine).
# With two or more GPUs the SpGEMM and SpMV parts run at the same time, one per GPU.
# Usage, from the repository root on the GPU machine with the build folder carried:
#   BUILD=build-gpu OUT=$OUT tools/gpu-check.sh
set -u
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT/spgemm" "$OUT/spmv"
export NCCL_NVLS_ENABLE=0   # NVLink multicast stays off on shared hosts
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
gpus=$(nvidia-smi --list-gpus | wc -l)
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv | tee "$OUT/device.txt"
git -C "$PWD" rev-parse HEAD >>"$OUT/device.txt" 2>/dev/null

second_gpu=0
[ "$gpus" -ge 2 ] && second_gpu=1
CUDA_VISIBLE_DEVICES=0 BUDGET=${SPGEMM_BUDGET:-420} tools/gpu-spgemm-check.sh "$BUILD" "$OUT/spgemm" all \
  >"$OUT/spgemm-summary.txt" 2>&1 &
spgemm=$!
[ "$second_gpu" = 0 ] && wait $spgemm
CUDA_VISIBLE_DEVICES=$second_gpu SWEEP=${SWEEP-} BUILD=$BUILD OUT=$OUT/spmv tools/gpu-spmv-check.sh tests spmv spmm \
  >"$OUT/spmv-summary.txt" 2>&1
wait $spgemm

for n in 1 "$gpus"; do
  echo "== NCCL transport, $n rank(s)" | tee -a "$OUT/nccl.txt"
  mpirun -np "$n" "$BUILD/tests/test_dist_nccl_transport" >>"$OUT/nccl.txt" 2>&1
  echo "rc=$?" | tee -a "$OUT/nccl.txt"
done
for n in 1 4; do
  echo "== staged transport, $n rank(s)" | tee -a "$OUT/nccl.txt"
  mpirun -np "$n" "$BUILD/tests/test_dist_staged_transport" >>"$OUT/nccl.txt" 2>&1
  echo "rc=$?" | tee -a "$OUT/nccl.txt"
done

(cd "$OUT" && tar czf spmv-logs.tgz spmv && rm -rf spmv)
echo "===== SpGEMM";  cat "$OUT/spgemm-summary.txt"
echo "===== SpMV/SpMM"; tail -n 60 "$OUT/spmv-summary.txt"
echo "===== transports"; grep -E "PASSED|FAILED|rc=|SKIPPED" "$OUT/nccl.txt"
