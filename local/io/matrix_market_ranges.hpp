#pragma once
// The parts of a parallel Matrix Market read, which dist/read_matrix_market.hpp puts together
// over MPI. A plain coordinate or general array file is cut into byte ranges, one a rank: each
// rank counts its range's lines, then parses its entries with the line and entry numbers the
// counts give (an array's data line d is entry (d % rows, d / rows)). A gzip'd file, whose bytes
// cannot be sought, and a symmetric array, whose entries' positions follow from all before
// them, are cut into ranges of data lines instead: each rank reads the file from its start,
// passing over (not parsing) the lines before its range. Each entry then goes to the rank that
// owns its row. Every check of the whole-file reader holds, with its message and line: a bad
// line, a data line past the declared count, too few entries, a symmetric file storing both
// triangles (which only the ranges together can see).
#include <cstdint>
#include <string>
#include <vector>

#include "local/formats/row_block.hpp"
#include "local/io/matrix_market.hpp"

namespace tessera::io {

/// One entry of a matrix: 0-based global row and column, and its value.
struct MatrixMarketEntry {
  std::int64_t row = 0, col = 0;
  double value = 0;
};

/// A file's banner and size line, and whether it can be cut by bytes.
struct MatrixMarketLayout {
  MatrixMarketHeader header;
  std::int64_t data_begin = 0;       // byte offset of the line after the size line...
  std::int64_t data_first_line = 0;  // ...and its number
  std::int64_t bytes = 0;            // the file's size
  bool by_bytes = false;             // plain, and coordinate or a general array (not mirrored)
};
MatrixMarketLayout read_matrix_market_layout(const std::string& path);

/// Lines, and data lines among them (not comments or blank), that start in bytes [begin, end).
struct LineCounts {
  std::int64_t lines = 0, data_lines = 0;
};
LineCounts count_lines(const std::string& path, std::int64_t begin, std::int64_t end);

/// The lines that start in bytes [begin, end): the first is line `first_line` of the file and
/// data line `first_data_line` (0-based).
struct MatrixMarketRange {
  std::int64_t begin = 0, end = 0;
  std::int64_t first_line = 1, first_data_line = 0;
};

/// Data lines [first, end) of a file, counted from its first (0-based); the last range's end is
/// INT64_MAX: it reads to the end of the file and checks what follows the declared entries.
struct DataLineRange {
  std::int64_t first = 0, end = INT64_MAX;
};

/// The first off-diagonal entry of one triangle of a symmetric file (line 0: none).
struct TriangleEntry {
  std::int64_t line = 0, row = 0, col = 0;
};

/// One range's entries, expanded as the whole-file reader expands them (a symmetric file's
/// mirrors too), and the range's first problem, where it has one (parsing stops there; it is
/// returned, not thrown, so that the ranks can agree on the file's first).
struct RangeEntries {
  std::vector<MatrixMarketEntry> entries;  // in the file's order, each mirror after its entry
  std::string error;
  std::int64_t error_line = 0;
  TriangleEntry first_lower, first_upper;
  std::int64_t last_line = 0, data_lines = 0;  // where reading stopped (the last range: the file's end)
};
RangeEntries read_matrix_market_range(const std::string& path, const MatrixMarketHeader& header,
                                      const MatrixMarketRange& range);
RangeEntries read_matrix_market_range(const std::string& path, const DataLineRange& range);

/// The whole-file reader's message for a symmetric file's second triangle: `entry` lies in
/// `triangle` (+1 lower, -1 upper), the other triangle's first entry is on `other_line`.
std::string triangle_conflict(const std::string& path, const std::string& symmetry, const TriangleEntry& entry,
                              int triangle, std::int64_t other_line);

/// Rows [row_begin, row_end) from entries of those rows: sorted by column within each row,
/// duplicates summed in the order given (what every reader of rows returns).
RowBlock row_block_from_entries(std::int64_t global_rows, std::int64_t global_cols, std::int64_t row_begin,
                                std::int64_t row_end, const std::vector<MatrixMarketEntry>& entries);

}  // namespace tessera::io
