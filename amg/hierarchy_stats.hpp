#pragma once
// Per-level figures of a hierarchy, the complexities, and the time of every setup phase,
// printable as a table (as -pc_gamg / BoomerAMG print_level report them).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "amg/hierarchy.hpp"

namespace tessera::amg {

struct LevelStats {
  std::int64_t rows = 0, nnz = 0;
  double nnz_per_row = 0;
  std::int64_t p_nnz = 0;      // nnz of the prolongator to the next level (0 on the coarsest)
  double lambda_max = 0;       // safe estimate of lambda_max(D^-1 A) (0 where not computed)
  double omega = 0;            // prolongator damping
  SetupTimes times;
};

struct HierarchyStats {
  std::vector<LevelStats> levels;
  double grid_complexity = 0;      // sum of rows / rows of level 0
  double operator_complexity = 0;  // sum of nnz / nnz of level 0
  std::int64_t nnz_ap = 0;         // sum of nnz(A_l) + nnz(P_l): AMG2023's nnz(AP)
  SetupTimes times;                // summed over levels
  std::string coarse_method, stop_reason;
};

HierarchyStats statistics(const Hierarchy& h);

/// Appends one level's figures and updates the totals (nnz(AP), phase times, complexities),
/// so the serial and distributed hierarchies report by one rule.
void add_level(HierarchyStats& s, const LevelStats& level);

/// The level table, the complexities and the setup phases.
void print(std::FILE* out, const HierarchyStats& s);

}  // namespace tessera::amg
