#pragma once
// DeviceOperator: what the device AMG cycle and PCG need of one level's operator, so that both
// are written once for one GPU and for many ranks (PETSc's Mat interface in miniature):
//   y = alpha A x + beta y, the fused residual r = b - A x, and the inner product over the
//   rows of the operator (collective across ranks for a distributed one).
// Vectors are device pointers to the entries this process owns (rows() for outputs, cols() for
// inputs); every call is ordered on stream() and returns without synchronising, except dot(),
// which returns its value to the host (dot_into and dots_into leave theirs on the device). The transfer
// operators P and R are DeviceOperators too.
//
// Implementations: CsrDeviceOperator here (DeviceCsr + SpmvPlan, one GPU) and
// DistDeviceOperator (dist_device_operator.hpp: DeviceDistMatrix + DeviceContext, NCCL halo).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {

class DeviceOperator {
 public:
  virtual ~DeviceOperator() = default;
  /// Owned output entries (rows of A held here) and owned input entries.
  virtual std::int64_t rows() const = 0;
  virtual std::int64_t cols() const = 0;
  /// y = alpha * A x + beta * y; beta == 0 never reads y.
  virtual void apply(double alpha, const double* x, double beta, double* y) = 0;
  /// r = b - A x.
  virtual void residual(const double* x, const double* b, double* r) = 0;
  /// x^T y over n = rows() owned entries (all ranks' for a distributed operator: collective).
  virtual double dot(std::int64_t n, const double* x, const double* y) = 0;
  /// The same inner product written to `*result` in device memory, without synchronising.
  virtual void dot_into(std::int64_t n, const double* x, const double* y, double* result) = 0;
  /// results[i] = v_i^T w for the `count` vectors v_i = vectors + i * stride, in device memory,
  /// without synchronising: one pass over them all (classical Gram-Schmidt's V^T w).
  virtual void dots_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                         double* results) = 0;
  virtual cudaStream_t stream() const = 0;
};

/// One GPU: tessera_local's SpMV and fused residual kernels on a DeviceCsr with its plan, the
/// deterministic DeviceDot. Keeps references to `a` and `plan`, which must outlive it.
class CsrDeviceOperator final : public DeviceOperator {
 public:
  CsrDeviceOperator(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan,
                    cudaStream_t stream)
      : a_(a), plan_(plan), stream_(stream) {}

  std::int64_t rows() const override { return a_.rows; }
  std::int64_t cols() const override { return a_.cols; }
  void apply(double alpha, const double* x, double beta, double* y) override;
  void residual(const double* x, const double* b, double* r) override;
  double dot(std::int64_t n, const double* x, const double* y) override { return dot_(n, x, y, stream_); }
  void dot_into(std::int64_t n, const double* x, const double* y, double* result) override {
    dot_.sum_into(n, x, y, result, stream_);
  }
  void dots_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                 double* results) override {
    dots_.sums_into(n, vectors, stride, count, w, results, stream_);
  }
  cudaStream_t stream() const override { return stream_; }

 private:
  const tessera::cuda::DeviceCsr<double>& a_;
  const tessera::cuda::SpmvPlan& plan_;
  cudaStream_t stream_;
  tessera::cuda::DeviceDot dot_;
  tessera::cuda::DeviceMultiDot dots_;
};

}  // namespace tessera::amg::gpu
