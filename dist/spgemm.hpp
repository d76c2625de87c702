#pragma once
// C = A*B for row-partitioned A and B (B's row partition = A's column partition). C is
// row-partitioned like A, with B's column partition.
//   symbolic: CompactSpgemm (remote rows of B, compact operands, the local product), then the
//             product's rows are split into C's owned and ghost columns (assemble_compact).
//   numeric (recompute): re-send B's values only, multiply again and write C's values in
//             place. Same patterns required, as MAT_REUSE_MATRIX.
#include "dist/compact_spgemm.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/stats.hpp"

namespace tessera::dist {

class Communicator;

class DistSpgemm {
 public:
  /// Collective: symbolic and first numeric phase.
  DistSpgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, LocalSpgemm local = host_local_spgemm);
  /// Collective: new values of A and B (same patterns) -> new values of C.
  void recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& b);

  const DistMatrix& result() const { return c_; }
  /// Traffic and times of the last phase (constructor or recompute).
  const DistStats& stats() const { return stats_; }
  /// The symbolic result, for device numeric phases (dist/cuda/device_dist_spgemm.hpp): the
  /// rank-local product, whose entry order is the row order of result()'s values.
  const CompactSpgemm& compact() const { return product_; }

 private:
  void finish_stats(const DistStats& from_product, double seconds);

  CompactSpgemm product_;
  DistMatrix c_;
  DistStats stats_;
};

/// One-shot C = A*B.
DistMatrix spgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, DistStats* stats = nullptr);

}  // namespace tessera::dist
