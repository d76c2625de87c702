#pragma once
// R = P^T's values refreshed on the device (built only with CUDA): dist/transpose_values.hpp's
// value map, run on device buffers. Every value of R is a copy of one value of P:
//   R's local block  <- P's local block, gathered on the rank;
//   R's non-local    <- the other ranks' non-local entries of P: gathered into a send buffer,
//                       exchanged over NCCL (values only, the map's fixed pattern), and gathered
//                       from the receive buffer into place.
// The result equals dist::refresh_transpose_values (and dist::transpose) of the same P bit for
// bit: copies only.
//
//   TransposeValueMap map = transpose_value_map(comm, p, r);   // host, collective, once
//   DeviceTransposeValues transpose(ctx, map);                 // uploads the maps
//   transpose.refresh(dp_local, dp_nonlocal, r_targets);       // each re-setup
#include <cstdint>

#include "dist/cuda/device_context.hpp"
#include "dist/cuda/value_maps.hpp"
#include "dist/transpose_values.hpp"

namespace tessera::dist::gpu {

class DeviceTransposeValues {
 public:
  /// Not collective (uploads; it can fail on one rank alone, so build it under
  /// dist::call_collectively). Keeps a reference to `ctx`, which must outlive it.
  DeviceTransposeValues(DeviceContext& ctx, const TransposeValueMap& map);

  /// Collective (the exchange): P's values [local | non-local] -> R's local and non-local
  /// values (`r.first_size` = R's local entries). Ordered on ctx.compute(), returns without
  /// waiting.
  void refresh(const ValueSources& p_values, const ValueTargets& r);

  std::int64_t p_entries() const { return p_entries_; }
  std::int64_t r_local_entries() const { return static_cast<std::int64_t>(local_source_.size()); }
  std::int64_t r_nonlocal_entries() const { return static_cast<std::int64_t>(nonlocal_source_.size()); }

 private:
  DeviceContext& ctx_;
  ExchangePattern pattern_;
  std::int64_t p_local_entries_ = 0, p_entries_ = 0;
  tessera::cuda::DeviceBuffer<std::int64_t> local_source_;     // R.local k <- P value (of [local | non-local])
  tessera::cuda::DeviceBuffer<std::int64_t> send_source_;      // sent item i <- P value
  tessera::cuda::DeviceBuffer<std::int64_t> nonlocal_source_;  // R.nonlocal k <- received item
  tessera::cuda::DeviceBuffer<double> send_, recv_;
};

}  // namespace tessera::dist::gpu
