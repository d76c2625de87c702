// Host code only: the level's A on the device (its slot's copy), then device_lanczos_ritz on it.
#include "amg/cuda/dist_device_eigen_estimate.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "amg/cuda/device_eigen_estimate.hpp"
#include "amg/cuda/device_operator_slot.hpp"
#include "amg/cuda/device_row_kernels.hpp"
#include "amg/cuda/dist_device_operator.hpp"
#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {

EigenEstimate dist_device_estimate_lambda_max(dist::gpu::DeviceContext& ctx, const dist::DistMatrix& a,
                                              const Vector& inv_diag, int steps, double safety,
                                              DeviceOperatorSlot& device_a) {
  TESSERA_REQUIRE_INPUT(steps >= 0, "AMG eigenvalue estimate: ", steps, " Lanczos steps");
  TESSERA_ASSERT(inv_diag.size() == static_cast<std::size_t>(a.owned_rows()), "one 1/a_ii per owned row");
  EigenEstimate est;
  if (a.global_rows() == 0) return est;  // the host's bound is 0 then
  std::optional<trace::Step> step(std::in_place, "upload");
  const cudaStream_t s = ctx.compute();
  const std::int64_t n = a.owned_rows();
  dist::gpu::DeviceDistMatrix* da = nullptr;
  std::unique_ptr<LanczosWorkspace> work;
  std::shared_ptr<const tessera::cuda::DeviceBuffer<double>> d;
  tessera::cuda::DeviceBuffer<double> sqrt_inv_diag;
  // An allocation can fail on one rank only (out of memory): agree before the first NCCL call.
  // (The halo's exchange buffers are still made by the first product, as in the solve.)
  dist::call_collectively(ctx.comm(), "AMG eigenvalue estimate: upload", [&] {
    da = &device_operator(device_a, a, s);  // the strength phase's copy, if it made one
    work = std::make_unique<LanczosWorkspace>(n, steps, s);
    d = current_inverse_diagonal(device_a, a);  // `inv_diag` where the GPU divided it
    if (!d) {
      auto uploaded = std::make_shared<tessera::cuda::DeviceBuffer<double>>();
      uploaded->upload(inv_diag, s);
      d = std::move(uploaded);
    }
    sqrt_inv_diag.allocate(static_cast<std::size_t>(n), s);
    device_sqrt(n, d->data(), sqrt_inv_diag.data(), s);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  });
  // The host's bound from the device copy (one pass over A's entries there, not on the host).
  step.emplace("gershgorin");
  const double bound = device_dist_gershgorin_bound(da->local, da->nonlocal, d->data(), s);
  est.gershgorin = ctx.comm().allreduce(bound, dist::ReduceOp::max);
  step.emplace("lanczos");
  DistDeviceOperator op(ctx, *da);
  const DeviceSum sum = [&ctx](std::int64_t count, const double* x, const double* y) {
    return ctx.device_dot(count, x, y);
  };
  const EigenEstimate lanczos = device_lanczos_ritz(op, a.row_begin(), sqrt_inv_diag.data(), *work, sum);
  est.ritz = lanczos.ritz;
  est.steps = lanczos.steps;
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

DistEigenEstimator device_eigen_estimator(dist::gpu::DeviceContext& ctx) {
  return [&ctx](const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& inv_diag, int steps,
                double safety, DeviceOperatorSlot& device_a) {
    TESSERA_ASSERT(&comm == &ctx.comm(), "the device eigenvalue estimator runs on its context's communicator");
    return dist_device_estimate_lambda_max(ctx, a, inv_diag, steps, safety, device_a);
  };
}

}  // namespace tessera::amg::gpu
