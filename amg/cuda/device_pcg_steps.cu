#include "amg/cuda/device_pcg_steps.hpp"

#include <algorithm>

#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t n) { return static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535)); }

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
  step_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, rz, pq, p, q, x, r);
  TESSERA_CHECK_LAUNCH();
}

void pcg_direction(std::int64_t n, const double* rz_next, const double* rz, const double* z, double* p,
                   cudaStream_t stream) {
  if (n <= 0) return;
  direction_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, rz_next, rz, z, p);
  TESSERA_CHECK_LAUNCH();
}

}  // namespace tessera::amg::gpu
