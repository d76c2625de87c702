#include "local/formats/stack_rows.hpp"

#include <algorithm>

#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera {

Csr<double> stack_rows(std::vector<Csr<double>>& pieces, std::int64_t cols) {
  if (pieces.size() == 1 && pieces[0].cols == cols) {  // one thread: nothing to join
    Csr<double> whole = std::move(pieces[0]);
    pieces[0] = Csr<double>{};
    return whole;
  }
  std::vector<std::int64_t> first_row{0}, first_entry{0};
  for (const Csr<double>& piece : pieces) {
    TESSERA_ASSERT(piece.cols == cols, "stack_rows: a piece of ", piece.cols, " columns among ", cols);
    first_row.push_back(first_row.back() + piece.rows);
    first_entry.push_back(first_entry.back() + piece.nnz());
  }
  Csr<double> out = Csr<double>::empty(first_row.back(), cols);
  out.col_idx.resize(static_cast<std::size_t>(first_entry.back()));
  out.values.resize(out.col_idx.size());
  host::for_ranges(
      static_cast<std::int64_t>(pieces.size()),
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t k = begin; k < end; ++k) {
          Csr<double>& piece = pieces[k];
          for (std::int64_t r = 0; r < piece.rows; ++r)
            out.row_ptr[first_row[k] + r + 1] = first_entry[k] + piece.row_ptr[r + 1];
          std::copy(piece.col_idx.begin(), piece.col_idx.end(), out.col_idx.begin() + first_entry[k]);
          std::copy(piece.values.begin(), piece.values.end(), out.values.begin() + first_entry[k]);
          piece = Csr<double>{};
        }
      },
      1);
  return out;
}

}  // namespace tessera
