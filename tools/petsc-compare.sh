#!/usr/bin/env bash
# Runs one PETSc application with -pc_type gamg, hypre (BoomerAMG) and tessera side by side and
# prints iterations, PCSetUp and KSPSolve times (max over ranks, from -log_view).
#   tools/petsc-compare.sh [-n RANKS] [-b BUILD_DIR] -- APP [APP OPTIONS...]
# e.g. tools/petsc-compare.sh -n 4 -- build/tests/petsc_tutorial_ex45 -da_grid_x 65 -da_grid_y 65 -da_grid_z 65 -ksp_type cg
set -euo pipefail
ranks=1
build=build
while [ $# -gt 0 ]; do
  case "$1" in
    -n) ranks=$2; shift 2 ;;
    -b) build=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [-n RANKS] [-b BUILD_DIR] -- APP [OPTIONS...]" >&2; exit 2 ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: $0 [-n RANKS] [-b BUILD_DIR] -- APP [OPTIONS...]" >&2; exit 2; }
plugin=$(realpath "$build/amg/petsc/libtessera_petsc.so")
[ -f "$plugin" ] || { echo "petsc-compare: $plugin not built (cmake --build $build --target tessera_petsc)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# -log_view event line: name count ratio max-time ... -> the max time over ranks (4th field).
event_time() { awk -v e="$1" '$1 == e { print $4; exit }' "$2"; }

printf '%-8s %6s %12s %12s  %s\n' pc iters "PCSetUp(s)" "KSPSolve(s)" reason
for pc in gamg hypre tessera; do
  log=$(mktemp)
  mpiexec -n "$ranks" --oversubscribe "$@" -dll_append "$plugin" -pc_type "$pc" -ksp_rtol 1e-8 \
    -ksp_converged_reason -log_view >"$log" 2>&1 || true
  reason=$(grep -o 'Linear solve [a-z ]* due to [A-Z_]*' "$log" | tail -1 | awk '{print $NF}')
  iters=$(grep -o 'iterations [0-9]*' "$log" | tail -1 | awk '{print $2}')
  printf '%-8s %6s %12s %12s  %s\n' "$pc" "${iters:--}" "$(event_time PCSetUp "$log")" \
    "$(event_time KSPSolve "$log")" "${reason:-FAILED (see $log)}"
  [ -n "$reason" ] && rm -f "$log"
done
