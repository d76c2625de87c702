#pragma once
// The smoothed-aggregation hierarchy: setup (every phase a function of its own file, the
// matrix products behind LevelOps) and re-setup with the same pattern and new values.
//
// Per level l, while rows > coarse_size and l + 1 < max_levels:
//   strength graph -> aggregates -> P_tent, B_{l+1} -> lambda_max(D^-1 A_l) -> smoother of l
//   -> P = (I - omega D^-1 A_l) P_tent -> R = P^T -> A_{l+1} = P^T A_l P
// (with AmgOptions::filtered_smoothing, A_l's filtered operator in P's smoothing:
// filtered_operator.hpp).
// Coarsening also stops when no aggregate forms (no strong connections left) or a level does
// not get smaller. The coarsest level is factored densely (coarse_solver.hpp) or, beyond
// max_dense_rows, smoothed.
#include <optional>
#include <string>
#include <vector>

#include "amg/aggregation.hpp"
#include "amg/coarse_solver.hpp"
#include "amg/eigen_estimate.hpp"
#include "amg/filtered_operator.hpp"
#include "amg/level_ops.hpp"
#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "amg/smoother.hpp"
#include "amg/strength.hpp"

namespace tessera::amg {

/// Seconds spent in each setup phase (one level, or summed over the hierarchy).
struct SetupTimes {
  double strength = 0, aggregation = 0, tentative = 0, smoothing = 0, galerkin = 0, smoother = 0, coarse = 0;
  double total() const { return strength + aggregation + tentative + smoothing + galerkin + smoother + coarse; }
  SetupTimes& operator+=(const SetupTimes& o);
};

struct Level {
  Csr<double> a;            // the operator of this level
  NodeLayout nodes;         // dofs grouped into nodes (aggregation works on nodes)
  DenseMatrix near_null;    // rows x k near-null space of this level
  Vector inv_diag;          // 1 / a_ii
  EigenEstimate eigen;      // lambda_max(D^-1 A) (not computed on a directly solved coarsest level)
  Smoother smoother;
  // Transfer to the next coarser level; empty on the coarsest.
  Aggregates aggregates;
  Csr<double> p_tent, p, r;  // r = p^T
  // A_F, where AmgOptions::filtered_smoothing is set and the strength graph dropped entries of A
  // (P is then smoothed with A_F, its pattern kept by re-setups); empty otherwise.
  std::optional<FilteredOperator> filtered;
  double omega = 0;          // prolongator damping (from lambda_max(D^-1 A_F) where filtered)
  SetupTimes times;
};

struct Hierarchy {
  AmgOptions options;
  std::vector<Level> levels;
  DenseCoarseSolver coarse;    // factor of the coarsest operator, when solved directly
  bool coarse_direct = false;  // false: the coarsest level is smoothed, not solved
  std::string stop_reason;     // why coarsening stopped

  const Level& coarsest() const { return levels.back(); }
};

/// Builds the hierarchy of `a`. InputError on a bad operator (not square, non-finite, a
/// non-positive diagonal: the row is named), bad options, or a near-null space of the wrong size.
Hierarchy setup(const Csr<double>& a, const NearNullSpace& near_null, const AmgOptions& options = {},
                const LevelOps& ops = host_reference_ops());

/// New values, same pattern: keeps the aggregates, P_tent and every pattern; recomputes the
/// eigenvalue estimates, P's values, the Galerkin operators, the smoothers and the coarse
/// factor. InputError if `a`'s pattern differs from the one set up.
void resetup(Hierarchy& h, const Csr<double>& a, const LevelOps& ops = host_reference_ops());

}  // namespace tessera::amg
