#pragma once
// The rows of a sparse block that hold entries, found from its row offsets without reading every
// offset. A distributed matrix's non-local block holds entries only in the rows next to other
// ranks (a surface: a few thousand runs of rows among millions), and on one rank none at all;
// a walk over all its row offsets read 56 MB at 7M rows to find them. A galloping search from
// each found row to the row of the next entry costs O(log gap) offsets instead.
#include <algorithm>
#include <cstdint>

namespace tessera {

/// Calls visit(r) for each row r in [0, rows) with row_ptr[r] < row_ptr[r + 1], in increasing
/// order. `row_ptr` holds rows + 1 non-decreasing offsets from row_ptr[0] == 0.
template <class Visit>
void for_each_nonempty_row(const std::int64_t* row_ptr, std::int64_t rows, Visit&& visit) {
  std::int64_t r = 0;  // row_ptr[r] <= k, the next entry
  for (std::int64_t k = 0; k < row_ptr[rows]; k = row_ptr[r + 1], ++r) {
    if (row_ptr[r + 1] <= k) {  // row r is empty: the row holding k is the last with row_ptr <= k
      std::int64_t step = 1;
      while (r + step < rows && row_ptr[r + step] <= k) step *= 2;
      std::int64_t lo = r + step / 2, hi = std::min(r + step, rows);  // row_ptr[lo] <= k < row_ptr[hi]
      while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        (row_ptr[mid] <= k ? lo : hi) = mid;
      }
      r = lo;
    }
    visit(r);
  }
}

}  // namespace tessera
