#pragma once
// The two smoothers of the cycle, both on the fused residual r = b - A x:
//  - Chebyshev of degree k on D^-1 A over [lower, upper] (Saad, Iterative Methods, Alg. 12.1),
//    upper = the safe lambda_max estimate, lower = upper * lower_fraction / safety, i.e. the
//    interval [0.1, 1.1] x the Ritz estimate of PETSc GAMG's default -esteig 0,0.1,0,1.1:
//    it damps the upper 90% of the spectrum, what the coarse grid cannot.
//  - l1-Jacobi: x += D_l1^-1 (b - A x) with d_l1,i = a_ii + sum_{j != i} |a_ij| (Baker, Falgout,
//    Kolev, Yang 2011 with every off-diagonal counted, the form that is convergent for any
//    SPD A on one process; with ranks it is the off-rank sum hypre uses).
// Both are polynomials in (diagonal)^-1 A, so pre- and post-smoothing with the same smoother
// keep the V-cycle symmetric, as PCG requires.
#include "amg/eigen_estimate.hpp"
#include "amg/level_ops.hpp"
#include "amg/options.hpp"

namespace tessera::amg {

// coefficients_of (below) copies every member but inv_diag: a new member goes there too.
struct Smoother {
  SmootherKind kind = SmootherKind::chebyshev;
  Vector inv_diag;            // 1 / a_ii (Chebyshev) or 1 / d_l1,i (l1-Jacobi)
  double lower = 0, upper = 0;  // Chebyshev interval on D^-1 A
  int steps = 1;              // Chebyshev degree or Jacobi sweeps
};

/// Scratch vectors of one level (sized once, reused by every smoothing step).
struct SmootherWork {
  Vector r, d;
};

/// Coefficients of the chosen smoother. Chebyshev uses `inv_diag` and `estimate` and never
/// reads `a`; l1-Jacobi sums a's rows (row i's diagonal is column i).
Smoother make_smoother(const Csr<double>& a, const Vector& inv_diag, const EigenEstimate& estimate,
                       const AmgOptions& options);
/// The same with l1-Jacobi's 1 / d_l1,i already summed (`inv_l1`, ignored by Chebyshev): the
/// distributed setup sums A's owned and ghost blocks without joining them (dist_level_ops.hpp).
/// Chebyshev keeps `inv_diag` (moved in where the caller is done with it).
Smoother make_smoother(Vector inv_l1, Vector inv_diag, const EigenEstimate& estimate, const AmgOptions& options);

/// `s` without its diagonal (kind, interval, steps): for a device cycle that holds the diagonal
/// itself; copying the whole smoother would copy the diagonal on one thread only to drop it.
Smoother coefficients_of(const Smoother& s);

/// 1 / d_l1,i of a's rows, d_l1,i = a_ii + sum_{j != i} |a_ij| summed in the row's order.
Vector l1_inverse_diagonal(const Csr<double>& a);

/// Improves x for A x = b. `x_is_zero` (x is known to be 0) saves the first product.
void smooth(const Csr<double>& a, const Smoother& s, const Vector& b, Vector& x, bool x_is_zero, SmootherWork& work,
            const LevelOps& ops);

}  // namespace tessera::amg
