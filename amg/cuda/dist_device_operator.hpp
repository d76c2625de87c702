#pragma once
// DistDeviceOperator: a DeviceOperator on a row-partitioned matrix, every rank holding its
// owned rows on its GPU (dist::gpu::DeviceDistMatrix): products and residuals through
// dist::gpu::spmv / residual (NCCL halo exchange overlapping the local block), dot through the
// context's deterministic local sums + allreduce. Every call is collective (all ranks call it
// in the same order, ranks owning no rows included) and ordered on ctx.compute().
#include "amg/cuda/device_operator.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"

namespace tessera::amg::gpu {

class DistDeviceOperator final : public DeviceOperator {
 public:
  /// Keeps references to `ctx` and `a`, which must outlive it.
  DistDeviceOperator(dist::gpu::DeviceContext& ctx, dist::gpu::DeviceDistMatrix& a) : ctx_(ctx), a_(a) {}

  std::int64_t rows() const override { return a_.owned_rows(); }
  std::int64_t cols() const override { return a_.owned_cols(); }
  void apply(double alpha, const double* x, double beta, double* y) override;
  void residual(const double* x, const double* b, double* r) override;
  double dot(std::int64_t n, const double* x, const double* y) override { return ctx_.dot(n, x, y); }
  void dot_into(std::int64_t n, const double* x, const double* y, double* result) override {
    ctx_.dot_into(n, x, y, result);
  }
  void dots_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                 double* results) override {
    ctx_.dots_into(n, vectors, stride, count, w, results);
  }
  cudaStream_t stream() const override { return ctx_.compute(); }

 private:
  dist::gpu::DeviceContext& ctx_;
  dist::gpu::DeviceDistMatrix& a_;
};

}  // namespace tessera::amg::gpu
