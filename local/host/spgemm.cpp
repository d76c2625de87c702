#include "local/host/spgemm.hpp"

#include <algorithm>
#include <vector>

#include "local/core/host_ranges.hpp"
#include "local/formats/stack_rows.hpp"
#include "local/reference/gustavson_row.hpp"

namespace tessera::host {
namespace {

/// The first row of each range when A's entries are split evenly: a row's cost is about its
/// entries times B's row lengths, and A's entries are free to count, where rows alone would
/// leave a range with the long rows of a power-law graph doing most of the work.
std::vector<std::int64_t> row_bounds_by_entries(const Csr<double>& a) {
  const RangeSplit entries(a.nnz());
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(entries.count()) + 1, a.rows);
  for (int r = 0; r < entries.count(); ++r)  // the first row that starts at or after the range's entries
    bounds[r] = std::lower_bound(a.row_ptr.begin(), a.row_ptr.end() - 1, entries.begin(r)) - a.row_ptr.begin();
  bounds[0] = 0;
  return bounds;
}

}  // namespace

Csr<double> spgemm(const Csr<double>& a, const Csr<double>& b, const ref::SpgemmOptions& options) {
  ref::detail::require_conformable(a, b, "spgemm");
  const std::vector<std::int64_t> bounds = row_bounds_by_entries(a);
  std::vector<Csr<double>> pieces(bounds.size() - 1);
  for_ranges(
      static_cast<std::int64_t>(pieces.size()),
      [&](std::int64_t first, std::int64_t last) {
        for (std::int64_t k = first; k < last; ++k) {
          const std::int64_t begin = bounds[k], end = bounds[k + 1];
          Csr<double>& piece = pieces[k] = Csr<double>::empty(end - begin, b.cols);
          ref::detail::GustavsonAccumulator acc(b.cols);
          for (std::int64_t i = begin; i < end; ++i) {
            acc.append_row(a, b, i, options.keep_zeros, piece);
            piece.row_ptr[i - begin + 1] = piece.nnz();
          }
        }
      },
      1);
  return stack_rows(pieces, b.cols);
}

}  // namespace tessera::host
