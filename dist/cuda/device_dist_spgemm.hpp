#pragma once
// DeviceDistSpgemm: the numeric phase of dist::DistSpgemm resident on the rank's GPU (built
// only with CUDA). The host DistSpgemm does the symbolic work once (remote-row plan, compact
// operands, C's pattern); this class turns it into device value maps and a TileSpgemm plan, so
// a recompute on new values of A and B (same patterns) is, all on the device:
//   gather B's sent values -> grouped ncclSend/ncclRecv of values only (exchange stream),
//   meanwhile gather A's values into A_ext's tiles (compute stream),
//   gather B's owned and received values into B_ext's tiles, TileSpgemm::numeric,
//   gather C's values into c's local and non-local blocks.
// No host data moves and nothing synchronises. Cancelled entries stay stored (structural
// pattern), as in the host product. Values match the host recompute up to the summation order
// inside the tile products (FP64 MMA); skewed rows that the tile SpGEMM pushes with atomics
// may differ in the last bits between calls, every other entry is bitwise reproducible.
//
//   DistSpgemm symbolic(comm, a, b);                 // host, once
//   DeviceDistSpgemm product(ctx, symbolic, a, b);   // maps + tile symbolic, once
//   DeviceDistMatrix da(a, s), db(b, s), dc(symbolic.result(), s);
//   product.recompute(da, db, dc);                   // per new values, device only
#include <cstdint>

#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/cuda/value_maps.hpp"
#include "dist/spgemm.hpp"
#include "local/cuda/tile_spgemm.hpp"

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
  /// The same on raw value arrays: a's and b's values as [local | non-local], c's written to
  /// `c_values` in the same layout (DeviceDistPtap keeps AP this way).
  void recompute(const ValueSources& a_values, const ValueSources& b_values, const ValueTargets& c_values);

  std::int64_t c_local_nnz() const { return c_local_nnz_; }
  std::int64_t c_nonlocal_nnz() const { return c_nonlocal_nnz_; }
  /// The local product's plan; push_tiles > 0 means atomics (see above).
  const tessera::cuda::TileSpgemmInfo& info() const { return product_.info(); }

 private:
  DeviceContext& ctx_;
  std::int64_t a_nnz_ = 0, b_nnz_ = 0, c_local_nnz_ = 0, c_nonlocal_nnz_ = 0;
  ExchangePattern entries_;                             // RemoteRows' entry-level traffic
  tessera::cuda::DeviceBuffer<std::int64_t> send_map_;  // sent entry -> B value
  tessera::cuda::DeviceBuffer<double> send_, recv_;
  TiledOperand a_ext_, b_ext_;  // B_ext's sources: B's values, then the received ones
  bool multiplies_ = false;     // false when this rank owns no entry of C
  tessera::cuda::TileSpgemm<double> product_;
  tessera::cuda::DeviceTileMatrix<double> c_ext_;
  tessera::cuda::DeviceBuffer<std::int64_t> c_map_;  // C's [local | non-local] value -> c_ext_ value
};

}  // namespace tessera::dist::gpu
