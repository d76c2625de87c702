#pragma once
// A distributed re-setup's level transfer on the ranks' GPUs (DistSetupBackend's
// transfer_on_device): from the level's device copy of A (DistLevel::device_a, which the
// eigenvalue estimate has just made current), with every pattern, plan and map fixed by the
// host setup and its first re-setup,
//   A P_tent   dist::gpu::DeviceCompactSpgemm (values-only NCCL exchange of P_tent's remote rows);
//              A_F P_tent where the level smooths with its filtered operator, from A_F's device
//              copy (DistLevel::device_filtered), which the hierarchy's refresh of A_F and its
//              eigenvalue estimate have just made current
//   P          replay of P's merge record on the device (device_smoothing_replay.hpp)
//   A_c        dist::gpu::DeviceDistPtap into the coarse level's device copy of A
//   R = P^T    dist::gpu::DeviceTransposeValues (gathers, one exchange of values)
// then P, R and A_c's values are copied back into the host levels, so the host hierarchy stays
// the source of truth (its checks, the next level's host steps, the host cycle and the device
// preconditioner's refresh read it), and the coarse level's device copy is current without an
// upload. This replaces the host's A P_tent and P^T A P (their uploads of P_tent and P, their
// downloads of A P_tent and of the outer product), P's replay and R's transpose.
// Values equal the host transfer's up to the summation order of the tile products.
//
// Why on the device: at 7.1M rows on one H200 the host transfer was 0.27 s of a 0.40 s re-setup,
// mostly moving products' operands and results between host and GPU; with this one the repeated
// re-setup takes 0.23 s instead of 0.36-0.38 s (elasticity3d:48: 0.056 instead of 0.135 s).
// The plan is made on the device too (A_ext tagged from the level's copy and shared by both
// products, the tile conversions, the summation order: value_maps.hpp); it costs 0.73 s at 7.1M
// rows (0.20 s at elasticity3d:48), so it repays after about 5 (3) re-setups. Why opt-in (the
// caller adds it to the backend): its plans hold device memory, the peak rising from 2.4 to
// 9.1 GB at 7.1M rows (0.6 to 2.1 GB), 64-bit maps and a second copy of P and R among them
// (docs/performance.md, thirty-sixth session).
#include <memory>

#include "amg/dist/dist_hierarchy.hpp"
#include "amg/dist/dist_setup_backend.hpp"
#include "dist/cuda/device_context.hpp"

namespace tessera::dist {
struct TransposeValueMap;
namespace gpu {
class DeviceCompactSpgemm;
class DeviceDistPtap;
class DeviceTransposeValues;
struct DeviceDistMatrix;
}  // namespace gpu
}  // namespace tessera::dist

namespace tessera::amg::gpu {

class DeviceSmoothingReplay;

class DistDeviceTransfer final : public DistLevelTransfer {
 public:
  /// Not collective (device plans and uploads; build it under dist::call_collectively). `fine`
  /// has been re-set up on the host once (P's record made, when P is smoothed); `r_map` is
  /// R = P^T's value map. Makes or refreshes both levels' device copies of A. Keeps references
  /// to `ctx` and to the levels' matrices, which must outlive it.
  DistDeviceTransfer(dist::gpu::DeviceContext& ctx, const dist::TransposeValueMap& r_map, DistLevel& fine,
                     DistLevel& coarse);
  ~DistDeviceTransfer() override;

  /// Collective, as DistLevelTransfer::run (`comm` is the context's): recomputes P, R and A_c on
  /// the GPU, copies them into fine.p, fine.r and coarse.a, and leaves coarse's device copy
  /// current. Adds its times to fine.times.
  void run(const dist::Communicator& comm, DistLevel& fine, DistLevel& coarse) override;

 private:
  dist::gpu::DeviceContext& ctx_;
  bool smoothed_;
  std::shared_ptr<dist::gpu::DeviceDistMatrix> a_, c_;  // fine's and coarse's slot copies of A
  std::shared_ptr<dist::gpu::DeviceDistMatrix> a_filtered_;  // fine's slot copy of A_F; null without one
  std::unique_ptr<dist::gpu::DeviceDistMatrix> p_;
  tessera::cuda::DeviceBuffer<double> tent_;      // P_tent's values [local | non-local]: a re-setup keeps them
  tessera::cuda::DeviceBuffer<double> inv_diag_;  // fine's, uploaded each run
  std::unique_ptr<dist::gpu::DeviceCompactSpgemm> a_times_p_tent_;
  std::unique_ptr<DeviceSmoothingReplay> replay_;
  std::unique_ptr<dist::gpu::DeviceDistPtap> galerkin_;
  std::unique_ptr<dist::gpu::DeviceTransposeValues> transpose_;
  tessera::cuda::DeviceBuffer<double> r_local_, r_nonlocal_;
};

/// The GPU backend's transfer_on_device on `ctx`, which must outlive every hierarchy that
/// plans with it. Called with ctx.comm() only.
DistTransferOnDevice dist_device_transfer(dist::gpu::DeviceContext& ctx);

}  // namespace tessera::amg::gpu
