#pragma once
// The solve phase of tessera-amg's distributed mode (amg_distributed.hpp): the ranks' GPUs (one
// context for the setup's device steps and for the solve), the hierarchy's upload for the device
// solve, and the timed solves, on the host (dist_pcg or dist_fgmres) or on the GPUs
// (dist_device_pcg or dist_device_fgmres; --timeline times the cycle's parts, --halo both
// compares the two halo routes). The functions that take a communicator are collective.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "amg/dist/dist_amg.hpp"
#include "amg/krylov.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "drivers/amg_distributed.hpp"

#if TESSERA_HAVE_CUDA
#include "amg/cuda/dist_device_amg.hpp"
#include "dist/cuda/device_context.hpp"
#endif

namespace tessera::driver::dist_amg {

/// The slowest rank's time.
inline double slowest(const dist::Communicator& comm, double seconds) {
  return comm.allreduce(seconds, dist::ReduceOp::max);
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
double repeated_ms_per_iteration(const SolvePhase& s);

/// The ranks' GPUs (one DeviceContext for the setup's device phases and the solve), or none.
struct Devices {
#if TESSERA_HAVE_CUDA
  std::unique_ptr<dist::gpu::DeviceContext> ctx;
#endif
  double seconds = 0;  // to make it, slowest rank
};

/// A context with --backend gpu (NCCL setup: timed neither as setup nor as solve), on the halo
/// route --halo asks for; none on the host.
Devices open_devices(const dist::Communicator& comm, const DistributedAmgOptions& o);

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

/// The upload with --backend gpu, nothing on the host.
UploadedHierarchy upload_hierarchy(const dist::Communicator& comm, Devices& devices, const DistributedAmgOptions& o,
                                   const amg::DistAmg& m);

/// Solves A x = b (`a`: the Krylov method's operator) preconditioned by `m`, CG or FGMRES by
/// `use_cg`, then --solves N - 1 more from the same initial guess: on the host, or on the GPUs
/// with `uploaded` (b and x uploaded too, x downloaded after; the reported residual is
/// recomputed on the host from it).
SolvePhase solve(const dist::Communicator& comm, Devices& devices, UploadedHierarchy& uploaded,
                 const DistributedAmgOptions& o, const amg::DistAmg& m, const dist::DistMatrix& a,
                 const std::vector<double>& b, std::vector<double>& x, bool use_cg);

/// Rank 0's report of a device solve: the hierarchy's memory and upload, the replicated
/// levels, the CUDA graph, the halo route and the transport.
void print_device_solve(const SolvePhase& s, int ranks);

/// --timeline: the table of the cycle's parts (timeline_json's entries).
void print_timeline(const nlohmann::json& parts);

}  // namespace tessera::driver::dist_amg
