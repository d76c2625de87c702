#include "amg/petsc/whole_matrix_arrays.hpp"

#include <type_traits>

#include "amg/petsc/petsc_boundary.hpp"
#include "amg/petsc/petsc_operator.hpp"
#include "amg/separate_kinds.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera::petsc {

WholeMatrixArrays::WholeMatrixArrays(Mat a, int separate_kinds) : stored_(a) {
  PetscInt m = 0, n = 0, begin = 0, end = 0;
  TESSERA_PETSC_THROW(MatGetSize(a, &m, &n));
  TESSERA_PETSC_THROW(MatGetOwnershipRange(a, &begin, &end));
  TESSERA_REQUIRE_INPUT(begin == 0 && end == m, "PCTESSERA: the one-GPU hierarchy needs every row of A on its rank; ",
                        "this one owns rows [", begin, ", ", end, ") of ", m);
  arrays_.rows = m;
  arrays_.cols = n;
  const BorrowedSeqAij* block = stored_.whole_block();
  if constexpr (std::is_same_v<PetscScalar, double>) {  // other scalars are converted in a copy
    const double* values = block ? reinterpret_cast<const double*>(block->values()) : nullptr;  // the same type here
    if (block && separate_kinds == 1) {
      arrays_.row_ptr = block->row_ptr();
      arrays_.col_idx = block->cols();
      arrays_.values = values;
      borrowed_ = true;
      return;
    }
    if (block) {  // the separated copy straight from PETSc's arrays
      amg::require_whole_nodes(m, n, separate_kinds);
      amg::keep_same_kind_entries(m, 0, block->row_ptr(), block->cols(), values, separate_kinds, copied_row_ptr_,
                                  copied_cols_, copied_values_);
      point_at_copy();
      return;
    }
  }
  // A copy in PETSc's index type (which holds every global column by definition).
  RowBlock rows = read_owned_rows(a);
  if (separate_kinds > 1) rows = amg::without_cross_kind_couplings(rows, separate_kinds);
  copied_row_ptr_.resize(rows.row_ptr.size());
  copied_cols_.resize(rows.col.size());
  host::for_ranges(std::int64_t(rows.row_ptr.size()), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) copied_row_ptr_[i] = static_cast<PetscInt>(rows.row_ptr[i]);
  });
  host::for_ranges(std::int64_t(rows.col.size()), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t k = b; k < e; ++k) copied_cols_[k] = static_cast<PetscInt>(rows.col[k]);
  });
  copied_values_.swap(rows.values);
  point_at_copy();
}

void WholeMatrixArrays::point_at_copy() {
  arrays_.row_ptr = copied_row_ptr_.data();
  arrays_.col_idx = copied_cols_.data();
  arrays_.values = copied_values_.data();
}

}  // namespace tessera::petsc
