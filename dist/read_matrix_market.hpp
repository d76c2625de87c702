#pragma once
// A Matrix Market file read in parallel: each rank parses a byte range of the file (about
// 1/P of it), not the whole, and the entries travel to the ranks that own their rows (one
// all-to-all). Reading a 1 GB file on 4 ranks then costs each rank a quarter of the parse.
// The result, and every refusal with its message and line, are the whole-file reader's
// (io::read_matrix_market_rows), whose order of entries the exchange keeps, so duplicates are
// summed in the same order. One rank, a gzip'd file (its bytes cannot be sought), an array
// file, or row ranges that do not tile the matrix in rank order are read whole by every rank
// instead, as io::read_matrix_market_rows does. On this 2-core host, an 85 MB file (2.96M
// entries): 0.22 s on 2 ranks against 0.27-0.32 s whole (docs/performance.md, sixty-first
// session).
#include <cstdint>
#include <string>

#include "dist/communicator.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::dist {

/// This rank's rows [row_begin, row_end). Collective; a malformed file is the same InputError
/// on every rank, naming the file's first bad line as the whole-file reader does.
RowBlock read_matrix_market_rows(const Communicator& comm, const std::string& path, std::int64_t row_begin,
                                 std::int64_t row_end);

}  // namespace tessera::dist
