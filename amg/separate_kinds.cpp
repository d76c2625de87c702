#include "amg/separate_kinds.hpp"

#include "local/core/error.hpp"

namespace tessera::amg {

RowBlock without_cross_kind_couplings(const RowBlock& rows, int kinds) {
  TESSERA_REQUIRE_INPUT(kinds >= 1 && rows.global_rows % kinds == 0 && rows.global_cols == rows.global_rows,
                        "separate kinds of dof: ", kinds, " kinds a node do not divide the ", rows.global_rows, "x",
                        rows.global_cols, " matrix into whole nodes");
  RowBlock kept;
  kept.global_rows = rows.global_rows;
  kept.global_cols = rows.global_cols;
  kept.row_begin = rows.row_begin;
  kept.row_end = rows.row_end;
  kept.row_ptr.reserve(rows.row_ptr.size());
  for (std::int64_t i = 0; i < rows.local_rows(); ++i) {
    const std::int64_t kind = (rows.row_begin + i) % kinds;
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
      if (rows.col[k] % kinds == kind) {
        kept.col.push_back(rows.col[k]);
        kept.values.push_back(rows.values[k]);
      }
    kept.row_ptr.push_back(kept.nnz());
  }
  return kept;
}

Csr<double> without_cross_kind_couplings(const Csr<double>& a, int kinds) {
  return to_csr(without_cross_kind_couplings(row_block(a, 0, a.rows), kinds));
}

}  // namespace tessera::amg
