#pragma once
// Tessera's own row of the --compare table, from its solve and hierarchy statistics (the
// serial and the distributed tessera-amg paths fill the rest: solver name, where it ran).
#include "amg/hierarchy_stats.hpp"
#include "amg/krylov.hpp"
#include "drivers/baselines/baseline.hpp"

namespace tessera::driver {

inline baselines::BaselineResult amg_result_row(const amg::SolveResult& res, const amg::HierarchyStats& stats,
                                                double setup_seconds, double solve_seconds) {
  baselines::BaselineResult r;
  r.converged = res.converged();
  r.iterations = res.iterations;
  r.relative_residual = res.relative_residual;
  r.setup_seconds = setup_seconds;
  r.solve_seconds = solve_seconds;
  r.operator_complexity = stats.operator_complexity;
  r.grid_complexity = stats.grid_complexity;
  r.levels = static_cast<int>(stats.levels.size());
  return r;
}

}  // namespace tessera::driver
