#pragma once
// Distributed tentative prolongator: the serial per-aggregate Householder QR
// (amg/tentative_prolongator.hpp, thin_qr) on the aggregate's owner. An aggregate may have
// members on several ranks (it is owned by the rank of its root), so:
//   1. every rank routes each aggregated dof it owns whose aggregate another rank owns --
//      (aggregate, global dof) and its k near-null values -- to the aggregate's owner (one
//      all-to-all of counts + two of data); dofs of its own aggregates are read in place;
//   2. the owner orders an aggregate's rows by global dof (the serial order), factors
//      B_agg = Q R, keeps R as its rows of the coarse near-null space, and numbers the
//      aggregate's c = min(m, k) coarse dofs after those of its earlier aggregates and of lower
//      ranks (the serial numbering: aggregates in global order, each contiguous);
//   3. the Q row of every received dof goes back to the dof's owner (same route reversed);
//      each rank assembles its rows of P_tent: rows of its own aggregates' dofs are the local
//      block, returned rows the non-local one. Non-aggregated dofs keep empty rows.
// The coarse level's rows are partitioned by those counts (not tile-aligned: Alignment::any).
// Steps 1 and 3 and the numbering are dist_tentative_steps.hpp's, shared with the GPU version
// (amg/cuda/dist_device_tentative.hpp), which groups and factors the aggregates on the device.
#include "amg/dist/dist_aggregation.hpp"
#include "amg/dist/dist_strength.hpp"
#include "dist/extended_operand.hpp"
#include "local/formats/dense.hpp"

namespace tessera::amg {

struct DistTentative {
  dist::DistMatrix p;           // fine rows x coarse dofs
  DenseMatrix coarse_vectors;   // owned coarse dofs x k, row-major
  DistNodes coarse_nodes;       // one coarse node per owned aggregate
  /// P's two blocks where a backend made them too (the GPU's: amg::gpu::device_tentative), for
  /// the first product A*P_tent, which then assembles its B_ext there (dist::CompactSpgemm's
  /// held_b) instead of building it on the host and uploading it; null on the host.
  std::shared_ptr<dist::HeldOperand> held_p;
};

/// Collective. `fine` is the node layout `aggregates` refers to, `a` the fine operator (its
/// row partition is P's), `b` the owned rows x k near-null space.
DistTentative dist_tentative_prolongator(const dist::Communicator& comm, const DistAggregates& aggregates,
                                         const DistNodes& fine, const dist::DistMatrix& a, const DenseMatrix& b);

}  // namespace tessera::amg
