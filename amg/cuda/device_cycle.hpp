#pragma once
// The AMG preconditioner on one GPU: the hierarchy is either set up on the host (amg::setup, its
// products on the device through device_setup_ops) and uploaded once, or built on the device
// (device_hierarchy.hpp) and used in place, without a copy; apply() runs the shared
// device cycle (device_vcycle.hpp: amg/cycle.cpp's V/W cycle with amg/smoother.cpp's
// Chebyshev or l1-Jacobi, step for step) on CsrDeviceOperators of A, P and R.
//
// The coarsest level, when factored directly: built on a DeviceHierarchy, it is solved on the
// device with the hierarchy's DeviceCoarseSolver (cuSOLVER; no host round trip per cycle). Built
// on a host Hierarchy, with its DenseCoarseSolver on the host: the right-hand side goes down and
// the solution up (at most max_dense_rows doubles each way per visit).
//
// The cycle runs on the caller's stream, or, where that is the legacy default stream (which
// cannot host a capture), on a stream of its own, ordered after and before the caller's by an
// event each way. It is replayed as a CUDA graph: a V-cycle is a few hundred steps, and on the
// coarse levels each takes the GPU less time than the host takes to launch it. Most of those
// launches overlap the fine levels' work, so the replay saves little: 0.3-1.4% of a repeated PCG
// solve on poisson3d:192, 3-6% on elasticity3d:48 (H100, docs/performance.md, seventy-sixth
// session). A host coarse solve (which waits on the host every visit) keeps the eager launches.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amg/cuda/device_hierarchy.hpp"
#include "amg/cuda/device_operator.hpp"
#include "amg/cuda/device_vcycle.hpp"
#include "amg/hierarchy.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/owned_stream.hpp"
#include "local/cuda/spmv_plan.hpp"
#include "local/cuda/stream_graph.hpp"

namespace tessera::amg::gpu {

class DeviceAmgPreconditioner {
 public:
  /// Uploads every level of `h` (A, P, R with their SpMV plans, the smoother's diagonal).
  /// Keeps a reference to `h` for the coarse solver: it must outlive the preconditioner.
  /// After amg::resetup(h, ...) build a new one (the values changed).
  explicit DeviceAmgPreconditioner(const Hierarchy& h, cudaStream_t stream = nullptr);
  /// Runs on the matrices of a device-resident hierarchy (device_setup) without copying them:
  /// only SpMV plans and the level vectors are made here. Keeps references into `h` (matrices,
  /// smoother diagonals, coarse factor): it must outlive the preconditioner. After
  /// device_resetup(h, ...) build a new one (the interval and the coarse factor changed).
  explicit DeviceAmgPreconditioner(const DeviceHierarchy& h, cudaStream_t stream = nullptr);
  // The cycle's operators and coarse callback point into this object: it stays where it is.
  DeviceAmgPreconditioner(const DeviceAmgPreconditioner&) = delete;
  DeviceAmgPreconditioner& operator=(const DeviceAmgPreconditioner&) = delete;

  /// z = M^-1 r on device vectors of rows() entries (z may alias nothing of r), ordered on the
  /// stream given at construction. The first call on a pair of vectors runs the cycle's steps one
  /// by one, the second captures them into a CUDA graph and later calls on that pair replay it.
  void apply(const double* r, double* z);
  /// Replay the cycle as a CUDA graph (on: the default) or launch every step from the host.
  void set_cuda_graph(bool on);
  /// "replayed" (a graph runs the cycle), "not yet captured", "off", "off (host coarse solve)" or
  /// "capture failed: <why>" (then every call launches the steps one by one).
  std::string cuda_graph_state() const;
  std::int64_t cuda_graph_captures() const { return graph_captures_; }

  std::int64_t rows() const { return cycle_.rows(); }
  /// Device bytes held by the uploaded hierarchy and the level vectors.
  std::int64_t device_bytes() const;

 private:
  struct DeviceLevel {
    tessera::cuda::DeviceCsr<double> a, p, r;  // uploaded copies (empty when built on a DeviceHierarchy)
    tessera::cuda::SpmvPlan a_plan, p_plan, r_plan;
    tessera::cuda::DeviceBuffer<double> inv_diag;  // the smoother's (1/a_ii or 1/d_l1)
    std::unique_ptr<DeviceOperator> a_op, p_op, r_op;  // views of the matrices above
  };
  /// One level as the cycle needs it, wherever its matrices live (uploaded copies in levels_,
  /// or a DeviceHierarchy's own): p, r null on the coarsest level, inv_diag null when unsmoothed.
  struct LevelView {
    const tessera::cuda::DeviceCsr<double>* a = nullptr;
    const tessera::cuda::DeviceCsr<double>* p = nullptr;
    const tessera::cuda::DeviceCsr<double>* r = nullptr;
    const Smoother* smoother = nullptr;
    const double* inv_diag = nullptr;
  };
  /// The SpMV plans and operators of every level (into levels_, already sized), then the cycle.
  void build_levels(const std::vector<LevelView>& views, const AmgOptions& options, bool coarse_direct);
  void coarse_solve(const double* b, double* x);
  void make_cycle(std::vector<DeviceCycleLevel> cycle_levels, const AmgOptions& options, bool coarse_direct,
                  std::int64_t coarse_rows);
  /// The cycle on cycle_stream_: eagerly, captured, or replayed (see apply()).
  void run_cycle(const double* r, double* z);
  bool capturable() const { return graph_wanted_ && graph_failure_.empty() && !host_coarse_solve_; }

  const DenseCoarseSolver* host_coarse_ = nullptr;    // built on a host Hierarchy
  const DeviceCoarseSolver* device_coarse_ = nullptr;  // built on a DeviceHierarchy
  cudaStream_t stream_;  // the caller's: apply() is ordered on it
  // Declared before everything queued on them, so destroyed after their frees are queued: a
  // stream of the preconditioner's own where the caller's is the legacy default stream, and the
  // stream the cycle runs on (that one, or the caller's).
  std::optional<tessera::cuda::OwnedStream> own_stream_;
  cudaStream_t cycle_stream_;
  std::vector<DeviceLevel> levels_;  // sized once: the operators point into it
  DeviceCycle cycle_;
  std::vector<double> coarse_b_, coarse_x_;  // host staging of host_coarse_'s solve
  bool host_coarse_solve_ = false;  // the coarsest level solved on the host: no graph
  // The CUDA graph of the cycle for one pair of vectors, and the previous call's pair.
  bool graph_wanted_ = true;
  std::string graph_failure_;
  const double* graph_r_ = nullptr;
  double* graph_z_ = nullptr;
  const double* last_r_ = nullptr;
  double* last_z_ = nullptr;
  std::int64_t graph_captures_ = 0;
  tessera::cuda::StreamGraph graph_;  // last: destroyed first
};

}  // namespace tessera::amg::gpu
