// Host code only: the GPU versions of the distributed setup's steps, bound to one context.
#include "amg/cuda/device_setup_backend.hpp"

#include "amg/cuda/device_held_extended_a.hpp"
#include "amg/cuda/dist_device_eigen_estimate.hpp"
#include "amg/cuda/dist_device_graph_phases.hpp"
#include "amg/cuda/dist_device_operator_check.hpp"
#include "amg/cuda/dist_device_smoothing.hpp"
#include "amg/cuda/dist_device_tentative.hpp"
#include "dist/cuda/device_local_spgemm.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {

DistSetupBackend device_setup_backend(dist::gpu::DeviceContext& ctx, cuda::OffloadSpgemm which,
                                      std::shared_ptr<cuda::OffloadStats> stats) {
  if (!stats) stats = std::make_shared<cuda::OffloadStats>();
  TESSERA_CUDA_CHECK(cudaSetDevice(ctx.device()));  // the products and the hold keep the current device
  DistSetupBackend backend;
  backend.products = dist::device_local_spgemm(which, stats);
  backend.graph_phases = device_graph_phases(ctx.compute());
  backend.tentative = device_tentative(ctx.compute());
  backend.smoothing = device_smoothing(ctx.compute(), which, stats);
  backend.eigen_estimator = device_eigen_estimator(ctx);
  backend.check_operator = device_operator_check(ctx.compute());
  backend.inverse_diagonal = device_inverse_diagonal_step(ctx.compute());
  backend.held_extended_a = device_held_extended_a(ctx.compute(), which, stats);
  backend.host_coarse_factor = CoarseFactor::on_first_use;  // the device solve factors its own copy
  return backend;
}

}  // namespace tessera::amg::gpu
