#pragma once
// Rows built range by range, then stacked. A host loop that appends rows of unknown length
// (merges, splits) runs one RangeSplit range per thread, each into its own piece, as the
// serial loop would; stack_rows joins the pieces in range order into the one matrix the serial
// loop makes, bit for bit.
#include <cstdint>
#include <vector>

#include "local/formats/csr.hpp"
#include "local/formats/row_block.hpp"

namespace tessera {

/// The pieces one above the other (piece k's rows after piece k-1's), each with `cols`
/// columns; the pieces are emptied. Copies in parallel (host_ranges.hpp); a single piece is
/// moved.
Csr<double> stack_rows(std::vector<Csr<double>>& pieces, std::int64_t cols);

/// The same for row blocks of global columns: piece k holds the rows that follow piece k-1's
/// (its row_begin is their row_end), all of one global shape; at least one piece.
RowBlock stack_rows(std::vector<RowBlock>& pieces);

}  // namespace tessera
