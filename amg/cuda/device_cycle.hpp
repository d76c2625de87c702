#pragma once
// The AMG cycle on one GPU: the hierarchy is set up on the host (amg::setup, its products on
// the device through device_setup_ops) and uploaded once; apply() runs amg/cycle.cpp's V/W
// cycle with amg/smoother.cpp's Chebyshev or l1-Jacobi step for step, every vector on the
// device: fused residual kernel (cuda::residual), restriction and prolongation as SpMVs with R
// and P (prolongation adds into x: y = P x_c + y), the smoothers' D^-1 r updates as one
// diagonal axpby. Same operations in the same order as the host cycle; only the summation
// order inside a row (the SpMV kernels) differs, so the results agree to rounding.
//
// The coarsest level, when factored directly, is solved on the host with the hierarchy's
// DenseCoarseSolver: its right-hand side goes down and the solution up (at most
// max_dense_rows doubles each way per visit). A dense device solve is the next step.
#include <cuda_runtime_api.h>

#include <vector>

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

  /// z = M^-1 r on device vectors of rows() entries (z may alias nothing of r).
  void apply(const double* r, double* z);

  std::int64_t rows() const { return levels_.empty() ? 0 : levels_[0].a.rows; }
  /// Device bytes held by the uploaded hierarchy and the level vectors.
  std::int64_t device_bytes() const;

 private:
  struct DeviceLevel {
    tessera::cuda::DeviceCsr<double> a, p, r;
    tessera::cuda::SpmvPlan a_plan, p_plan, r_plan;
    tessera::cuda::DeviceBuffer<double> inv_diag;  // the smoother's (1/a_ii or 1/d_l1)
    Smoother smoother;                             // kind, interval, steps (host copy of inv_diag unused)
    tessera::cuda::DeviceBuffer<double> b, x, res, d;
  };
  void cycle(std::size_t level, bool x_is_zero);
  void smooth(DeviceLevel& v, bool x_is_zero);
  void chebyshev(DeviceLevel& v, bool x_is_zero);
  void l1_jacobi(DeviceLevel& v, bool x_is_zero);
  void coarse_solve(DeviceLevel& v);

  const Hierarchy& h_;
  cudaStream_t stream_;
  std::vector<DeviceLevel> levels_;
  std::vector<double> coarse_b_, coarse_x_;  // host staging of the direct coarse solve
};

}  // namespace tessera::amg::gpu
