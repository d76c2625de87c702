#pragma once
// DeviceCompactSpgemm: the numeric phase of dist::CompactSpgemm resident on the rank's GPU
// (built only with CUDA). The host CompactSpgemm does the symbolic work once (remote-row plan,
// compact operands); this class turns it into device value maps and a TileSpgemm plan, so a
// recompute on new values of A and B (same patterns) is, all on the device:
//   gather B's sent values -> grouped ncclSend/ncclRecv of values only (exchange stream),
//   meanwhile gather A's values into A_ext's tiles (compute stream),
//   gather B's owned and received values into B_ext's tiles, TileSpgemm::numeric.
// The product (C's owned rows over compact columns, tile form) stays on the device for the
// caller: DeviceDistSpgemm gathers it into C's blocks, DeviceDistPtap multiplies it again.
// No host data moves and nothing synchronises. Cancelled entries stay stored (structural
// pattern), as in the host product. Values match the host's up to the summation order inside
// the tile products (FP64 MMA); a recompute on the same values is bitwise reproducible (the
// tile SpGEMM sums every entry in a fixed order, skewed rows included).
#include <cstdint>
#include <memory>

#include "dist/compact_spgemm.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/value_maps.hpp"
#include "local/cuda/tile_spgemm.hpp"

namespace tessera::dist::gpu {

/// A held on the rank's GPU (an AMG level's copy, uploaded from and current with the host A passed
/// beside it), for the products that read it. `ext` is A_ext's tile operand: made from `matrix`
/// by the first product planned on it and shared by the next ones (A P_tent and A P read one
/// A_ext on the device, not one each).
struct HeldOperand {
  const DeviceDistMatrix* matrix = nullptr;
  std::shared_ptr<TiledOperand> ext;
};

class DeviceCompactSpgemm {
 public:
  /// `symbolic` was built from `a` and `b` (their patterns), with A copied on the host or held
  /// by a backend, and has multiplied once. A_ext's tiles and value map come from `held_a` when
  /// given (made from its device copy, or shared when another product made them: nothing of A
  /// is then tagged or moved on the host), else from `a` itself. Not collective: it can throw
  /// on one rank alone (see DeviceDistSpgemm). Keeps a reference to `ctx`, which must outlive it.
  DeviceCompactSpgemm(DeviceContext& ctx, const CompactSpgemm& symbolic, const DistMatrix& a, const DistMatrix& b,
                      HeldOperand* held_a = nullptr);

  /// Collective (the value exchange): A's and B's values as [local | non-local] -> product().
  /// Ordered on ctx.compute(), returns without waiting.
  void recompute(const ValueSources& a_values, const ValueSources& b_values);

  /// The product's tiles; its CSR entry order is the host product's. Empty (and never
  /// computed) when this rank's product has no entry: see multiplies().
  const tessera::cuda::DeviceTileMatrix<double>& product() const { return c_; }
  bool multiplies() const { return multiplies_; }
  /// The local product's plan (its work lists' sizes).
  const tessera::cuda::TileSpgemmInfo& info() const { return product_.info(); }

 private:
  DeviceContext& ctx_;
  ExchangePattern entries_;                             // RemoteRows' entry-level traffic
  tessera::cuda::DeviceBuffer<std::int64_t> send_map_;  // sent entry -> B value
  tessera::cuda::DeviceBuffer<double> send_, recv_;
  std::shared_ptr<TiledOperand> a_ext_;  // shared with other products on a held A
  TiledOperand b_ext_;                   // sources: B's values, then the received ones
  bool multiplies_ = false;     // false when this rank's product has no entry
  tessera::cuda::TileSpgemm<double> product_;
  tessera::cuda::DeviceTileMatrix<double> c_;
};

}  // namespace tessera::dist::gpu
