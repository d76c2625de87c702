#include "drivers/baselines/compare.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

#include "drivers/baselines/hypre_boomeramg.hpp"
#include "drivers/baselines/petsc_gamg.hpp"
#include "local/core/error.hpp"

namespace tessera::baselines {
namespace {

Baseline parse_one(const std::string& name) {
  if (name == "hypre" || name == "boomeramg") {
    TESSERA_REQUIRE_INPUT(have_boomeramg(), "--compare ", name, ": this build has no HYPRE (not found at configure time)");
    return Baseline::boomeramg;
  }
  if (name == "gamg" || name == "petsc") {
    TESSERA_REQUIRE_INPUT(have_gamg(), "--compare ", name, ": this build has no PETSc (not found at configure time)");
    return Baseline::gamg;
  }
  throw InputError(detail::concat("--compare: unknown baseline '", name, "' (known: hypre, gamg)"));
}

std::vector<double> slice(const std::vector<double>& all, std::int64_t begin, std::int64_t end, int per_row) {
  return std::vector<double>(all.begin() + per_row * begin, all.begin() + per_row * end);
}

double speedup(const BaselineResult& tessera, const BaselineResult& other) {
  return tessera.total_seconds() > 0 ? other.total_seconds() / tessera.total_seconds() : 0.0;
}

std::string complexity(double value) {
  if (std::isnan(value)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

/// The widths of the table's two text columns: their longest entries, at least 20 and 24.
struct TextWidths {
  int solver = 20, runs_on = 24;
  void fit(const BaselineResult& r) {
    solver = std::max(solver, int(r.solver.size()));
    runs_on = std::max(runs_on, int(r.runs_on.size()));
  }
};

void print_row(std::FILE* out, const TextWidths& w, const BaselineResult& r, const std::string& ratio) {
  std::fprintf(out, "  %-*s %-*s %5d%s %10.2e %9.4f %9.4f %9.4f %7s %7s %9s\n", w.solver, r.solver.c_str(), w.runs_on,
               r.runs_on.c_str(),
               r.iterations, r.converged ? " " : "*", r.relative_residual, r.setup_seconds, r.solve_seconds,
               r.total_seconds(), complexity(r.operator_complexity).c_str(), complexity(r.grid_complexity).c_str(),
               ratio.c_str());
}

nlohmann::json row_json(const BaselineResult& r, double tessera_speedup) {
  const auto maybe = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"solver", r.solver}, {"runs_on", r.runs_on}, {"configuration", r.configuration},
          {"converged", r.converged}, {"iterations", r.iterations}, {"relative_residual", r.relative_residual},
          {"setup_seconds", r.setup_seconds}, {"solve_seconds", r.solve_seconds},
          {"total_seconds", r.total_seconds()}, {"assembly_seconds", r.assembly_seconds},
          {"operator_complexity", maybe(r.operator_complexity)}, {"grid_complexity", maybe(r.grid_complexity)},
          {"levels", r.levels}, {"tessera_speedup", tessera_speedup}};
}

}  // namespace

std::vector<Baseline> parse_baseline_list(const std::string& list) {
  std::vector<Baseline> which;
  TESSERA_REQUIRE_INPUT(list.empty() || list.back() != ',', "--compare: empty name in '", list,
                        "' (expected e.g. hypre,gamg)");
  std::stringstream items(list);
  for (std::string name; std::getline(items, name, ',');) {
    TESSERA_REQUIRE_INPUT(!name.empty(), "--compare: empty name in '", list, "' (expected e.g. hypre,gamg)");
    const Baseline b = parse_one(name);
    for (Baseline seen : which) TESSERA_REQUIRE_INPUT(seen != b, "--compare: '", name, "' is listed twice");
    which.push_back(b);
  }
  return which;
}

std::vector<BaselineResult> run_baselines(MPI_Comm comm, const std::vector<Baseline>& which, const Csr<double>& a,
                                          const std::vector<double>& b, const BaselineOptions& options) {
  TESSERA_REQUIRE_INPUT(std::int64_t(b.size()) == a.rows, "--compare: b has ", b.size(), " entries, A ", a.rows, " rows");
  TESSERA_REQUIRE_INPUT(options.coordinates.empty() || std::int64_t(options.coordinates.size()) == 3 * a.rows,
                        "--compare: expected 3 coordinates per row");
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const auto [begin, end] = node_aligned_range(a.rows, options.block_size, rank, ranks);
  BaselineOptions mine = options;
  if (!options.coordinates.empty()) mine.coordinates = slice(options.coordinates, begin, end, 3);
  return run_baselines(comm, which, row_block(a, begin, end), slice(b, begin, end, 1), mine);
}

std::vector<BaselineResult> run_baselines(MPI_Comm comm, const std::vector<Baseline>& which, const RowBlock& my_rows,
                                          const std::vector<double>& my_b, const BaselineOptions& mine) {
  std::vector<BaselineResult> results;
  for (Baseline which_one : which) {
    if (which_one == Baseline::boomeramg) {
      results.push_back(solve_with_boomeramg(comm, my_rows, my_b, mine));
    } else {
      const PetscSession petsc;  // PETSc lives only around its own solve, inside MPI's lifetime
      results.push_back(solve_with_gamg(comm, my_rows, my_b, mine));
    }
    results.back().x.clear();  // the driver reports figures, not solutions
  }
  return results;
}

void print_comparison(std::FILE* out, double rtol, const BaselineResult& tessera,
                      const std::vector<BaselineResult>& baselines) {
  std::fprintf(out,
               "\nSide by side: same A and b, x0 = 0, each stops on ||b - A x||_2 <= %.1e ||b||_2; the residual is "
               "recomputed from x.\nTimes exclude building each library's matrix; 'Tessera x' = baseline total / "
               "Tessera total; * = not converged.\n",
               rtol);
  TextWidths w;
  w.fit(tessera);
  for (const BaselineResult& r : baselines) w.fit(r);
  std::fprintf(out, "  %-*s %-*s %6s %10s %9s %9s %9s %7s %7s %9s\n", w.solver, "solver", w.runs_on, "runs on", "its",
               "true rel", "setup s", "solve s", "total s", "op cx", "grid cx", "Tessera x");
  print_row(out, w, tessera, "1.00");
  for (const BaselineResult& r : baselines) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", speedup(tessera, r));
    print_row(out, w, r, ratio);
  }
  std::fprintf(out, "  %s: %s\n", tessera.solver.c_str(), tessera.configuration.c_str());
  for (const BaselineResult& r : baselines)
    std::fprintf(out, "  %s: %s (matrix build %.4f s)\n", r.solver.c_str(), r.configuration.c_str(), r.assembly_seconds);
}

nlohmann::json comparison_json(const BaselineResult& tessera, const std::vector<BaselineResult>& baselines) {
  nlohmann::json rows = nlohmann::json::array({row_json(tessera, 1.0)});
  for (const BaselineResult& r : baselines) rows.push_back(row_json(r, speedup(tessera, r)));
  return rows;
}

}  // namespace tessera::baselines
