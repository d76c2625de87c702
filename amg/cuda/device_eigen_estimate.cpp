// Host code only: queues lanczos.hpp's recurrence on device vectors with its scalars on the
// device (no synchronisation per step), then the host's tridiagonal eigenvalue on the
// downloaded alpha/beta.
#include "amg/cuda/device_eigen_estimate.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "amg/cuda/device_row_kernels.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;

/// The scalar block's layout: alpha[steps], beta[steps], the steps taken, a bound (the one-GPU
/// estimate's Gershgorin maximum).
LanczosScalars scalar_view(LanczosWorkspace& work) {
  double* s = work.scalars.data();
  return {s, s + work.steps, s + 2 * work.steps, work.steps};
}
double* bound_slot(LanczosWorkspace& work) { return work.scalars.data() + 2 * work.steps + 1; }

/// w = D^-1/2 A D^-1/2 v, as the host's apply_scaled (beta = 0: exactly d_i * x_i).
void apply_scaled(DeviceOperator& a_op, std::int64_t n, const double* sqrt_inv_diag, const double* v, double* scaled,
                  double* w) {
  tessera::cuda::diagonal_axpby(n, 1.0, sqrt_inv_diag, v, 0.0, scaled, a_op.stream());
  a_op.apply(1.0, scaled, 0.0, w);
  tessera::cuda::diagonal_axpby(n, 1.0, sqrt_inv_diag, w, 0.0, w, a_op.stream());
}

/// lanczos.hpp's loop, step for step: alpha_j = w^T v, w -= alpha_j v + beta_{j-1} v_prev,
/// beta_j = ||w|| (or stop), v_prev <- v, v <- w / beta_j. Every dot stays on the device.
void queue_lanczos(DeviceOperator& a_op, std::int64_t first_row, const double* sqrt_inv_diag, LanczosWorkspace& work,
                   const DeviceSum& sum) {
  const cudaStream_t s = a_op.stream();
  const std::int64_t n = a_op.rows();
  TESSERA_ASSERT(work.v.size() == static_cast<std::size_t>(n), "the Lanczos workspace was made for other rows");
  const LanczosScalars scalars = scalar_view(work);
  DeviceBuffer<double>&v = work.v, &v_prev = work.v_prev, &w = work.w, &scaled = work.scaled;
  tessera::cuda::zero(n, v_prev.data(), s);  // 0 * v_prev must be 0 at step 0, not NaN
  device_lanczos_start(first_row, n, v.data(), s);
  device_lanczos_normalize_start(n, sum(n, v.data(), v.data()), v.data(), s);
  for (int j = 0; j < scalars.steps; ++j) {
    apply_scaled(a_op, n, sqrt_inv_diag, v.data(), scaled.data(), w.data());
    device_lanczos_update(n, scalars, j, sum(n, w.data(), v.data()), v.data(), v_prev.data(), w.data(), s);
    device_lanczos_record_norm(scalars, j, sum(n, w.data(), w.data()), s);
    std::swap(v_prev, v);
    device_lanczos_next_vector(n, scalars, j, w.data(), v.data(), s);
  }
}

/// The recurrence queued, then one download: est.ritz, est.steps, and est.gershgorin from
/// whatever `queue_bound` (if any) wrote into the block's bound slot.
EigenEstimate run_lanczos(DeviceOperator& a_op, std::int64_t first_row, const double* sqrt_inv_diag,
                          LanczosWorkspace& work, const DeviceSum& sum,
                          const std::function<void(double* bound)>& queue_bound) {
  const cudaStream_t s = a_op.stream();
  const int steps = work.steps;
  if (queue_bound) queue_bound(bound_slot(work));
  queue_lanczos(a_op, first_row, sqrt_inv_diag, work, sum);

  const std::vector<double> host = work.scalars.download(s);  // the one synchronisation
  EigenEstimate est;
  est.steps = static_cast<int>(host[2 * steps]);
  const std::vector<double> alpha(host.begin(), host.begin() + est.steps);
  const std::vector<double> beta(host.begin() + steps, host.begin() + steps + std::max(est.steps - 1, 0));
  est.ritz = tridiagonal_max_eigenvalue(alpha, beta);
  est.gershgorin = std::max(0.0, host[2 * steps + 1]);  // the host's bound starts from 0
  return est;
}

}  // namespace

LanczosWorkspace::LanczosWorkspace(std::int64_t rows, int step_count, cudaStream_t stream)
    : steps(step_count),
      v(std::size_t(rows), stream),
      v_prev(std::size_t(rows), stream),
      w(std::size_t(rows), stream),
      scaled(std::size_t(rows), stream),
      scalars(std::size_t(2 * step_count + 2), stream) {
  TESSERA_REQUIRE_INPUT(step_count >= 0, "AMG eigenvalue estimate: ", step_count, " Lanczos steps");
  scalars.fill_bytes(0, stream);
}

EigenEstimate device_lanczos_ritz(DeviceOperator& a_op, std::int64_t first_row, const double* sqrt_inv_diag,
                                  LanczosWorkspace& work, const DeviceSum& sum) {
  EigenEstimate est = run_lanczos(a_op, first_row, sqrt_inv_diag, work, sum, {});
  est.gershgorin = 0;  // not computed here
  return est;
}

EigenEstimate device_estimate_lambda_max(const tessera::cuda::DeviceCsr<double>& a, CsrDeviceOperator& a_op,
                                         const double* inv_diag, int steps, double safety) {
  TESSERA_REQUIRE_INPUT(steps >= 0, "AMG eigenvalue estimate: ", steps, " Lanczos steps");
  if (a.rows == 0) return {};
  const cudaStream_t s = a_op.stream();
  DeviceBuffer<double> sqrt_inv_diag(static_cast<std::size_t>(a.rows), s);
  device_sqrt(a.rows, inv_diag, sqrt_inv_diag.data(), s);
  LanczosWorkspace work(a.rows, steps, s);
  tessera::cuda::DeviceDot dot;  // the deterministic dot CsrDeviceOperator::dot uses
  const DeviceSum sum = [&](std::int64_t n, const double* x, const double* y) { return dot.device_sum(n, x, y, s); };
  EigenEstimate est = run_lanczos(a_op, 0, sqrt_inv_diag.data(), work, sum,
                                  [&](double* bound) { device_gershgorin_max(a, inv_diag, bound, s); });
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

}  // namespace tessera::amg::gpu
