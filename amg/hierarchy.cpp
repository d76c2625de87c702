#include "amg/hierarchy.hpp"

#include <chrono>

#include "amg/input_check.hpp"
#include "amg/prolongator_smoothing.hpp"
#include "amg/tentative_prolongator.hpp"
#include "local/core/error.hpp"

namespace tessera::amg {
namespace {

/// Runs `phase`, adding its wall time to `seconds`.
template <class Phase>
auto timed(double& seconds, Phase&& phase) {
  const auto start = std::chrono::steady_clock::now();
  struct Add {
    double& s;
    std::chrono::steady_clock::time_point t0;
    ~Add() { s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  } add{seconds, start};
  return phase();
}

Vector inverse_diagonal(const Csr<double>& a) {
  Vector d = diagonal(a);
  for (double& x : d) x = 1.0 / x;
  return d;
}

bool same_pattern(const Csr<double>& x, const Csr<double>& y) {
  return x.rows == y.rows && x.cols == y.cols && x.row_ptr == y.row_ptr && x.col_idx == y.col_idx;
}

std::string level_name(std::size_t l) { return "the level " + std::to_string(l) + " Galerkin operator (is A indefinite?)"; }

/// Values-dependent part of a level: diagonal, eigenvalue estimate, smoother.
void setup_smoother(Level& level, const AmgOptions& o, const LevelOps& ops) {
  timed(level.times.smoother, [&] {
    level.inv_diag = inverse_diagonal(level.a);
    level.eigen = estimate_lambda_max(level.a, level.inv_diag, o.eigen_iterations, o.eigen_safety, ops);
    level.smoother = make_smoother(level.a, level.inv_diag, level.eigen, o);
    return 0;
  });
}

/// P = (I - omega D^-1 A_F) P_tent with A_F's values refreshed from A and omega from A_F's own
/// lambda_max (filtered_operator.hpp).
Csr<double> smooth_with_filtered_operator(Level& level, const AmgOptions& o, const LevelOps& ops) {
  FilteredOperator& f = *level.filtered;
  refresh_filtered_values(level.a, f);
  const EigenEstimate filtered_eigen =
      estimate_lambda_max(f.a, level.inv_diag, o.eigen_iterations, o.eigen_safety, ops);
  level.omega = prolongator_damping(filtered_eigen.safe);
  return smooth_prolongator(f.a, level.inv_diag, level.p_tent, level.omega, ops);
}

/// P from P_tent, R = P^T, and the next operator. Values only: the patterns follow from A's.
Csr<double> build_transfer(Level& level, const AmgOptions& o, const LevelOps& ops) {
  timed(level.times.smoothing, [&] {
    level.omega = o.smooth_prolongator ? prolongator_damping(level.eigen.safe) : 0.0;
    if (!o.smooth_prolongator)
      level.p = level.p_tent;
    else if (level.filtered)
      level.p = smooth_with_filtered_operator(level, o, ops);
    else
      level.p = smooth_prolongator(level.a, level.inv_diag, level.p_tent, level.omega, ops);
    level.r = ops.transpose(level.p);
    return 0;
  });
  return timed(level.times.galerkin, [&] { return ops.galerkin(level.a, level.p); });
}

void setup_coarsest(Hierarchy& h, const LevelOps& ops) {
  Level& c = h.levels.back();
  h.coarse_direct = c.a.rows <= h.options.max_dense_rows;
  if (h.coarse_direct) {
    c.inv_diag = inverse_diagonal(c.a);
    timed(c.times.coarse, [&] { h.coarse.factor(c.a); return 0; });
  } else {
    setup_smoother(c, h.options, ops);
  }
}

}  // namespace

SetupTimes& SetupTimes::operator+=(const SetupTimes& o) {
  strength += o.strength, aggregation += o.aggregation, tentative += o.tentative, smoothing += o.smoothing;
  galerkin += o.galerkin, smoother += o.smoother, coarse += o.coarse;
  return *this;
}

Hierarchy setup(const Csr<double>& a, const NearNullSpace& near_null, const AmgOptions& options, const LevelOps& ops) {
  validate(options);
  check_operator(a, "A");
  const std::string near_null_problem = near_null_space_problem(near_null, a.rows);
  TESSERA_REQUIRE_INPUT(near_null_problem.empty(), near_null_problem);
  Hierarchy h;
  h.options = options;
  Level first;
  first.a = a;
  first.nodes = uniform_nodes(a.rows, near_null.block_size);
  first.near_null = near_null.vectors;
  h.levels.push_back(std::move(first));

  for (;;) {
    Level& fine = h.levels.back();
    if (fine.a.rows <= options.coarse_size) {
      h.stop_reason = "coarse size reached";
      break;
    }
    if (static_cast<int>(h.levels.size()) >= options.max_levels) {
      h.stop_reason = "max levels reached";
      break;
    }
    const Csr<double> graph =
        timed(fine.times.strength, [&] { return strength_graph(fine.a, fine.nodes, options.strength_threshold); });
    Aggregates agg = timed(fine.times.aggregation, [&] { return aggregate(graph); });
    if (agg.count == 0) {
      h.stop_reason = "no strong connections left to aggregate";
      break;
    }
    TentativeProlongator t = timed(fine.times.tentative, [&] {
      return tentative_prolongator(agg, fine.nodes, fine.near_null);
    });
    if (t.p.cols >= fine.a.rows) {
      h.stop_reason = "aggregation did not reduce the level";
      break;
    }
    fine.aggregates = std::move(agg);
    fine.p_tent = std::move(t.p);
    if (options.filtered_smoothing && options.smooth_prolongator)
      fine.filtered = timed(fine.times.smoothing, [&] { return filtered_operator(fine.a, fine.nodes, graph); });
    setup_smoother(fine, options, ops);
    Level coarse;
    coarse.a = build_transfer(fine, options, ops);
    check_operator(coarse.a, level_name(h.levels.size()).c_str());
    coarse.nodes = std::move(t.coarse_nodes);
    coarse.near_null = std::move(t.coarse_vectors);
    h.levels.push_back(std::move(coarse));
  }
  setup_coarsest(h, ops);
  return h;
}

void resetup(Hierarchy& h, const Csr<double>& a, const LevelOps& ops) {
  TESSERA_REQUIRE_INPUT(!h.levels.empty(), "AMG re-setup: the hierarchy was never set up");
  check_operator(a, "A");
  TESSERA_REQUIRE_INPUT(same_pattern(a, h.levels[0].a), "AMG re-setup: A's pattern differs from the one set up "
                        "(re-setup reuses aggregates and patterns; run a fresh setup)");
  h.levels[0].a = a;
  for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
    Level& fine = h.levels[l];
    fine.times = {};
    const Csr<double> old_p = std::move(fine.p);
    setup_smoother(fine, h.options, ops);
    Csr<double> next = build_transfer(fine, h.options, ops);
    TESSERA_ASSERT(same_pattern(old_p, fine.p), "re-setup changed P's pattern on level ", l);
    TESSERA_ASSERT(same_pattern(next, h.levels[l + 1].a), "re-setup changed the pattern of level ", l + 1);
    check_operator(next, level_name(l + 1).c_str());
    h.levels[l + 1].a = std::move(next);
  }
  h.levels.back().times = {};
  setup_coarsest(h, ops);
}

}  // namespace tessera::amg
