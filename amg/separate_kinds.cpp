#include "amg/separate_kinds.hpp"

#include "local/core/error.hpp"

namespace tessera::amg {

void require_whole_nodes(std::int64_t rows, std::int64_t cols, int kinds) {
  TESSERA_REQUIRE_INPUT(kinds >= 1 && rows % kinds == 0 && cols == rows, "separate kinds of dof: ", kinds,
                        " kinds a node do not divide the ", rows, "x", cols, " matrix into whole nodes");
}

RowBlock without_cross_kind_couplings(const RowBlock& rows, int kinds) {
  require_whole_nodes(rows.global_rows, rows.global_cols, kinds);
  RowBlock kept;
  kept.global_rows = rows.global_rows;
  kept.global_cols = rows.global_cols;
  kept.row_begin = rows.row_begin;
  kept.row_end = rows.row_end;
  keep_same_kind_entries(rows.local_rows(), rows.row_begin, rows.row_ptr.data(), rows.col.data(), rows.values.data(),
                         kinds, kept.row_ptr, kept.col, kept.values);
  return kept;
}

Csr<double> without_cross_kind_couplings(const Csr<double>& a, int kinds) {
  return to_csr(without_cross_kind_couplings(row_block(a, 0, a.rows), kinds));
}

}  // namespace tessera::amg
