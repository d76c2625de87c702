#pragma once
// Prolongator smoothing: P = (I - omega D^-1 A) P_tent, omega = 4 / (3 lambda_max(D^-1 A)),
// the damping that minimises the energy of the smoothed basis functions for the Jacobi
// polynomial (Vanek, Mandel, Brezina 1996; GAMG and ML use the same). The product A P_tent
// goes through LevelOps::multiply (the tile SpGEMM on the device); the update is one sparse
// merge, P's pattern being pattern(A P_tent) ∪ pattern(P_tent), fixed for a fixed pattern of A.
#include "amg/level_ops.hpp"
#include "local/formats/csr.hpp"

namespace tessera::amg {

/// Damping for a safe lambda_max estimate (> 0).
double prolongator_damping(double lambda_max);

Csr<double> smooth_prolongator(const Csr<double>& a, const Vector& inv_diag, const Csr<double>& p_tent, double omega,
                               const LevelOps& ops);

}  // namespace tessera::amg
