#include "amg/hierarchy_stats.hpp"

namespace tessera::amg {

void add_level(HierarchyStats& s, const LevelStats& level) {
  s.levels.push_back(level);
  s.nnz_ap += level.nnz + level.p_nnz;
  s.times += level.times;
  const LevelStats& fine = s.levels.front();
  double rows = 0, nnz = 0;
  for (const LevelStats& l : s.levels) rows += double(l.rows), nnz += double(l.nnz);
  s.grid_complexity = fine.rows > 0 ? rows / double(fine.rows) : 0.0;
  s.operator_complexity = fine.nnz > 0 ? nnz / double(fine.nnz) : 0.0;
}

HierarchyStats statistics(const Hierarchy& h) {
  return statistics_of(h, [](const Csr<double>& m) { return m.nnz(); });
}

void print(std::FILE* out, const HierarchyStats& s) {
  std::fprintf(out, "%5s %12s %14s %8s %12s %10s %7s %10s\n", "level", "rows", "nnz", "nnz/row", "nnz(P)",
               "lambda_max", "omega", "setup s");
  for (std::size_t l = 0; l < s.levels.size(); ++l) {
    const LevelStats& v = s.levels[l];
    std::fprintf(out, "%5zu %12lld %14lld %8.2f %12lld %10.4f %7.4f %10.4f\n", l, (long long)v.rows, (long long)v.nnz,
                 v.nnz_per_row, (long long)v.p_nnz, v.lambda_max, v.omega, v.times.total());
  }
  std::fprintf(out, "grid complexity %.4f, operator complexity %.4f, nnz(A)+nnz(P) %lld\n", s.grid_complexity,
               s.operator_complexity, (long long)s.nnz_ap);
  std::fprintf(out, "coarsest: %s (%s)\n", s.coarse_method.c_str(), s.stop_reason.c_str());
  const SetupTimes& t = s.times;
  std::fprintf(out,
               "setup phases (s): strength %.4f | aggregation %.4f | P tentative %.4f | P smoothing %.4f | "
               "PtAP %.4f | smoother %.4f | coarse factor %.4f | total %.4f\n",
               t.strength, t.aggregation, t.tentative, t.smoothing, t.galerkin, t.smoother, t.coarse, t.total());
}

}  // namespace tessera::amg
