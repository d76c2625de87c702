#include "local/formats/row_block.hpp"

#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera {

Csr<double> to_csr(const RowBlock& b) {
  TESSERA_REQUIRE_INPUT(b.row_begin == 0 && b.row_end == b.global_rows, "a RowBlock of rows [", b.row_begin, ", ",
                        b.row_end, ") is not the whole ", b.global_rows, "-row matrix");
  TESSERA_REQUIRE_INPUT(b.global_cols <= INT32_MAX, "matrix has ", b.global_cols,
                        " columns: too many for a single-block Csr (int32 columns); distribute it");
  Csr<double> m;
  m.rows = b.global_rows;
  m.cols = b.global_cols;
  // On the rank's threads: this is the whole matrix (PCTESSERA's one-GPU setup reads A through it).
  m.row_ptr = copy_on_threads(b.row_ptr.data(), b.row_ptr.size());
  m.values = copy_on_threads(b.values.data(), b.values.size());
  m.col_idx.resize(b.col.size());
  host::for_ranges(b.nnz(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) m.col_idx[k] = static_cast<std::int32_t>(b.col[k]);
  });
  return m;
}

RowBlock row_block(const Csr<double>& a, std::int64_t begin, std::int64_t end) {
  TESSERA_REQUIRE_INPUT(0 <= begin && begin <= end && end <= a.rows, "row range [", begin, ", ", end,
                        ") is outside the ", a.rows, "-row matrix");
  RowBlock b;
  b.global_rows = a.rows;
  b.global_cols = a.cols;
  b.row_begin = begin;
  b.row_end = end;
  const std::int64_t first = a.row_ptr[begin], last = a.row_ptr[end];
  b.row_ptr.resize(static_cast<std::size_t>(end - begin) + 1);
  for (std::int64_t r = begin; r <= end; ++r) b.row_ptr[r - begin] = a.row_ptr[r] - first;
  b.col.assign(a.col_idx.begin() + first, a.col_idx.begin() + last);
  b.values.assign(a.values.begin() + first, a.values.begin() + last);
  return b;
}

}  // namespace tessera
