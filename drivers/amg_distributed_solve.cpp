#include "drivers/amg_distributed_solve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "dist/spmv.hpp"
#include "drivers/common/driver_main.hpp"
#include "local/core/error.hpp"

#if TESSERA_HAVE_CUDA
#include "amg/cuda/device_pcg.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "local/cuda/device_buffer.hpp"
#endif

namespace tessera::driver::dist_amg {

double repeated_ms_per_iteration(const SolvePhase& s) {
  return median_ms_per_iteration(s.repeated_seconds, s.repeated_iterations);
}

namespace {

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
    std::printf("  legs vs the first: max |x - x_first| / max |x_first| = %.1e, %.1e, %.1e, %.1e "
                "(bitwise: %d %d %d %d)\n",
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

}  // namespace

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
                 const std::vector<double>& b, std::vector<double>& x, bool use_cg) {
  if (o.backend == Backend::host) return solve_on_host(comm, m, a, b, x, o.krylov, o.solves, use_cg);
#if TESSERA_HAVE_CUDA
  return solve_on_devices(*devices.ctx, *uploaded.pm, uploaded.seconds, m, a, b, x, o.krylov, o, use_cg);
#else
  (void)devices, (void)uploaded;
  throw InputError("--backend gpu: this build has no CUDA backend");
#endif
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

}  // namespace tessera::driver::dist_amg
