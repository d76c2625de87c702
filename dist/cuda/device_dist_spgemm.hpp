#pragma once
// DeviceDistSpgemm: the numeric phase of dist::DistSpgemm resident on the rank's GPU (built
// only with CUDA): DeviceCompactSpgemm (values-only exchange of B's remote rows, the tile
// product over compact columns), then one gather of the product's values into C's local and
// non-local blocks. No host data moves and nothing synchronises.
//
//   DistSpgemm symbolic(comm, a, b);                 // host, once
//   DeviceDistSpgemm product(ctx, symbolic, a, b);   // maps + tile symbolic, once
//   DeviceDistMatrix da(a, s), db(b, s), dc(symbolic.result(), s);
//   product.recompute(da, db, dc);                   // per new values, device only
#include <cstdint>

#include "dist/cuda/device_compact_spgemm.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/spgemm.hpp"

namespace tessera::dist::gpu {

class DeviceDistSpgemm {
 public:
  /// `symbolic` was built from `a` and `b` (their patterns); the device operands of every
  /// recompute must have these patterns. Not collective: it can throw on one rank alone, so
  /// build it under dist::call_collectively before any rank calls recompute. Keeps a
  /// reference to `ctx`, which must outlive it (its buffers are freed on ctx's streams).
  DeviceDistSpgemm(DeviceContext& ctx, const DistSpgemm& symbolic, const DistMatrix& a, const DistMatrix& b);

  /// Collective (the value exchange): new values of a and b -> new values of c, where c is a
  /// DeviceDistMatrix of symbolic.result(). Ordered on ctx.compute(), returns without waiting.
  /// Operands of other sizes on any rank: InputError on every rank, before any NCCL call.
  void recompute(DeviceDistMatrix& a, DeviceDistMatrix& b, DeviceDistMatrix& c);

  /// The local product's plan (its work lists' sizes).
  const tessera::cuda::TileSpgemmInfo& info() const { return product_.info(); }

 private:
  DeviceContext& ctx_;
  std::int64_t a_nnz_ = 0, b_nnz_ = 0, c_local_nnz_ = 0, c_nonlocal_nnz_ = 0;
  DeviceCompactSpgemm product_;
  tessera::cuda::DeviceBuffer<std::int64_t> c_map_;  // C's [local | non-local] value -> product value
};

}  // namespace tessera::dist::gpu
