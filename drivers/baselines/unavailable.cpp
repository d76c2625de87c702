// Stand-ins for the baselines this build does not link: asking for one is an InputError that
// says so, never a link error or a silent skip.
#include "drivers/baselines/hypre_boomeramg.hpp"
#include "drivers/baselines/petsc_gamg.hpp"
#include "local/core/error.hpp"

namespace tessera::baselines {

#if !TESSERA_HAVE_HYPRE
bool have_boomeramg() { return false; }

BaselineResult solve_with_boomeramg(MPI_Comm, const RowBlock&, const std::vector<double>&, const BaselineOptions&) {
  throw InputError("hypre BoomerAMG: this build has no HYPRE (it was not found at configure time)");
}
#endif

#if !TESSERA_HAVE_PETSC
bool have_gamg() { return false; }

PetscSession::PetscSession() {}
PetscSession::~PetscSession() {}

BaselineResult solve_with_gamg(MPI_Comm, const RowBlock&, const std::vector<double>&, const BaselineOptions&) {
  throw InputError("PETSc GAMG: this build has no PETSc (pkg-config PETSc was not found at configure time)");
}
#endif

}  // namespace tessera::baselines
