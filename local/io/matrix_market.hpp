#pragma once
// Matrix Market reader and writer.
// Reads `coordinate` real/integer/pattern with general/symmetric/skew-symmetric storage
// (symmetric and skew-symmetric expanded to both triangles; pattern entries get value 1)
// and `array` real general. `.gz` files are read directly (detected by their magic bytes).
// Duplicate coordinates are summed. Every malformed input throws InputError whose message
// names the file, the line number and the problem: bad banner, complex/hermitian field,
// missing size line, too few or too many entries, index 0 or out of range, non-numeric or
// NaN/Inf value, truncated file, empty file.
// Details: `array` symmetric/skew-symmetric files (one triangle, column-major) are expanded
// too; a symmetric file may store either triangle but not both (that would double entries);
// a pattern line carrying one value has it ignored (some SuiteSparse copies do this); numbers
// are parsed locale-independently. Writers write gzip when the path ends in ".gz".
#include <string>

#include "local/formats/csr.hpp"
#include "local/formats/dense.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::io {

struct MatrixMarketHeader {
  std::string format;    // "coordinate" | "array"
  std::string field;     // "real" | "integer" | "pattern"
  std::string symmetry;  // "general" | "symmetric" | "skew-symmetric"
  std::int64_t rows = 0, cols = 0, entries = 0;  // entries as stored in the file
};

/// Reads only the banner and size line.
MatrixMarketHeader read_matrix_market_header(const std::string& path);

/// Whole sparse matrix (coordinate or array format; array entries are all stored, zeros too).
Csr<double> read_matrix_market(const std::string& path);

/// Rows [row_begin, row_end) only, with 64-bit global columns: what one rank of a distributed
/// read keeps (the file is scanned once; entries of other rows are dropped as they are read).
RowBlock read_matrix_market_rows(const std::string& path, std::int64_t row_begin, std::int64_t row_end);

/// Dense `array` file (e.g. a right-hand side), column-major as the format stores it.
DenseMatrix read_matrix_market_dense(const std::string& path);
/// Rows [row_begin, row_end) of a dense `array` file (row_end -1: to the last row), column-major:
/// what one rank keeps of a distributed vector or multi-vector. The whole file is still parsed
/// and checked (every entry of another row is read and dropped), so a malformed file is refused
/// on every rank alike.
DenseMatrix read_matrix_market_dense_rows(const std::string& path, std::int64_t row_begin, std::int64_t row_end);

/// Writes `coordinate real general` with 17 significant digits (exact round trip of doubles).
void write_matrix_market(const std::string& path, const Csr<double>& a);
/// Writes `array real general`.
void write_matrix_market(const std::string& path, const DenseMatrix& x);

}  // namespace tessera::io
