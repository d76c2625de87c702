#pragma once
// tessera-amg on one GPU: the cycle and CG (FGMRES for a non-symmetric A) on the device, the hierarchy built either on the
// device (amg::gpu::device_setup; it stays there) or on the host with its products offloaded
// (amg::gpu::device_setup_ops, then uploaded once). Both hand back an AmgRun for the report the
// host path also fills. Defined only in CUDA builds (TESSERA_HAVE_CUDA).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "amg/hierarchy_stats.hpp"
#include "amg/krylov.hpp"
#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "local/formats/csr.hpp"

namespace tessera::driver {

/// What one setup-and-solve path hands to the report: statistics of the first setup, the
/// solve, its times, and the JSON keys particular to the path.
struct AmgRun {
  amg::HierarchyStats stats;
  amg::SolveResult res;
  double setup_s = 0, resetup_s = 0, solve_s = 0;
  // The solves after the first (--solves), from the same initial guess: seconds and iterations.
  std::vector<double> repeated_solve_s;
  std::vector<int> repeated_iterations;
  nlohmann::json extra = nlohmann::json::object();
  std::optional<amg::SetupTimes> resetup_phases;  // reported as "resetup_phases" when set
};

/// The problem and the setup choices of a single-GPU run.
struct SingleGpuProblem {
  const Csr<double>& a;     // what CG (FGMRES) iterates on
  const Csr<double>& pmat;  // what the hierarchy is built from: A, or another matrix (--pmat)
  const amg::NearNullSpace& nns;  // pmat's
  const amg::Vector& b;
  amg::AmgOptions options;
  std::string spgemm;    // "auto" | "tile" | "cusparse"
  bool resetup = false;  // also time a re-setup with the same values
  bool use_cg = true;    // CG (symmetric A) or FGMRES, both on the device
  bool cuda_graph = true;  // replay the cycle as a CUDA graph (--no-cuda-graph: launch every step)
  int solves = 1;          // timed solves from the same initial guess (the first is the reported one)
};

/// The whole setup on the GPU, optionally a re-setup, then CG (or FGMRES) with the preconditioner built on
/// the device hierarchy in place. A's upload is timed apart from the setup (the input, as
/// hypre's setup time excludes it). x: the initial guess in, the solution out.
AmgRun run_device_setup(const SingleGpuProblem& p, amg::Vector& x, const amg::KrylovOptions& ko);

/// The host setup with its products on the GPU (times of the products reported apart),
/// optionally a re-setup, then the hierarchy uploaded (timed apart) and CG (or FGMRES) on the device.
AmgRun run_host_setup_on_gpu(const SingleGpuProblem& p, amg::Vector& x, const amg::KrylovOptions& ko);

}  // namespace tessera::driver
