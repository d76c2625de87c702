// Host code only: forwards to dist/cuda's device products.
#include "amg/cuda/dist_device_operator.hpp"

#include "dist/cuda/device_spmv.hpp"

namespace tessera::amg::gpu {

void DistDeviceOperator::apply(double alpha, const double* x, double beta, double* y) {
  dist::gpu::spmv(ctx_, a_, alpha, x, beta, y);
}

void DistDeviceOperator::residual(const double* x, const double* b, double* r) {
  dist::gpu::residual(ctx_, a_, x, b, r);
}

}  // namespace tessera::amg::gpu
