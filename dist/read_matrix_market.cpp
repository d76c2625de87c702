#include "dist/read_matrix_market.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

#include "local/core/error.hpp"
#include "local/io/matrix_market.hpp"
#include "local/io/matrix_market_ranges.hpp"

namespace tessera::dist {
namespace {

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();

/// read() on this rank; an InputError on any rank is thrown on every rank (the lowest failing
/// rank's text, as it is), so that none is left waiting in the next collective.
template <class Read>
auto agreed(const Communicator& comm, Read&& read) -> decltype(read()) {
  decltype(read()) result{};
  std::string error;
  try {
    result = read();
  } catch (const InputError& e) {
    error = e.what();
  }
  throw_if_any_rank_failed(comm, error);
  return result;
}

/// Whether the ranks' [begin, end) tile [0, rows) in rank order; `starts` gets each rank's begin.
bool ranges_tile(const Communicator& comm, std::int64_t rows, std::int64_t begin, std::int64_t end,
                 std::vector<std::int64_t>& starts) {
  starts = comm.allgather(begin);
  const std::vector<std::int64_t> ends = comm.allgather(end);
  if (starts.front() != 0 || ends.back() != rows) return false;
  for (int r = 0; r < comm.size(); ++r)
    if (starts[r] > ends[r] || (r > 0 && starts[r] != ends[r - 1])) return false;
  return true;
}

/// Rank r's byte range of the data section, and where its lines stand among the file's: every
/// rank counts its lines and data lines, and the counts of the ranks before it number its own.
io::MatrixMarketRange my_byte_range(const Communicator& comm, const std::string& path,
                                    const io::MatrixMarketLayout& l, std::int64_t& total_lines,
                                    std::int64_t& total_data_lines) {
  const std::int64_t data = l.bytes - l.data_begin, p = comm.size(), r = comm.rank();
  io::MatrixMarketRange range;
  range.begin = l.data_begin + data * r / p;
  range.end = l.data_begin + data * (r + 1) / p;
  const io::LineCounts mine = agreed(comm, [&] { return io::count_lines(path, range.begin, range.end); });
  const std::vector<std::int64_t> lines = comm.allgather(mine.lines), data_lines = comm.allgather(mine.data_lines);
  range.first_line = l.data_first_line;
  for (int q = 0; q < r; ++q) range.first_line += lines[q], range.first_data_line += data_lines[q];
  total_lines = l.data_first_line - 1;
  total_data_lines = 0;
  for (int q = 0; q < comm.size(); ++q) total_lines += lines[q], total_data_lines += data_lines[q];
  return range;
}

/// This rank's range's entries (or its first problem), and the file's count of lines and data
/// lines. By bytes where the file allows it; otherwise by data lines, rank r's share of the
/// declared entries, the last rank's range running on to the end of the file (whose counts it
/// then knows; where it stopped early, at a problem, that problem is reported before the counts).
io::RangeEntries my_range_entries(const Communicator& comm, const std::string& path,
                                  const io::MatrixMarketLayout& layout, std::int64_t& total_lines,
                                  std::int64_t& total_data_lines) {
  if (layout.by_bytes)
    return io::read_matrix_market_range(path, layout.header,
                                        my_byte_range(comm, path, layout, total_lines, total_data_lines));
  const std::int64_t d = layout.header.entries, p = comm.size(), r = comm.rank();
  const io::DataLineRange range{d * r / p, r + 1 == p ? INT64_MAX : d * (r + 1) / p};
  io::RangeEntries got = io::read_matrix_market_range(path, range);
  std::vector<std::int64_t> counts{r + 1 == p ? got.last_line : 0, r + 1 == p ? got.data_lines : 0};
  comm.allreduce_in_place(counts, ReduceOp::max);  // the last rank's
  total_lines = counts[0];
  total_data_lines = counts[1];
  return got;
}

/// The file's first problem over all ranges, as the whole-file reader reports it, thrown on
/// every rank: the earliest bad line, a symmetric file's second triangle (whose first entry
/// only all ranges together know), or too few entries.
void throw_first_problem(const Communicator& comm, const std::string& path, const io::MatrixMarketHeader& h,
                         const io::RangeEntries& got, std::int64_t total_lines, std::int64_t total_data_lines) {
  std::vector<std::int64_t> firsts{got.first_lower.line ? got.first_lower.line : kNone,
                                   got.first_upper.line ? got.first_upper.line : kNone};
  comm.allreduce_in_place(firsts, ReduceOp::min);
  std::int64_t line = got.error.empty() ? kNone : got.error_line;
  std::string message = got.error;
  if (firsts[0] != kNone && firsts[1] != kNone) {  // both triangles: the later first entry is the conflict
    const int second = firsts[0] > firsts[1] ? +1 : -1;
    const io::TriangleEntry& mine = second > 0 ? got.first_lower : got.first_upper;
    const std::int64_t conflict = std::max(firsts[0], firsts[1]);
    if (mine.line == conflict && conflict < line) {
      line = conflict;
      message = io::triangle_conflict(path, h.symmetry, mine, second, std::min(firsts[0], firsts[1]));
    }
  }
  const std::int64_t first = comm.allreduce(line, ReduceOp::min);
  if (first != kNone) {
    const std::int64_t holder = comm.allreduce(line == first ? std::int64_t{comm.rank()} : kNone, ReduceOp::min);
    throw InputError(comm.broadcast(message, static_cast<int>(holder)));
  }
  TESSERA_REQUIRE_INPUT(total_data_lines >= h.entries, path, ":", total_lines, ": file ends after ", total_data_lines,
                        " of the ", h.entries, " entries declared in the size line (truncated?)");
}

/// TESSERA_MATRIX_MARKET_READ: "whole" (on any rank) forces the whole-file read; unset or
/// "auto" does not; anything else is refused on every rank.
bool whole_read_forced(const Communicator& comm) {
  const char* env = std::getenv("TESSERA_MATRIX_MARKET_READ");
  const std::string value = env ? env : "auto";
  const bool known = value == "auto" || value == "whole";
  throw_if_any_rank_failed(comm, known ? "" : "TESSERA_MATRIX_MARKET_READ=" + value + ": expected auto or whole");
  return comm.allreduce(std::int64_t{value == "whole"}, ReduceOp::max) != 0;
}

/// Whether to read by ranges (then `starts` holds every rank's first row), and why not. One rank
/// gains nothing from ranges and would pay for the line count and the copies.
bool read_by_ranges(const Communicator& comm, const io::MatrixMarketLayout& layout, std::int64_t begin,
                    std::int64_t end, std::vector<std::int64_t>& starts, std::string* route) {
  const bool forced = whole_read_forced(comm);
  if (forced || comm.size() == 1 || !ranges_tile(comm, layout.header.rows, begin, end, starts)) {
    if (route)
      *route = forced ? "whole file on every rank (TESSERA_MATRIX_MARKET_READ=whole)" : "whole file on every rank";
    return false;
  }
  if (route)
    *route = layout.by_bytes ? "byte ranges, one a rank" : "data-line ranges, one a rank, each read from the start";
  return true;
}

/// This rank's rows' entries, read by ranges: each rank parses its range, and each entry goes to
/// the rank that owns its row, in file order within each range and the ranges in rank order, so
/// every rank receives its rows' entries in the order of the file.
std::vector<io::MatrixMarketEntry> owned_entries(const Communicator& comm, const std::string& path,
                                                 const io::MatrixMarketLayout& layout,
                                                 const std::vector<std::int64_t>& starts) {
  std::int64_t total_lines = 0, total_data_lines = 0;
  io::RangeEntries got = my_range_entries(comm, path, layout, total_lines, total_data_lines);
  throw_first_problem(comm, path, layout.header, got, total_lines, total_data_lines);
  const int p = comm.size();
  const auto owner = [&](std::int64_t row) {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), row) - starts.begin()) - 1;
  };
  std::vector<std::int64_t> send_counts(static_cast<std::size_t>(p), 0);
  for (const io::MatrixMarketEntry& e : got.entries) ++send_counts[owner(e.row)];
  std::vector<std::int64_t> next(static_cast<std::size_t>(p), 0);
  for (int q = 1; q < p; ++q) next[q] = next[q - 1] + send_counts[q - 1];
  std::vector<io::MatrixMarketEntry> send(got.entries.size());
  for (const io::MatrixMarketEntry& e : got.entries) send[next[owner(e.row)]++] = e;
  std::vector<io::MatrixMarketEntry>().swap(got.entries);  // freed before the exchange allocates
  return comm.alltoallv(send, send_counts, comm.alltoall(send_counts));
}

}  // namespace

RowBlock read_matrix_market_rows(const Communicator& comm, const std::string& path, std::int64_t row_begin,
                                 std::int64_t row_end, std::string* route) {
  const io::MatrixMarketLayout layout = agreed(comm, [&] { return io::read_matrix_market_layout(path); });
  std::vector<std::int64_t> starts;
  if (!read_by_ranges(comm, layout, row_begin, row_end, starts, route))  // every rank reads the whole file
    return agreed(comm, [&] { return io::read_matrix_market_rows(path, row_begin, row_end); });
  return io::row_block_from_entries(layout.header.rows, layout.header.cols, row_begin, row_end,
                                    owned_entries(comm, path, layout, starts));
}

DenseMatrix read_matrix_market_dense_rows(const Communicator& comm, const std::string& path, std::int64_t row_begin,
                                          std::int64_t row_end, std::string* route) {
  const io::MatrixMarketLayout layout = agreed(comm, [&] { return io::read_matrix_market_layout(path); });
  std::vector<std::int64_t> starts;
  // A coordinate file goes to the whole-file reader, which refuses it as a dense matrix.
  if (layout.header.format != "array" || !read_by_ranges(comm, layout, row_begin, row_end, starts, route)) {
    if (route && layout.header.format != "array") *route = "whole file on every rank";
    return agreed(comm, [&] { return io::read_matrix_market_dense_rows(path, row_begin, row_end); });
  }
  DenseMatrix x(row_end - row_begin, layout.header.cols, Layout::col_major);
  for (const io::MatrixMarketEntry& e : owned_entries(comm, path, layout, starts))
    x.at(e.row - row_begin, e.col) = e.value;
  return x;
}

}  // namespace tessera::dist
