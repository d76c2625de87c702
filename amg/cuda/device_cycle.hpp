#pragma once
// The AMG preconditioner on one GPU: the hierarchy is set up on the host (amg::setup, its
// products on the device through device_setup_ops) and uploaded once; apply() runs the shared
// device cycle (device_vcycle.hpp: amg/cycle.cpp's V/W cycle with amg/smoother.cpp's
// Chebyshev or l1-Jacobi, step for step) on CsrDeviceOperators of A, P and R.
//
// The coarsest level, when factored directly, is solved on the host with the hierarchy's
// DenseCoarseSolver: its right-hand side goes down and the solution up (at most
// max_dense_rows doubles each way per visit). A dense device solve is the next step.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

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
    tessera::cuda::DeviceCsr<double> a, p, r;
    tessera::cuda::SpmvPlan a_plan, p_plan, r_plan;
    tessera::cuda::DeviceBuffer<double> inv_diag;  // the smoother's (1/a_ii or 1/d_l1)
    std::unique_ptr<DeviceOperator> a_op, p_op, r_op;  // views of the matrices above
  };
  void coarse_solve(const double* b, double* x);

  const Hierarchy& h_;
  cudaStream_t stream_;
  std::vector<DeviceLevel> levels_;  // sized once: the operators point into it
  DeviceCycle cycle_;
  std::vector<double> coarse_b_, coarse_x_;  // host staging of the direct coarse solve
};

}  // namespace tessera::amg::gpu
