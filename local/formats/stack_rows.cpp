#include "local/formats/stack_rows.hpp"

#include <algorithm>

#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera {

namespace {

/// Copies the pieces' rows into `out` (row offsets, columns, values), which is sized for them;
/// `rows`, `columns` and `values` read a piece's row count and arrays (Csr and RowBlock name
/// them differently). The pieces are emptied.
template <class Matrix, class Rows, class Columns, class Values>
void join_pieces(std::vector<Matrix>& pieces, Matrix& out, Rows rows, Columns columns, Values values) {
  std::vector<std::int64_t> first_row{0}, first_entry{0};
  for (Matrix& piece : pieces) {
    first_row.push_back(first_row.back() + rows(piece));
    first_entry.push_back(first_entry.back() + static_cast<std::int64_t>(columns(piece).size()));
  }
  out.row_ptr.resize(static_cast<std::size_t>(first_row.back()) + 1);
  out.row_ptr[0] = 0;
  columns(out).resize(static_cast<std::size_t>(first_entry.back()));
  values(out).resize(columns(out).size());
  host::for_ranges(
      static_cast<std::int64_t>(pieces.size()),
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t k = begin; k < end; ++k) {
          Matrix& piece = pieces[k];
          for (std::int64_t r = 0; r < rows(piece); ++r)
            out.row_ptr[first_row[k] + r + 1] = first_entry[k] + piece.row_ptr[r + 1];
          std::copy(columns(piece).begin(), columns(piece).end(), columns(out).begin() + first_entry[k]);
          std::copy(values(piece).begin(), values(piece).end(), values(out).begin() + first_entry[k]);
          piece = Matrix{};
        }
      },
      1);
}

}  // namespace

Csr<double> stack_rows(std::vector<Csr<double>>& pieces, std::int64_t cols) {
  if (pieces.size() == 1 && pieces[0].cols == cols) {  // one thread: nothing to join
    Csr<double> whole = std::move(pieces[0]);
    pieces[0] = Csr<double>{};
    return whole;
  }
  std::int64_t rows = 0;
  for (const Csr<double>& piece : pieces) {
    TESSERA_ASSERT(piece.cols == cols, "stack_rows: a piece of ", piece.cols, " columns among ", cols);
    rows += piece.rows;
  }
  Csr<double> out = Csr<double>::empty(0, cols);
  out.rows = rows;
  join_pieces(
      pieces, out, [](const Csr<double>& m) { return m.rows; }, [](auto& m) -> auto& { return m.col_idx; },
      [](auto& m) -> auto& { return m.values; });
  return out;
}

RowBlock stack_rows(std::vector<RowBlock>& pieces) {
  TESSERA_ASSERT(!pieces.empty(), "stack_rows: no pieces");
  RowBlock out;
  out.global_rows = pieces.front().global_rows;
  out.global_cols = pieces.front().global_cols;
  out.row_begin = pieces.front().row_begin;
  out.row_end = pieces.back().row_end;
  for (std::size_t k = 0; k < pieces.size(); ++k)
    TESSERA_ASSERT(pieces[k].global_rows == out.global_rows && pieces[k].global_cols == out.global_cols &&
                       (k == 0 || pieces[k].row_begin == pieces[k - 1].row_end),
                   "stack_rows: piece ", k, " (rows [", pieces[k].row_begin, ", ", pieces[k].row_end,
                   ")) does not follow the one before it in one matrix");
  if (pieces.size() == 1) {  // one thread: nothing to join
    out = std::move(pieces[0]);
    pieces[0] = RowBlock{};
    return out;
  }
  join_pieces(
      pieces, out, [](const RowBlock& m) { return m.local_rows(); }, [](auto& m) -> auto& { return m.col; },
      [](auto& m) -> auto& { return m.values; });
  return out;
}

}  // namespace tessera
