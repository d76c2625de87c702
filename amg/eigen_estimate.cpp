#include "amg/eigen_estimate.hpp"

#include <utility>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tessera::amg {
namespace {

/// Number of eigenvalues of the tridiagonal matrix smaller than x (Sturm sequence).
int count_below(const std::vector<double>& alpha, const std::vector<double>& beta, double x) {
  int count = 0;
  double d = 1.0;
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    const double b2 = i ? beta[i - 1] * beta[i - 1] : 0.0;
    d = alpha[i] - x - (i ? b2 / d : 0.0);
    if (d == 0.0) d = -1e-300;  // perturb an exact zero pivot; the count stays right
    count += d < 0;
  }
  return count;
}

double gershgorin_bound(const Csr<double>& a, const Vector& inv_diag) {
  double bound = 0.0;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double row = 0.0;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) row += std::abs(a.values[p]);
    bound = std::max(bound, row * inv_diag[i]);
  }
  return bound;
}

}  // namespace

double lanczos_start_entry(std::uint64_t i) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

double tridiagonal_max_eigenvalue(const std::vector<double>& alpha, const std::vector<double>& beta) {
  if (alpha.empty()) return 0.0;
  double lo = alpha[0], hi = alpha[0];
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    const double radius = (i ? std::abs(beta[i - 1]) : 0.0) + (i + 1 < alpha.size() ? std::abs(beta[i]) : 0.0);
    lo = std::min(lo, alpha[i] - radius);
    hi = std::max(hi, alpha[i] + radius);
  }
  const int n = static_cast<int>(alpha.size());
  for (int it = 0; it < 200 && hi - lo > 1e-15 * std::max(std::abs(lo), std::abs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    (count_below(alpha, beta, mid) < n ? lo : hi) = mid;
  }
  return hi;
}

void lanczos_ritz(Vector v, const Vector& sqrt_inv_diag, int steps,
                  const std::function<void(const Vector& x, Vector& y)>& apply,
                  const std::function<double(const Vector& x, const Vector& y)>& dot, EigenEstimate& est) {
  const std::size_t n = v.size();
  Vector v_prev(n, 0.0), w(n), scaled(n);
  double norm = std::sqrt(dot(v, v));
  for (double& x : v) x /= norm;

  std::vector<double> alpha, beta;
  for (int j = 0; j < steps; ++j) {  // w = D^-1/2 A D^-1/2 v
    for (std::size_t i = 0; i < n; ++i) scaled[i] = sqrt_inv_diag[i] * v[i];
    apply(scaled, w);
    for (std::size_t i = 0; i < n; ++i) w[i] *= sqrt_inv_diag[i];
    alpha.push_back(dot(w, v));
    const double beta_prev = beta.empty() ? 0.0 : beta.back();
    for (std::size_t i = 0; i < n; ++i) w[i] -= alpha.back() * v[i] + beta_prev * v_prev[i];
    norm = std::sqrt(dot(w, w));
    if (j + 1 == steps || norm <= 1e-12 * std::abs(alpha.back())) break;  // done, or an invariant subspace
    beta.push_back(norm);
    v_prev.swap(v);
    for (std::size_t i = 0; i < n; ++i) v[i] = w[i] / norm;
  }
  est.steps = static_cast<int>(alpha.size());
  est.ritz = tridiagonal_max_eigenvalue(alpha, beta);
}

EigenEstimate estimate_lambda_max(const Csr<double>& a, const Vector& inv_diag, int steps, double safety,
                                  const LevelOps& ops) {
  EigenEstimate est;
  est.gershgorin = gershgorin_bound(a, inv_diag);
  const std::size_t n = static_cast<std::size_t>(a.rows);
  if (n == 0) return est;
  Vector sqrt_inv_diag(n), v(n);
  for (std::size_t i = 0; i < n; ++i) sqrt_inv_diag[i] = std::sqrt(inv_diag[i]), v[i] = lanczos_start_entry(i);
  lanczos_ritz(std::move(v), sqrt_inv_diag, steps, [&](const Vector& x, Vector& y) { ops.apply(a, x, y); }, ops.dot,
               est);
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

}  // namespace tessera::amg
