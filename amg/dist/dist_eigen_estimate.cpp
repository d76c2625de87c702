#include "amg/dist/dist_eigen_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "dist/spmv.hpp"

namespace tessera::amg {
namespace {

double gershgorin_bound(const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& inv_diag) {
  double bound = 0.0;
  for (std::int64_t i = 0; i < a.owned_rows(); ++i) {
    double row = 0.0;
    for (std::int64_t p = a.nonlocal.row_ptr[i]; p < a.nonlocal.row_ptr[i + 1]; ++p) row += std::abs(a.nonlocal.values[p]);
    for (std::int64_t p = a.local.row_ptr[i]; p < a.local.row_ptr[i + 1]; ++p) row += std::abs(a.local.values[p]);
    bound = std::max(bound, row * inv_diag[i]);
  }
  return comm.allreduce(bound, dist::ReduceOp::max);
}

}  // namespace

EigenEstimate dist_estimate_lambda_max(const dist::Communicator& comm, const dist::DistMatrix& a,
                                       const Vector& inv_diag, int steps, double safety) {
  EigenEstimate est;
  est.gershgorin = gershgorin_bound(comm, a, inv_diag);
  if (a.global_rows() == 0) return est;
  const std::size_t n = static_cast<std::size_t>(a.owned_rows());
  Vector sqrt_inv_diag(n), v(n), v_prev(n, 0.0), w(n);
  dist::DistVector scaled;
  scaled.owned.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    sqrt_inv_diag[i] = std::sqrt(inv_diag[i]), v[i] = lanczos_start_entry(static_cast<std::uint64_t>(a.row_begin()) + i);
  double norm = dist::norm2(comm, v);
  for (double& x : v) x /= norm;

  std::vector<double> alpha, beta;
  for (int j = 0; j < steps; ++j) {  // w = D^-1/2 A D^-1/2 v
    for (std::size_t i = 0; i < n; ++i) scaled.owned[i] = sqrt_inv_diag[i] * v[i];
    dist::spmv(comm, a, scaled, w);
    for (std::size_t i = 0; i < n; ++i) w[i] *= sqrt_inv_diag[i];
    alpha.push_back(dist::dot(comm, w, v));
    const double beta_prev = beta.empty() ? 0.0 : beta.back();
    for (std::size_t i = 0; i < n; ++i) w[i] -= alpha.back() * v[i] + beta_prev * v_prev[i];
    norm = dist::norm2(comm, w);
    if (j + 1 == steps || norm <= 1e-12 * std::abs(alpha.back())) break;  // done, or an invariant subspace
    beta.push_back(norm);
    v_prev.swap(v);
    for (std::size_t i = 0; i < n; ++i) v[i] = w[i] / norm;
  }
  est.steps = static_cast<int>(alpha.size());
  est.ritz = tridiagonal_max_eigenvalue(alpha, beta);
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

}  // namespace tessera::amg
