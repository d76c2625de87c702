// Host code only: forwards to tessera_local's device kernels.
#include "amg/cuda/device_operator.hpp"

#include "local/cuda/fused_smoother.hpp"
#include "local/cuda/spmv.hpp"

namespace tessera::amg::gpu {

void CsrDeviceOperator::apply(double alpha, const double* x, double beta, double* y) {
  tessera::cuda::spmv(plan_, alpha, a_, x, beta, y, stream_);
}

void CsrDeviceOperator::residual(const double* x, const double* b, double* r) {
  tessera::cuda::residual(plan_, a_, x, b, r, stream_);
}

}  // namespace tessera::amg::gpu
