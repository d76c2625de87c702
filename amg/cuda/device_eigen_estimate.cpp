// Host code only: lanczos.hpp's recurrence over device vectors; the tridiagonal eigenvalue is
// the host's (a few scalars).
#include "amg/cuda/device_eigen_estimate.hpp"

#include <algorithm>
#include <utility>

#include "amg/cuda/device_row_kernels.hpp"
#include "amg/lanczos.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;

/// lanczos.hpp's space on n-entry device vectors, ordered on the operator's stream; each dot
/// synchronises (its scalar steers the recurrence).
struct DeviceLanczosSpace {
  using Vec = DeviceBuffer<double>;
  DeviceOperator& a_op;
  const double* sqrt_inv_diag;
  std::int64_t n;
  Vec scaled = make();

  Vec make() const { return Vec(std::size_t(n), a_op.stream()); }
  Vec zeros() const {
    Vec z = make();
    tessera::cuda::zero(n, z.data(), a_op.stream());
    return z;
  }
  void apply_scaled(const Vec& v, Vec& w) {  // beta = 0: exactly the host's d_i * x_i
    tessera::cuda::diagonal_axpby(n, 1.0, sqrt_inv_diag, v.data(), 0.0, scaled.data(), a_op.stream());
    a_op.apply(1.0, scaled.data(), 0.0, w.data());
    tessera::cuda::diagonal_axpby(n, 1.0, sqrt_inv_diag, w.data(), 0.0, w.data(), a_op.stream());
  }
  double dot(const Vec& x, const Vec& y) { return a_op.dot(n, x.data(), y.data()); }
  void subtract(Vec& w, double a, const Vec& v, double b, const Vec& u) const {
    device_lanczos_subtract(n, a, v.data(), b, u.data(), w.data(), a_op.stream());
  }
  void divide(const Vec& x, double s, Vec& y) const { device_divide(n, x.data(), s, y.data(), a_op.stream()); }
};

}  // namespace

EigenEstimate device_estimate_lambda_max(const tessera::cuda::DeviceCsr<double>& a, DeviceOperator& a_op,
                                         const double* inv_diag, int steps, double safety) {
  EigenEstimate est;
  est.gershgorin = device_gershgorin_bound(a, inv_diag, a_op.stream());
  if (a.rows == 0) return est;
  DeviceBuffer<double> sqrt_inv_diag(a.rows, a_op.stream());
  device_sqrt(a.rows, inv_diag, sqrt_inv_diag.data(), a_op.stream());
  DeviceLanczosSpace space{a_op, sqrt_inv_diag.data(), a.rows};
  DeviceBuffer<double> start = space.make();
  device_lanczos_start(a.rows, start.data(), a_op.stream());
  lanczos_ritz(space, std::move(start), steps, est);
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

}  // namespace tessera::amg::gpu
