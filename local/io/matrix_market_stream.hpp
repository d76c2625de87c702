#pragma once
// MatrixMarketStream: the banner, size line and stored entries of a Matrix Market file, one
// entry at a time, every line checked. The public readers (matrix_market_read.cpp) build
// their matrices from it. Internal to local/io.
#include <cstdint>
#include <string>
#include <string_view>

#include "local/core/error.hpp"
#include "local/io/gz_line_reader.hpp"
#include "local/io/matrix_market.hpp"
#include "local/io/matrix_market_ranges.hpp"

namespace tessera::io {

/// Not a comment ('%' first) or a blank line.
bool is_data_line(std::string_view line);

class MatrixMarketStream {
 public:
  /// Opens `path` and reads its banner and size line.
  explicit MatrixMarketStream(const std::string& path);
  /// The entries of one range of a file whose banner and size line were read already (into
  /// `header`): a data line past the declared count is the error it is in the whole file, but
  /// the end of the range is not an error, and a symmetric file's two triangles are recorded
  /// (first_in_triangle) rather than refused: only all ranges together know the file's first.
  MatrixMarketStream(const std::string& path, const MatrixMarketHeader& header, const MatrixMarketRange& range);

  /// Makes the rest of this stream (opened on the whole file) one range of a parallel read, as
  /// the constructor above does: the data lines before `range.first` are passed over (counted,
  /// not parsed), and next() stops before data line `range.end`.
  void start_range(const DataLineRange& range);

  const MatrixMarketHeader& header() const { return header_; }
  bool is_coordinate() const { return header_.format == "coordinate"; }
  /// Symmetric or skew-symmetric: only one triangle is stored.
  bool mirrored() const { return header_.symmetry != "general"; }
  bool skew() const { return header_.symmetry == "skew-symmetric"; }

  /// The next entry as stored in the file (array entries get their implied position). After
  /// the last declared entry it checks that only comments and blank lines remain, then
  /// returns false.
  bool next(MatrixMarketEntry& entry);

  /// Byte offset where the next line starts: after the size line, that of the data section.
  std::int64_t offset() const { return lines_.offset(); }
  bool compressed() const { return lines_.compressed(); }
  /// +1: the lower triangle, -1: the upper.
  const TriangleEntry& first_in_triangle(int triangle) const { return triangle > 0 ? lower_ : upper_; }
  /// 1-based number of the line last read.
  std::int64_t line_number() const { return lines_.line_number(); }
  /// Data lines (entries as stored) before the next one, counted from the file's first.
  std::int64_t data_lines_read() const { return read_; }

  /// Throws InputError "<file>:<current line>: <problem>".
  template <class... Parts>
  [[noreturn]] void fail(const Parts&... problem) const {
    throw InputError(detail::concat(lines_.path(), ":", lines_.line_number(), ": ", problem...));
  }

 private:
  void read_banner();
  void read_size_line();
  bool next_data_line(std::string_view& line);
  void parse_coordinate(std::string_view line, MatrixMarketEntry& entry);
  void parse_array(std::string_view line, MatrixMarketEntry& entry);
  void advance_array_position();
  double parse_value(std::string_view token);
  std::int64_t parse_index(std::string_view token, const char* which, std::int64_t bound);
  void check_triangle(const MatrixMarketEntry& entry);

  GzLineReader lines_;
  MatrixMarketHeader header_;
  std::int64_t read_ = 0;              // data lines before the next one (from the range's first)
  bool range_ = false;                 // one range of a parallel read
  std::int64_t range_end_ = INT64_MAX;  // data line at which the range stops
  std::int64_t array_row_ = 0, array_col_ = 0;  // position of the next array entry
  TriangleEntry lower_, upper_;        // each triangle's first off-diagonal entry (mirrored files)
};

/// Calls fn(row, col, value) for every entry of the full matrix: each stored entry and, in
/// symmetric (skew-symmetric) files, the mirror (col, row) of each off-diagonal entry with the
/// same (negated) value.
template <class Fn>
void for_each_expanded_entry(MatrixMarketStream& stream, Fn&& fn) {
  const bool mirrored = stream.mirrored();
  const double mirror_sign = stream.skew() ? -1.0 : 1.0;
  MatrixMarketEntry e;
  while (stream.next(e)) {
    fn(e.row, e.col, e.value);
    if (mirrored && e.row != e.col) fn(e.col, e.row, mirror_sign * e.value);
  }
}

}  // namespace tessera::io
