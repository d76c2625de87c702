#pragma once
// DeviceDistPtap: the numeric phase of dist::DistPtap resident on the rank's GPU (built only
// with CUDA). On the host DistPtap's symbolic result, a recompute on new values of A and P
// (same patterns) runs on the device:
//   AP = A*P                 DeviceCompactSpgemm (values-only NCCL exchange of P's remote
//                            rows); AP stays in its tile form over compact columns
//   T  = P_own^T (AP)_own    a value gather into P^T's tiles, TileSpgemm::numeric on AP as is
//   T's ghost-row entries -> their owners, values only, over the fixed return pattern (NCCL)
//   C  = sum of the contributions per entry, in the host's fixed order: a precomputed
//        per-entry list and a sequential segmented sum (no atomics), so the sum is bitwise the
//        host DistPtap's for bitwise-equal contributions, and a recompute on the same values
//        is bitwise reproducible (the tile products use no atomics either).
//
//   DistPtap symbolic(comm, a, p);                    // host, once
//   DeviceDistPtap galerkin(ctx, symbolic, a, p);     // maps + tile symbolic, once (on the device)
//   galerkin.recompute(da, dp, dc);                   // dc: DeviceDistMatrix(symbolic.result())
#include <cstdint>

#include "dist/cuda/device_compact_spgemm.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/ptap.hpp"

namespace tessera::dist::gpu {

class DeviceDistPtap {
 public:
  /// `symbolic` was built from `a` and `p`. `held_a`, `held_p`: their device copies, if the
  /// caller has them (A_ext's and P^T's tiles and maps are then made or shared on the device).
  /// `c`: C where symbolic handed it over (DistPtap::take_result), else symbolic.result(). Not
  /// collective: it can throw on one rank alone, so build it under dist::call_collectively
  /// before any rank calls recompute. Keeps a reference to `ctx`, which must outlive it (its
  /// buffers are freed on ctx's streams).
  DeviceDistPtap(DeviceContext& ctx, const DistPtap& symbolic, const DistMatrix& a, const DistMatrix& p,
                 HeldOperand* held_a = nullptr, const DeviceDistMatrix* held_p = nullptr,
                 const DistMatrix* c = nullptr);

  /// Collective: new values of a and p -> new values of c (a DeviceDistMatrix of C). Ordered on
  /// ctx.compute(), returns without waiting. Operands of other sizes on any rank: InputError on
  /// every rank, before any NCCL call.
  void recompute(DeviceDistMatrix& a, DeviceDistMatrix& p, DeviceDistMatrix& c);

  /// Warp tasks of this rank's products (AP and the outer product) that walk listed pairs
  /// (skewed rows), so that tests can tell they ran.
  std::int64_t listed_tasks() const { return ap_.info().listed_tasks + outer_.info().listed_tasks; }

 private:
  DeviceContext& ctx_;
  DeviceCompactSpgemm ap_;
  std::int64_t a_nnz_ = 0, p_nnz_ = 0, c_local_nnz_ = 0, c_nonlocal_nnz_ = 0;
  TiledOperand p_transposed_;           // sources: P's values
  bool multiplies_ = false;             // false when T is empty on this rank
  tessera::cuda::TileSpgemm<double> outer_;
  tessera::cuda::DeviceTileMatrix<double> t_;
  ExchangePattern back_;                                // T's ghost-row entries to their owners
  tessera::cuda::DeviceBuffer<std::int64_t> send_map_;  // sent entry -> T tile value
  tessera::cuda::DeviceBuffer<double> send_, recv_;
  // C's [local | non-local] value o sums contributions order_[seg_ptr_[o] .. seg_ptr_[o+1]),
  // indices into [T's tile values | received values], in the host's summation order.
  tessera::cuda::DeviceBuffer<std::int64_t> seg_ptr_, order_;
};

}  // namespace tessera::dist::gpu
