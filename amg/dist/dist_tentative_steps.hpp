#pragma once
// The steps of the distributed tentative prolongator (dist_tentative.hpp) that do not depend on
// where the per-aggregate QR runs: the host version (dist_tentative_prolongator) and the GPU
// one (amg/cuda/dist_device_tentative.hpp) share them, so both give the same P_tent.
//   check_tentative_input  the near-null rows and nodes against A's rows;
//   route_members       step 1: each aggregated dof whose aggregate another rank owns, with its
//                       near-null row, to that owner;
//   number_coarse_dofs  step 2's numbering: one coarse node per owned aggregate, numbered after
//                       those of lower ranks, and the coarse row partition;
//   return_q_rows       step 3: the Q rows of received dofs back to the dofs' owners;
//   tentative_blocks    P_tent from its rows of this rank's aggregates (the local block: their
//                       columns are owned coarse dofs) and the returned rows (the non-local one).
#include <cstdint>
#include <vector>

#include "amg/dist/dist_aggregation.hpp"
#include "amg/dist/dist_strength.hpp"
#include "local/formats/dense.hpp"

namespace tessera::amg {

/// Collective: the same InputError on every rank unless each rank's `b` is row-major with its
/// owned rows and k >= 1 columns, and `fine`'s nodes cover exactly those rows.
void check_tentative_input(const dist::Communicator& comm, const DistNodes& fine, const dist::DistMatrix& a,
                           const DenseMatrix& b);

struct AggregateMember {
  std::int64_t aggregate, dof;  // global ids
};

struct RoutedMembers {
  std::vector<AggregateMember> members;  // received, in increasing dof order
  std::vector<double> rows;              // their near-null rows, k values each
};

/// Collective. The dofs of `b`'s rows (this rank's, from global row `row_begin`) whose aggregate
/// another rank owns go to that owner; returns the members this rank's aggregates received.
RoutedMembers route_members(const dist::Communicator& comm, const DistAggregates& agg, const DistNodes& fine,
                            std::int64_t row_begin, const DenseMatrix& b);

struct CoarseNumbering {
  DistNodes nodes;           // one coarse node per owned aggregate, of the given sizes
  dist::RowPartition rows;   // coarse dofs by rank (not tile-aligned: Alignment::any)
};

/// Collective. `sizes[x]`: the coarse dofs of this rank's aggregate x, min(members, k).
CoarseNumbering number_coarse_dofs(const dist::Communicator& comm, const std::vector<std::int64_t>& sizes);

/// Row `dof` of P_tent holds columns [first_coarse, first_coarse + count), global ids.
struct QRow {
  std::int64_t dof, first_coarse, count;
};

/// Q rows by destination rank, each with k values (the first `count` of them used).
struct QRowsByRank {
  std::vector<std::vector<QRow>> rows;
  std::vector<std::vector<double>> values;
  QRowsByRank(int ranks, int k) : rows(static_cast<std::size_t>(ranks)), values(rows.size()), k_(k) {}
  void add(int rank, const QRow& row, const double* q) {
    rows[rank].push_back(row);
    values[rank].insert(values[rank].end(), q, q + k_);
  }

 private:
  int k_;
};

struct ReturnedQRows {
  std::vector<QRow> rows;
  std::vector<double> values;  // k a row
};

/// Collective. Sends each rank its Q rows; returns the ones addressed here.
ReturnedQRows return_q_rows(const dist::Communicator& comm, const QRowsByRank& to);

/// The rows of P_tent's non-local block that hold entries (rank-local dofs, increasing) and the
/// running total of entries after each (ptr[0] = 0): what the block's device copy makes its
/// offsets from, without a pass over every owned row.
struct ListedRows {
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> ptr{0};
};

/// Collective. P_tent: `own` (owned rows x owned coarse dofs, moved in) holds the rows of dofs
/// of this rank's aggregates, `returned` the rows of this rank's dofs that other ranks'
/// aggregates hold (columns owned elsewhere: the non-local block). Rows in neither stay empty.
/// With `nonlocal_rows`, the non-local block's listed rows go there too.
dist::DistMatrix tentative_blocks(const dist::Communicator& comm, Csr<double> own, const ReturnedQRows& returned,
                                  int k, const dist::RowPartition& row_partition,
                                  const dist::RowPartition& coarse_rows, ListedRows* nonlocal_rows = nullptr);

}  // namespace tessera::amg
