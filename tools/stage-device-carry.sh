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
#   [TESTS="test_a test_b"] [DEST=.carry/NAME] tools/stage-device-carry.sh [BUILD]   (default build-gpu)
# DEST (default .carry) puts the three folders elsewhere under .carry, so that two people
# staging at once do not overwrite each other (carry just their DEST then).
set -euo pipefail
BUILD=${1:-build-gpu}
DEST=${DEST:-.carry}
STAGE=${STAGE_MPI:-../shared/device/stage-mpi.sh}
[ -x "$BUILD/drivers/tessera-amg" ] || { echo "stage-device-carry: build $BUILD first" >&2; exit 2; }
rm -rf "$DEST/build-gpu" "$DEST/rt"
mkdir -p "$DEST/build-gpu"/tests "$DEST/build-gpu"/drivers
for lib in local/libtessera_local.so dist/libtessera_dist.so amg/libtessera_amg.so amg/petsc/libtessera_petsc.so; do
  [ -f "$BUILD/$lib" ] || continue
  mkdir -p "$DEST/build-gpu/$(dirname "$lib")"
  cp -L "$BUILD/$lib"* "$DEST/build-gpu/$(dirname "$lib")/"
done
find "$BUILD/drivers" -maxdepth 1 -type f -name 'tessera-*' -perm -u+x -exec cp {} "$DEST/build-gpu"/drivers/ \;
# TESTS (a space-separated list of test executables) keeps the copy under the 64 MiB a call carries.
if [ -n "${TESTS:-}" ]; then
  for t in $TESTS; do cp "$BUILD/tests/$t" "$DEST/build-gpu"/tests/; done
else
  find "$BUILD/tests" -maxdepth 1 -type f -perm -u+x \( -name 'test_*' -o -name 'petsc_tutorial_*' -o -name 'time_*' \) \
    -exec cp {} "$DEST/build-gpu"/tests/ \;
fi
# The real matrices the tests read (3.7 MB): the GPU machine has no ../shared.
rm -rf "$DEST/matrices"
[ -d ../shared/matrices ] && cp -r ../shared/matrices "$DEST/matrices"
find "$DEST/build-gpu" -type f \( -name '*.so*' -o -perm -u+x \) -exec strip --strip-debug {} \;  # symbols kept
MPI=0 "$STAGE" "$DEST/rt" "$BUILD/drivers/tessera-amg" "$BUILD/tests/petsc_tutorial_ex45" >/dev/null
if [ -f "$DEST/rt"/lib-extra.tar.xz ]; then
  tar -C "$DEST/rt" -xJf "$DEST/rt"/lib-extra.tar.xz && rm "$DEST/rt"/lib-extra.tar.xz
fi
rm -f "$DEST/rt"/lib-extra/libtessera_*
tar -C "$DEST/rt" -cf - lib-extra | xz -6 -T0 >"$DEST/rt"/lib-extra.tar.xz && rm -rf "$DEST/rt"/lib-extra
du -sh "$DEST/build-gpu" "$DEST/rt"
