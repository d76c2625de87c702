#pragma once
// Galerkin product C = P^T A P by the 1D hybrid of PETSc's scalable MPIAIJ PtAP and hypre:
//   1. AP = A*P row-wise (CompactSpgemm: remote rows of P fetched over A's halo). AP is never
//      assembled: its owned rows stay over the product's compact columns (sorted global ones).
//   2. Local outer product T = P_own^T (AP)_own over this rank's rows: T's rows are P's owned
//      columns plus P's ghost columns, its columns AP's compact ones. Steps 1 and 2 are one
//      LocalSpgemm::chain (or HeldExtendedA::chain when a backend holds A), so a device backend
//      keeps AP on the GPU between them. Rows of T for ghost
//      columns are partial rows of C owned elsewhere: they go back to their owners over P's
//      halo plan run in reverse.
//   3. Each owner sums its own partial rows and the received ones into C (rows and columns
//      partitioned like P's columns). C's pattern comes from T's rows directly
//      (dist/summed_rows.hpp): the rows that receive nothing are T's. Where a rank receives
//      nothing and sends nothing and T uses its owned columns from the first on (one rank, where
//      every coarse column is used), C is T itself, handed over: no pattern, no sum, no copy.
// The symbolic phase fixes every pattern and the summation map; recompute() re-sends values
// only and sums in the same order, so a refresh with the same values is bitwise identical.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "dist/compact_spgemm.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/halo_plan.hpp"
#include "dist/partition.hpp"
#include "dist/stats.hpp"
#include "dist/summed_rows.hpp"

namespace tessera::dist {

class Communicator;

/// The outer product T where the backend holding A made and kept it (ChainedProduct::on_device),
/// with what that backend needs to make C from it where T is (dist/cuda/device_summed_blocks.hpp):
/// C's owned rows that receive nothing are T's rows as they are.
struct KeptOuterProduct {
  std::shared_ptr<HeldOperand> t;         // T in the backend's type: C's owned rows first
  bool t_is_c = false;                    // C is T's owned rows, no more (result_is_own_partial)
  std::vector<std::int64_t> global_of;    // unless t_is_c: T's columns -> global columns, increasing
  std::vector<std::int64_t> merged_rows;  // unless t_is_c: C's owned rows that receive, increasing
};

class DistPtap {
 public:
  /// Collective. A square on P's row partition; P rectangular allowed. `a_extended`: where A*P
  /// gets A's extended block (see CompactSpgemm: copied by default, or another product's, or
  /// held by the backend). `p_transposed`: ref::transpose(extended_block(p)) where a backend
  /// made it already (the GPU backend transposes P where it merged it); otherwise the host
  /// transposes P here. Its shape and entry count are checked, its entries trusted.
  /// `held_p`: P and P^T where the backend holding A_ext made them (dist/extended_operand.hpp),
  /// which the first outer product then reads there (B_ext's host copy waits for the first
  /// recompute); ignored unless `a_extended` is held.
  DistPtap(const Communicator& comm, const DistMatrix& a, const DistMatrix& p, LocalSpgemm local = host_local_spgemm,
           ExtendedA a_extended = {}, std::optional<Csr<double>> p_transposed = std::nullopt,
           std::shared_ptr<HeldOperand> held_p = nullptr);
  /// Collective: new values of A and P (same patterns) -> new values of C.
  void recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& p);
  /// The same into `c`, the C that take_result() handed over (its shape and entry counts are
  /// checked on every rank, its pattern trusted).
  void recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& p, DistMatrix& c);

  /// C, refused after take_result().
  const DistMatrix& result() const;
  /// C handed over without a copy (an AMG level keeps its coarse operator, and the product no
  /// second one): once (asserted). Then result() is refused and recomputes write into the
  /// caller's C.
  DistMatrix take_result();
  /// The symbolic phase's outer product where the backend holding A made and kept it
  /// (ChainedProduct::on_device), for a caller that puts C there next (an AMG level's device copy,
  /// amg/dist/device_operator_slot.hpp): where C is T, T's owned rows are C's local block (the
  /// host's is their download); elsewhere they are C's rows that receive nothing. Null where the
  /// backend kept none, once taken, and after a recompute (whose values it does not hold).
  std::shared_ptr<KeptOuterProduct> take_device_result() { return std::move(device_result_); }
  const DistStats& stats() const { return stats_; }
  /// The symbolic result, for device numeric phases (dist/cuda/device_dist_ptap.hpp): the AP
  /// product (its output, as it is, is T's right operand), the return traffic of T's ghost-row
  /// entries, the count of T's entries in owned rows, and contribution i -> position in C's
  /// values [local | non-local] (contributions: T's owned-row entries, then the received ones;
  /// each entry sums its own in i order). `c` is this product's C: result() or the C handed over.
  const CompactSpgemm& ap_product() const { return ap_; }
  const ExchangePattern& return_pattern() const { return return_entries_; }
  std::int64_t owned_partial_entries() const { return owned_partial_; }
  std::vector<std::int64_t> contribution_positions(const DistMatrix& c) const;
  /// Whether C is T's owned rows as they are (sum_is_own_rows): contribution i is entry i.
  bool result_is_own_partial() const { return c_is_own_partial_; }
  /// P's local block transposed, with P's values of the last symbolic phase or recompute: the
  /// first rows of the outer product's left factor P_own^T, which equal ref::transpose(P.local)
  /// (for dist::transpose, so that an AMG level transposes P once).
  Csr<double> p_local_transposed() const;
  /// The same handed over without a copy (P^T's arrays, cut to those rows): this product needs
  /// P^T again only at the next recompute, which then makes it anew from P. Once between two
  /// recomputes (asserted), and neither this nor p_local_transposed() until that recompute.
  Csr<double> take_p_local_transposed();

 private:
  void transpose_p_once(const DistMatrix& p);
  // Collective: throws on every rank if one rank's P^T does not fit P.
  void take_p_transposed(const Communicator& comm, const DistMatrix& p, Csr<double>&& p_transposed);
  void refresh_p_transposed(const DistMatrix& p);
  Csr<double> outer_product(const Communicator& comm, const DistMatrix& p, HeldOperand* held_p = nullptr,
                            std::shared_ptr<HeldOperand>* on_device = nullptr);
  std::vector<double> received_contributions(const Communicator& comm, const Csr<double>& t) const;
  // device_result_ from the backend's T, once C's pattern and map are made.
  void keep_outer_product(std::shared_ptr<HeldOperand> t, const std::vector<std::int64_t>& global_of);
  // Collective: throws on every rank if one rank's `c` is not this product's C.
  void check_result_shape(const Communicator& comm, const DistMatrix& c) const;

  CompactSpgemm ap_;  // runs both local products (its backend's chain)
  Csr<double> p_transposed_;      // (P's owned rows over [owned | ghost] columns)^T
  // Its entry k <- P's value k of [local | nonlocal]: made at the first recompute (a setup that
  // is never refreshed does not pay for it).
  HostArray<std::int64_t> p_transposed_source_;
  bool p_transposed_taken_ = false;  // take_p_local_transposed() since the last refresh
  std::int64_t p_entries_ = 0;                      // P's entries at the symbolic phase
  std::int64_t p_local_entries_ = 0;                // P's local-block entries at the symbolic phase
  std::int64_t p_local_cols_ = 0;                   // P's owned columns: P^T's rows from P.local
  std::int64_t owned_partial_ = 0;  // entries of T in rows this rank owns
  ExchangePattern return_entries_;  // ghost-row entries back to their owners
  SummationMap sum_map_;            // where T's owned-row entries and the received ones go
  bool c_is_own_partial_ = false;   // C is T's owned rows (sum_is_own_rows)
  std::shared_ptr<KeptOuterProduct> device_result_;  // see take_device_result()
  std::int64_t entries_ = 0;          // C's owned entries
  std::int64_t local_entries_ = 0;    // of them in C's local block
  RowPartition c_partition_;          // C's rows and columns (P's columns)
  DistMatrix c_;
  bool result_taken_ = false;  // take_result(): c_ is empty, the caller holds C
  DistStats stats_;
};

/// One-shot C = P^T A P.
DistMatrix ptap(const Communicator& comm, const DistMatrix& a, const DistMatrix& p, DistStats* stats = nullptr);

}  // namespace tessera::dist
