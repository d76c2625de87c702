#pragma once
// PETSc AIJ <-> Tessera: a rank's owned rows of an assembled AIJ matrix (any type derived from
// seqaij/mpiaij: MatGetRow returns sorted global columns for all of them; seqaij and mpiaij
// storage is read in place, stored_aij_rows.hpp, the rest row by row) become a RowBlock, or a
// dist::DistMatrix on PETSc's own ownership ranges (read_dist_matrix: from seqaij and mpiaij
// storage block by block, without the RowBlock), and a DistMatrix goes back into an AIJ
// matrix. All functions throw (tessera::InputError, petsc::PetscFailure); callers sit behind
// TesseraPetscTry. Collective where a DistMatrix is built or agreed on.
#include <petscmat.h>

#include <vector>

#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::petsc {

/// This rank's rows [rstart, rend) with global columns and values.
RowBlock read_owned_rows(Mat a);

/// The values of this rank's rows in row order, if their pattern is still `pattern`'s;
/// false (values untouched) if any row of this rank changed pattern. Local.
bool read_values_if_same_pattern(Mat a, const RowBlock& pattern, HostArray<double>& values);

/// PETSc's row / column ownership ranges as a partition. PETSc's boundaries fall on any row,
/// so the tile-alignment rule is waived (dist::Alignment::any).
dist::RowPartition row_partition(const dist::Communicator& comm, Mat a);
dist::RowPartition col_partition(const dist::Communicator& comm, Mat a);

/// `rows` (read from `a`) as a DistMatrix on `a`'s row and column ownership ranges.
dist::DistMatrix assemble(const dist::Communicator& comm, Mat a, const RowBlock& rows);

/// Collective. `a` as a DistMatrix on its row and column ownership ranges. Where every rank's
/// storage is read in place (stored_aij_rows.hpp) and PetscScalar is double, PETSc's blocks are
/// copied as they are: the diagonal block is the local block, the off-diagonal block the
/// non-local one, garray the ghost columns (dist::assemble_blocks): no RowBlock, no merge into
/// global columns and no split back. Otherwise read_owned_rows, then assemble. The same
/// DistMatrix either way.
dist::DistMatrix read_dist_matrix(const dist::Communicator& comm, Mat a);

/// Collective. If every rank's rows of `a` still have `m`'s pattern (m read from `a` by
/// read_dist_matrix), their values replace m's and every rank returns true; otherwise m is
/// untouched and every rank returns false. PETSc's blocks are compared with m's in place where
/// read_dist_matrix copies them; other storage is read row by row.
bool refresh_values_if_same_pattern(const dist::Communicator& comm, Mat a, dist::DistMatrix& m);

/// Writes `c`'s owned rows into the AIJ matrix `out` (sizes and type already set). With
/// `preallocate`, sizes the diagonal/off-diagonal blocks exactly first and forbids new
/// nonzeros afterwards; later calls only overwrite the values (same pattern).
void write_aij(const dist::DistMatrix& c, Mat out, bool preallocate);

/// A DistMatrix kept in step with a PETSc matrix: rebuilt when PETSc's nonzero state moves
/// (or the pattern is found changed), values refreshed when only the object state moves.
class MatrixMirror {
 public:
  enum class Change { none, values, pattern };
  /// Collective over `comm` (the matrix's communicator).
  Change sync(const dist::Communicator& comm, Mat a);
  const dist::DistMatrix& matrix() const { return matrix_; }

 private:
  dist::DistMatrix matrix_;
  bool built_ = false;
  PetscObjectState state_ = 0, nonzero_state_ = 0;
};

}  // namespace tessera::petsc
