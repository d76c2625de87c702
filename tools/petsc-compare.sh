#!/usr/bin/env bash
# Runs one PETSc application with -pc_type gamg, hypre (BoomerAMG) and tessera side by side and
# prints iterations, PCSetUp and KSPSolve times (max over ranks, from -log_view; PCSetUp counts
# every setup, numeric re-setups and a PC's inner PCs (GAMG's levels) included: the setups column).
# On one rank it adds tessera-distributed (-pc_tessera_hierarchy distributed): with the gpu
# backend, PCTESSERA's one-GPU hierarchy against its distributed one.
# PETSC_COMPARE_LOGS=DIR keeps each run's -log_view output there (DIR/PC.log).
# Every run is started with mpiexec --bind-to none: Open MPI's default binds up to 2 ranks to one
# core each, which left PCTESSERA's threaded host loops (reading A, the distributed setup) one
# thread; the CPU baselines run one thread a rank either way.
#   [PETSC_COMPARE_PCS="..."] [PETSC_COMPARE_LOGS=DIR] tools/petsc-compare.sh [-n RANKS] [-b BUILD_DIR] -- APP [APP OPTIONS...]
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

# -log_view event line: name count ratio max-time ... -> the count, the max time over ranks,
# each summed over the log stages an application defines (ex56 puts its solves in stages).
event_count() { awk -v e="$1" '$1 == e { n += $2; found = 1 } END { if (found) print n }' "$2"; }
event_time() { awk -v e="$1" '$1 == e { t += $4; found = 1 } END { if (found) printf "%.4e\n", t }' "$2"; }

pcs="gamg hypre tessera"
[ "$ranks" = 1 ] && pcs="$pcs tessera-distributed"
pcs=${PETSC_COMPARE_PCS:-$pcs}  # e.g. "tessera tessera-distributed" where the CPU baselines take too long
printf '%-20s %6s %8s %12s %12s  %s\n' pc iters setups "PCSetUp(s)" "KSPSolve(s)" reason
for pc in $pcs; do
  case $pc in
    tessera-distributed) pc_args=(-pc_type tessera -pc_tessera_hierarchy distributed) ;;
    *) pc_args=(-pc_type "$pc") ;;
  esac
  log=$(mktemp)
  mpiexec -n "$ranks" --oversubscribe --bind-to none "$@" -dll_append "$plugin" "${pc_args[@]}" -ksp_rtol 1e-8 \
    -ksp_converged_reason -log_view >"$log" 2>&1 || true
  reason=$(grep -o 'Linear solve [a-z ]* due to [A-Z_]*' "$log" | tail -1 | awk '{print $NF}')
  iters=$(grep -o 'iterations [0-9]*' "$log" | tail -1 | awk '{print $2}')
  printf '%-20s %6s %8s %12s %12s  %s\n' "$pc" "${iters:--}" "$(event_count PCSetUp "$log")" \
    "$(event_time PCSetUp "$log")" "$(event_time KSPSolve "$log")" "${reason:-FAILED (see $log)}"
  if [[ $pc == tessera* ]]; then  # PCTESSERA's own events: where its PCSetUp goes, and its applies
    printf '%-20s   of which: read A %s s, hierarchy %s s, upload %s s; PCApply %s s (%s)\n' "" \
      "$(event_time TesseraPCReadA "$log")" "$(event_time TesseraPCLevels "$log")" \
      "$(event_time TesseraPCUpload "$log")" "$(event_time PCApply "$log")" "$(event_count PCApply "$log")"
  fi
  [ -n "${PETSC_COMPARE_LOGS:-}" ] && mkdir -p "$PETSC_COMPARE_LOGS" && cp "$log" "$PETSC_COMPARE_LOGS/$pc.log"
  [ -n "$reason" ] && rm -f "$log"
done
