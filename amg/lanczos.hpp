#pragma once
// The Lanczos recurrence of the lambda_max estimate (eigen_estimate.hpp), written once over a
// "space" that owns the vectors and their operations, so the serial, distributed and device
// estimates take the same steps with the same stopping rule:
//   Space::Vec                                     a vector of the space's local length
//   Vec make()                                     an uninitialised vector, zeros(): all 0
//   void apply_scaled(const Vec& v, Vec& w)        w = D^-1/2 A D^-1/2 v
//   double dot(const Vec& x, const Vec& y)         the global inner product
//   void subtract(Vec& w, a, const Vec& v, b, const Vec& u)   w_i -= a v_i + b u_i
//   void divide(const Vec& x, double s, Vec& y)    y_i = x_i / s (x and y may alias)
// The per-entry formulas are the spaces' contract: the host and distributed spaces evaluate them
// exactly as written here (their estimates are compared bitwise); the device space rounds every
// operation alike and differs only in the summation order of its dots.
#include <cmath>
#include <utility>
#include <vector>

#include "amg/eigen_estimate.hpp"

namespace tessera::amg {

/// Fills est.ritz (largest Ritz value) and est.steps from the start vector `v` (any scale).
template <class Space>
void lanczos_ritz(Space& space, typename Space::Vec v, int steps, EigenEstimate& est) {
  typename Space::Vec v_prev = space.zeros(), w = space.make();
  double norm = std::sqrt(space.dot(v, v));
  space.divide(v, norm, v);

  std::vector<double> alpha, beta;
  for (int j = 0; j < steps; ++j) {
    space.apply_scaled(v, w);
    alpha.push_back(space.dot(w, v));
    const double beta_prev = beta.empty() ? 0.0 : beta.back();
    space.subtract(w, alpha.back(), v, beta_prev, v_prev);
    norm = std::sqrt(space.dot(w, w));
    if (j + 1 == steps || norm <= 1e-12 * std::abs(alpha.back())) break;  // done, or an invariant subspace
    beta.push_back(norm);
    std::swap(v_prev, v);
    space.divide(w, norm, v);
  }
  est.steps = static_cast<int>(alpha.size());
  est.ritz = tridiagonal_max_eigenvalue(alpha, beta);
}

}  // namespace tessera::amg
