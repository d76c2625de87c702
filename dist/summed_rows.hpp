#pragma once
// The pattern of rows summed from partial rows: PtAP's last step (dist/ptap.hpp). Row r of the
// sum adds row r of this rank's own partial block (a rank-local product over compact columns)
// and the partial rows other ranks sent for r. The pattern and each contribution's entry are
// fixed once (symbolic); the numeric phase only adds values through that map.
//
// Most rows receive nothing (every row on one rank, all but a surface of rows on many): such a
// row is its own partial row as it is, split at the owned column range the way
// assemble_compact splits a product's rows. Only the rows that receive are sorted and merged.
// The result equals assemble() of the merged rows in global columns, bit for bit, without that
// detour (tests/dist/test_spgemm.cpp checks it).
#include <cstdint>
#include <vector>

#include "dist/dist_matrix.hpp"
#include "dist/partition.hpp"
#include "local/formats/csr.hpp"

namespace tessera::dist {

class Communicator;

/// Partial rows received for owned rows: item i adds `lengths[i]` entries to owned row
/// `row[i]`; their global columns are the next `lengths[i]` of `cols`.
struct ReceivedRows {
  const std::vector<std::int64_t>& row;
  const std::vector<std::int64_t>& lengths;
  const std::vector<std::int64_t>& cols;
};

struct SummedPattern {
  DistMatrix sum;  // the pattern, values 0; square, rows and columns on the given partition
  /// Contribution -> entry of `sum` in row order. Contributions are the own block's entries
  /// of the owned rows (k < own.row_ptr[owned rows]), then the received entries in order.
  HostArray<std::int64_t> target;
};

/// Whether the sum is `own`'s owned rows as they are: nothing received, nothing in the rows for
/// other ranks, and `global_of` the owned columns from the first one on. That is one rank's sum
/// wherever every column is used. Then contribution i is the sum's entry i in row order, and
/// own_rows_as_sum hands `own` over: no pattern to build, no values to add. Local.
bool sum_is_own_rows(const Csr<double>& own, const std::vector<std::int64_t>& global_of,
                     const ReceivedRows& received, const RowPartition& partition, int rank);

/// Collective: the same collectives as summed_pattern, in its order, so ranks may take either.
/// The sum where sum_is_own_rows(): `own`'s storage, cut to the owned rows, becomes the local
/// block (no ghosts).
DistMatrix own_rows_as_sum(const Communicator& comm, Csr<double>&& own, const RowPartition& partition);

/// Collective (builds the halo plan). `own`'s first rows are this rank's rows under
/// `partition` (later rows are ignored: they are partial rows for other ranks), over the
/// columns `global_of` (increasing global columns); `own` must pass compact_block_error.
SummedPattern summed_pattern(const Communicator& comm, const Csr<double>& own,
                             const std::vector<std::int64_t>& global_of, const ReceivedRows& received,
                             const RowPartition& partition);

}  // namespace tessera::dist
