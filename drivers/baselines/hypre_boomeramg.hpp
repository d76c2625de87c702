#pragma once
// Baseline: hypre's BoomerAMG as the preconditioner of hypre's PCG (or FlexGMRES for a
// non-symmetric A, BaselineOptions::gmres), in the configuration hypre
// recommends for GPUs (PMIS coarsening, extended+i interpolation truncated to 4 entries per row,
// l1-Jacobi smoothing in natural order, kept transposes), so that a CPU run here and a GPU
// build of hypre elsewhere run the same algorithm. Each call is explained in the .cpp.
#include <mpi.h>

#include <vector>

#include "drivers/baselines/baseline.hpp"

namespace tessera::baselines {

/// True when this build links hypre (TESSERA_HAVE_HYPRE).
bool have_boomeramg();

/// Solves A x = b from x = 0 with BoomerAMG-PCG (BoomerAMG-FlexGMRES) on `comm`, each rank passing its rows (see
/// baseline.hpp). block_size > 1 selects hypre's systems AMG ("unknown" approach, interleaved
/// dofs); coordinates are not used (no rigid-body interpolation: hypre's nodal coarsening with
/// the rotations as interpolation vectors took more iterations on the generated elasticity
/// problems; docs/performance.md, sixtieth session).
/// InputError on bad input or when hypre is not built in; Error with hypre's message when a
/// hypre call fails. Not converging is a result (converged = false), not an error. Collective.
BaselineResult solve_with_boomeramg(MPI_Comm comm, const RowBlock& my_rows, const std::vector<double>& my_b,
                                    const BaselineOptions& options);

}  // namespace tessera::baselines
