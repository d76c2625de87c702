#pragma once
// Baseline: PETSc's GAMG (smoothed aggregation, the algorithm family of Tessera's AMG) as the
// preconditioner of PETSc's CG (FGMRES for a non-symmetric A, BaselineOptions::gmres), with the
// rigid-body near-null space for elasticity.
// PETSc must be initialised on top of an initialised MPI (it then leaves MPI alone) and
// finalised before MPI_Finalize: hold a PetscSession for as long as PETSc is used.
#include <mpi.h>

#include <vector>

#include "drivers/baselines/baseline.hpp"

namespace tessera::baselines {

/// True when this build links PETSc (TESSERA_HAVE_PETSC).
bool have_gamg();

/// PetscInitialize on construction (no options file: ~/.petscrc and ./.petscrc are skipped;
/// PETSc's signal handler is removed so crashes stay ordinary crashes), PetscFinalize on
/// destruction. A no-op if PETSc is already initialised by someone else. Error if MPI is not
/// initialised yet (PETSc would then own MPI and finalise it under the caller). Collective.
class PetscSession {
 public:
  PetscSession();
  ~PetscSession();
  PetscSession(const PetscSession&) = delete;
  PetscSession& operator=(const PetscSession&) = delete;

 private:
  bool owns_ = false;
};

/// Solves A x = b from x = 0 with GAMG-CG (GAMG-FGMRES) on `comm`, each rank passing its rows (see
/// baseline.hpp). block_size is set on the matrix (GAMG aggregates nodes and uses one constant
/// vector per component); non-empty coordinates give the rigid-body modes instead
/// (MatNullSpaceCreateRigidBody; needs block_size 3). Needs a live PetscSession (Error
/// otherwise). InputError on bad input or when PETSc is not built in; Error with PETSc's
/// message when a PETSc call fails. Not converging is a result, not an error. Collective.
BaselineResult solve_with_gamg(MPI_Comm comm, const RowBlock& my_rows, const std::vector<double>& my_b,
                               const BaselineOptions& options);

}  // namespace tessera::baselines
