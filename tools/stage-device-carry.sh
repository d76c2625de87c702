#!/usr/bin/env bash
# Prepares what a run on the lent GPU machine needs (the device tool carries .carry/, which
# .git/info/exclude ignores; the machine has CUDA, NCCL and OpenMPI but no PETSc, HYPRE,
# GoogleTest or CLI11, so everything is built here):
#   .carry/build-gpu  the drivers, tests and libraries of BUILD, in the build tree's layout
#                     (their RPATHs are $ORIGIN-relative, so they find each other there);
#   .carry/matrices   the real SuiteSparse matrices of the tests (point TESSERA_MATRIX_DIR there);
#   .carry/rt         the PETSc/HYPRE runtime for those programs (the shared machine script
#                     ../shared/device/stage-mpi.sh), minus Tessera's own libraries, which
#                     would otherwise shadow the fresh ones on LD_LIBRARY_PATH.
# Then, in the device call: carry [".carry"], command `. .carry/rt/env.sh && BUILD=.carry/build-gpu ...`.
#   [TESTS="test_a test_b"] tools/stage-device-carry.sh [BUILD]      (default build-gpu)
set -euo pipefail
BUILD=${1:-build-gpu}
STAGE=${STAGE_MPI:-../shared/device/stage-mpi.sh}
[ -x "$BUILD/drivers/tessera-amg" ] || { echo "stage-device-carry: build $BUILD first" >&2; exit 2; }
rm -rf .carry/build-gpu .carry/rt
mkdir -p .carry/build-gpu/tests .carry/build-gpu/drivers
for lib in local/libtessera_local.so dist/libtessera_dist.so amg/libtessera_amg.so amg/petsc/libtessera_petsc.so; do
  [ -f "$BUILD/$lib" ] || continue
  mkdir -p ".carry/build-gpu/$(dirname "$lib")"
  cp -L "$BUILD/$lib"* ".carry/build-gpu/$(dirname "$lib")/"
done
find "$BUILD/drivers" -maxdepth 1 -type f -name 'tessera-*' -perm -u+x -exec cp {} .carry/build-gpu/drivers/ \;
# TESTS (a space-separated list of test executables) keeps the copy under the 64 MiB a call carries.
if [ -n "${TESTS:-}" ]; then
  for t in $TESTS; do cp "$BUILD/tests/$t" .carry/build-gpu/tests/; done
else
  find "$BUILD/tests" -maxdepth 1 -type f -perm -u+x \( -name 'test_*' -o -name 'petsc_tutorial_*' -o -name 'time_*' \) \
    -exec cp {} .carry/build-gpu/tests/ \;
fi
# The real matrices the tests read (3.7 MB): the GPU machine has no ../shared.
rm -rf .carry/matrices
[ -d ../shared/matrices ] && cp -r ../shared/matrices .carry/matrices
find .carry/build-gpu -type f \( -name '*.so*' -o -perm -u+x \) -exec strip --strip-debug {} \;  # symbols kept
MPI=0 "$STAGE" .carry/rt "$BUILD/drivers/tessera-amg" "$BUILD/tests/petsc_tutorial_ex45" >/dev/null
if [ -f .carry/rt/lib-extra.tar.xz ]; then
  tar -C .carry/rt -xJf .carry/rt/lib-extra.tar.xz && rm .carry/rt/lib-extra.tar.xz
fi
rm -f .carry/rt/lib-extra/libtessera_*
tar -C .carry/rt -cf - lib-extra | xz -6 -T0 >.carry/rt/lib-extra.tar.xz && rm -rf .carry/rt/lib-extra
du -sh .carry/build-gpu .carry/rt
