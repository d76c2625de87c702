#include "local/host/transpose.hpp"

#include <climits>
#include <utility>
#include <vector>

#include "local/core/error.hpp"
#include "local/core/host_offsets.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera::host {

Csr<double> transpose(const Csr<double>& a) {
  validate(a, "A");
  TESSERA_REQUIRE_INPUT(a.rows <= INT32_MAX, "transpose: A has ", a.rows,
                        " rows, which would be columns of A^T beyond the int32 column index");
  const RangeSplit rows(a.rows);
  // slot[range][c]: first the range's entries in column c, then where its next one goes in row
  // c of A^T, counted from the row's start. A column holds at most one entry a row: int32.
  std::vector<std::vector<std::int32_t>> slot(static_cast<std::size_t>(rows.count()));
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    std::vector<std::int32_t>& count = slot[range];
    count.assign(static_cast<std::size_t>(a.cols), 0);  // on the range's thread, not all on one
    for (std::int64_t k = a.row_ptr[begin]; k < a.row_ptr[end]; ++k) ++count[a.col_idx[k]];
  });
  // Each column's ranges in order (in parallel over ranges of columns), then the rows' offsets.
  std::vector<std::int32_t> length(static_cast<std::size_t>(a.cols));
  for_ranges(a.cols, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      std::int32_t at = 0;
      for (std::vector<std::int32_t>& count : slot) at += std::exchange(count[c], at);
      length[c] = at;
    }
  });
  Csr<double> t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.row_ptr.resize(static_cast<std::size_t>(a.cols) + 1);
  offsets_from_counts(a.cols, [&](std::int64_t c) { return length[c]; }, t.row_ptr.data());
  t.col_idx.resize(a.col_idx.size());
  t.values.resize(a.values.size());
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    std::vector<std::int32_t>& next = slot[range];
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        const std::int32_t c = a.col_idx[p];
        const std::int64_t dst = t.row_ptr[c] + next[c]++;
        t.col_idx[dst] = static_cast<std::int32_t>(i);
        t.values[dst] = a.values[p];
      }
  });
  return t;
}

}  // namespace tessera::host
