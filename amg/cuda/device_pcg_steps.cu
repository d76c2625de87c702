#include "amg/cuda/device_pcg_steps.hpp"

#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"  // grid_for

namespace tessera::amg::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void step_kernel(std::int64_t n, const double* rz, const double* pq, const double* p, const double* q,
                            double* x, double* r) {
  if (!pcg_step_allowed(*rz, *pq)) return;
  const double alpha = *rz / *pq;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    x[i] = fma(alpha, p[i], x[i]);
    r[i] = fma(-alpha, q[i], r[i]);
  }
}

__global__ void direction_kernel(std::int64_t n, const double* rz_next, const double* rz, const double* z, double* p) {
  const double beta = *rz_next / *rz;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = fma(beta, p[i], z[i]);
}

}  // namespace

void pcg_step(std::int64_t n, const double* rz, const double* pq, const double* p, const double* q, double* x,
              double* r, cudaStream_t stream) {
  if (n <= 0) return;
  step_kernel<<<tessera::cuda::grid_for(n, kThreads), kThreads, 0, stream>>>(n, rz, pq, p, q, x, r);
  TESSERA_CHECK_LAUNCH();
}

void pcg_direction(std::int64_t n, const double* rz_next, const double* rz, const double* z, double* p,
                   cudaStream_t stream) {
  if (n <= 0) return;
  direction_kernel<<<tessera::cuda::grid_for(n, kThreads), kThreads, 0, stream>>>(n, rz_next, rz, z, p);
  TESSERA_CHECK_LAUNCH();
}

}  // namespace tessera::amg::gpu
