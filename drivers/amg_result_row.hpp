#pragma once
// Tessera's own row of the --compare table, from its solve and hierarchy statistics (the
// serial and the distributed tessera-amg paths fill the rest: solver name, where it ran).
#include <string>

#include <nlohmann/json.hpp>

#include "amg/hierarchy_stats.hpp"
#include "amg/krylov.hpp"
#include "drivers/baselines/baseline.hpp"

namespace tessera::driver {

/// "CG", or "FGMRES(30, CGS2)" (the restart and the Gram-Schmidt of the Arnoldi step:
/// CGS2, CGS2 if needed, CGS, MGS).
inline std::string krylov_method(bool use_cg, const amg::KrylovOptions& ko) {
  if (use_cg) return "CG";
  const auto name = [&] {
    switch (ko.gram_schmidt) {
      case amg::GramSchmidt::classical_twice: return "CGS2";
      case amg::GramSchmidt::classical_if_needed: return "CGS2 if needed";
      case amg::GramSchmidt::classical_once: return "CGS";
      case amg::GramSchmidt::modified: return "MGS";
    }
    return "?";
  };
  return "FGMRES(" + std::to_string(ko.restart) + ", " + name() + ")";
}

/// ", second Gram-Schmidt pass in 3 of 21 steps" where FGMRES decides it step by step, else "".
inline std::string second_pass_count(bool use_cg, const amg::KrylovOptions& ko, const amg::SolveResult& res) {
  if (use_cg || ko.gram_schmidt != amg::GramSchmidt::classical_if_needed) return "";
  return ", second Gram-Schmidt pass in " + std::to_string(res.second_passes) + " of " +
         std::to_string(res.iterations) + " steps";
}

/// The method's JSON keys: solver ("cg" or "fgmres"), and FGMRES's restart, gram_schmidt (the
/// --gram-schmidt name) and second_passes (the Arnoldi steps that projected twice).
inline void add_krylov_keys(nlohmann::json& out, bool use_cg, const amg::KrylovOptions& ko,
                            const amg::SolveResult& res) {
  out["solver"] = use_cg ? "cg" : "fgmres";
  if (use_cg) return;
  out["restart"] = ko.restart;
  out["gram_schmidt"] = amg::to_string(ko.gram_schmidt);
  out["second_passes"] = res.second_passes;
}

/// The baselines' Krylov method and stopping test: the ones this solve used (CG, or flexible
/// GMRES with the same restart for a non-symmetric A).
inline void match_krylov(baselines::BaselineOptions& bo, bool use_cg, const amg::KrylovOptions& ko) {
  bo.rtol = ko.rtol;
  bo.max_iterations = ko.max_iterations;
  bo.gmres = !use_cg;
  bo.restart = ko.restart;
}

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
