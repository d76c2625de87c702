#pragma once
// A rank's owned rows of an assembled AIJ matrix read where PETSc keeps them, instead of one
// MatGetRow call a row: seqaij's CSR arrays, or mpiaij's two seqaij blocks (the diagonal block
// on owned columns, the off-diagonal block on columns compressed through its sorted `garray`),
// merged per row into the global, increasing column order MatGetRow_MPIAIJ returns. Row by row,
// MatGetRow took 0.66 s of PCSetUp's 0.94 s at 2.1M rows on one H200 (docs/performance.md,
// thirty-eighth session); in place, every row is independent, so the readers run on the rank's
// threads. read_dist_matrix (petsc_operator.hpp) takes the two blocks as they are instead.
// Any other type (or a matrix PETSc offers no arrays for) holds nothing, and the caller reads
// row by row.
#include <petscmat.h>

#include <cstdint>
#include <optional>

namespace tessera::petsc {

/// One seqaij matrix's row offsets, columns and values, borrowed (MatGetRowIJ,
/// MatSeqAIJGetArrayRead) and given back on destruction.
class BorrowedSeqAij {
 public:
  explicit BorrowedSeqAij(Mat seqaij);
  ~BorrowedSeqAij();
  BorrowedSeqAij(const BorrowedSeqAij&) = delete;
  BorrowedSeqAij& operator=(const BorrowedSeqAij&) = delete;

  bool ok() const { return done_ && have_values_; }  // values_ may be null where there are no entries
  std::int64_t rows() const { return rows_; }
  const PetscInt* row_ptr() const { return ia_; }
  const PetscInt* cols() const { return ja_; }
  const PetscScalar* values() const { return values_; }

 private:
  Mat mat_;
  PetscInt rows_ = 0;
  const PetscInt* ia_ = nullptr;
  const PetscInt* ja_ = nullptr;
  const PetscScalar* values_ = nullptr;
  PetscBool done_ = PETSC_FALSE;
  bool have_values_ = false;
};

class StoredAijRows {
 public:
  /// Borrows `a`'s arrays if it is an assembled seqaij or mpiaij matrix (or a type derived
  /// from one, which keeps their storage); empty (false) otherwise.
  explicit StoredAijRows(Mat a);
  explicit operator bool() const { return diag_.has_value(); }

  std::int64_t rows() const { return diag_->rows(); }
  /// Where row i's merged entries start (row i's entries in both blocks before it).
  std::int64_t row_start(std::int64_t i) const {
    return diag_->row_ptr()[i] + (off_ ? off_->row_ptr()[i] : 0);
  }
  std::int64_t entries() const { return row_start(rows()); }

  /// PETSc's diagonal block (owned rows x owned columns, columns from the rank's first owned
  /// column), and the off-diagonal one (null for seqaij): owned rows x ghost_count() columns,
  /// column g being global column garray()[g] (increasing).
  const BorrowedSeqAij& diagonal_block() const { return *diag_; }
  const BorrowedSeqAij* off_diagonal_block() const { return off_ ? &*off_ : nullptr; }
  const PetscInt* garray() const { return garray_; }
  PetscInt ghost_count() const { return garray_ ? ghosts_ : 0; }

  /// The one seqaij block that holds the rank's rows in global columns as they are (seqaij, or
  /// mpiaij on a rank that owns every column and has no off-diagonal entry: one rank), else null.
  const BorrowedSeqAij* whole_block() const { return diag_ && whole_ ? &*diag_ : nullptr; }

  /// emit(global column, value) for row i's entries in increasing column order: the
  /// off-diagonal ones left of the owned columns, the diagonal block's, then the rest.
  template <class Emit>
  void row(std::int64_t i, Emit emit) const {
    PetscInt o = 0, o_end = 0;
    if (off_) o = off_->row_ptr()[i], o_end = off_->row_ptr()[i + 1];
    const auto off_col = [&](PetscInt k) { return garray_[off_->cols()[k]]; };
    for (; o < o_end && off_col(o) < col_begin_; ++o) emit(std::int64_t(off_col(o)), off_->values()[o]);
    for (PetscInt k = diag_->row_ptr()[i]; k < diag_->row_ptr()[i + 1]; ++k)
      emit(std::int64_t(col_begin_) + diag_->cols()[k], diag_->values()[k]);
    for (; o < o_end; ++o) emit(std::int64_t(off_col(o)), off_->values()[o]);
  }

 private:
  std::optional<BorrowedSeqAij> diag_, off_;  // off_ only for mpiaij
  const PetscInt* garray_ = nullptr;          // off-diagonal column -> global column, increasing
  PetscInt col_begin_ = 0;                    // the diagonal block's column 0, globally
  PetscInt ghosts_ = 0;                       // the off-diagonal block's columns
  bool whole_ = false;                        // the diagonal block is every row and column
};

}  // namespace tessera::petsc
