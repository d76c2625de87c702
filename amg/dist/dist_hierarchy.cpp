#include "amg/dist/dist_hierarchy.hpp"

#include <chrono>
#include <optional>

#include "amg/dist/dist_eigen_estimate.hpp"
#include "amg/dist/dist_exchange.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "amg/dist/dist_smoothing.hpp"
#include "amg/dist/dist_tentative.hpp"
#include "amg/prolongator_smoothing.hpp"
#include "dist/transpose.hpp"
#include "local/core/host_array.hpp"
#include "local/core/step_trace.hpp"

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

std::string level_name(std::size_t l) { return "the level " + std::to_string(l) + " Galerkin operator (is A indefinite?)"; }

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
    // The copy is a step of its own: at level 0's size it is not free, and no phase includes it.
    : DistHierarchy(comm, [&] { TESSERA_TRACE_STEP("copy_a"); return dist::DistMatrix(a); }(), near_null, o,
                    std::move(backend)) {}

DistHierarchy::DistHierarchy(const dist::Communicator& comm, dist::DistMatrix&& a, const NearNullSpace& near_null,
                             const AmgOptions& o, DistSetupBackend backend)
    : options(o), backend_(std::move(backend)) {
  TESSERA_ASSERT(backend_.graph_phases && backend_.tentative && backend_.smoothing && backend_.eigen_estimator,
                 "DistHierarchy: a setup backend without graph phases, tentative prolongator, smoothing or eigenvalue "
                 "estimates");
  validate(options);  // options are the same on every rank: every rank throws alike
  const bool filtered = options.filtered_smoothing && options.smooth_prolongator;
  levels.reserve(static_cast<std::size_t>(options.max_levels));  // the loop below stops at max_levels
  levels.emplace_back().a = std::move(a);  // in place first: a device check leaves its copy in the level
  // A's check is a step of its own: at level 0's size it is not free, and the phases below do
  // not include it.
  std::optional<trace::Step> step(std::in_place, "check_a");
  DistLevel& first = levels.front();
  backend_.check_operator(comm, first.a, "A", first.device_a);
  const std::string near_null_problem = near_null_space_problem(near_null, first.a.owned_rows(), first.a.row_begin());
  dist::throw_if_any_rank_failed(
      comm, near_null_problem.empty() ? "" : tessera::detail::concat(near_null_problem, " (rank ", comm.rank(), ")"));
  first.nodes = uniform_dist_nodes(comm, first.a, near_null.block_size);
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
    std::optional<dist::DistMatrix> graph;  // wanted by the filtered operator only
    if (filtered) graph.emplace();
    DistAggregates agg = backend_.graph_phases(comm, fine.a, fine.nodes, options.strength_threshold, fine.times,
                                               fine.device_a, graph ? &*graph : nullptr);
    if (agg.count == 0) {
      stop_reason = "no strong connections left to aggregate";
      break;
    }
    // Level 0 reads the caller's vectors (a copy took 0.0085 s at 7M rows); each level's are
    // read by its coarsening only, and freed after it.
    const DenseMatrix& near_null_vectors = levels.size() == 1 ? near_null.vectors : fine.near_null;
    DistTentative t = timed("tentative", fine.times.tentative, [&] {
      return backend_.tentative(comm, agg, fine.nodes, fine.a, near_null_vectors);
    });
    fine.near_null = DenseMatrix{};
    if (t.p.global_cols() >= fine.a.global_rows()) {
      stop_reason = "aggregation did not reduce the level";
      break;
    }
    fine.aggregates = std::move(agg);
    fine.p_tent = std::move(t.p);
    if (graph)
      fine.filtered = timed("filtered_operator", fine.times.smoothing, [&] {
        return dist_filtered_operator(comm, fine.a, fine.nodes, *graph);
      });
    graph.reset();
    setup_level_numeric(comm, fine);
    TESSERA_ASSERT(levels.size() < levels.capacity(), "a level beyond max_levels would move the others");
    DistLevel& coarse = levels.emplace_back();  // `fine` stays in place (reserved above)
    build_transfer(comm, fine, coarse, true, std::move(t.held_p));
    make_level_smoother(fine);
    check_coarse_operator(comm, coarse, levels.size() - 1);
    coarse.nodes = std::move(t.coarse_nodes);
    coarse.near_null = std::move(t.coarse_vectors);
  }
  setup_coarsest(comm);
  // A backend whose phases read no level on the device never took the product's T; the
  // coarsest level's near-null vectors have no coarsening to read them.
  for (DistLevel& level : levels) level.device_a.outer_product.reset();
  levels.back().near_null = DenseMatrix{};
}

void DistHierarchy::resetup(const dist::Communicator& comm, const dist::DistMatrix& a) {
  std::optional<trace::Step> step(std::in_place, "check_a");
  check_dist_operator(comm, a, "A");
  if (!same_dist_pattern(comm, a, levels[0].a))  // the same answer on every rank
    throw InputError("AMG re-setup: A's pattern or partition differs from the one set up (re-setup reuses "
                     "aggregates and patterns; run a fresh setup)");
  // Same pattern: only the values move, into the arrays level 0 already has (no allocation and
  // no first touch of fresh pages, which a copy of the whole matrix paid at level 0's size).
  step.emplace("copy_a_values");
  if (&a != &levels[0].a) {  // a caller may pass level 0 itself, values changed in place
    copy_on_threads(a.local.values.data(), a.local.values.size(), levels[0].a.local.values.data());
    copy_on_threads(a.nonlocal.values.data(), a.nonlocal.values.size(), levels[0].a.nonlocal.values.data());
  }
  step.reset();
  levels[0].device_a.values_changed();
  for (std::size_t l = 0; l + 1 < levels.size(); ++l) {
    DistLevel& fine = levels[l];
    DistLevel& coarse = levels[l + 1];
    fine.times = {};
    setup_level_numeric(comm, fine);
    if (fine.transfer_plan) {
      // P, R and A_c where A is (the values copied back into the levels; coarse's slot current),
      // after omega from the smoothing operator (A_F refreshed from A, on the host: its map is
      // the host's, and A_F's values then reach the GPU as the eigenvalue estimate reads them).
      TESSERA_TRACE_STEP("transfer_on_device");
      fine.omega = 0.0;
      if (options.smooth_prolongator)
        timed("prolongator_smoothing", fine.times.smoothing, [&] {
          smoothing_operator(comm, fine);  // sets fine.omega
          return 0;
        });
      fine.transfer_plan->run(comm, fine, coarse);
    } else {
      build_transfer(comm, fine, coarse, false);
      coarse.device_a.values_changed();
      const bool recorded = fine.p_sources || !options.smooth_prolongator;
      if (backend_.transfer_on_device && recorded) {
        TESSERA_TRACE_STEP("plan_transfer_on_device");
        fine.transfer_plan = backend_.transfer_on_device(comm, fine, coarse);
      }
    }
    make_level_smoother(fine);
    fine.device_p.values_changed();  // P and R have new values on the host (the device solve refreshes)
    fine.device_r.values_changed();
    check_coarse_operator(comm, coarse, l + 1);
  }
  levels.back().times = {};
  setup_coarsest(comm);
}

void DistHierarchy::setup_level_numeric(const dist::Communicator& comm, DistLevel& level) const {
  timed("smoother", level.times.smoother, [&] {
    std::optional<trace::Step> step(std::in_place, "inverse_diagonal");
    level.inv_diag = backend_.inverse_diagonal(comm, level.a, level.device_a);
    step.emplace("lambda_max");
    level.eigen = backend_.eigen_estimator(comm, level.a, level.inv_diag, options.eigen_iterations,
                                           options.eigen_safety, level.device_a);
    return 0;
  });
}

// After the level's transfer, whose smoothing reads 1 / a_ii last: Chebyshev's smoother takes the
// inverse diagonal over instead of copying it (56 MB on one thread at poisson3d:192's level 0);
// l1-Jacobi's drops it.
void DistHierarchy::make_level_smoother(DistLevel& level) const {
  timed("smoother", level.times.smoother, [&] {
    TESSERA_TRACE_STEP("smoother_diagonal");
    // l1-Jacobi's sums see every off-diagonal, on-rank and off-rank; Chebyshev reads no row.
    const bool reads_rows = options.smoother == SmootherKind::l1_jacobi;
    level.smoother = make_smoother(reads_rows ? owned_l1_inverse_diagonal(level.a) : Vector{},
                                   std::move(level.inv_diag), level.eigen, options);
    level.inv_diag.clear();  // moved from: say that it is empty
    return 0;
  });
}

void DistHierarchy::build_transfer(const dist::Communicator& comm, DistLevel& level, DistLevel& coarse,
                                   bool first_time, std::shared_ptr<dist::HeldOperand> held_p_tent) const {
  std::optional<Csr<double>> p_transposed;  // from a smoothing backend that made it
  std::shared_ptr<dist::HeldOperand> held_p;  // P and P^T where that backend made them
  decltype(SmoothedProlongator::keep_for_solve) keep_for_solve;  // and its copies for the solve
  timed("prolongator_smoothing", level.times.smoothing, [&] {
    level.omega = 0.0;
    if (!options.smooth_prolongator) {
      level.p = level.p_tent;
    } else if (first_time) {
      const dist::DistMatrix& a = smoothing_operator(comm, level);
      // Where the tentative prolongator left P_tent's blocks on the GPU, the smoothing's product
      // assembles its B_ext there: the host's waits for a re-setup.
      level.a_times_p_tent = std::make_unique<dist::CompactSpgemm>(
          comm, a, level.p_tent, backend_.products,
          held_extended_a(a, level.filtered ? level.device_filtered : level.device_a),
          dist::HostBExtended::at_symbolic, std::move(held_p_tent));
      SmoothedProlongator smoothed =
          backend_.smoothing(comm, *level.a_times_p_tent, level.p_tent, level.inv_diag, level.omega);
      smoothed.p.halo = dist::HaloPlan::build(comm, smoothed.p.col_partition, smoothed.p.ghost_cols);
      level.p = std::move(smoothed.p);
      p_transposed = std::move(smoothed.p_transposed);
      held_p = std::move(smoothed.held);
      keep_for_solve = std::move(smoothed.keep_for_solve);
    } else {
      level.a_times_p_tent->refresh(comm, smoothing_operator(comm, level), level.p_tent);
      const Csr<double> ap = level.a_times_p_tent->multiply(comm);
      const std::vector<std::int64_t>& global_of = level.a_times_p_tent->compact_to_global();
      if (level.p_sources) {
        replay_smoothing(*level.p_sources, level.p_tent, ap, level.inv_diag, level.omega, level.p);
      } else {
        // The first re-setup merges once more and records where each value comes from.
        SmoothedValueMap sources;
        dist::DistMatrix p = smoothed_blocks(comm, level.p_tent, ap, global_of, level.inv_diag, level.omega, &sources);
        TESSERA_ASSERT(p.local.row_ptr == level.p.local.row_ptr && p.local.col_idx == level.p.local.col_idx &&
                           p.nonlocal.row_ptr == level.p.nonlocal.row_ptr &&
                           p.nonlocal.col_idx == level.p.nonlocal.col_idx && p.ghost_cols == level.p.ghost_cols,
                       "re-setup changed P's pattern");
        level.p.local.values = std::move(p.local.values);
        level.p.nonlocal.values = std::move(p.nonlocal.values);
        level.p_sources = std::move(sources);
      }
    }
    return 0;
  });
  timed("galerkin", level.times.galerkin, [&] {
    if (first_time) {
      // A*P_tent's A in [owned | ghost] form (a host copy or the backend's) serves A*P too
      // (unless it is A_F).
      const bool shares_a = level.a_times_p_tent && !level.filtered;
      level.galerkin = std::make_unique<dist::DistPtap>(
          comm, level.a, level.p, backend_.products,
          shares_a ? level.a_times_p_tent->shared_a_extended() : held_extended_a(level.a, level.device_a),
          std::move(p_transposed), std::move(held_p));
      coarse.a = level.galerkin->take_result();  // no copy (21M entries at poisson3d:192's level 1)
      // Where the product left its outer product on the GPU, the coarse level's device copy is
      // made from it: C is not uploaded, only what T lacks (one rank: nothing).
      coarse.device_a.outer_product = level.galerkin->take_device_result();
    } else {
      level.galerkin->recompute(comm, level.a, level.p, coarse.a);
    }
    // R's local block is the top of the product's P^T (P is transposed once a level); only P's
    // non-local entries move (one all-to-all). A setup hands P^T's arrays over (the product
    // makes P^T again at its first recompute, from the sort that recompute runs anyway); a
    // re-setup copies them, as the product keeps P^T for the next. A re-setup could copy R's
    // values through dist/transpose_values.hpp's map instead; on one rank that was no faster
    // (0.013-0.017 s either way at 7.1M rows, docs/performance.md, thirty-third session), and
    // making the map costs time.
    std::optional<trace::Step> step(std::in_place, "r_local_block");
    Csr<double> r_local =
        first_time ? level.galerkin->take_p_local_transposed() : level.galerkin->p_local_transposed();
    step.reset();
    level.r = dist::transpose(comm, level.p, std::move(r_local));
    if (keep_for_solve) {
      step.emplace("keep_for_solve");
      keep_for_solve(comm, level.p, level.r, level.device_p, level.device_r);
      step.reset();
    }
    return 0;
  });
}

// A step of its own: on the GPU backend it uploads the coarse operator unless the Galerkin
// product left it there, and no phase includes it.
void DistHierarchy::check_coarse_operator(const dist::Communicator& comm, DistLevel& coarse, std::size_t l) const {
  TESSERA_TRACE_STEP("check_coarse");
  backend_.check_operator(comm, coarse.a, level_name(l), coarse.device_a);
}

dist::ExtendedA DistHierarchy::held_extended_a(const dist::DistMatrix& a, DeviceOperatorSlot& slot) const {
  if (!backend_.held_extended_a) return {};
  return {nullptr, backend_.held_extended_a(a, slot)};
}

// A_F's own lambda_max, as the serial setup's smooth_with_filtered_operator: omega damps D^-1 A_F,
// whose spectrum the filter moves. D stays diag(A) (level.inv_diag).
const dist::DistMatrix& DistHierarchy::smoothing_operator(const dist::Communicator& comm, DistLevel& level) const {
  if (!level.filtered) {
    level.omega = prolongator_damping(level.eigen.safe);
    return level.a;
  }
  {
    TESSERA_TRACE_STEP("filtered_operator_values");
    refresh_dist_filtered_values(level.a, *level.filtered);
  }
  level.device_filtered.values_changed();
  TESSERA_TRACE_STEP("filtered_lambda_max");
  const EigenEstimate eigen = backend_.eigen_estimator(comm, level.filtered->a, level.inv_diag,
                                                       options.eigen_iterations, options.eigen_safety,
                                                       level.device_filtered);
  level.omega = prolongator_damping(eigen.safe);
  return level.filtered->a;
}

void DistHierarchy::setup_coarsest(const dist::Communicator& comm) {
  DistLevel& c = levels.back();
  coarse_direct = c.a.global_rows() <= options.max_dense_rows;
  coarse_operator = Csr<double>{};
  if (!coarse_direct) {
    setup_level_numeric(comm, c);
    make_level_smoother(c);
    return;
  }
  c.inv_diag = owned_inverse_diagonal(c.a);
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
