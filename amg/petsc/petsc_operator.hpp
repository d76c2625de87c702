#pragma once
// PETSc AIJ <-> Tessera: a rank's owned rows of an assembled AIJ matrix (any type derived from
// seqaij/mpiaij: MatGetRow returns sorted global columns for all of them; seqaij and mpiaij
// storage is read in place, stored_aij_rows.hpp, the rest row by row) become a RowBlock and
// a dist::DistMatrix on PETSc's own ownership ranges, and a DistMatrix goes back into an AIJ
// matrix. All functions throw (tessera::InputError, petsc::PetscFailure); callers sit behind
// TesseraPetscTry. Collective where a DistMatrix is built.
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
  RowBlock rows_;
  dist::DistMatrix matrix_;
  bool built_ = false;
  PetscObjectState state_ = 0, nonzero_state_ = 0;
};

}  // namespace tessera::petsc
