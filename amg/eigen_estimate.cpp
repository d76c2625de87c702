#include "amg/eigen_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "amg/lanczos.hpp"
#include "local/host/entrywise.hpp"

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

namespace {

/// Owned entries in std::vector on the host; `apply` and `dot` are serial or distributed. The
/// entry-wise operations run by ranges on the rank's threads: each entry's formula is the
/// contract's, so any thread count gives the same bits (the dots are `dot`'s business).
struct HostLanczosSpace {
  using Vec = Vector;
  const Vector& sqrt_inv_diag;
  const std::function<void(const Vector& x, Vector& y)>& apply;
  const std::function<double(const Vector& x, const Vector& y)>& dot;
  Vector scaled = Vector(sqrt_inv_diag.size());

  Vec make() const { return Vec(sqrt_inv_diag.size()); }
  Vec zeros() const { return Vec(sqrt_inv_diag.size(), 0.0); }
  template <class Entry>
  void for_entries(Entry&& entry) const {
    host::for_entries(static_cast<std::int64_t>(sqrt_inv_diag.size()), entry);
  }
  void apply_scaled(const Vec& v, Vec& w) {
    for_entries([&](std::int64_t i) { scaled[i] = sqrt_inv_diag[i] * v[i]; });
    apply(scaled, w);
    for_entries([&](std::int64_t i) { w[i] *= sqrt_inv_diag[i]; });
  }
  void subtract(Vec& w, double a, const Vec& v, double b, const Vec& u) const {
    for_entries([&](std::int64_t i) { w[i] -= a * v[i] + b * u[i]; });
  }
  void divide(const Vec& x, double s, Vec& y) const {
    for_entries([&](std::int64_t i) { y[i] = x[i] / s; });
  }
};

}  // namespace

void lanczos_ritz(Vector v, const Vector& sqrt_inv_diag, int steps,
                  const std::function<void(const Vector& x, Vector& y)>& apply,
                  const std::function<double(const Vector& x, const Vector& y)>& dot, EigenEstimate& est) {
  HostLanczosSpace space{sqrt_inv_diag, apply, dot};
  lanczos_ritz(space, std::move(v), steps, est);
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
