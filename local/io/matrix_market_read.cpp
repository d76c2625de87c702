// The public readers: each streams the file once through MatrixMarketStream.
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "local/core/error.hpp"
#include "local/io/matrix_market.hpp"
#include "local/io/matrix_market_stream.hpp"

namespace tessera::io {
namespace {

/// Capacity to reserve for `entries` declared entries: the size line is not trusted with an
/// allocation (a corrupt one would throw bad_alloc instead of a line-numbered InputError).
std::size_t reserve_for(std::int64_t entries, bool mirrored) {
  constexpr std::int64_t kMaxReserve = std::int64_t{1} << 26;
  return static_cast<std::size_t>(std::min(entries * (mirrored ? 2 : 1), kMaxReserve));
}

/// Rows of a RowBlock from (local row, global column, value) triplets: bucket by row, sort
/// each row by column, sum duplicates.
void fill_rows(RowBlock& block, const std::vector<std::int64_t>& row, const std::vector<std::int64_t>& col,
               const std::vector<double>& val) {
  const std::size_t n = row.size();
  std::vector<std::int64_t> start(static_cast<std::size_t>(block.local_rows()) + 1, 0);
  for (std::int64_t r : row) ++start[r + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::pair<std::int64_t, double>> by_row(n);
  std::vector<std::int64_t> cursor(start.begin(), start.end() - 1);
  for (std::size_t k = 0; k < n; ++k) by_row[cursor[row[k]]++] = {col[k], val[k]};
  block.row_ptr.assign(start.size(), 0);
  block.col.reserve(n);
  block.values.reserve(n);
  for (std::size_t r = 0; r + 1 < start.size(); ++r) {
    const auto first = by_row.begin() + start[r], last = by_row.begin() + start[r + 1];
    std::stable_sort(first, last, [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto it = first; it != last; ++it) {
      if (it != first && it->first == block.col.back())
        block.values.back() += it->second;
      else {
        block.col.push_back(it->first);
        block.values.push_back(it->second);
      }
    }
    block.row_ptr[r + 1] = static_cast<std::int64_t>(block.col.size());
  }
}

}  // namespace

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
  return MatrixMarketStream(path).header();
}

Csr<double> read_matrix_market(const std::string& path) {
  MatrixMarketStream stream(path);
  const MatrixMarketHeader& h = stream.header();
  if (h.cols > INT32_MAX)
    stream.fail(h.cols, " columns exceed the int32 column index of a single Csr; read it by row blocks");
  std::vector<std::int64_t> row, col;
  std::vector<double> val;
  const std::size_t capacity = reserve_for(h.entries, stream.mirrored());
  row.reserve(capacity);
  col.reserve(capacity);
  val.reserve(capacity);
  for_each_expanded_entry(stream, [&](std::int64_t i, std::int64_t j, double v) {
    row.push_back(i);
    col.push_back(j);
    val.push_back(v);
  });
  return csr_from_triplets<double>(h.rows, h.cols, std::move(row), std::move(col), std::move(val));
}

RowBlock read_matrix_market_rows(const std::string& path, std::int64_t row_begin, std::int64_t row_end) {
  MatrixMarketStream stream(path);
  const MatrixMarketHeader& h = stream.header();
  if (!(0 <= row_begin && row_begin <= row_end && row_end <= h.rows))
    stream.fail("row range [", row_begin, ", ", row_end, ") is outside the ", h.rows, "-row matrix");
  std::vector<std::int64_t> row, col;
  std::vector<double> val;
  for_each_expanded_entry(stream, [&](std::int64_t i, std::int64_t j, double v) {
    if (i < row_begin || i >= row_end) return;
    row.push_back(i - row_begin);
    col.push_back(j);
    val.push_back(v);
  });
  RowBlock block;
  block.global_rows = h.rows;
  block.global_cols = h.cols;
  block.row_begin = row_begin;
  block.row_end = row_end;
  fill_rows(block, row, col, val);
  return block;
}

DenseMatrix read_matrix_market_dense(const std::string& path) {
  return read_matrix_market_dense_rows(path, 0, -1);
}

DenseMatrix read_matrix_market_dense_rows(const std::string& path, std::int64_t row_begin, std::int64_t row_end) {
  MatrixMarketStream stream(path);
  const MatrixMarketHeader& h = stream.header();
  if (stream.is_coordinate())
    stream.fail("a dense matrix needs an 'array' file, this one is 'coordinate' (sparse): use read_matrix_market");
  if (row_end < 0) row_end = h.rows;
  if (!(0 <= row_begin && row_begin <= row_end && row_end <= h.rows))
    stream.fail("row range [", row_begin, ", ", row_end, ") is outside the ", h.rows, "-row array");
  DenseMatrix x(row_end - row_begin, h.cols, Layout::col_major);
  for_each_expanded_entry(stream, [&](std::int64_t i, std::int64_t j, double v) {
    if (row_begin <= i && i < row_end) x.at(i - row_begin, j) = v;
  });
  return x;
}

}  // namespace tessera::io
