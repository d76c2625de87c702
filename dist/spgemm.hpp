#pragma once
// C = A*B for row-partitioned A and B (B's row partition = A's column partition). C is
// row-partitioned like A, with B's column partition.
//   symbolic: fetch the rows of B behind A's ghost columns (RemoteRows over A's halo plan),
//             renumber A's columns and the local + received rows of B into one compact local
//             problem, multiply it with the local kernel, assemble C.
//   numeric (recompute): re-send B's values only, refill the compact operands, multiply again
//             and write C's values in place. Same patterns required, as MAT_REUSE_MATRIX.
#include <functional>

#include "dist/dist_matrix.hpp"
#include "dist/remote_rows.hpp"
#include "dist/stats.hpp"

namespace tessera::dist {

class Communicator;

/// The rank-local product behind the distributed ones: C = A*B keeping the structural pattern
/// (cancelled entries stay), so a numeric recompute reproduces the symbolic pattern. The host
/// default is ref::spgemm; the device backend plugs in the tile SpGEMM.
using LocalSpgemm = std::function<Csr<double>(const Csr<double>&, const Csr<double>&)>;
Csr<double> host_local_spgemm(const Csr<double>& a, const Csr<double>& b);

class DistSpgemm {
 public:
  /// Collective: symbolic and first numeric phase.
  /// keep_extended_result: also keep extended_result() (for PtAP's outer product).
  DistSpgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b,
             LocalSpgemm local = host_local_spgemm, bool keep_extended_result = false);
  /// Collective: new values of A and B (same patterns) -> new values of C.
  void recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& b);

  const DistMatrix& result() const { return c_; }
  /// Traffic and times of the last phase (constructor or recompute).
  const DistStats& stats() const { return stats_; }
  /// The symbolic result, for device numeric phases (dist/cuda/device_dist_spgemm.hpp): the
  /// remote-row plan and the compact operands of the local product (A_ext * B_ext, whose CSR
  /// entry order is the row order of result()'s values).
  const RemoteRows& remote_rows() const { return remote_; }
  const Csr<double>& a_extended() const { return a_ext_; }
  const Csr<double>& b_extended() const { return b_ext_; }
  /// extended_block(result()), kept up to date by recompute(), when asked for and result() has
  /// ghost columns (otherwise empty: the extended block is result().local). Built while C is
  /// split into owned and ghost columns, not copied from it afterwards.
  const Csr<double>& extended_result() const { return c_ext_; }

 private:
  void fill_b_values(const DistMatrix& b);
  Csr<double> multiply(const Communicator& comm);  // collective: throws on every rank if one fails

  LocalSpgemm local_;
  RemoteRows remote_;
  std::vector<std::int64_t> compact_to_global_;  // B_ext's columns, sorted global indices
  Csr<double> a_ext_;  // A's rows; columns: B's owned rows, then received rows
  Csr<double> b_ext_;  // B's owned rows, then received rows; compact columns
  DistMatrix c_;
  Csr<double> c_ext_;  // extended_block(c_), if kept and c_ has ghosts
  std::int64_t b_entries_ = 0;  // B's entries on this rank at the symbolic phase
  DistStats stats_;
};

/// One-shot C = A*B.
DistMatrix spgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, DistStats* stats = nullptr);

}  // namespace tessera::dist
