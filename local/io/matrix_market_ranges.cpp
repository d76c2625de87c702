#include "local/io/matrix_market_ranges.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>
#include <utility>

#include "local/core/error.hpp"
#include "local/io/gz_line_reader.hpp"
#include "local/io/matrix_market_stream.hpp"

namespace tessera::io {

MatrixMarketLayout read_matrix_market_layout(const std::string& path) {
  MatrixMarketStream stream(path);
  MatrixMarketLayout layout;
  layout.header = stream.header();
  layout.data_begin = stream.offset();
  layout.data_first_line = stream.line_number() + 1;
  layout.by_bytes = (stream.is_coordinate() || layout.header.symmetry == "general") && !stream.compressed();
  if (layout.by_bytes) layout.bytes = static_cast<std::int64_t>(std::filesystem::file_size(path));
  return layout;
}

LineCounts count_lines(const std::string& path, std::int64_t begin, std::int64_t end) {
  GzLineReader lines(path, begin, end, 1);
  LineCounts counts;
  std::string_view line;
  while (lines.next(line)) {
    ++counts.lines;
    if (is_data_line(line)) ++counts.data_lines;
  }
  return counts;
}

namespace {

/// The entries of the range that open() makes of `stream`, or its first problem.
template <class Open>
RangeEntries read_range(std::optional<MatrixMarketStream>& stream, Open&& open, std::int64_t first_line) {
  RangeEntries out;
  try {  // every failure is returned, never thrown: the caller agrees on it with the other ranks
    open();
    const double mirror_sign = stream->skew() ? -1.0 : 1.0;
    MatrixMarketEntry e;
    while (stream->next(e)) {  // as for_each_expanded_entry
      out.entries.push_back(e);
      if (stream->mirrored() && e.row != e.col) out.entries.push_back({e.col, e.row, mirror_sign * e.value});
    }
  } catch (const InputError& e) {
    out.error = e.what();
    out.error_line = stream ? stream->line_number() : first_line;
  }
  if (!stream) return out;
  out.first_lower = stream->first_in_triangle(+1);
  out.first_upper = stream->first_in_triangle(-1);
  out.last_line = stream->line_number();
  out.data_lines = stream->data_lines_read();
  return out;
}

}  // namespace

RangeEntries read_matrix_market_range(const std::string& path, const MatrixMarketHeader& header,
                                      const MatrixMarketRange& range) {
  std::optional<MatrixMarketStream> stream;
  return read_range(stream, [&] { stream.emplace(path, header, range); }, range.first_line);
}

RangeEntries read_matrix_market_range(const std::string& path, const DataLineRange& range) {
  std::optional<MatrixMarketStream> stream;
  return read_range(
      stream,
      [&] {
        stream.emplace(path);  // the banner and size line again: the data lines are counted from the file's start
        stream->start_range(range);
      },
      1);
}

std::string triangle_conflict(const std::string& path, const std::string& symmetry, const TriangleEntry& entry,
                              int triangle, std::int64_t other_line) {
  return detail::concat(path, ":", entry.line, ": entry (", entry.row + 1, ", ", entry.col + 1, ") is ",
                        triangle > 0 ? "below" : "above", " the diagonal but line ", other_line, " is ",
                        triangle > 0 ? "above" : "below", " it: a ", symmetry, " file stores one triangle only");
}

RowBlock row_block_from_entries(std::int64_t global_rows, std::int64_t global_cols, std::int64_t row_begin,
                                std::int64_t row_end, const std::vector<MatrixMarketEntry>& entries) {
  RowBlock block;
  block.global_rows = global_rows;
  block.global_cols = global_cols;
  block.row_begin = row_begin;
  block.row_end = row_end;
  // Bucket by row, sort each row by column (stably: duplicates are summed in the order given).
  std::vector<std::int64_t> start(static_cast<std::size_t>(block.local_rows()) + 1, 0);
  for (const MatrixMarketEntry& e : entries) ++start[e.row - row_begin + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::pair<std::int64_t, double>> by_row(entries.size());
  std::vector<std::int64_t> cursor(start.begin(), start.end() - 1);
  for (const MatrixMarketEntry& e : entries) by_row[cursor[e.row - row_begin]++] = {e.col, e.value};
  block.row_ptr.assign(start.size(), 0);
  block.col.reserve(entries.size());
  block.values.reserve(entries.size());
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
  return block;
}

}  // namespace tessera::io
