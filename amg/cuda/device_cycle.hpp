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
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "amg/cuda/device_hierarchy.hpp"
#include "amg/cuda/device_operator.hpp"
#include "amg/cuda/device_vcycle.hpp"
#include "amg/hierarchy.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"

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

  /// z = M^-1 r on device vectors of rows() entries (z may alias nothing of r).
  void apply(const double* r, double* z) { cycle_.apply(r, z); }

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

  const DenseCoarseSolver* host_coarse_ = nullptr;    // built on a host Hierarchy
  const DeviceCoarseSolver* device_coarse_ = nullptr;  // built on a DeviceHierarchy
  cudaStream_t stream_;
  std::vector<DeviceLevel> levels_;  // sized once: the operators point into it
  DeviceCycle cycle_;
  std::vector<double> coarse_b_, coarse_x_;  // host staging of host_coarse_'s solve
};

}  // namespace tessera::amg::gpu
