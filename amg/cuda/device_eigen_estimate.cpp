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

/// One device buffer for everything the host needs back: alpha[steps], beta[steps], the steps
/// taken, the Gershgorin maximum.
struct ScalarBlock {
  int steps;
  DeviceBuffer<double> data;
  ScalarBlock(int step_count, cudaStream_t s) : steps(step_count), data(std::size_t(2 * step_count + 2), s) {
    data.fill_bytes(0, s);
  }
  LanczosScalars view() { return {data.data(), data.data() + steps, data.data() + 2 * steps, steps}; }
  double* gershgorin() { return data.data() + 2 * steps + 1; }
};

/// w = D^-1/2 A D^-1/2 v, as the host's apply_scaled (beta = 0: exactly d_i * x_i).
void apply_scaled(CsrDeviceOperator& a_op, std::int64_t n, const double* sqrt_inv_diag, const double* v,
                  double* scaled, double* w) {
  tessera::cuda::diagonal_axpby(n, 1.0, sqrt_inv_diag, v, 0.0, scaled, a_op.stream());
  a_op.apply(1.0, scaled, 0.0, w);
  tessera::cuda::diagonal_axpby(n, 1.0, sqrt_inv_diag, w, 0.0, w, a_op.stream());
}

/// lanczos.hpp's loop, step for step: alpha_j = w^T v, w -= alpha_j v + beta_{j-1} v_prev,
/// beta_j = ||w|| (or stop), v_prev <- v, v <- w / beta_j. Every dot stays on the device.
void queue_lanczos(CsrDeviceOperator& a_op, std::int64_t n, const double* sqrt_inv_diag, LanczosScalars scalars) {
  const cudaStream_t s = a_op.stream();
  const std::size_t size = static_cast<std::size_t>(n);
  DeviceBuffer<double> v(size, s), v_prev(size, s), w(size, s), scaled(size, s);
  tessera::cuda::zero(n, v_prev.data(), s);  // 0 * v_prev must be 0 at step 0, not NaN
  tessera::cuda::DeviceDot dot;              // the deterministic dot CsrDeviceOperator::dot uses
  device_lanczos_start(n, v.data(), s);
  device_lanczos_normalize_start(n, dot.device_sum(n, v.data(), v.data(), s), v.data(), s);
  for (int j = 0; j < scalars.steps; ++j) {
    apply_scaled(a_op, n, sqrt_inv_diag, v.data(), scaled.data(), w.data());
    device_lanczos_update(n, scalars, j, dot.device_sum(n, w.data(), v.data(), s), v.data(), v_prev.data(), w.data(), s);
    device_lanczos_record_norm(scalars, j, dot.device_sum(n, w.data(), w.data(), s), s);
    std::swap(v_prev, v);
    device_lanczos_next_vector(n, scalars, j, w.data(), v.data(), s);
  }
}

}  // namespace

EigenEstimate device_estimate_lambda_max(const tessera::cuda::DeviceCsr<double>& a, CsrDeviceOperator& a_op,
                                         const double* inv_diag, int steps, double safety) {
  TESSERA_REQUIRE_INPUT(steps >= 0, "AMG eigenvalue estimate: ", steps, " Lanczos steps");
  EigenEstimate est;
  if (a.rows == 0) return est;
  const cudaStream_t s = a_op.stream();
  ScalarBlock block(steps, s);
  device_gershgorin_max(a, inv_diag, block.gershgorin(), s);
  DeviceBuffer<double> sqrt_inv_diag(static_cast<std::size_t>(a.rows), s);
  device_sqrt(a.rows, inv_diag, sqrt_inv_diag.data(), s);
  queue_lanczos(a_op, a.rows, sqrt_inv_diag.data(), block.view());

  const std::vector<double> host = block.data.download(s);  // the one synchronisation
  est.steps = static_cast<int>(host[2 * steps]);
  const std::vector<double> alpha(host.begin(), host.begin() + est.steps);
  const std::vector<double> beta(host.begin() + steps, host.begin() + steps + std::max(est.steps - 1, 0));
  est.ritz = tridiagonal_max_eigenvalue(alpha, beta);
  est.gershgorin = std::max(0.0, host[2 * steps + 1]);  // the host's bound starts from 0
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

}  // namespace tessera::amg::gpu
