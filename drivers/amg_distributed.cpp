#include "drivers/amg_distributed.hpp"

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "amg/dist/dist_amg.hpp"
#include "amg/near_null_space.hpp"
#include "amg/separate_kinds.hpp"
#include "dist/backend_choice.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/host_threads.hpp"
#include "dist/read_matrix_market.hpp"
#include "dist/spmv.hpp"
#include "dist/transpose.hpp"
#include "drivers/amg_pmat.hpp"
#include "drivers/amg_result_row.hpp"
#include "drivers/common/dist_source.hpp"
#include "drivers/common/driver_main.hpp"
#include "drivers/common/huge_pages.hpp"
#include "drivers/common/trace_report.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/page_faults.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"

#if TESSERA_HAVE_CUDA
#include "amg/cuda/device_pcg.hpp"
#include "amg/cuda/dist_device_amg.hpp"
#include "amg/cuda/device_setup_backend.hpp"
#include "amg/cuda/dist_device_smoothing.hpp"
#include "amg/cuda/dist_device_transfer.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "local/cuda/device_buffer.hpp"
#endif

namespace tessera::driver {
namespace {

using dist::RowPartition;

/// Rows dealt in whole units of lcm(8, block size): tile-rows for the kernels, whole nodes for
/// aggregation (a 3-dof node never spans two ranks).
RowPartition node_aligned_partition(const dist::Communicator& comm, std::int64_t rows, int block_size) {
  const std::int64_t unit = std::lcm<std::int64_t>(8, block_size);
  const std::int64_t units = (rows + unit - 1) / unit;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(comm.size()) + 1, 0);
  for (int r = 1; r <= comm.size(); ++r)
    offsets[r] = std::min(rows, unit * (units * r / comm.size()));
  return RowPartition::from_offsets(comm, rows, offsets);
}

std::vector<double> owned_right_hand_side(const dist::Communicator& comm, const DistributedAmgOptions& o,
                                          const dist::DistMatrix& a) {
  if (o.b_file.empty()) return std::vector<double>(static_cast<std::size_t>(a.owned_rows()), 1.0);
  const io::MatrixMarketHeader h = io::read_matrix_market_header(o.b_file);
  TESSERA_REQUIRE_INPUT(h.rows == a.global_rows() && h.cols == 1, "--b: expected a ", a.global_rows(),
                        " x 1 vector, got ", h.rows, " x ", h.cols);
  return dist::read_matrix_market_dense_rows(comm, o.b_file, a.row_begin(), a.row_begin() + a.owned_rows()).data;
}

double slowest(const dist::Communicator& comm, double seconds) { return comm.allreduce(seconds, dist::ReduceOp::max); }

/// ||b - A x|| / ||b|| with the host distributed product (||r|| when b = 0).
double host_relative_residual(const dist::Communicator& comm, const dist::DistMatrix& a, const std::vector<double>& b,
                              const std::vector<double>& x) {
  dist::DistVector input{x, {}};
  std::vector<double> ax(b.size());
  dist::spmv(comm, a, input, ax);
  std::vector<double> sums{0.0, 0.0};  // ||r||^2, ||b||^2
  for (std::size_t i = 0; i < b.size(); ++i) sums[0] += (b[i] - ax[i]) * (b[i] - ax[i]), sums[1] += b[i] * b[i];
  comm.allreduce_in_place(sums, dist::ReduceOp::sum);
  return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
}

/// The setup phase: the first whole setup and, with --setups N, N - 1 more from scratch.
struct SetupPhase {
  double seconds = 0;                      // the first setup, slowest rank
  std::int64_t page_faults_max = 0;        // host page faults of the first setup, largest rank
  std::int64_t page_faults_sum = 0;        // ... summed over ranks
  std::vector<double> repeated_seconds;    // setups 2..N, slowest rank each
  std::vector<std::int64_t> repeated_page_faults_max;
  std::vector<trace::StepTotal> last_trace;  // --trace: this rank's steps in the last setup
  // GPU: the hierarchy's upload for the device solve after setups 1..N-1, slowest rank each
  // (each freed before the next setup); the caller uploads after setup N and keeps that one.
  std::vector<double> earlier_upload_seconds;
};

/// Each setup plus its hierarchy's upload for the device solve (`uploads`: after setups 1..N):
/// the first, and the median over setups 2..N (0 without repeats).
struct SetupPlusUpload {
  double first = 0, repeated_median = 0;
};

SetupPlusUpload setup_plus_upload(const SetupPhase& s, const std::vector<double>& uploads) {
  TESSERA_ASSERT(uploads.size() == s.repeated_seconds.size() + 1, uploads.size(), " uploads for ",
                 s.repeated_seconds.size() + 1, " setups");
  SetupPlusUpload sum{s.seconds + uploads[0], 0};
  std::vector<double> repeated;
  for (std::size_t k = 0; k < s.repeated_seconds.size(); ++k)
    repeated.push_back(s.repeated_seconds[k] + uploads[k + 1]);
  if (!repeated.empty()) sum.repeated_median = median(repeated);
  return sum;
}

/// The figures that a deterministic setup reproduces: level sizes exactly, the eigen estimates
/// to rounding (device products and SpMVs that add with atomics may differ in the last bits
/// from one call to the next).
bool same_hierarchy(const amg::HierarchyStats& x, const amg::HierarchyStats& y) {
  if (x.levels.size() != y.levels.size()) return false;
  for (std::size_t l = 0; l < x.levels.size(); ++l) {
    const amg::LevelStats &a = x.levels[l], &b = y.levels[l];
    if (a.rows != b.rows || a.nnz != b.nnz || a.p_nnz != b.p_nnz) return false;
    if (!(std::abs(a.lambda_max - b.lambda_max) <= 1e-10 * std::abs(a.lambda_max))) return false;
  }
  return true;
}

/// Collective. Builds the hierarchy `setups` times from scratch, each timed from a barrier; the
/// first is reported as setup_seconds, the last is returned. Each repeat replaces the previous
/// hierarchy after it is destroyed, as an application rebuilding its preconditioner would: a
/// repeat reuses memory the process already touched, so first against repeated separates the
/// cost of fresh pages from the cost of the work. `inspect(hierarchy, k)` runs after setup k's
/// timer stops (its collectives are not timed); a repeat that builds a different hierarchy is
/// a bug, for `inspect` to throw on.
///
/// `build(a)` takes `a` over as the hierarchy's level 0 (no copy: hypre's setup, too, keeps a
/// reference to the caller's matrix); each repeat takes it back from the hierarchy it replaces.
template <class Build, class Inspect>
amg::DistAmg timed_setups(const dist::Communicator& comm, int setups, dist::DistMatrix&& a, Build&& build,
                          Inspect&& inspect, SetupPhase& s) {
  std::optional<amg::DistAmg> m;
  for (int k = 0; k < setups; ++k) {
    if (m) a = std::move(*m).release_fine_operator();
    m.reset();
    comm.barrier();
    trace::reset();
    const std::int64_t faults_before = host_page_faults();
    Stopwatch clock;
    m.emplace(build(std::move(a)));
    if (trace::enabled()) s.last_trace = trace::totals();
    const double seconds = slowest(comm, clock.seconds());
    const std::int64_t faults = host_page_faults() - faults_before;
    const std::int64_t faults_max = comm.allreduce(faults, dist::ReduceOp::max);
    inspect(*m, k);
    if (k == 0) {
      s.seconds = seconds;
      s.page_faults_max = faults_max;
      s.page_faults_sum = comm.allreduce(faults, dist::ReduceOp::sum);
      continue;
    }
    s.repeated_seconds.push_back(seconds);
    s.repeated_page_faults_max.push_back(faults_max);
  }
  return std::move(*m);
}

/// The re-setup phase: --resetups N re-setups with the same pattern and values, each followed
/// on the GPUs by the refresh of the uploaded hierarchy's values (timed apart).
struct ResetupPhase {
  double seconds = 0, refresh_seconds = 0;  // the first, slowest rank
  std::vector<double> repeated_seconds, repeated_refresh_seconds;  // re-setups 2..N, slowest rank each
  std::vector<trace::StepTotal> last_trace;  // --trace: this rank's steps in the last one
};

/// Collective. Re-sets `m` up `resetups` times on `a`, each timed from a barrier, and then runs
/// `refresh` (the device hierarchy's values; empty on the host), timed apart; --trace traces
/// both (the barrier between them shows as mpi.barrier). The first re-setup
/// also records where P's values come from; the later ones replay that record
/// (amg/dist/dist_hierarchy.hpp), so first and repeated are reported apart.
ResetupPhase timed_resetups(const dist::Communicator& comm, int resetups, amg::DistAmg& m, const dist::DistMatrix& a,
                            const std::function<void()>& refresh) {
  ResetupPhase r;
  for (int k = 0; k < resetups; ++k) {
    comm.barrier();
    trace::reset();
    Stopwatch clock;
    m.resetup(a);
    const double seconds = slowest(comm, clock.seconds());
    double refresh_seconds = 0;
    if (refresh) {
      comm.barrier();
      Stopwatch refresh_clock;
      refresh();  // traced as device_refresh
      refresh_seconds = slowest(comm, refresh_clock.seconds());
    }
    if (trace::enabled()) r.last_trace = trace::totals();
    if (k == 0) {
      r.seconds = seconds, r.refresh_seconds = refresh_seconds;
    } else {
      r.repeated_seconds.push_back(seconds);
      r.repeated_refresh_seconds.push_back(refresh_seconds);
    }
  }
  return r;
}

/// The solve phase: its result and what the GPU path adds (zeros on the host).
struct SolvePhase {
  amg::SolveResult res;
  double seconds = 0, upload_seconds = 0;
  double warmup_seconds = 0;  // first cycle: NCCL connects its peers lazily, on first use
  double device_relative_residual = 0;  // the device PCG's own recomputed residual
  std::int64_t hierarchy_bytes_max = 0, hierarchy_bytes_sum = 0, peak_bytes_max = 0;  // over ranks
  std::string coarse_method;  // how the device cycle solves the coarsest level (GPU solve only)
  int first_replicated = -1;  // the first level replicated on every GPU, -1 when none is
  std::string cuda_graph;     // DistDeviceAmgPreconditioner::cuda_graph_state() after the solve
  std::vector<double> repeated_seconds;  // --solves N: solves 2..N from the same initial guess
  std::vector<int> repeated_iterations;
  std::int64_t graph_captures = 0, repeated_graph_captures = 0;  // in the first solve, in the others
  nlohmann::json timeline;  // --timeline: device time per part of the cycle, slowest rank
  std::string halo_route;     // the route of the solves above (GPU solve only)
  std::string device_transport;  // nccl, or staged where ranks share a GPU (GPU solve only)
  nlohmann::json halo_routes;  // --halo both: repeated solves through each route
  bool routes_agree = true;    // --halo both: the same iterations and bitwise the same x
};

/// The median over the repeated solves of each one's time per iteration.
double repeated_ms_per_iteration(const SolvePhase& s) {
  std::vector<double> ms;
  for (std::size_t k = 0; k < s.repeated_seconds.size(); ++k)
    if (s.repeated_iterations[k] > 0) ms.push_back(1e3 * s.repeated_seconds[k] / s.repeated_iterations[k]);
  return median(ms);
}

/// Solves 2..`solves`, each from the same initial guess (the first solve's x is the one
/// reported): the steady state of a solver used again with the same preconditioner (time
/// stepping, nonlinear iterations), without the first solve's one-time costs (the capture of
/// the cycle's CUDA graph). `reset()` restores the initial guess, outside the timed region (an
/// upload of x costs more than an iteration); `solve_once()` runs one solve and returns its
/// iterations. The time kept is the slowest rank's.
template <class Reset, class SolveOnce>
void time_repeated_solves(const dist::Communicator& comm, int solves, Reset&& reset, SolveOnce&& solve_once,
                          SolvePhase& s) {
  for (int k = 1; k < solves; ++k) {
    reset();
    comm.barrier();
    Stopwatch clock;
    const int iterations = solve_once();
    s.repeated_seconds.push_back(slowest(comm, clock.seconds()));
    s.repeated_iterations.push_back(iterations);
  }
}

SolvePhase solve_on_host(const dist::Communicator& comm, const amg::DistAmg& m, const dist::DistMatrix& a,
                         const std::vector<double>& b, std::vector<double>& x, const amg::KrylovOptions& ko,
                         int solves, bool use_cg) {
  SolvePhase s;
  const auto krylov = [&](std::vector<double>& guess) {
    return use_cg ? amg::dist_pcg(comm, a, b, guess, m, ko) : amg::dist_fgmres(comm, a, b, guess, m, ko);
  };
  comm.barrier();
  const std::vector<double> x0 = x;
  Stopwatch solve_clock;
  s.res = krylov(x);
  s.seconds = slowest(comm, solve_clock.seconds());
  std::vector<double> again;
  time_repeated_solves(comm, solves, [&] { again = x0; }, [&] { return krylov(again).iterations; }, s);
  return s;
}

#if TESSERA_HAVE_CUDA
/// The preconditioner's timeline over all timed solves, per iteration, slowest rank per part.
nlohmann::json timeline_json(const dist::Communicator& comm, amg::gpu::DistDeviceAmgPreconditioner& pm,
                             const SolvePhase& s) {
  int iterations = s.res.iterations;
  for (int i : s.repeated_iterations) iterations += i;
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& e : pm.timeline()) {
    const double seconds = slowest(comm, e.seconds);
    parts.push_back({{"part", e.part}, {"calls", e.calls}, {"seconds", seconds},
                     {"ms_per_iteration", iterations ? 1e3 * seconds / iterations : 0.0},
                     {"within_previous", e.within_previous}});
  }
  return parts;
}

void print_timeline(const nlohmann::json& parts) {
  std::printf("timeline of the cycle (CUDA events, eager launches, slowest rank per part):\n"
              "  %-24s %8s %14s\n", "part", "calls", "ms/iteration");
  double sum = 0;
  for (const auto& p : parts) {
    const bool nested = p["within_previous"].get<bool>();  // already in the part above: indented, not summed
    const std::string name = (nested ? "  " : "") + p["part"].get<std::string>();
    std::printf("  %-24s %8lld %14.4f\n", name.c_str(), p["calls"].get<long long>(),
                p["ms_per_iteration"].get<double>());
    if (!nested) sum += p["ms_per_iteration"].get<double>();
  }
  std::printf("  %-24s %8s %14.4f (each part's slowest rank; the rest of an iteration: the cycle's vector updates,\n"
              "  %-24s %8s %14s  PCG's product and dots)\n", "sum of the parts", "", sum, "", "", "");
}

/// --halo both: the same solve through the NCCL and the peer halo route, in legs nccl, peer,
/// peer, nccl (neither route always first). Each leg runs one untimed solve (after the switch
/// the cycle runs eagerly once, mapping the route's buffers, and is captured again), then
/// `solves` timed ones; a route's figure is the median ms per iteration over its legs' solves.
/// Every leg must take the same iterations and end at the same x up to last-bit differences
/// (the device solve is not bitwise reproducible even on one route: two NCCL legs differed by
/// 2e-15 relative on 4 H200s; a ghost from the wrong round would show at 1e-10 or far above);
/// bitwise equality per leg is reported too. The cycle must be a replayed CUDA graph
/// (`graph_state`, reported per leg), or the comparison would time eager launches.
template <class Reset, class SolveOnce, class Solution, class GraphState>
nlohmann::json compare_halo_routes(const dist::Communicator& comm, dist::gpu::DeviceContext& ctx, Reset&& reset,
                                   SolveOnce&& solve_once, Solution&& solution, GraphState&& graph_state, int solves,
                                   bool& agree) {
  using dist::gpu::HaloRoute;
  constexpr double kSameSolution = 1e-10;  // max |x - x_first| / max |x_first|
  const HaloRoute keep = ctx.halo_route();
  const HaloRoute legs[4] = {HaloRoute::nccl, HaloRoute::peer, HaloRoute::peer, HaloRoute::nccl};
  SolvePhase timed[2];
  std::vector<double> first_x;
  std::vector<int> first_iterations;
  std::vector<std::string> graphs;
  std::vector<bool> leg_identical;
  std::vector<double> leg_difference;
  std::int64_t same = 1;
  for (int leg = 0; leg < 4; ++leg) {
    const int r = legs[leg] == HaloRoute::peer ? 1 : 0;
    ctx.set_halo_route(legs[leg]);
    reset();
    solve_once();
    SolvePhase one;
    time_repeated_solves(comm, solves + 1, reset, solve_once, one);
    timed[r].repeated_seconds.insert(timed[r].repeated_seconds.end(), one.repeated_seconds.begin(),
                                     one.repeated_seconds.end());
    timed[r].repeated_iterations.insert(timed[r].repeated_iterations.end(), one.repeated_iterations.begin(),
                                        one.repeated_iterations.end());
    graphs.push_back(graph_state());
    const std::vector<double> x = solution();
    if (leg == 0) {
      first_x = x;
      first_iterations = one.repeated_iterations;
    }
    // Per leg, against the first (an NCCL leg): bitwise equality, and the largest difference
    // relative to the largest |x| (which tells a last-bit difference from a wrong ghost).
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < x.size() && i < first_x.size(); ++i) {
      diff = std::max(diff, std::fabs(x[i] - first_x[i]));
      scale = std::max(scale, std::fabs(first_x[i]));
    }
    const std::int64_t bitwise = comm.allreduce(std::int64_t(x == first_x ? 1 : 0), dist::ReduceOp::min);
    const double relative = comm.allreduce(diff, dist::ReduceOp::max) /
                            std::max(comm.allreduce(scale, dist::ReduceOp::max), 1e-300);
    const bool same_iterations = one.repeated_iterations == first_iterations;  // the same on every rank
    same &= same_iterations && relative <= kSameSolution ? 1 : 0;
    leg_identical.push_back(bitwise == 1);
    leg_difference.push_back(relative);
  }
  ctx.set_halo_route(keep);
  agree = same == 1;
  const double ms[2] = {repeated_ms_per_iteration(timed[0]), repeated_ms_per_iteration(timed[1])};
  nlohmann::json routes = nlohmann::json::object();
  for (int r = 0; r < 2; ++r)
    routes[r ? "peer" : "nccl"] = {{"repeated_ms_per_iteration", ms[r]},
                                   {"seconds", timed[r].repeated_seconds},
                                   {"iterations", timed[r].repeated_iterations}};
  routes["nccl_over_peer"] = ms[0] / ms[1];
  routes["agree"] = agree;
  routes["agree_means"] = "same iterations and max|x - x_first|/max|x_first| <= 1e-10 in every leg";
  routes["cuda_graph_per_leg"] = graphs;
  routes["identical_to_first_leg"] = leg_identical;
  routes["relative_difference_to_first_leg"] = leg_difference;
  routes["order"] = "nccl, peer, peer, nccl";
  if (comm.rank() == 0)
    std::printf("--halo both: %d repeated solves per leg, legs nccl, peer, peer, nccl (cycle graph: %s / %s / %s / "
                "%s): nccl %.3f ms/iteration, peer %.3f ms/iteration, nccl/peer %.2fx; iterations and solution %s\n",
                solves, graphs[0].c_str(), graphs[1].c_str(), graphs[2].c_str(), graphs[3].c_str(), ms[0], ms[1],
                ms[0] / ms[1], agree ? "agree" : "DIFFER (FAIL)");
  if (comm.rank() == 0)
    std::printf("  legs vs the first: max |x - x_first| / max |x_first| = %.1e, %.1e, %.1e, %.1e (bitwise: %d %d %d %d)\n",
                leg_difference[0], leg_difference[1], leg_difference[2], leg_difference[3], int(leg_identical[0]),
                int(leg_identical[1]), int(leg_identical[2]), int(leg_identical[3]));
  return routes;
}

/// One GPU per rank: uploads b and x (their time added to the hierarchy's upload, `uploaded`,
/// as the single-GPU path counts them), then times the device solve (PCG, or FGMRES) alone with
/// `pm`, the uploaded hierarchy; x comes back and its residual is recomputed here.
SolvePhase solve_on_devices(dist::gpu::DeviceContext& ctx, amg::gpu::DistDeviceAmgPreconditioner& pm,
                            double uploaded, const amg::DistAmg& m, const dist::DistMatrix& a,
                            const std::vector<double>& b, std::vector<double>& x, const amg::KrylovOptions& ko,
                            const DistributedAmgOptions& o, bool use_cg) {
  const dist::Communicator& comm = ctx.comm();
  SolvePhase s;
  s.halo_route = dist::gpu::halo_route_name(ctx.halo_route());
  s.device_transport = ctx.transport().name();
  cuda::DeviceMemory::reset_peak();  // the peak of the solve, with the hierarchy resident
  comm.barrier();
  Stopwatch upload_clock;
  // Level 0 is A (no second upload), unless the hierarchy was built from another matrix (--pmat).
  std::optional<dist::gpu::DeviceDistMatrix> own_a;
  if (&a != &m.hierarchy().levels.front().a) own_a.emplace(a, ctx.compute());
  dist::gpu::DeviceDistMatrix& da = own_a ? *own_a : pm.fine_operator();
  cuda::DeviceBuffer<double> db, dx;
  db.upload(b, ctx.compute());
  dx.upload(x, ctx.compute());
  const std::vector<double> x0 = x;
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  s.upload_seconds = uploaded + slowest(comm, upload_clock.seconds());
  comm.barrier();
  Stopwatch warmup_clock;
  pm.connect_peers();  // NCCL's lazy peer connections, timed apart from the solve
  s.warmup_seconds = slowest(comm, warmup_clock.seconds());
  s.coarse_method = pm.coarse_method();
  if (pm.first_replicated() < m.hierarchy().levels.size()) s.first_replicated = int(pm.first_replicated());
  s.hierarchy_bytes_max = comm.allreduce(pm.device_bytes(), dist::ReduceOp::max);
  s.hierarchy_bytes_sum = comm.allreduce(pm.device_bytes(), dist::ReduceOp::sum);

  if (o.timeline) pm.enable_timeline();
  comm.barrier();
  Stopwatch solve_clock;
  const amg::gpu::DevicePreconditioner apply = [&pm](const double* r, double* z) { pm.apply(r, z); };
  const auto krylov = [&] {
    return use_cg ? amg::gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), apply, ko)
                  : amg::gpu::dist_device_fgmres(ctx, da, db.data(), dx.data(), apply, ko);
  };
  s.res = krylov();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  s.seconds = slowest(comm, solve_clock.seconds());
  s.peak_bytes_max = comm.allreduce(cuda::DeviceMemory::peak(), dist::ReduceOp::max);
  s.cuda_graph = pm.cuda_graph_state();
  s.graph_captures = pm.cuda_graph_captures();
  x = dx.download(ctx.compute());
  s.device_relative_residual = s.res.relative_residual;
  s.res.relative_residual = host_relative_residual(comm, a, b, x);
  const auto reset = [&] {
    dx.upload(x0, ctx.compute());
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  };
  const auto solve_once = [&] {
    const int iterations = krylov().iterations;
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
    return iterations;
  };
  time_repeated_solves(comm, o.solves, reset, solve_once, s);
  // Zero unless a repeated solve got other vectors than the first (the pool's choice) and
  // captured the cycle again inside its timed region.
  s.repeated_graph_captures = pm.cuda_graph_captures() - s.graph_captures;
  if (o.timeline) s.timeline = timeline_json(comm, pm, s);
  if (o.halo == "both")
    s.halo_routes = compare_halo_routes(
        comm, ctx, reset, solve_once, [&] { return dx.download(ctx.compute()); },
        [&] { return pm.cuda_graph_state(); }, std::max(o.solves, 3), s.routes_agree);
  return s;
}
#endif

/// The ranks' GPUs (one DeviceContext for the setup's device phases and the solve), or none.
struct Devices {
#if TESSERA_HAVE_CUDA
  std::unique_ptr<dist::gpu::DeviceContext> ctx;
#endif
  double seconds = 0;  // to make it, slowest rank
};

/// Collective. A context with --backend gpu (NCCL setup: timed neither as setup nor as solve),
/// on the halo route --halo asks for.
Devices open_devices(const dist::Communicator& comm, const DistributedAmgOptions& o) {
  Devices d;
  if (o.backend != Backend::gpu) return d;
#if TESSERA_HAVE_CUDA
  comm.barrier();
  Stopwatch clock;
  d.ctx = std::make_unique<dist::gpu::DeviceContext>(comm);
  if (o.halo == "nccl" || o.halo == "peer") d.ctx->set_halo_route(dist::gpu::parse_halo_route(o.halo));
  d.seconds = slowest(comm, clock.seconds());
  if (comm.rank() == 0)
    std::printf("device context (%d rank(s), %s transport): made in %.4f s (NCCL: the communicator and its allreduce "
                "connections), timed apart from setup and solve\n",
                comm.size(), d.ctx->transport().name(), d.seconds);
#else
  (void)comm;
  throw InputError("--backend gpu: this build has no CUDA backend");
#endif
  return d;
}

/// The hierarchy uploaded to the ranks' GPUs (--backend gpu) right after the setup, so that
/// each re-setup refreshes its values, and the solve uses it. Declared after the DistAmg whose
/// hierarchy it reads, so destroyed before it.
struct UploadedHierarchy {
#if TESSERA_HAVE_CUDA
  std::unique_ptr<amg::gpu::DistDeviceAmgPreconditioner> pm;
#endif
  double seconds = 0;  // the upload, slowest rank
  bool on_devices() const {
#if TESSERA_HAVE_CUDA
    return pm != nullptr;
#else
    return false;
#endif
  }
  /// Collective: re-sends the values after a re-setup (empty on the host).
  std::function<void()> refresh() {
#if TESSERA_HAVE_CUDA
    if (pm) return [this] { pm->refresh_values(); };
#endif
    return {};
  }
};

/// Collective: the upload with --backend gpu, nothing on the host.
UploadedHierarchy upload_hierarchy(const dist::Communicator& comm, Devices& devices, const DistributedAmgOptions& o,
                                   const amg::DistAmg& m) {
  UploadedHierarchy u;
  if (o.backend != Backend::gpu) return u;
#if TESSERA_HAVE_CUDA
  comm.barrier();
  Stopwatch clock;
  u.pm = std::make_unique<amg::gpu::DistDeviceAmgPreconditioner>(
      *devices.ctx, m.hierarchy(), o.replicate_nnz < 0 ? amg::gpu::kReplicateByDefault : o.replicate_nnz);
  u.pm->set_cuda_graph(o.cuda_graph);
  u.seconds = slowest(comm, clock.seconds());  // the constructor synchronises
#else
  (void)comm, (void)devices, (void)m;
#endif
  return u;
}

SolvePhase solve(const dist::Communicator& comm, Devices& devices, UploadedHierarchy& uploaded,
                 const DistributedAmgOptions& o, const amg::DistAmg& m, const dist::DistMatrix& a,
                 const std::vector<double>& b, std::vector<double>& x, const amg::KrylovOptions& ko, bool use_cg) {
  if (o.backend == Backend::host) return solve_on_host(comm, m, a, b, x, ko, o.solves, use_cg);
#if TESSERA_HAVE_CUDA
  return solve_on_devices(*devices.ctx, *uploaded.pm, uploaded.seconds, m, a, b, x, ko, o, use_cg);
#else
  (void)devices, (void)uploaded;
  throw InputError("--backend gpu: this build has no CUDA backend");
#endif
}

/// Collective: CG for a symmetric A, FGMRES otherwise (--solver auto; cg or gmres choose). A
/// generated problem is symmetric by its kind; a file's matrix is compared with its transpose.
bool uses_cg(const dist::Communicator& comm, const DistributedAmgOptions& o, const dist::DistMatrix& a) {
  const bool use_cg = o.solver == "cg" ||
                      (o.solver == "auto" && (!o.a.spec.empty() ? gen::is_symmetric(gen::parse_spec(o.a.spec))
                                                                : dist::is_symmetric(comm, a)));
  return use_cg;
}

/// Whether the graph phases and the eigenvalue estimates run on the ranks' GPUs: with the gpu
/// backend unless --setup host.
bool graph_phases_on_gpus(const DistributedAmgOptions& o) {
  TESSERA_REQUIRE_INPUT(o.backend == Backend::gpu || o.setup != "device",
                        "--setup device runs the graph phases on the GPUs: it needs --backend gpu");
  return o.backend == Backend::gpu && o.setup != "host";
}

/// Where setup_backend puts the tentative prolongator's QR.
bool tentative_on_gpus(const DistributedAmgOptions& o, bool graph_on_gpus) {
  return graph_on_gpus && o.tentative != "host";
}

/// Where setup_backend puts the first merge of each P.
bool merge_on_gpus(const DistributedAmgOptions& o, bool graph_on_gpus) {
  return graph_on_gpus && o.merge != "host";
}

/// Where setup_backend makes the Galerkin product's P^T: next to the device merge, or the host.
bool transpose_on_gpus(const DistributedAmgOptions& o, bool graph_on_gpus) {
  return merge_on_gpus(o, graph_on_gpus) && o.transpose_p != "host";
}

/// Where the first Galerkin products read P and P^T: where the device merge left them, or
/// uploaded from the host's copies.
bool galerkin_operands_on_gpus(const DistributedAmgOptions& o, bool graph_on_gpus) {
  return transpose_on_gpus(o, graph_on_gpus) && o.galerkin_operands != "host";
}

/// Where the device solve's P and R come from: the copies the setup kept on the GPUs, or uploads.
bool solve_operands_on_gpus(const DistributedAmgOptions& o, bool graph_on_gpus) {
  return galerkin_operands_on_gpus(o, graph_on_gpus) && o.solve_operands != "host";
}

#if TESSERA_HAVE_CUDA
/// What the device merge gives besides P, by the switches above (with the merge on the GPUs).
amg::gpu::MergeOutputs merge_outputs(const DistributedAmgOptions& o, bool graph_on_gpus) {
  using amg::gpu::MergeOutputs;
  if (solve_operands_on_gpus(o, graph_on_gpus)) return MergeOutputs::kept_for_solve;
  if (galerkin_operands_on_gpus(o, graph_on_gpus)) return MergeOutputs::kept_on_device;
  return transpose_on_gpus(o, graph_on_gpus) ? MergeOutputs::p_transposed : MergeOutputs::p_only;
}
#endif

/// The setup's steps: the products where `products` runs them; with the gpu backend and
/// `graph_on_gpus`, the graph phases and eigenvalue estimates run on the GPUs too and the
/// products read A from the levels' device copies the strength phase makes, all on the context's
/// compute stream, whose lifetime those copies (the solve's too) need; so does the re-setups'
/// transfer with --resetup-transfer device. (--setup host keeps the products' host copies of A,
/// as before the copies were shared.)
amg::DistSetupBackend setup_backend(Devices& devices, const DistributedAmgOptions& o, dist::LocalSpgemm products,
                                    bool graph_on_gpus, std::shared_ptr<cuda::OffloadStats> stats) {
  TESSERA_REQUIRE_INPUT(o.resetup_transfer != "device" || graph_on_gpus,
                        "--resetup-transfer device runs from the levels' device copies of A: it needs --backend gpu "
                        "with the graph phases on the GPUs (not --setup host)");
  TESSERA_REQUIRE_INPUT(o.tentative != "device" || graph_on_gpus,
                        "--tentative device is a step of the GPU setup: it needs --backend gpu with the graph phases "
                        "on the GPUs (not --setup host)");
  TESSERA_REQUIRE_INPUT(o.merge != "device" || graph_on_gpus,
                        "--merge device is a step of the GPU setup: it needs --backend gpu with the graph phases on "
                        "the GPUs (not --setup host)");
  TESSERA_REQUIRE_INPUT(o.transpose_p != "device" || merge_on_gpus(o, graph_on_gpus),
                        "--transpose-p device transposes P where the device merge made it: it needs --backend gpu "
                        "with the graph phases and the merge on the GPUs");
  TESSERA_REQUIRE_INPUT(o.galerkin_operands != "device" || transpose_on_gpus(o, graph_on_gpus),
                        "--galerkin-operands device reads P and P^T where the device merge made them: it needs "
                        "--backend gpu with the graph phases, the merge and P^T on the GPUs");
  TESSERA_REQUIRE_INPUT(o.solve_operands != "device" || galerkin_operands_on_gpus(o, graph_on_gpus),
                        "--solve-operands device shares the P and R the setup kept on the GPUs: it needs --backend "
                        "gpu with the graph phases, the merge, P^T and the Galerkin operands on the GPUs");
#if TESSERA_HAVE_CUDA
  if (graph_on_gpus) {
    amg::DistSetupBackend backend = amg::gpu::device_setup_backend(*devices.ctx, cuda::parse_offload_spgemm(o.spgemm), stats);
    if (o.resetup_transfer == "device") backend.transfer_on_device = amg::gpu::dist_device_transfer(*devices.ctx);
    if (o.tentative == "host") backend.tentative = amg::dist_tentative_prolongator;  // the ablations
    if (o.merge == "host") backend.smoothing = amg::dist_smoothed_prolongator;
    if (merge_on_gpus(o, graph_on_gpus) && !solve_operands_on_gpus(o, graph_on_gpus))
      backend.smoothing = amg::gpu::device_smoothing(devices.ctx->compute(), cuda::parse_offload_spgemm(o.spgemm), stats,
                                                     merge_outputs(o, graph_on_gpus));
    return backend;
  }
#else
  (void)devices;
  (void)o;
  (void)stats;
  TESSERA_REQUIRE_INPUT(!graph_on_gpus, "--backend gpu: this build has no CUDA backend");
#endif
  amg::DistSetupBackend backend;  // the host's steps, with `products` where they run
  backend.products = std::move(products);
  if (o.backend == Backend::gpu) backend.host_coarse_factor = amg::CoarseFactor::on_first_use;  // as the GPUs' steps
  return backend;
}

/// Slowest rank's time in each part of the device setup products (seconds).
nlohmann::json product_times(const dist::Communicator& comm, const cuda::OffloadStats& s) {
  return {{"products", comm.allreduce(std::int64_t(s.products), dist::ReduceOp::max)},
          {"product_s", slowest(comm, s.product)},
          {"convert_s", slowest(comm, s.convert)},
          {"transfer_s", slowest(comm, s.transfers())},
          {"total_s", slowest(comm, s.total())}};
}

void print_device_solve(const SolvePhase& s, int ranks) {
  constexpr double mib = 1 << 20;
  std::printf("device hierarchy (%d rank(s)): %.1f MiB on the largest rank, %.1f MiB in all, uploaded in "
              "%.4f s, first cycle (NCCL peer connections, untimed in the solve) %.4f s; peak device memory "
              "%.1f MiB (largest rank)\n",
              ranks, double(s.hierarchy_bytes_max) / mib, double(s.hierarchy_bytes_sum) / mib, s.upload_seconds,
              s.warmup_seconds, double(s.peak_bytes_max) / mib);
  if (s.first_replicated >= 0)
    std::printf("levels %d and coarser replicated on every GPU (one allgather a cycle, no halo exchanges there)\n",
                s.first_replicated);
  std::printf("cycle as a CUDA graph: %s; halo route: %s; device transport: %s%s\n", s.cuda_graph.c_str(),
              s.halo_route.c_str(), s.device_transport.c_str(),
              s.device_transport == "staged" ? " (through host memory: slower than NCCL, not for timing)" : "");
}

}  // namespace

int run_distributed_amg(const dist::Communicator& comm, const DistributedAmgOptions& o, nlohmann::json& out) {
  const bool root = comm.rank() == 0;
  const auto [rows, cols] = global_shape(o.a);
  TESSERA_REQUIRE_INPUT(rows == cols, "A must be square, it is ", rows, "x", cols);
  TESSERA_REQUIRE_INPUT(!o.timeline || o.backend == Backend::gpu, "--timeline times the GPU solve (--backend gpu)");
  TESSERA_REQUIRE_INPUT(o.halo == "auto" || o.backend == Backend::gpu, "--halo ", o.halo,
                        " chooses how GPUs exchange halos (--backend gpu)");
  const NearNullSource near_null(o.a, o.near_null, rows);
  const int block_size = near_null.block_size();
  const RowPartition part = node_aligned_partition(comm, rows, block_size);
  // Not const: the setups take it over as the hierarchy's level 0 (timed_setups), which holds it
  // from then on (`fine` below).
  dist::DistMatrix a = load_distributed(comm, o.a, part, part);
  const OwnedNearNull near_null_rows = owned_near_null(comm, near_null, a.row_begin(), a.row_begin() + a.owned_rows());
  const std::vector<double> b = owned_right_hand_side(comm, o, a);
  const std::int64_t nnz = comm.allreduce(a.nnz(), dist::ReduceOp::sum);
  const bool use_cg = uses_cg(comm, o, a);
  const std::string method = krylov_method(use_cg, o.krylov);
  if (root)
    std::printf("A: %s, %lld rows, %lld nnz on %d rank(s); near-null space %lld vector(s) (%s), block size %d; %s + "
                "AMG\n",
                o.a.describe().c_str(), (long long)rows, (long long)nnz, comm.size(),
                (long long)near_null_rows.space.vectors.cols, near_null.describe().c_str(), block_size, method.c_str());
  // --pmat separate-kinds: the hierarchy takes A without its cross-kind couplings (and the
  // constant); A moves here, where the Krylov method, the residual check and the baselines read it.
  const bool separate_kinds = o.pmat == "separate-kinds";
  std::optional<dist::DistMatrix> krylov_a;
  amg::NearNullSpace scalar_nns;
  if (separate_kinds) {
    require_kinds_to_separate(block_size);
    krylov_a.emplace(std::move(a));
    a = dist::assemble(comm, amg::without_cross_kind_couplings(dist::owned_row_block(*krylov_a), block_size), part);
    scalar_nns = amg::constant_near_null_space(a.owned_rows(), 1);
    const std::int64_t pmat_nnz = comm.allreduce(a.nnz(), dist::ReduceOp::sum);
    if (root) std::printf("%s\n", separate_kinds_line(block_size, pmat_nnz).c_str());
  }
  const amg::NearNullSpace& nns = separate_kinds ? scalar_nns : near_null_rows.space;

  // The setup's products (A P_tent, P^T A P) on the ranks' GPUs with the gpu backend, and its
  // graph phases (strength, aggregation) and lambda_max estimates too unless --setup host;
  // P_tent, the smoothers' coefficients and the symbolic phases of the products stay on the host.
  std::shared_ptr<cuda::OffloadStats> product_stats;
  if (o.backend == Backend::gpu) product_stats = std::make_shared<cuda::OffloadStats>();
  const dist::LocalSpgemm local_product = dist::local_spgemm_for(comm, o.backend, o.spgemm, product_stats);
  const bool graph_on_gpus = graph_phases_on_gpus(o);
  Devices devices = open_devices(comm, o);  // declared before the hierarchy, which uses it
  const amg::DistSetupBackend backend = setup_backend(devices, o, local_product, graph_on_gpus, product_stats);
  const auto build = [&](dist::DistMatrix&& taken) { return amg::DistAmg(comm, std::move(taken), nns, o.amg, backend); };
  SetupPhase setup;
  nlohmann::json setup_products_json;  // the first setup's (product_stats then keeps adding up)
  std::optional<amg::HierarchyStats> first_stats;
  const auto inspect = [&](const amg::DistAmg& built, int k) {
    // Each setup but the last is uploaded as the solve would upload it, timed, and freed: so the
    // first setup's upload is timed cold and the later ones in a process that has run one, as
    // the repeated setups are (the last setup's upload is the solve's, below).
    if (k + 1 < o.setups && o.backend == Backend::gpu)
      setup.earlier_upload_seconds.push_back(upload_hierarchy(comm, devices, o, built).seconds);
    const amg::HierarchyStats built_stats = built.statistics();  // collective; global figures, alike on every rank
    if (k > 0) {
      TESSERA_ASSERT(same_hierarchy(*first_stats, built_stats), "a repeated setup built a different hierarchy");
      return;
    }
    first_stats = built_stats;
    if (product_stats) setup_products_json = product_times(comm, *product_stats);
  };
  const bool tracing = agree_on_tracing(comm, o.trace);
  trace::set_enabled(tracing);  // the setups and re-setups only: the solves run untraced
  amg::DistAmg m = timed_setups(comm, o.setups, std::move(a), build, inspect, setup);
  const dist::DistMatrix& fine = m.fine_operator();  // A (or --pmat's matrix), held by the hierarchy
  const dist::DistMatrix& krylov_operator = krylov_a ? *krylov_a : fine;
  const double setup_s = setup.seconds;
  const amg::HierarchyStats& stats = *first_stats;
  const std::vector<int> active = m.active_ranks();  // collective
  if (root) amg::print(stdout, stats, active);
  if (root && product_stats)
    std::printf("setup products on the GPUs (%s, slowest rank): %s; graph phases and eigenvalue estimates on the %s, "
                "tentative prolongator's QR on the %s, P's first merge on the %s, the Galerkin product's P^T on the "
                "%s, the solve's P and R %s\n",
                o.spgemm.c_str(), setup_products_json.dump().c_str(), graph_on_gpus ? "GPUs" : "host",
                tentative_on_gpus(o, graph_on_gpus) ? "GPUs" : "host", merge_on_gpus(o, graph_on_gpus) ? "GPUs" : "host",
                transpose_on_gpus(o, graph_on_gpus) ? "GPUs" : "host",
                solve_operands_on_gpus(o, graph_on_gpus) ? "kept from the setup" : "uploaded after it");
  const std::int64_t threads_min = comm.allreduce(std::int64_t{host::threads()}, dist::ReduceOp::min);
  const std::int64_t threads_max = comm.allreduce(std::int64_t{host::threads()}, dist::ReduceOp::max);
  if (root) {
    std::printf("host threads a rank (the setup's host loops): %lld to %lld; rank 0: %s\n", (long long)threads_min,
                (long long)threads_max, dist::host_threads_summary().c_str());
    std::printf("host page faults in the setup: %lld on the largest rank, %lld in all; host heap: %s\n",
                (long long)setup.page_faults_max, (long long)setup.page_faults_sum, host_heap_pages().c_str());
    if (!setup.repeated_seconds.empty())
      std::printf("repeated setups (%zu, each from scratch after the previous hierarchy is freed, same hierarchy): "
                  "median %.4f s, all %s s; host page faults on the largest rank %s\n",
                  setup.repeated_seconds.size(), median(setup.repeated_seconds),
                  nlohmann::json(setup.repeated_seconds).dump().c_str(),
                  nlohmann::json(setup.repeated_page_faults_max).dump().c_str());
  }
  nlohmann::json trace_json, resetup_trace_json;
  if (tracing)
    trace_json = report_step_trace(comm, detail::concat("step trace of setup ", o.setups, " of ", o.setups), setup.last_trace);
  if (tracing) trace::reset();
  UploadedHierarchy uploaded = upload_hierarchy(comm, devices, o, m);  // after m: destroyed first
  nlohmann::json upload_trace_json;
  if (tracing && uploaded.on_devices())
    upload_trace_json =
        report_step_trace(comm, "step trace of the hierarchy's upload for the device solve", trace::totals());
  std::vector<double> uploads = setup.earlier_upload_seconds;  // after setups 1..N (GPU)
  uploads.push_back(uploaded.seconds);
  if (root && uploaded.on_devices() && uploads.size() > 1)
    std::printf("hierarchy uploads for the device solve after setups 1 to %d (each but the last freed before the next "
                "setup): %s s\n",
                o.setups, nlohmann::json(uploads).dump().c_str());
  const std::function<void()> refresh = uploaded.refresh();
  // A re-setup is handed new values in the caller's matrix, which it checks and copies into level 0:
  // a copy of A plays that matrix (made here, untimed, and only for re-setups).
  const std::optional<dist::DistMatrix> new_values =
      o.resetups > 0 ? std::optional<dist::DistMatrix>(fine) : std::nullopt;
  const ResetupPhase resetups = timed_resetups(comm, o.resetups, m, new_values ? *new_values : fine, refresh);
  trace::set_enabled(false);
  // Planned by the first re-setup where the backend has a transfer on the devices, then run.
  const bool transfer_on_gpus = m.hierarchy().levels.front().transfer_plan != nullptr;
  if (root && o.resetups > 0) {
    std::printf("re-setup (same pattern, values only; records where P's values come from%s): %.4f s\n",
                transfer_on_gpus ? " and plans the later ones' transfer on the GPUs" : "", resetups.seconds);
    if (refresh)
      std::printf("  then the uploaded hierarchy's values refreshed on the GPUs: %.4f s (its upload after the "
                  "setup: %.4f s)\n",
                  resetups.refresh_seconds, uploaded.seconds);
    if (!resetups.repeated_seconds.empty())
      std::printf("repeated re-setups (%zu, replaying that record%s): median %.4f s, all %s s\n",
                  resetups.repeated_seconds.size(), transfer_on_gpus ? "; P, R and A_c on the GPUs" : "",
                  median(resetups.repeated_seconds),
                  nlohmann::json(resetups.repeated_seconds).dump().c_str());
    if (refresh && !resetups.repeated_refresh_seconds.empty())
      std::printf("  then their refreshes on the GPUs: median %.4f s, all %s s\n",
                  median(resetups.repeated_refresh_seconds),
                  nlohmann::json(resetups.repeated_refresh_seconds).dump().c_str());
  }
  if (tracing && o.resetups > 0)
    resetup_trace_json = report_step_trace(
        comm,
        detail::concat("step trace of re-setup ", o.resetups, " of ", o.resetups,
                       refresh ? " and of its device refresh (device_refresh)" : ""),
        resetups.last_trace);

  const amg::KrylovOptions& ko = o.krylov;
  std::vector<double> x(b.size(), 0.0);
  const bool gpu = o.backend == Backend::gpu;
  const SolvePhase phase = solve(comm, devices, uploaded, o, m, krylov_operator, b, x, ko, use_cg);
  const amg::SolveResult& res = phase.res;
  const double solve_s = phase.seconds;

  const double nnz_ap = double(stats.nnz_ap);
  const double setup_fom = setup_s > 0 ? nnz_ap / setup_s : 0;
  const double solve_fom = solve_s > 0 ? nnz_ap * res.iterations / solve_s : 0;
  if (root) {
    if (o.krylov.history)
      for (std::size_t i = 0; i < res.history.size(); ++i) std::printf("  it %4zu  %.3e\n", i + 1, res.history[i]);
    std::printf("%s: %s\n", res.converged() ? "converged" : "NOT converged", res.message.c_str());
    if (gpu) print_device_solve(phase, comm.size());
#if TESSERA_HAVE_CUDA
    if (!phase.timeline.is_null()) print_timeline(phase.timeline);
#endif
    std::printf("iterations %d, true relative residual %.3e%s%s\n", res.iterations, res.relative_residual,
                gpu ? " (recomputed on the host from the device solution)" : "",
                second_pass_count(use_cg, o.krylov, res).c_str());
    std::printf("setup %.4f s, solve %.4f s (%.2f ms/iteration), slowest rank\n", setup_s, solve_s,
                res.iterations ? 1e3 * solve_s / res.iterations : 0.0);
    // The solve on the GPUs waits for the upload too: the setup's cost to a user is the sum.
    if (gpu && o.setups > 1) {
      const SetupPlusUpload sum = setup_plus_upload(setup, uploads);
      std::printf("setup + upload of the hierarchy: first %.4f s, repeated %.4f s (median of setups 2 to %d, each with "
                  "its own upload)\n",
                  sum.first, sum.repeated_median, o.setups);
    } else if (gpu) {
      std::printf("setup + upload of the hierarchy: %.4f s\n", setup_s + phase.upload_seconds);
    }
    if (!phase.repeated_seconds.empty())
      std::printf("repeated solves (%zu, same initial guess): median %.4f s, %.3f ms/iteration, iterations %s%s\n",
                  phase.repeated_seconds.size(), median(phase.repeated_seconds), repeated_ms_per_iteration(phase),
                  nlohmann::json(phase.repeated_iterations).dump().c_str(),
                  phase.repeated_graph_captures ? " (the cycle was captured again inside them)" : "");
    std::printf("FOM: setup %.4e nnz/s, solve %.4e nnz*it/s\n", setup_fom, solve_fom);
  }
  out = {{"driver", "tessera-amg"}, {"tol", o.krylov.rtol}, {"matrix", o.a.describe()}, {"rows", rows}, {"nnz", nnz}, {"ranks", comm.size()},
         {"near_null_vectors", near_null_rows.space.vectors.cols}, {"near_null", near_null.describe()},
         {"block_size", block_size}, {"pmat", o.pmat},
         {"backend", to_string(o.backend)}, {"distributed", true}, {"converged", res.converged()},
         {"status", amg::to_string(res.status)}, {"message", res.message}, {"iterations", res.iterations},
         {"relative_residual", res.relative_residual}, {"setup_seconds", setup_s}, {"solve_seconds", solve_s},
         {"operator_complexity", stats.operator_complexity}, {"grid_complexity", stats.grid_complexity},
         {"nnz_ap", stats.nnz_ap}, {"setup_fom", setup_fom}, {"solve_fom", solve_fom},
         {"levels", static_cast<int>(stats.levels.size())}};
  add_krylov_keys(out, use_cg, o.krylov, res);
  if (krylov_a && root) out["operator_complexity_over_a"] = operator_complexity_over_a(stats, nnz);
  if (tracing) out["setup_step_trace"] = {{"setup", o.setups}, {"steps", trace_json}};
  if (!upload_trace_json.is_null()) out["upload_step_trace"] = {{"steps", upload_trace_json}};
  out["setup_page_faults"] = {{"max_rank", setup.page_faults_max}, {"all_ranks", setup.page_faults_sum}};
  out["host_heap"] = host_heap_pages();
  out["host_threads_per_rank"] = {{"min", threads_min}, {"max", threads_max}};
  if (!setup.repeated_seconds.empty()) {
    out["repeated_setup_seconds"] = median(setup.repeated_seconds);
    out["repeated_setups"] = {{"seconds", setup.repeated_seconds},
                              {"page_faults_max_rank", setup.repeated_page_faults_max}};
    if (gpu) {
      const SetupPlusUpload sum = setup_plus_upload(setup, uploads);
      out["setup_plus_upload_seconds"] = {{"first", sum.first}, {"repeated_median", sum.repeated_median}};
    }
  }
  if (o.resetups > 0) {
    out["resetup_seconds"] = resetups.seconds;
    out["resetup_transfer"] = transfer_on_gpus ? "device" : "host";  // of the re-setups after the first
  }
  if (!resetups.repeated_seconds.empty()) {
    out["repeated_resetup_seconds"] = median(resetups.repeated_seconds);
    out["repeated_resetups"] = resetups.repeated_seconds;
  }
  if (refresh && o.resetups > 0) {
    out["resetup_refresh_seconds"] = resetups.refresh_seconds;
    if (!resetups.repeated_refresh_seconds.empty()) {
      out["repeated_resetup_refresh_seconds"] = median(resetups.repeated_refresh_seconds);
      out["repeated_resetup_refreshes"] = resetups.repeated_refresh_seconds;
    }
  }
  if (!resetup_trace_json.is_null()) out["resetup_step_trace"] = {{"resetup", o.resetups}, {"steps", resetup_trace_json}};
  if (!phase.timeline.is_null()) out["timeline"] = phase.timeline;
  if (!phase.repeated_seconds.empty()) {
    out["repeated_solve_seconds"] = median(phase.repeated_seconds);
    out["repeated_ms_per_iteration"] = repeated_ms_per_iteration(phase);
    out["repeated_solves"] = {{"seconds", phase.repeated_seconds}, {"iterations", phase.repeated_iterations}};
  }
  if (product_stats) out["device_setup_products"] = setup_products_json;
  out["graph_phases"] = graph_on_gpus ? "device" : "host";
  out["eigen_estimates"] = graph_on_gpus ? "device" : "host";
  out["tentative"] = tentative_on_gpus(o, graph_on_gpus) ? "device" : "host";
  out["merge"] = merge_on_gpus(o, graph_on_gpus) ? "device" : "host";
  out["transpose_p"] = transpose_on_gpus(o, graph_on_gpus) ? "device" : "host";
  out["galerkin_operands"] = galerkin_operands_on_gpus(o, graph_on_gpus) ? "device" : "host";
  out["solve_operands"] = solve_operands_on_gpus(o, graph_on_gpus) ? "device" : "host";
  if (gpu)
    out["device"] = {{"context_seconds", devices.seconds},
                     {"upload_seconds", phase.upload_seconds},
                     {"hierarchy_upload_seconds", uploads},
                     {"first_cycle_seconds", phase.warmup_seconds},
                     {"hierarchy_bytes_max_rank", phase.hierarchy_bytes_max},
                     {"hierarchy_bytes_total", phase.hierarchy_bytes_sum},
                     {"peak_bytes_max_rank", phase.peak_bytes_max},
                     {"device_relative_residual", phase.device_relative_residual},
                     {"coarse_method", phase.coarse_method},
                     {"first_replicated_level", phase.first_replicated},
                     {"cuda_graph", phase.cuda_graph},
                     {"halo_route", phase.halo_route},
                     {"device_transport", phase.device_transport},
                     {"cuda_graph_captures", {{"first_solve", phase.graph_captures},
                                              {"repeated_solves", phase.repeated_graph_captures}}}};
#if TESSERA_HAVE_CUDA
  if (gpu) out["device"]["host_copies"] = cuda::to_string(cuda::host_copy_path_taken());  // rank 0's large copies
#endif
  if (o.krylov.history) out["history"] = res.history;
  if (!phase.halo_routes.is_null()) out["halo_routes"] = phase.halo_routes;

  if (!o.compare.empty()) {
    baselines::BaselineOptions bo;
    match_krylov(bo, use_cg, o.krylov);
    bo.block_size = block_size;
    bo.coordinates = near_null_rows.coordinates;  // rigid-body modes: GAMG gets the same geometry
    bo.near_null = near_null_rows.orthonormal;    // --near-null: and the same vectors
    const auto results =
        baselines::run_baselines(comm.mpi(), o.compare, dist::owned_row_block(krylov_operator), b, bo);
    baselines::BaselineResult mine = amg_result_row(res, stats, setup_s, solve_s);
    mine.solver = "Tessera SA-AMG-" + method;
    mine.runs_on = gpu ? detail::concat("setup on the host, solve on ", comm.size(), " GPU(s), one per MPI rank")
                       : detail::concat("host, ", comm.size(), " MPI rank(s)");
    mine.configuration = detail::concat(method, " + smoothed aggregation, ", stats.levels.size(), " levels, coarsest ",
                                        phase.coarse_method.empty() ? stats.coarse_method : phase.coarse_method,
                                        separate_kinds ? kSeparateKindsConfiguration : "");
    if (root) baselines::print_comparison(stdout, o.krylov.rtol, mine, results);
    out["compare"] = baselines::comparison_json(mine, results);
  }
  if (!phase.routes_agree) return kExitCheckFailed;  // a route that changes the solve is a bug
  return res.converged() ? 0 : kExitCheckFailed;
}

}  // namespace tessera::driver
