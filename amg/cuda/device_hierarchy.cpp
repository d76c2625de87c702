// Host code only: drives the device phases level by level, as amg/hierarchy.cpp does on the host.
#include "amg/cuda/device_hierarchy.hpp"

#include <chrono>

#include "amg/cuda/device_eigen_estimate.hpp"
#include "amg/cuda/device_filtered_operator.hpp"
#include "amg/cuda/device_operator.hpp"
#include "amg/cuda/device_row_kernels.hpp"
#include "amg/cuda/device_setup_phases.hpp"
#include "amg/prolongator_smoothing.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;

/// Runs `phase` between two synchronisations of `stream`, adding the wall time to `seconds`.
template <class Phase>
auto timed(double& seconds, cudaStream_t stream, Phase&& phase) {
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto start = std::chrono::steady_clock::now();
  struct Add {
    double& s;
    cudaStream_t stream;
    std::chrono::steady_clock::time_point t0;
    ~Add() {
      cudaStreamSynchronize(stream);  // no throw from a destructor; a failure surfaces at the next check
      s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  } add{seconds, stream, start};
  return phase();
}

template <class T>
void copy_buffer(const DeviceBuffer<T>& from, DeviceBuffer<T>& to, cudaStream_t s) {
  to.allocate(from.size(), s);
  if (from.size()) TESSERA_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), from.bytes(), cudaMemcpyDeviceToDevice, s));
}

DeviceCsr<double> copy_csr(const DeviceCsr<double>& a, cudaStream_t s) {
  DeviceCsr<double> c;
  c.rows = a.rows, c.cols = a.cols, c.nnz = a.nnz;
  copy_buffer(a.row_ptr, c.row_ptr, s);
  copy_buffer(a.col_idx, c.col_idx, s);
  copy_buffer(a.values, c.values, s);
  return c;
}

bool stop(DeviceHierarchy& h, const char* reason) {
  h.stop_reason = reason;
  return false;
}

std::string level_name(std::size_t l) { return "the level " + std::to_string(l) + " Galerkin operator (is A indefinite?)"; }

/// 1/a_ii (checked) of level `l`. Level 0's is computed once on entry to device_setup and
/// device_resetup (InputError before any work) and reused here, not recomputed.
void refresh_inverse_diagonal(DeviceLevel& level, std::size_t l, const std::string& what, cudaStream_t s) {
  if (l > 0) level.inv_diag = device_inverse_diagonal(level.a, what.c_str(), s);
}

/// Values-dependent part of level `l`: diagonal, eigenvalue estimate, smoother.
void setup_smoother(DeviceLevel& level, std::size_t l, const AmgOptions& o, const std::string& what, cudaStream_t s) {
  timed(level.times.smoother, s, [&] {
    refresh_inverse_diagonal(level, l, what, s);
    const tessera::cuda::SpmvPlan plan = tessera::cuda::make_spmv_plan(level.a, {}, s);
    CsrDeviceOperator op(level.a, plan, s);
    level.eigen = device_estimate_lambda_max(level.a, op, level.inv_diag.data(), o.eigen_iterations, o.eigen_safety);
    level.smoother = Smoother{};
    level.smoother.kind = o.smoother;
    if (o.smoother == SmootherKind::chebyshev) {  // make_smoother's interval
      level.smoother.upper = level.eigen.safe;
      level.smoother.lower = level.eigen.safe * o.chebyshev_lower_fraction / o.eigen_safety;
      level.smoother.steps = o.chebyshev_degree;
    } else {
      level.smoother.steps = o.jacobi_sweeps;
      level.l1_inv_diag = device_l1_inverse_diagonal(level.a, s);
    }
    return 0;
  });
}

/// P = (I - omega D^-1 A_F) P_tent with A_F's values refreshed from A and omega from A_F's own
/// lambda_max: hierarchy.cpp's smooth_with_filtered_operator.
void smooth_with_filtered_operator(DeviceLevel& level, const AmgOptions& o, cudaStream_t s) {
  DeviceFilteredOperator& f = *level.filtered;
  device_refresh_filtered_values(level.a, f, s);
  const tessera::cuda::SpmvPlan plan = tessera::cuda::make_spmv_plan(f.a, {}, s);
  CsrDeviceOperator op(f.a, plan, s);
  const EigenEstimate filtered_eigen =
      device_estimate_lambda_max(f.a, op, level.inv_diag.data(), o.eigen_iterations, o.eigen_safety);
  level.omega = prolongator_damping(filtered_eigen.safe);
  device_smooth_prolongator(f.a, level.inv_diag.data(), level.p_tent, level.omega, *level.plan, level.p, s,
                            SmoothingOperator::filtered);
}

/// P from P_tent, R = P^T, and the next operator into `coarse_a` (patterns built once, values
/// every call: on re-setup `coarse_a` is the next level's operator, rewritten in place).
void build_transfer(DeviceLevel& level, const AmgOptions& o, cudaStream_t s, DeviceCsr<double>& coarse_a) {
  timed(level.times.smoothing, s, [&] {
    level.omega = o.smooth_prolongator ? prolongator_damping(level.eigen.safe) : 0.0;
    if (o.smooth_prolongator && level.filtered) {
      smooth_with_filtered_operator(level, o, s);
    } else if (o.smooth_prolongator) {
      device_smooth_prolongator(level.a, level.inv_diag.data(), level.p_tent, level.omega, *level.plan, level.p, s);
    } else if (!level.plan->have_p_pattern) {
      level.p = copy_csr(level.p_tent, s);
      level.plan->have_p_pattern = true;
    }
    device_transpose(level.p, *level.plan, level.r, s);
    return 0;
  });
  timed(level.times.galerkin, s, [&] {
    device_galerkin(level.a, level.p, level.r, *level.plan, coarse_a);
    return 0;
  });
}

void setup_coarsest(DeviceHierarchy& h) {
  DeviceLevel& c = h.levels.back();
  h.coarse_direct = c.a.rows <= h.options.max_dense_rows;
  if (h.coarse_direct) {
    refresh_inverse_diagonal(c, h.levels.size() - 1, "the coarsest operator", h.stream);
    // Its explicit inverse where accurate: a coarse solve is then one dense product.
    timed(c.times.coarse, h.stream, [&] { h.coarse.factor(c.a, h.stream, CoarseForm::inverse_if_accurate); return 0; });
  } else {
    setup_smoother(c, h.levels.size() - 1, h.options, "the coarsest operator", h.stream);
  }
}

/// One coarsening step of the finest level so far; false (with h.stop_reason) when it stops.
bool coarsen(DeviceHierarchy& h) {
  const AmgOptions& o = h.options;
  const cudaStream_t s = h.stream;
  DeviceLevel& fine = h.levels.back();
  if (fine.a.rows <= o.coarse_size) return stop(h, "coarse size reached");
  if (static_cast<int>(h.levels.size()) >= o.max_levels) return stop(h, "max levels reached");
  const DeviceCsr<double> graph = timed(fine.times.strength, s, [&] {
    return device_strength_graph(fine.a, fine.node_ptr.data(), fine.num_nodes(), o.strength_threshold, s);
  });
  DeviceAggregates agg = timed(fine.times.aggregation, s, [&] { return device_aggregate(graph, s); });
  if (agg.count == 0) return stop(h, "no strong connections left to aggregate");
  DeviceTentativeProlongator t = timed(fine.times.tentative, s, [&] {
    return device_tentative_prolongator(agg, fine.node_ptr.data(), fine.num_nodes(), fine.a.rows,
                                        fine.near_null.data(), h.near_null_k, s);
  });
  if (t.p.cols >= fine.a.rows) return stop(h, "aggregation did not reduce the level");
  fine.aggregates = agg.count;
  fine.p_tent = std::move(t.p);
  if (o.filtered_smoothing && o.smooth_prolongator)
    fine.filtered = timed(fine.times.smoothing, s, [&] {
      return device_filtered_operator(fine.a, fine.node_ptr.data(), fine.num_nodes(), graph, s);
    });
  // An automatic hierarchy picks its engine once, on the finest level (the estimate reads the
  // level's operators and synchronises), and the coarse levels inherit it: their operators come
  // from the same stencil or blocks (docs/performance.md: 7- and 27-point hierarchies hash,
  // elasticity tile).
  const bool inherit = h.spgemm == tessera::cuda::OffloadSpgemm::automatic && h.levels.size() > 1;
  fine.plan = std::make_unique<DeviceTransferPlan>(inherit ? h.levels.front().engines.a_p : h.spgemm, s,
                                                   o.keep_setup_plans);
  setup_smoother(fine, h.levels.size() - 1, o, level_name(h.levels.size() - 1), s);
  DeviceLevel coarse;
  build_transfer(fine, o, s, coarse.a);
  fine.engines = fine.plan->engines();
  if (!o.keep_setup_plans) {  // free now, not at the end: the next level's products reuse the memory
    fine.plan.reset();
    fine.filtered.reset();  // a re-setup without plans filters again
    if (h.levels.size() > 1) fine.near_null.release();  // read by this coarsening only; level 0's rebuilds on re-setup
  }
  coarse.node_ptr = std::move(t.coarse_nodes);
  coarse.near_null = std::move(t.coarse_vectors);
  h.levels.push_back(std::move(coarse));  // `fine` dangles from here
  return true;
}

/// Coarsens from `first` (operator, nodes, near-null space and checked 1/a_ii set) to the
/// coarsest level and factors or smooths that one.
void build_levels(DeviceHierarchy& h, DeviceLevel first) {
  h.levels.clear();
  h.stop_reason.clear();
  h.levels.push_back(std::move(first));
  while (coarsen(h)) {
  }
  if (!h.options.keep_setup_plans && h.levels.size() > 1) h.levels.back().near_null.release();
  setup_coarsest(h);
}

/// Re-setup of a hierarchy that kept no plans: level 0's operator (new values already in place),
/// nodes, near-null space and 1/a_ii carried over, everything below rebuilt.
void rebuild_from_finest(DeviceHierarchy& h) {
  DeviceLevel& old = h.levels[0];
  DeviceLevel first;
  first.a = std::move(old.a);
  first.node_ptr = std::move(old.node_ptr);
  first.near_null = std::move(old.near_null);
  first.inv_diag = std::move(old.inv_diag);
  build_levels(h, std::move(first));  // frees the old levels before building the new ones
  h.resetup_was_full_setup = true;
}

}  // namespace

DeviceHierarchy device_setup(const DeviceCsr<double>& a, const NearNullSpace& near_null, const AmgOptions& options,
                             tessera::cuda::OffloadSpgemm spgemm, cudaStream_t stream) {
  validate(options);
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "AMG: A must be square, it is ", a.rows, "x", a.cols);
  const std::string near_null_problem = near_null_space_problem(near_null, a.rows);
  TESSERA_REQUIRE_INPUT(near_null_problem.empty(), near_null_problem);
  DeviceHierarchy h;
  h.options = options;
  h.spgemm = spgemm;
  h.stream = stream;
  h.near_null_k = int(near_null.vectors.cols);
  DeviceLevel first;
  first.a = copy_csr(a, stream);
  first.node_ptr = device_uniform_nodes(a.rows, near_null.block_size, stream);
  if (near_null.constant && near_null.vectors.cols == near_null.block_size)
    first.near_null = device_constant_near_null_space(a.rows, near_null.block_size, stream);
  else
    first.near_null.upload(near_null.vectors.data, stream);
  first.inv_diag = device_inverse_diagonal(first.a, "A", stream);  // InputError before any work
  build_levels(h, std::move(first));
  return h;
}

void device_resetup(DeviceHierarchy& h, const double* values) {
  TESSERA_REQUIRE_INPUT(!h.levels.empty(), "AMG device re-setup: the hierarchy was never set up");
  const cudaStream_t s = h.stream;
  DeviceLevel& first = h.levels[0];
  if (first.a.nnz)
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(first.a.values.data(), values, first.a.values.bytes(),
                                       cudaMemcpyDeviceToDevice, s));
  first.inv_diag = device_inverse_diagonal(first.a, "A", s);  // InputError before any work
  if (!h.options.keep_setup_plans) return rebuild_from_finest(h);
  h.resetup_was_full_setup = false;
  for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
    DeviceLevel& fine = h.levels[l];
    fine.times = {};
    setup_smoother(fine, l, h.options, level_name(l), s);
    build_transfer(fine, h.options, s, h.levels[l + 1].a);  // the products check that patterns are unchanged
  }
  h.levels.back().times = {};
  setup_coarsest(h);
}

HierarchyStats statistics(const DeviceHierarchy& h) {
  return statistics_of(h, [](const tessera::cuda::DeviceCsr<double>& m) { return m.nnz; });
}

std::vector<std::string> product_engines(const DeviceHierarchy& h) {
  std::vector<std::string> engines;
  for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) engines.push_back(to_string(h.levels[l].engines));
  return engines;
}

std::int64_t device_bytes(const DeviceHierarchy& h) {
  std::int64_t bytes = 0;
  for (const DeviceLevel& v : h.levels)
    bytes += v.a.bytes() + v.p_tent.bytes() + v.p.bytes() + v.r.bytes() + std::int64_t(v.node_ptr.bytes() + v.near_null.bytes() +
             v.inv_diag.bytes() + v.l1_inv_diag.bytes() + (v.plan ? v.plan->bytes() : 0) +
             (v.filtered ? v.filtered->bytes() : 0));
  return bytes + h.coarse.device_bytes();
}

}  // namespace tessera::amg::gpu
