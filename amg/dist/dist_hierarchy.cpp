#include "amg/dist/dist_hierarchy.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <iterator>
#include <optional>

#include "amg/dist/dist_eigen_estimate.hpp"
#include "amg/dist/dist_exchange.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "amg/dist/dist_tentative.hpp"
#include "amg/prolongator_smoothing.hpp"
#include "dist/transpose.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"
#include "local/formats/stack_rows.hpp"

namespace tessera::amg {
namespace {

/// Runs `phase`, adding its wall time to `seconds` (and to the step trace, under `name`).
template <class Phase>
auto timed(const char* name, double& seconds, Phase&& phase) {
  TESSERA_TRACE_STEP(name);
  struct Add {
    double& s;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Add() { s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  } add{seconds};
  return phase();
}

Vector inverse_diagonal(const dist::DistMatrix& a) {
  Vector d = owned_diagonal(a);
  host::for_ranges(static_cast<std::int64_t>(d.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) d[i] = 1.0 / d[i];
  });
  return d;
}

std::string level_name(std::size_t l) { return "the level " + std::to_string(l) + " Galerkin operator (is A indefinite?)"; }

/// `block`'s columns (indices into the sorted `ghosts`) renumbered into the sorted superset
/// `all`: monotone, so every row stays sorted.
std::vector<std::int32_t> columns_in(const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& ghosts,
                                     const Csr<double>& block) {
  std::vector<std::int32_t> index(ghosts.size());
  for (std::size_t g = 0; g < ghosts.size(); ++g)
    index[g] = static_cast<std::int32_t>(std::lower_bound(all.begin(), all.end(), ghosts[g]) - all.begin());
  std::vector<std::int32_t> cols(block.col_idx.size());
  for (std::size_t k = 0; k < cols.size(); ++k) cols[k] = index[block.col_idx[k]];
  return cols;
}

/// P = P_tent - omega D^-1 (A P_tent), block by block, from A P_tent's owned rows over the
/// product's compact columns (`global_of`, increasing: each row of `ap` is [outside columns
/// left of the owned range | owned | outside right]), without assembling them first. The local
/// blocks share the owned column range; the non-local ones are merged over the union of
/// P_tent's ghosts and the outside columns some entry of A P_tent uses (the ghosts an assembly
/// of A P_tent would have). Each column's value is the serial smooth_prolongator's
/// (write_smoothed_row), so the result equals the merge in global column order bit for bit.
/// No halo plan (the caller builds it once, for a new pattern).
dist::DistMatrix smoothed_blocks(const dist::Communicator& comm, const dist::DistMatrix& p_tent, const Csr<double>& ap,
                                 const std::vector<std::int64_t>& global_of, const Vector& inv_diag, double omega) {
  TESSERA_TRACE_STEP("merge");
  // The merge reads the rows as sorted and in range (what assemble_compact would check): a
  // broken local product is an InputError on every rank, never garbage.
  const std::string error = dist::compact_block_error(ap, global_of, p_tent.owned_rows(), p_tent.global_cols());
  dist::throw_if_any_rank_failed(
      comm, error.empty() ? "" : tessera::detail::concat("AMG: rank ", comm.rank(), ": A*P_tent: ", error));
  const std::int64_t cb = p_tent.col_begin(), ce = cb + p_tent.local.cols;
  const auto first_owned = static_cast<std::int32_t>(std::lower_bound(global_of.begin(), global_of.end(), cb) -
                                                     global_of.begin());
  const auto end_owned = static_cast<std::int32_t>(std::lower_bound(global_of.begin(), global_of.end(), ce) -
                                                   global_of.begin());
  const auto owned = [&](std::int32_t c) { return c >= first_owned && c < end_owned; };
  // Row i's entries [s, e) of `ap` split into [s, lo) | owned [lo, hi) | [hi, e).
  const auto split = [&](std::int64_t i) {
    const auto row = ap.col_idx.begin();
    const std::int64_t s = ap.row_ptr[i], e = ap.row_ptr[i + 1];
    const std::int64_t lo = std::lower_bound(row + s, row + e, first_owned) - row;
    return std::array<std::int64_t, 4>{s, lo, std::lower_bound(row + lo, row + e, end_owned) - row, e};
  };
  // The outside columns some entry uses (few: the ghosts' neighbours), found range by range.
  const host::RangeSplit rows(ap.rows);
  std::vector<std::vector<std::int32_t>> outside_in(static_cast<std::size_t>(rows.count()));
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const auto [s, lo, hi, e] = split(i);
      for (auto [from, to] : {std::pair{s, lo}, {hi, e}})
        outside_in[range].insert(outside_in[range].end(), ap.col_idx.begin() + from, ap.col_idx.begin() + to);
    }
  });
  std::vector<char> used(global_of.size(), 0);
  for (const std::vector<std::int32_t>& cols : outside_in)
    for (std::int32_t c : cols) used[c] = 1;
  std::vector<std::int64_t> ap_ghosts;
  for (std::size_t c = 0; c < used.size(); ++c)
    if (used[c]) ap_ghosts.push_back(global_of[c]);

  dist::DistMatrix p;
  p.row_partition = p_tent.row_partition;
  p.col_partition = p_tent.col_partition;
  p.rank = p_tent.rank;
  std::set_union(p_tent.ghost_cols.begin(), p_tent.ghost_cols.end(), ap_ghosts.begin(), ap_ghosts.end(),
                 std::back_inserter(p.ghost_cols));
  dist::throw_if_any_rank_failed(
      comm, p_tent.local.cols + static_cast<std::int64_t>(p.ghost_cols.size()) <= INT32_MAX
                ? ""
                : tessera::detail::concat("AMG: rank ", comm.rank(), ": P's ", p_tent.local.cols, " owned and ",
                                          p.ghost_cols.size(), " ghost columns exceed the int32 local column index"));
  // Compact column -> P's column: owned ones into the local block, used outside ones into the
  // union of ghosts.
  std::vector<std::int32_t> to_p(global_of.size(), 0);
  std::size_t g = 0;  // both lists increase: one walk over the ghosts
  for (std::size_t c = 0; c < global_of.size(); ++c) {
    if (owned(static_cast<std::int32_t>(c))) {
      to_p[c] = static_cast<std::int32_t>(global_of[c] - cb);
    } else if (used[c]) {
      while (p.ghost_cols[g] < global_of[c]) ++g;
      to_p[c] = static_cast<std::int32_t>(g);
    }
  }
  const std::vector<std::int32_t> tent_ghost = columns_in(p.ghost_cols, p_tent.ghost_cols, p_tent.nonlocal);
  const Csr<double>&tl = p_tent.local, &tn = p_tent.nonlocal;
  // A P_tent's owned columns read through to_p in place; its few outside entries are copied.
  struct Renumbered {
    const std::int32_t* compact;
    const std::int32_t* to_p;
    std::int32_t operator[](std::int64_t t) const { return to_p[compact[t]]; }
  };
  // Each range merges its rows into its own pieces of both blocks, as the serial loop would;
  // stack_rows joins them in order.
  std::vector<Csr<double>> local_pieces(static_cast<std::size_t>(rows.count()));
  std::vector<Csr<double>> nonlocal_pieces(local_pieces.size());
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    Csr<double>& local = local_pieces[range] = Csr<double>::empty(end - begin, tl.cols);
    Csr<double>& nonlocal = nonlocal_pieces[range] = Csr<double>::empty(end - begin, static_cast<std::int64_t>(p.ghost_cols.size()));
    // Sized for the union's upper bound, trimmed to the entries written at the end.
    const auto outside = static_cast<std::int64_t>(outside_in[range].size());
    for (auto [block, bound] : {std::pair{&local, tl.row_ptr[end] - tl.row_ptr[begin] + ap.row_ptr[end] - ap.row_ptr[begin] - outside},
                                {&nonlocal, tn.row_ptr[end] - tn.row_ptr[begin] + outside}}) {
      block->col_idx.resize(static_cast<std::size_t>(bound));
      block->values.resize(static_cast<std::size_t>(bound));
    }
    std::vector<std::int32_t> outside_cols;  // one row's outside entries in P's ghost numbering
    std::vector<double> outside_values;
    std::int64_t in_local = 0, in_nonlocal = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double scale = -omega * inv_diag[i];
      const auto [s, lo, hi, e] = split(i);
      outside_cols.clear();
      outside_values.clear();
      for (auto [from, to] : {std::pair{s, lo}, {hi, e}})
        for (std::int64_t k = from; k < to; ++k) {
          outside_cols.push_back(to_p[ap.col_idx[k]]);
          outside_values.push_back(ap.values[k]);
        }
      in_local += write_smoothed_row(tl.col_idx.data() + tl.row_ptr[i], tl.values.data() + tl.row_ptr[i],
                                     tl.row_length(i), Renumbered{ap.col_idx.data() + lo, to_p.data()},
                                     ap.values.data() + lo, hi - lo, scale, local.col_idx.data() + in_local,
                                     local.values.data() + in_local);
      local.row_ptr[i - begin + 1] = in_local;
      in_nonlocal += write_smoothed_row(tent_ghost.data() + tn.row_ptr[i], tn.values.data() + tn.row_ptr[i],
                                        tn.row_length(i), outside_cols.data(), outside_values.data(), e - hi + lo - s,
                                        scale, nonlocal.col_idx.data() + in_nonlocal,
                                        nonlocal.values.data() + in_nonlocal);
      nonlocal.row_ptr[i - begin + 1] = in_nonlocal;
    }
    for (auto [block, n] : {std::pair{&local, in_local}, {&nonlocal, in_nonlocal}}) {
      block->col_idx.resize(static_cast<std::size_t>(n));
      block->values.resize(static_cast<std::size_t>(n));
    }
  });
  p.local = stack_rows(local_pieces, tl.cols);
  p.nonlocal = stack_rows(nonlocal_pieces, static_cast<std::int64_t>(p.ghost_cols.size()));
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
  const std::vector<std::int64_t> all_cols = allgatherv(comm, mine.col);
  const std::vector<double> all_values = allgatherv(comm, mine.values);
  whole.col.assign(all_cols.begin(), all_cols.end());
  whole.values.assign(all_values.begin(), all_values.end());
  return to_csr(whole);
}

DistHierarchy::DistHierarchy(const dist::Communicator& comm, const dist::DistMatrix& a, const NearNullSpace& near_null,
                             const AmgOptions& o, DistSetupBackend backend)
    : options(o), backend_(std::move(backend)) {
  TESSERA_ASSERT(backend_.graph_phases && backend_.eigen_estimator,
                 "DistHierarchy: a setup backend without graph phases or eigenvalue estimates");
  validate(options);  // options are the same on every rank: every rank throws alike
  // A's check and the hierarchy's copy of it are steps of their own: at level 0's size they
  // are not free, and the phases below do not include them.
  std::optional<trace::Step> step(std::in_place, "check_a");
  check_dist_operator(comm, a, "A");
  dist::throw_if_any_rank_failed(comm, near_null.vectors.rows == a.owned_rows()
                                           ? ""
                                           : tessera::detail::concat("AMG: rank ", comm.rank(), " holds ", near_null.vectors.rows,
                                                            " near-null rows for its ", a.owned_rows(), " rows"));
  levels.reserve(static_cast<std::size_t>(options.max_levels));  // the loop below stops at max_levels
  DistLevel first;
  step.emplace("copy_a");
  first.a = a;
  first.nodes = uniform_dist_nodes(comm, a, near_null.block_size);
  first.near_null = near_null.vectors;
  levels.push_back(std::move(first));
  step.reset();

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
    DistAggregates agg =
        backend_.graph_phases(comm, fine.a, fine.nodes, options.strength_threshold, fine.times, fine.device_a);
    if (agg.count == 0) {
      stop_reason = "no strong connections left to aggregate";
      break;
    }
    DistTentative t = timed("tentative", fine.times.tentative, [&] {
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
    TESSERA_ASSERT(levels.size() < levels.capacity(), "a level beyond max_levels would move the others");
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
  levels[0].device_a.values_changed();
  for (std::size_t l = 0; l + 1 < levels.size(); ++l) {
    DistLevel& fine = levels[l];
    fine.times = {};
    setup_level_numeric(comm, fine);
    dist::DistMatrix next = build_transfer(comm, fine, false);
    check_dist_operator(comm, next, level_name(l + 1));
    levels[l + 1].a = std::move(next);
    levels[l + 1].device_a.values_changed();
  }
  levels.back().times = {};
  setup_coarsest(comm);
}

void DistHierarchy::setup_level_numeric(const dist::Communicator& comm, DistLevel& level) const {
  timed("smoother", level.times.smoother, [&] {
    std::optional<trace::Step> step(std::in_place, "inverse_diagonal");
    level.inv_diag = inverse_diagonal(level.a);
    step.emplace("lambda_max");
    level.eigen = backend_.eigen_estimator(comm, level.a, level.inv_diag, options.eigen_iterations,
                                           options.eigen_safety, level.device_a);
    step.emplace("smoother_diagonal");
    // l1-Jacobi's sums see every off-diagonal, on-rank and off-rank; Chebyshev reads no row.
    const bool reads_rows = options.smoother == SmootherKind::l1_jacobi;
    level.smoother =
        make_smoother(reads_rows ? owned_l1_inverse_diagonal(level.a) : Vector{}, level.inv_diag, level.eigen, options);
    return 0;
  });
}

dist::DistMatrix DistHierarchy::build_transfer(const dist::Communicator& comm, DistLevel& level, bool first_time) const {
  timed("prolongator_smoothing", level.times.smoothing, [&] {
    level.omega = options.smooth_prolongator ? prolongator_damping(level.eigen.safe) : 0.0;
    if (!options.smooth_prolongator) {
      level.p = level.p_tent;
    } else {
      if (first_time)
        level.a_times_p_tent = std::make_unique<dist::CompactSpgemm>(comm, level.a, level.p_tent, backend_.products,
                                                                     held_extended_a(level));
      else
        level.a_times_p_tent->refresh(comm, level.a, level.p_tent);
      dist::DistMatrix p = smoothed_blocks(comm, level.p_tent, level.a_times_p_tent->multiply(comm),
                                           level.a_times_p_tent->compact_to_global(), level.inv_diag, level.omega);
      if (first_time) {
        p.halo = dist::HaloPlan::build(comm, p.col_partition, p.ghost_cols);
        level.p = std::move(p);
      } else {
        TESSERA_ASSERT(p.local.row_ptr == level.p.local.row_ptr && p.local.col_idx == level.p.local.col_idx &&
                           p.nonlocal.row_ptr == level.p.nonlocal.row_ptr &&
                           p.nonlocal.col_idx == level.p.nonlocal.col_idx && p.ghost_cols == level.p.ghost_cols,
                       "re-setup changed P's pattern");
        level.p.local.values = std::move(p.local.values);
        level.p.nonlocal.values = std::move(p.nonlocal.values);
      }
    }
    return 0;
  });
  return timed("galerkin", level.times.galerkin, [&] {
    if (first_time)
      // A*P_tent's A in [owned | ghost] form (a host copy or the backend's) serves A*P too.
      level.galerkin = std::make_unique<dist::DistPtap>(
          comm, level.a, level.p, backend_.products,
          level.a_times_p_tent ? level.a_times_p_tent->shared_a_extended() : held_extended_a(level));
    else
      level.galerkin->recompute(comm, level.a, level.p);
    // R's local block is the top of the product's P^T (P is transposed once a level); only P's
    // non-local entries move (one all-to-all).
    level.r = dist::transpose(comm, level.p, level.galerkin->p_local_transposed());
    return level.galerkin->result();
  });
}

dist::ExtendedA DistHierarchy::held_extended_a(DistLevel& level) const {
  if (!backend_.held_extended_a) return {};
  return {nullptr, backend_.held_extended_a(level.a, level.device_a)};
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
  timed("coarse", c.times.coarse, [&] {
    coarse_operator = allgather_operator(comm, c.a);
    if (backend_.host_coarse_factor == CoarseFactor::at_setup)
      coarse.factor(coarse_operator);
    else
      coarse.factor_on_first_use(coarse_operator);
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
