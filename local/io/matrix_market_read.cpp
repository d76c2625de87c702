// The public readers: each streams the file once through MatrixMarketStream.
#include <algorithm>
#include <vector>

#include "local/core/error.hpp"
#include "local/io/matrix_market.hpp"
#include "local/io/matrix_market_ranges.hpp"
#include "local/io/matrix_market_stream.hpp"

namespace tessera::io {
namespace {

/// Capacity to reserve for `entries` declared entries: the size line is not trusted with an
/// allocation (a corrupt one would throw bad_alloc instead of a line-numbered InputError).
std::size_t reserve_for(std::int64_t entries, bool mirrored) {
  constexpr std::int64_t kMaxReserve = std::int64_t{1} << 26;
  return static_cast<std::size_t>(std::min(entries * (mirrored ? 2 : 1), kMaxReserve));
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
  std::vector<MatrixMarketEntry> entries;
  for_each_expanded_entry(stream, [&](std::int64_t i, std::int64_t j, double v) {
    if (row_begin <= i && i < row_end) entries.push_back({i, j, v});
  });
  return row_block_from_entries(h.rows, h.cols, row_begin, row_end, entries);
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
