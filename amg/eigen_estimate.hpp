#pragma once
// lambda_max(D^-1 A) for the prolongator damping and the Chebyshev interval.
// `steps` Lanczos iterations on the symmetric D^-1/2 A D^-1/2 (same spectrum as D^-1 A when A
// is symmetric) from a fixed pseudo-random start vector (a hash of the row index, so every
// partition gets the same one); the largest Ritz value comes from the tridiagonal matrix by
// Sturm-sequence bisection. Ritz values approach lambda_max from below and Lanczos reaches
// the extremes far faster than the power method (10 steps are within a few percent on Poisson
// and elasticity), so the estimate is multiplied by a safety factor (GAMG: 1.1) and capped
// by the Gershgorin bound max_i sum_j |a_ij| / a_ii, which no eigenvalue exceeds.
#include <cstdint>
#include <functional>

#include "amg/level_ops.hpp"
#include "amg/node_hashes.hpp"  // lanczos_start_entry
#include "local/formats/csr.hpp"

namespace tessera::amg {

struct EigenEstimate {
  double ritz = 0;        // largest Ritz value (a lower bound of lambda_max)
  double gershgorin = 0;  // upper bound of |lambda| of D^-1 A
  double safe = 0;        // min(safety * ritz, gershgorin): what the setup uses
  int steps = 0;          // Lanczos steps taken (fewer on an invariant subspace)
};

/// `inv_diag` holds 1 / a_ii (A is assumed to have a positive diagonal).
EigenEstimate estimate_lambda_max(const Csr<double>& a, const Vector& inv_diag, int steps, double safety,
                                  const LevelOps& ops);

/// The Lanczos recurrence on D^-1/2 A D^-1/2 from the start vector `v` (owned entries):
/// `apply(x, y)` computes y = A x, `dot` the global inner product (an allreduce when
/// distributed). Fills est.ritz and est.steps; the serial and distributed estimates share it, so
/// they take the same steps with the same arithmetic (lanczos.hpp's recurrence, which the
/// device estimate runs too).
void lanczos_ritz(Vector v, const Vector& sqrt_inv_diag, int steps,
                  const std::function<void(const Vector& x, Vector& y)>& apply,
                  const std::function<double(const Vector& x, const Vector& y)>& dot, EigenEstimate& est);

/// Largest eigenvalue of the symmetric tridiagonal matrix with diagonal `alpha` and
/// off-diagonal `beta` (beta.size() == alpha.size() - 1), by bisection to full precision.
double tridiagonal_max_eigenvalue(const std::vector<double>& alpha, const std::vector<double>& beta);

}  // namespace tessera::amg
