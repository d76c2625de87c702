#!/usr/bin/env bash
# One call on the GPU machine checks everything and times everything:
#   1. the `gpu` tests (every test binary whose name contains _gpu),
#   2. compute-sanitizer memcheck on small cases of each,
#   3. the benchmark drivers side by side with cuSPARSE,
# writing every log under $OUT (default ./gpu-check-out) and a summary table last.
# Usage (on the GPU machine, from the repo root, with the build folder carried):
#   BUILD=build-gpu tools/gpu-check.sh [tests|sanitize|bench|all]
set -uo pipefail
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$PWD/gpu-check-out}
WHAT=${1:-all}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0   # NVLink multicast stays off on shared hosts
summary=()

note() { echo "== $*" | tee -a "$OUT/summary.log"; }

run_logged() {  # name, command...
  local name=$1; shift
  local start=$SECONDS
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-40s rc=%-3d %4ds' "$name" "$rc" $((SECONDS - start)))")
  note "$name rc=$rc ($((SECONDS - start)) s)"
  tail -n 3 "$OUT/$name.log"
  return $rc
}

nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

gpu_tests() { find "$BUILD/tests" -maxdepth 1 -type f -perm -u+x -name '*_gpu*' | sort; }

if [[ $WHAT == all || $WHAT == tests ]]; then
  for t in $(gpu_tests); do run_logged "test-$(basename "$t")" "$t" --gtest_color=no; done
fi

if [[ $WHAT == all || $WHAT == sanitize ]]; then
  for t in $(gpu_tests); do
    run_logged "memcheck-$(basename "$t")" compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$t" --gtest_filter='*Small*:*Odd*:*Empty*:*Tiny*' --gtest_color=no
  done
fi

if [[ $WHAT == all || $WHAT == bench ]]; then
  for spec in poisson3d:128 poisson3d27:96 elasticity3d:48 rmat:20:16 random:2000000:16; do
    for op in AA AAT; do
      run_logged "spgemm-${spec//:/_}-$op" "$BUILD/drivers/tessera-spgemm" --gen "$spec" --op "$op" \
        --backend gpu --compare cusparse --check --json "$OUT/spgemm-${spec//:/_}-$op.json"
    done
  done
fi

printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
