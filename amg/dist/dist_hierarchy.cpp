#include "amg/dist/dist_hierarchy.hpp"

#include <chrono>

#include "amg/dist/dist_eigen_estimate.hpp"
#include "amg/dist/dist_exchange.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "amg/dist/dist_tentative.hpp"
#include "amg/prolongator_smoothing.hpp"
#include "dist/transpose.hpp"

namespace tessera::amg {
namespace {

/// Runs `phase`, adding its wall time to `seconds`.
template <class Phase>
auto timed(double& seconds, Phase&& phase) {
  struct Add {
    double& s;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Add() { s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  } add{seconds};
  return phase();
}

Vector inverse_diagonal(const dist::DistMatrix& a) {
  Vector d = owned_diagonal(a);
  for (double& x : d) x = 1.0 / x;
  return d;
}

std::string level_name(std::size_t l) { return "the level " + std::to_string(l) + " Galerkin operator (is A indefinite?)"; }

/// Rows of P = P_tent - omega D^-1 (A P_tent), merged in global column order (the serial
/// smooth_prolongator's merge, on global columns).
RowBlock smoothed_rows(const RowBlock& p_tent, const RowBlock& ap, const Vector& inv_diag, double omega) {
  RowBlock p = p_tent;
  p.col.clear();
  p.values.clear();
  for (std::int64_t i = 0; i < p.local_rows(); ++i) {
    const std::int64_t s = p_tent.row_ptr[i], t = ap.row_ptr[i];
    append_smoothed_row(p_tent.col.data() + s, p_tent.values.data() + s, p_tent.row_ptr[i + 1] - s, ap.col.data() + t,
                        ap.values.data() + t, ap.row_ptr[i + 1] - t, -omega * inv_diag[i], p.col, p.values);
    p.row_ptr[i + 1] = p.nnz();
  }
  return p;
}

}  // namespace

Csr<double> allgather_operator(const dist::Communicator& comm, const dist::DistMatrix& a) {
  const RowBlock mine = dist::owned_row_block(a);
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(mine.local_rows()));
  for (std::int64_t r = 0; r < mine.local_rows(); ++r) lengths[r] = mine.row_ptr[r + 1] - mine.row_ptr[r];
  RowBlock whole;
  whole.global_rows = whole.row_end = a.global_rows();
  whole.global_cols = a.global_cols();
  const std::vector<std::int64_t> all_lengths = allgatherv(comm, lengths);
  whole.row_ptr.assign(all_lengths.size() + 1, 0);
  for (std::size_t r = 0; r < all_lengths.size(); ++r) whole.row_ptr[r + 1] = whole.row_ptr[r] + all_lengths[r];
  whole.col = allgatherv(comm, mine.col);
  whole.values = allgatherv(comm, mine.values);
  return to_csr(whole);
}

DistHierarchy::DistHierarchy(const dist::Communicator& comm, const dist::DistMatrix& a, const NearNullSpace& near_null,
                             const AmgOptions& o, dist::LocalSpgemm local, DistGraphPhases graph_phases)
    : options(o), local_(std::move(local)), graph_phases_(std::move(graph_phases)) {
  validate(options);  // options are the same on every rank: every rank throws alike
  check_dist_operator(comm, a, "A");
  dist::throw_if_any_rank_failed(comm, near_null.vectors.rows == a.owned_rows()
                                           ? ""
                                           : tessera::detail::concat("AMG: rank ", comm.rank(), " holds ", near_null.vectors.rows,
                                                            " near-null rows for its ", a.owned_rows(), " rows"));
  DistLevel first;
  first.a = a;
  first.nodes = uniform_dist_nodes(comm, a, near_null.block_size);
  first.near_null = near_null.vectors;
  levels.push_back(std::move(first));

  for (;;) {
    DistLevel& fine = levels.back();
    if (fine.a.global_rows() <= options.coarse_size) {
      stop_reason = "coarse size reached";
      break;
    }
    if (static_cast<int>(levels.size()) >= options.max_levels) {
      stop_reason = "max levels reached";
      break;
    }
    DistAggregates agg = graph_phases_(comm, fine.a, fine.nodes, options.strength_threshold, fine.times);
    if (agg.count == 0) {
      stop_reason = "no strong connections left to aggregate";
      break;
    }
    DistTentative t = timed(fine.times.tentative, [&] {
      return dist_tentative_prolongator(comm, agg, fine.nodes, fine.a, fine.near_null);
    });
    if (t.p.global_cols() >= fine.a.global_rows()) {
      stop_reason = "aggregation did not reduce the level";
      break;
    }
    fine.aggregates = std::move(agg);
    fine.p_tent = std::move(t.p);
    setup_level_numeric(comm, fine);
    DistLevel coarse;
    coarse.a = build_transfer(comm, fine, true);
    check_dist_operator(comm, coarse.a, level_name(levels.size()));
    coarse.nodes = std::move(t.coarse_nodes);
    coarse.near_null = std::move(t.coarse_vectors);
    levels.push_back(std::move(coarse));
  }
  setup_coarsest(comm);
}

void DistHierarchy::resetup(const dist::Communicator& comm, const dist::DistMatrix& a) {
  check_dist_operator(comm, a, "A");
  if (!same_dist_pattern(comm, a, levels[0].a))  // the same answer on every rank
    throw InputError("AMG re-setup: A's pattern or partition differs from the one set up (re-setup reuses "
                     "aggregates and patterns; run a fresh setup)");
  levels[0].a = a;
  for (std::size_t l = 0; l + 1 < levels.size(); ++l) {
    DistLevel& fine = levels[l];
    fine.times = {};
    setup_level_numeric(comm, fine);
    dist::DistMatrix next = build_transfer(comm, fine, false);
    check_dist_operator(comm, next, level_name(l + 1));
    levels[l + 1].a = std::move(next);
  }
  levels.back().times = {};
  setup_coarsest(comm);
}

void DistHierarchy::setup_level_numeric(const dist::Communicator& comm, DistLevel& level) const {
  timed(level.times.smoother, [&] {
    level.inv_diag = inverse_diagonal(level.a);
    level.eigen =
        dist_estimate_lambda_max(comm, level.a, level.inv_diag, options.eigen_iterations, options.eigen_safety);
    // The serial coefficient code on the owned rows over [owned | ghost] columns: row i's
    // diagonal is column i, and the l1 sum sees every off-diagonal, on-rank and off-rank.
    level.smoother = make_smoother(dist::extended_block(level.a), level.inv_diag, level.eigen, options);
    return 0;
  });
}

dist::DistMatrix DistHierarchy::build_transfer(const dist::Communicator& comm, DistLevel& level, bool first_time) const {
  timed(level.times.smoothing, [&] {
    level.omega = options.smooth_prolongator ? prolongator_damping(level.eigen.safe) : 0.0;
    if (!options.smooth_prolongator) {
      level.p = level.p_tent;
    } else {
      if (first_time)
        level.a_times_p_tent = std::make_unique<dist::DistSpgemm>(comm, level.a, level.p_tent, local_);
      else
        level.a_times_p_tent->recompute(comm, level.a, level.p_tent);
      const RowBlock rows = smoothed_rows(dist::owned_row_block(level.p_tent),
                                          dist::owned_row_block(level.a_times_p_tent->result()), level.inv_diag,
                                          level.omega);
      if (first_time) {
        level.p = dist::assemble(comm, rows, level.p_tent.row_partition, level.p_tent.col_partition);
      } else {
        TESSERA_ASSERT(rows.nnz() == level.p.nnz(), "re-setup changed P's pattern");
        dist::set_values_in_row_order(level.p, rows.values);
      }
    }
    level.r = dist::transpose(comm, level.p);  // one all-to-all; its pattern is fixed too
    return 0;
  });
  return timed(level.times.galerkin, [&] {
    if (first_time)
      level.galerkin = std::make_unique<dist::DistPtap>(comm, level.a, level.p, local_);
    else
      level.galerkin->recompute(comm, level.a, level.p);
    return level.galerkin->result();
  });
}

void DistHierarchy::setup_coarsest(const dist::Communicator& comm) {
  DistLevel& c = levels.back();
  coarse_direct = c.a.global_rows() <= options.max_dense_rows;
  coarse_operator = Csr<double>{};
  if (!coarse_direct) {
    setup_level_numeric(comm, c);
    return;
  }
  c.inv_diag = inverse_diagonal(c.a);
  timed(c.times.coarse, [&] {
    coarse_operator = allgather_operator(comm, c.a);
    coarse.factor(coarse_operator);
    return 0;
  });
  coarse_row_begin_ = c.a.row_begin();
}

void DistHierarchy::coarse_solve(const dist::Communicator& comm, const Vector& b, Vector& x) const {
  const Vector whole_b = allgatherv(comm, b);
  Vector whole_x(whole_b.size());
  coarse.solve(whole_b, whole_x);
  x.assign(whole_x.begin() + coarse_row_begin_, whole_x.begin() + coarse_row_begin_ + static_cast<std::int64_t>(b.size()));
}

}  // namespace tessera::amg
