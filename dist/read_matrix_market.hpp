#pragma once
// A Matrix Market file read in parallel: each rank parses a range of the file (about 1/P of
// its entries), not the whole, and the entries travel to the ranks that own their rows (one
// all-to-all): each rank's share of the parse falls as 1/P. A plain file is cut by bytes; a
// gzip'd file (its bytes cannot be sought) or a symmetric array (its entries' positions follow
// from all before them) by data lines, each rank reading the file from its start up to the end
// of its range and passing over, not parsing, the lines before it.
// The result, and every refusal with its message and line, are the whole-file reader's
// (io::read_matrix_market_rows), whose order of entries the exchange keeps, so duplicates are
// summed in the same order. One rank, or row ranges that do not tile the matrix in rank order,
// read the whole file on every rank instead, as io::read_matrix_market_rows does
// (docs/performance.md, sixty-first and sixty-second sessions, has the reads side by side).
#include <cstdint>
#include <string>

#include "dist/communicator.hpp"
#include "local/formats/dense.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::dist {

/// This rank's rows [row_begin, row_end). Collective; a malformed file is the same InputError
/// on every rank, naming the file's first bad line as the whole-file reader does. `route`, if
/// given, says how it was read ("byte ranges, one a rank", "data-line ranges, one a rank, each
/// read from the start" or "whole file on every rank"). The environment variable
/// TESSERA_MATRIX_MARKET_READ=whole forces the whole-file read (the ablation the drivers' load
/// times compare with).
RowBlock read_matrix_market_rows(const Communicator& comm, const std::string& path, std::int64_t row_begin,
                                 std::int64_t row_end, std::string* route = nullptr);

/// The same for a dense `array` file (a right-hand side, near-null vectors): this rank's rows,
/// column-major, as io::read_matrix_market_dense_rows gives them, read by ranges as above.
DenseMatrix read_matrix_market_dense_rows(const Communicator& comm, const std::string& path, std::int64_t row_begin,
                                          std::int64_t row_end, std::string* route = nullptr);

}  // namespace tessera::dist
