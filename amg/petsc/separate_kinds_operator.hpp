#pragma once
// PCTESSERA's -pc_tessera_separate_kinds: the hierarchy built from the operator without the
// couplings between its kinds of dof (amg/separate_kinds.hpp), the kinds being PETSc's block
// size, so that an application with slender frames or shells gets the "separate displacement
// components" preconditioner without assembling a second matrix for KSPSetOperators. The one-GPU
// hierarchy reads the same rows through WholeMatrixArrays(a, kinds). All functions throw
// (tessera::InputError, petsc::PetscFailure); callers sit behind TesseraPetscTry.
#include <petscmat.h>

#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"

namespace tessera::petsc {

/// The kinds of dof to separate: `a`'s block size, which must be at least 2 (InputError naming
/// MatSetBlockSize otherwise: a scalar operator has no kinds to separate).
int kinds_to_separate(Mat a);

/// Collective. `a`'s owned rows without the couplings between its `kinds` kinds of dof, as a
/// DistMatrix on `a`'s row and column ownership ranges.
dist::DistMatrix read_separated_dist_matrix(const dist::Communicator& comm, Mat a, int kinds);

/// Collective. If every rank's rows of `a`, separated as read_separated_dist_matrix does, still
/// have `m`'s pattern, their values replace m's and every rank returns true; otherwise m is
/// untouched and every rank returns false.
bool refresh_separated_values_if_same_pattern(const dist::Communicator& comm, Mat a, int kinds, dist::DistMatrix& m);

}  // namespace tessera::petsc
