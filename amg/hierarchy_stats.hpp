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

/// The statistics of a hierarchy whose levels hold a, p, eigen, omega and times and which
/// has coarse_direct, coarse and stop_reason: the host Hierarchy and the device
/// DeviceHierarchy (amg/cuda) report through this one loop; `nnz_of(matrix)` reads a
/// level matrix's nonzero count in that hierarchy's format.
template <class AnyHierarchy, class NnzOf>
HierarchyStats statistics_of(const AnyHierarchy& h, NnzOf nnz_of) {
  HierarchyStats s;
  for (const auto& level : h.levels) {
    LevelStats l;
    l.rows = level.a.rows;
    l.nnz = nnz_of(level.a);
    l.nnz_per_row = l.rows ? double(l.nnz) / double(l.rows) : 0.0;
    l.p_nnz = nnz_of(level.p);
    l.lambda_max = level.eigen.safe;
    l.omega = level.omega;
    l.times = level.times;
    add_level(s, l);
  }
  s.coarse_method = h.coarse_direct ? h.coarse.describe() : "smoothed (too large for a dense solve)";
  s.stop_reason = h.stop_reason;
  return s;
}

/// The level table, the complexities and the setup phases.
void print(std::FILE* out, const HierarchyStats& s);

}  // namespace tessera::amg
