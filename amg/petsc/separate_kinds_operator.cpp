#include "amg/petsc/separate_kinds_operator.hpp"

#include "amg/petsc/petsc_boundary.hpp"
#include "amg/petsc/petsc_operator.hpp"
#include "amg/separate_kinds.hpp"
#include "local/core/error.hpp"

namespace tessera::petsc {

int kinds_to_separate(Mat a) {
  PetscInt block_size = 1;
  TESSERA_PETSC_THROW(MatGetBlockSize(a, &block_size));
  TESSERA_REQUIRE_INPUT(block_size >= 2, "PCTESSERA: -pc_tessera_separate_kinds separates the kinds of dof of a node, ",
                        "the operator's block size of them; its block size is ", block_size,
                        ": set it with MatSetBlockSize (3 in a 2D frame, 6 in a 3D one)");
  return static_cast<int>(block_size);
}

dist::DistMatrix read_separated_dist_matrix(const dist::Communicator& comm, Mat a, int kinds) {
  return assemble(comm, a, amg::without_cross_kind_couplings(read_owned_rows(a), kinds));
}

bool refresh_separated_values_if_same_pattern(const dist::Communicator& comm, Mat a, int kinds, dist::DistMatrix& m) {
  PetscInt col_begin = 0, col_end = 0;
  TESSERA_PETSC_THROW(MatGetOwnershipRangeColumn(a, &col_begin, &col_end));
  const RowBlock rows = amg::without_cross_kind_couplings(read_owned_rows(a), kinds);
  const RowBlock pattern = dist::owned_row_block(m);
  // The diagonal block's columns count from the first owned column: its range must be m's too.
  const bool same = rows.row_begin == pattern.row_begin && rows.row_end == pattern.row_end &&
                    col_begin == m.col_begin() && col_end - col_begin == m.local.cols &&
                    rows.row_ptr == pattern.row_ptr && rows.col == pattern.col;
  if (comm.allreduce(std::int64_t{same}, dist::ReduceOp::min) == 0) return false;
  dist::set_values_in_row_order(m, rows.values);
  return true;
}

}  // namespace tessera::petsc
