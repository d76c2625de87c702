#pragma once
// On one rank, the whole operator as CSR arrays in PETSc's index type, for the one-GPU
// hierarchy (pc_single_gpu.hpp) to upload as they are (cuda::upload(CsrArrays)): PETSc's own
// arrays, borrowed in place, where it keeps the matrix as one seqaij block (seqaij, or mpiaij on
// one rank) with double values; otherwise a copy read as read_owned_rows reads. Borrowed, no
// host page is written: with the RowBlock and Csr copies this replaces, the one-GPU PCSetUp of
// PETSc's 2.1M-row ex45 took 0.59 s on a freshly started H100 machine and 0.29-0.35 s on a warm
// one, without them 0.27-0.32 s on both (docs/performance.md, fortieth session).
#include <petscmat.h>

#include <vector>

#include "amg/petsc/stored_aij_rows.hpp"
#include "local/core/host_array.hpp"
#include "local/formats/csr_arrays.hpp"

namespace tessera::petsc {

using PetscCsrArrays = CsrArrays<PetscInt, PetscInt>;

class WholeMatrixArrays {
 public:
  /// `a`: an assembled AIJ matrix whose rows this rank owns, all of them (InputError otherwise).
  /// With `separate_kinds` > 1, a copy without the couplings between that many kinds of dof
  /// (amg::without_cross_kind_couplings: -pc_tessera_separate_kinds) instead.
  explicit WholeMatrixArrays(Mat a, int separate_kinds = 1);
  WholeMatrixArrays(const WholeMatrixArrays&) = delete;
  WholeMatrixArrays& operator=(const WholeMatrixArrays&) = delete;

  /// Valid while this object and the matrix live, and the matrix is not changed.
  const PetscCsrArrays& arrays() const { return arrays_; }
  /// PETSc's own arrays (true), or a copy.
  bool borrowed() const { return borrowed_; }

 private:
  void point_at_copy();

  StoredAijRows stored_;
  std::vector<PetscInt> copied_row_ptr_, copied_cols_;  // the copy, where nothing is borrowed
  HostArray<double> copied_values_;
  PetscCsrArrays arrays_;
  bool borrowed_ = false;
};

}  // namespace tessera::petsc
