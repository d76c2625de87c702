// Host code only: the Lanczos recurrence as BLAS-1 calls on device vectors; the tridiagonal
// eigenvalue is the host's (a few scalars).
#include "amg/cuda/device_eigen_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "amg/cuda/device_row_kernels.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;

/// lanczos_ritz of eigen_estimate.cpp with device vectors of n entries.
void device_lanczos_ritz(DeviceOperator& a_op, const double* sqrt_inv_diag, std::int64_t n, int steps,
                         EigenEstimate& est) {
  namespace dv = tessera::cuda;
  const cudaStream_t s = a_op.stream();
  DeviceBuffer<double> v(n, s), v_prev(n, s), w(n, s), scaled(n, s);
  device_lanczos_start(n, v.data(), s);
  dv::zero(n, v_prev.data(), s);
  double norm = std::sqrt(a_op.dot(n, v.data(), v.data()));
  dv::axpby(n, 1.0 / norm, v.data(), 0.0, v.data(), s);

  std::vector<double> alpha, beta;
  for (int j = 0; j < steps; ++j) {  // w = D^-1/2 A D^-1/2 v
    dv::diagonal_axpby(n, 1.0, sqrt_inv_diag, v.data(), 0.0, scaled.data(), s);
    a_op.apply(1.0, scaled.data(), 0.0, w.data());
    dv::diagonal_axpby(n, 1.0, sqrt_inv_diag, w.data(), 0.0, w.data(), s);
    alpha.push_back(a_op.dot(n, w.data(), v.data()));
    const double beta_prev = beta.empty() ? 0.0 : beta.back();
    dv::axpby(n, -alpha.back(), v.data(), 1.0, w.data(), s);
    dv::axpby(n, -beta_prev, v_prev.data(), 1.0, w.data(), s);
    norm = std::sqrt(a_op.dot(n, w.data(), w.data()));
    if (j + 1 == steps || norm <= 1e-12 * std::abs(alpha.back())) break;  // done, or an invariant subspace
    beta.push_back(norm);
    std::swap(v_prev, v);
    dv::axpby(n, 1.0 / norm, w.data(), 0.0, v.data(), s);
  }
  est.steps = static_cast<int>(alpha.size());
  est.ritz = tridiagonal_max_eigenvalue(alpha, beta);
}

}  // namespace

EigenEstimate device_estimate_lambda_max(const tessera::cuda::DeviceCsr<double>& a, DeviceOperator& a_op,
                                         const double* inv_diag, int steps, double safety) {
  EigenEstimate est;
  est.gershgorin = device_gershgorin_bound(a, inv_diag, a_op.stream());
  if (a.rows == 0) return est;
  DeviceBuffer<double> sqrt_inv_diag(a.rows, a_op.stream());
  device_sqrt(a.rows, inv_diag, sqrt_inv_diag.data(), a_op.stream());
  device_lanczos_ritz(a_op, sqrt_inv_diag.data(), a.rows, steps, est);
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

}  // namespace tessera::amg::gpu
