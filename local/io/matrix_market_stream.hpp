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

namespace tessera::io {

struct MatrixMarketEntry {
  std::int64_t row = 0, col = 0;  // 0-based
  double value = 0;
};

class MatrixMarketStream {
 public:
  /// Opens `path` and reads its banner and size line.
  explicit MatrixMarketStream(const std::string& path);

  const MatrixMarketHeader& header() const { return header_; }
  bool is_coordinate() const { return header_.format == "coordinate"; }
  /// Symmetric or skew-symmetric: only one triangle is stored.
  bool mirrored() const { return header_.symmetry != "general"; }
  bool skew() const { return header_.symmetry == "skew-symmetric"; }

  /// The next entry as stored in the file (array entries get their implied position). After
  /// the last declared entry it checks that only comments and blank lines remain, then
  /// returns false.
  bool next(MatrixMarketEntry& entry);

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
  double parse_value(std::string_view token);
  std::int64_t parse_index(std::string_view token, const char* which, std::int64_t bound);
  void check_triangle(const MatrixMarketEntry& entry);

  GzLineReader lines_;
  MatrixMarketHeader header_;
  std::int64_t read_ = 0;              // entries returned so far
  std::int64_t array_row_ = 0, array_col_ = 0;  // position of the next array entry
  int stored_triangle_ = 0;            // +1 lower, -1 upper, 0 none seen yet (mirrored files)
  std::int64_t triangle_line_ = 0;     // line that fixed stored_triangle_
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
