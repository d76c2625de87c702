#include "amg/smoother.hpp"

#include <cmath>
#include <utility>

#include "local/host/entrywise.hpp"

namespace tessera::amg {
namespace {

void chebyshev(const Csr<double>& a, const Smoother& s, const Vector& b, Vector& x, bool x_is_zero, SmootherWork& w,
               const LevelOps& ops) {
  const auto n = static_cast<std::int64_t>(b.size());
  const double theta = 0.5 * (s.upper + s.lower), delta = 0.5 * (s.upper - s.lower);
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  if (x_is_zero) {
    host::copy(b, w.r);
  } else {
    ops.residual(a, x, b, w.r);
  }
  host::for_entries(n, [&](std::int64_t i) { w.d[i] = s.inv_diag[i] * w.r[i] / theta; });
  for (int k = 1;; ++k) {
    host::for_entries(n, [&](std::int64_t i) { x[i] += w.d[i]; });
    if (k == s.steps) break;
    ops.residual(a, x, b, w.r);
    const double rho_next = 1.0 / (2.0 * sigma - rho);
    const double keep = rho_next * rho, step = 2.0 * rho_next / delta;
    host::for_entries(n, [&](std::int64_t i) { w.d[i] = keep * w.d[i] + step * s.inv_diag[i] * w.r[i]; });
    rho = rho_next;
  }
}

void l1_jacobi(const Csr<double>& a, const Smoother& s, const Vector& b, Vector& x, bool x_is_zero, SmootherWork& w,
               const LevelOps& ops) {
  for (int sweep = 0; sweep < s.steps; ++sweep) {
    if (sweep == 0 && x_is_zero) {
      host::copy(b, w.r);
    } else {
      ops.residual(a, x, b, w.r);
    }
    host::for_entries(static_cast<std::int64_t>(b.size()), [&](std::int64_t i) { x[i] += s.inv_diag[i] * w.r[i]; });
  }
}

}  // namespace

Smoother make_smoother(const Csr<double>& a, const Vector& inv_diag, const EigenEstimate& estimate,
                       const AmgOptions& options) {
  return make_smoother(options.smoother == SmootherKind::l1_jacobi ? l1_inverse_diagonal(a) : Vector{}, inv_diag,
                       estimate, options);
}

Smoother make_smoother(Vector inv_l1, Vector inv_diag, const EigenEstimate& estimate, const AmgOptions& options) {
  Smoother s;
  s.kind = options.smoother;
  if (s.kind == SmootherKind::chebyshev) {
    s.inv_diag = std::move(inv_diag);
    s.upper = estimate.safe;
    s.lower = estimate.safe * options.chebyshev_lower_fraction / options.eigen_safety;
    s.steps = options.chebyshev_degree;
    return s;
  }
  s.steps = options.jacobi_sweeps;
  s.inv_diag = std::move(inv_l1);
  return s;
}

Smoother coefficients_of(const Smoother& s) {
  Smoother c;
  c.kind = s.kind;
  c.lower = s.lower;
  c.upper = s.upper;
  c.steps = s.steps;
  return c;
}

Vector l1_inverse_diagonal(const Csr<double>& a) {
  Vector inv(static_cast<std::size_t>(a.rows));
  host::for_entries(a.rows, [&](std::int64_t i) {
    double l1 = 0.0;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      l1 += a.col_idx[p] == i ? a.values[p] : std::abs(a.values[p]);
    inv[i] = 1.0 / l1;
  });
  return inv;
}

void smooth(const Csr<double>& a, const Smoother& s, const Vector& b, Vector& x, bool x_is_zero, SmootherWork& work,
            const LevelOps& ops) {
  work.r.resize(b.size());
  work.d.resize(b.size());
  if (s.kind == SmootherKind::chebyshev) {
    chebyshev(a, s, b, x, x_is_zero, work, ops);
  } else {
    l1_jacobi(a, s, b, x, x_is_zero, work, ops);
  }
}

}  // namespace tessera::amg
