#include "amg/petsc/stored_aij_rows.hpp"

#include <petsc/private/petscimpl.h>

#include "amg/petsc/petsc_boundary.hpp"

namespace tessera::petsc {

BorrowedSeqAij::BorrowedSeqAij(Mat seqaij) : mat_(seqaij) {
  // No shift, no symmetrization: PETSc hands out its own arrays rather than copies.
  TESSERA_PETSC_THROW(MatGetRowIJ(mat_, 0, PETSC_FALSE, PETSC_FALSE, &rows_, &ia_, &ja_, &done_));
  if (!done_) return;
  const PetscErrorCode failed = MatSeqAIJGetArrayRead(mat_, &values_);
  if (failed) {  // the destructor does not run for a constructor that throws
    (void)MatRestoreRowIJ(mat_, 0, PETSC_FALSE, PETSC_FALSE, &rows_, &ia_, &ja_, &done_);
    throw PetscFailure(failed);
  }
  have_values_ = true;
}

BorrowedSeqAij::~BorrowedSeqAij() {  // no throw from here
  if (have_values_) (void)MatSeqAIJRestoreArrayRead(mat_, &values_);
  if (done_) (void)MatRestoreRowIJ(mat_, 0, PETSC_FALSE, PETSC_FALSE, &rows_, &ia_, &ja_, &done_);
}

StoredAijRows::StoredAijRows(Mat a) {
  PetscBool assembled = PETSC_FALSE, seqaij = PETSC_FALSE, mpiaij = PETSC_FALSE;
  TESSERA_PETSC_THROW(MatAssembled(a, &assembled));
  if (!assembled) return;  // MatGetRow reports it
  TESSERA_PETSC_THROW(PetscObjectBaseTypeCompare(reinterpret_cast<PetscObject>(a), MATSEQAIJ, &seqaij));
  // MatMPIAIJGetSeqAIJ's own test: a type name that begins with "mpiaij".
  TESSERA_PETSC_THROW(PetscStrbeginswith(reinterpret_cast<PetscObject>(a)->type_name, MATMPIAIJ, &mpiaij));
  PetscInt owned_begin = 0, owned_end = 0;
  TESSERA_PETSC_THROW(MatGetOwnershipRange(a, &owned_begin, &owned_end));
  PetscInt global_rows = 0, global_cols = 0, col_end = 0;
  TESSERA_PETSC_THROW(MatGetSize(a, &global_rows, &global_cols));
  if (seqaij) {
    diag_.emplace(a);
    col_end = global_cols;
  } else if (mpiaij) {
    Mat diag = nullptr, off = nullptr;
    TESSERA_PETSC_THROW(MatMPIAIJGetSeqAIJ(a, &diag, &off, &garray_));
    TESSERA_PETSC_THROW(MatGetOwnershipRangeColumn(a, &col_begin_, &col_end));
    TESSERA_PETSC_THROW(MatGetSize(off, nullptr, &ghosts_));  // compacted at assembly: garray's length
    diag_.emplace(diag);
    off_.emplace(off);
  } else {
    return;
  }
  const bool usable = diag_->ok() && diag_->rows() == owned_end - owned_begin &&
                      (!off_ || (off_->ok() && off_->rows() == diag_->rows() &&
                                 (garray_ || off_->row_ptr()[off_->rows()] == 0)));  // no ghosts: maybe no garray
  if (!usable) {  // given back; the caller reads row by row
    off_.reset();
    diag_.reset();
    return;
  }
  whole_ = owned_end - owned_begin == global_rows && col_begin_ == 0 && col_end == global_cols &&
           (!off_ || off_->row_ptr()[off_->rows()] == 0);
}

}  // namespace tessera::petsc
