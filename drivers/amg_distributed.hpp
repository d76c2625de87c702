#pragma once
// The distributed mode of tessera-amg (several ranks, or --distributed): each rank generates or
// reads only its rows, the hierarchy is amg::DistAmg (the serial reference's phases on
// dist::DistMatrix), the solve dist_pcg (or dist_fgmres for a non-symmetric A); --compare hands
// hypre and GAMG the same rows. Backend::gpu (one GPU per rank): the setup's numeric steps run on
// the GPUs (products, strength and aggregation, eigenvalue estimates, QR, merges, transposes;
// --setup host and the switches beside it move steps back to the host), its symbolic steps on the
// host; the hierarchy is kept on the GPUs and the solve runs there
// (amg::gpu::DistDeviceAmgPreconditioner + dist_device_pcg or dist_device_fgmres, NCCL halo
// exchanges: amg_distributed_solve.hpp); the reported residual is recomputed on the host from the
// device solution.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "amg/krylov.hpp"
#include "amg/options.hpp"
#include "dist/communicator.hpp"
#include "drivers/baselines/compare.hpp"
#include "drivers/common/matrix_source.hpp"
#include "drivers/amg_near_null.hpp"
#include "local/core/backend.hpp"

namespace tessera::driver {

struct DistributedAmgOptions {
  MatrixSource a;
  std::string b_file;                 // Matrix Market array; default all ones
  NearNullChoice near_null;           // --null-space, --block-size, --coordinates, --near-null
  std::string solver = "auto";       // auto (CG if A is symmetric, else FGMRES) | cg | gmres
  std::string pmat = "a";            // the hierarchy's matrix: a | separate-kinds (amg/separate_kinds.hpp)
  amg::KrylovOptions krylov;          // tolerance, iteration limit, history; FGMRES's restart and Gram-Schmidt
  int resetups = 0;                   // re-setups with the same pattern (the first records where P's values come from)
  amg::AmgOptions amg;
  Backend backend = Backend::host;    // gpu: the setup's numeric steps and the solve on the ranks' GPUs
  std::string spgemm = "tile";        // the GPU setup products: auto | tile | hash | cusparse
  std::string setup = "auto";         // GPU: the setup's numeric steps on auto|device | host (products only)
  std::int64_t replicate_nnz = -1;    // GPU solve: replicate coarse levels of up to this many nonzeros (-1: default, 0: off)
  bool cuda_graph = true;             // GPU solve: replay the cycle as a CUDA graph
  int setups = 1;                     // whole setups from scratch (the first is kept and reported, then repeats)
  int solves = 1;                     // timed solves from the same initial guess (first, then repeats)
  bool trace = false;                 // print the host step trace of the last setup (local/core/step_trace.hpp)
  bool timeline = false;              // GPU solve: time the cycle's parts with CUDA events (no graph)
  std::string halo = "auto";          // GPU solve: halo route auto | nccl | peer | both (time each)
  std::string resetup_transfer = "host";  // GPU setup: the later re-setups' transfer on host | device
  std::string tentative = "auto";     // GPU setup: P_tent's QR on auto (= device) | host | device
  std::string merge = "auto";         // GPU setup: P's first merge on auto (= device) | host | device
  std::string transpose_p = "auto";   // GPU setup: the Galerkin product's P^T made on auto (= device
                                      // with the device merge) | host | device
  std::string galerkin_operands = "auto";  // GPU setup: the first Galerkin products read P and P^T on
                                           // auto (= device with P^T made there) | host | device
  std::string solve_operands = "auto";  // GPU setup and solve: the solve's P and R are the setup's device
                                        // copies, auto (= device with the Galerkin operands there) |
                                        // host (uploaded) | device
  std::vector<baselines::Baseline> compare;
};

/// Collective. Returns 0 when converged, kExitCheckFailed otherwise; fills `out` on rank 0.
int run_distributed_amg(const dist::Communicator& comm, const DistributedAmgOptions& options, nlohmann::json& out);

}  // namespace tessera::driver
