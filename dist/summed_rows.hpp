#pragma once
// The pattern of rows summed from partial rows: PtAP's last step (dist/ptap.hpp). Row r of the
// sum adds row r of this rank's own partial block (a rank-local product over compact columns)
// and the partial rows other ranks sent for r. The pattern and where each contribution goes are
// fixed once (symbolic); the numeric phase only adds values through that map.
//
// Most rows receive nothing (every row on one rank, all but a surface of rows on many): such a
// row is its own partial row as it is, split at the owned column range the way
// assemble_compact splits a product's rows. Its values are copied, and the map stores nothing
// for it. Only the rows that receive are sorted and merged, and only their contributions and the
// received ones carry positions.
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

/// Where the contributions go, as positions in the sum's values [local | non-local] (the order of
/// a DistMatrix's value blocks, which device sums write). Contributions are the own block's
/// entries of the owned rows (k < own.row_ptr[owned rows]), then the received entries in order.
/// A row that receives nothing takes its own row's entries one to one, in row order (global
/// column order), and the map keeps nothing for it.
struct SummationMap {
  std::int64_t own_entries = 0;           // the own block's entries in the owned rows
  std::vector<std::int64_t> merged_rows;  // the owned rows that receive, increasing
  // The own entries of merged row j go to own_positions[own_first[j] + i], i = 0, 1, ...
  std::vector<std::int64_t> own_first{0};
  HostArray<std::int64_t> own_positions;
  HostArray<std::int64_t> received_positions;  // received entry e -> its position
};

struct SummedPattern {
  DistMatrix sum;  // the pattern (values not set); square, rows and columns on the given partition
  SummationMap map;
};

/// Whether the sum is `own`'s owned rows as they are: nothing received, nothing in the rows for
/// other ranks, and `global_of` the owned columns from the first one on. That is one rank's sum
/// wherever every column is used. Then contribution i is the sum's entry i, and own_rows_as_sum
/// hands `own` over: no pattern to build, no values to add. Local.
bool sum_is_own_rows(const Csr<double>& own, const std::vector<std::int64_t>& global_of,
                     const ReceivedRows& received, const RowPartition& partition, int rank);

/// Collective: the same collectives as summed_pattern, in its order, so ranks may take either.
/// The sum where sum_is_own_rows(): `own`'s storage, cut to the owned rows, becomes the local
/// block (no ghosts); the map merges and receives nothing.
SummedPattern own_rows_as_sum(const Communicator& comm, Csr<double>&& own, const RowPartition& partition);

/// Collective (builds the halo plan). `own`'s first rows are this rank's rows under
/// `partition` (later rows are ignored: they are partial rows for other ranks), over the
/// columns `global_of` (increasing global columns); `own` must pass compact_block_error.
SummedPattern summed_pattern(const Communicator& comm, const Csr<double>& own,
                             const std::vector<std::int64_t>& global_of, const ReceivedRows& received,
                             const RowPartition& partition);

/// The sum's values from `own` (the block summed_pattern read, or one with its pattern and new
/// values) and `received` (map.received_positions.size() values, in order). Each entry is 0 plus
/// its contributions in contribution order (in a row that receives nothing, its own entry alone:
/// a copy), the order DeviceDistPtap's sum reproduces, so that both are bitwise the same. Local;
/// in parallel over rows.
void add_contributions(const SummationMap& map, const Csr<double>& own, const double* received, DistMatrix& sum);

/// Contribution i -> its position, for every contribution (a device plan's map; the rows that
/// receive nothing are laid out from the sum's pattern). Local.
std::vector<std::int64_t> contribution_positions(const SummationMap& map, const DistMatrix& sum);

}  // namespace tessera::dist
