#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera builds and tests against (idempotent; needs root or
# sudo). The CUDA toolkit is not a Debian package: when nvcc is on PATH the CUDA backend is
# built too, otherwise the host backend alone.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  openmpi-bin libopenmpi-dev            # MPI (required)
  zlib1g-dev                            # .mtx.gz reading
  libcli11-dev nlohmann-json3-dev       # driver options and JSON output
  googletest libgtest-dev libgmock-dev  # tests
  petsc-dev libhypre-dev                # optional: PETSc plugin, hypre/GAMG comparisons
  libpetsc3.18-dev-examples             # PETSc's KSP tutorial sources (tests/petsc builds them)
  python3 python3-matplotlib            # scaling plots
  slurm-wlm libpmix-dev                 # jobs/ tests: local Slurm; srun --mpi=pmix dlopens libpmix.so
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
