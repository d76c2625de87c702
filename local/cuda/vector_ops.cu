#include "local/cuda/vector_ops.hpp"

#include <cub/block/block_reduce.cuh>

#include <algorithm>

#include "local/cuda/check.hpp"

namespace tessera::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kDotBlocks = 1024;  // fixed: the summation order depends on it only

int blocks_for(std::int64_t n) { return static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535)); }

__global__ void axpby_kernel(std::int64_t n, double alpha, const double* x, double beta, double* y) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    y[i] = beta == 0.0 ? alpha * x[i] : alpha * x[i] + beta * y[i];
}

__global__ void diagonal_axpby_kernel(std::int64_t n, double alpha, const double* d, const double* x, double beta,
                                      double* y) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    const double scaled = alpha * (d[i] * x[i]);
    y[i] = beta == 0.0 ? scaled : scaled + beta * y[i];
  }
}

__global__ void dot_partial_kernel(std::int64_t n, const double* x, const double* y, double* partial) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  double sum = 0.0;
  for (std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * kThreads)
    sum += x[i] * y[i];
  const double block_sum = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = block_sum;
}

/// partial[0] + ... + partial[count - 1] into *total, by one block in a fixed order.
__device__ void sum_partials(const double* partial, int count, double* total) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  double sum = 0.0;
  for (int i = threadIdx.x; i < count; i += kThreads) sum += partial[i];
  const double block_sum = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) *total = block_sum;
}

__global__ void dot_final_kernel(const double* partial, int count, double* total) { sum_partials(partial, count, total); }

constexpr int kDotGroup = 8;  // totals one thread accumulates together: w is read once per group

/// partial[v * gridDim.x + block] = block's share of v_v^T w, each exactly as dot_partial_kernel
/// forms it for one pair (the same rows per thread, the same order, the same block reduction).
__global__ void multi_dot_partial_kernel(std::int64_t n, const double* vectors, std::int64_t stride, int count,
                                         const double* w, double* partial) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  for (int first = 0; first < count; first += kDotGroup) {
    const int width = min(kDotGroup, count - first);  // alike in every thread: the barriers below match
    double sum[kDotGroup] = {};
    for (std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * kThreads) {
      const double wi = w[i];
#pragma unroll
      for (int v = 0; v < kDotGroup; ++v)
        if (v < width) sum[v] += vectors[(first + v) * stride + i] * wi;
    }
#pragma unroll
    for (int v = 0; v < kDotGroup; ++v) {
      if (v < width) {
        const double block_sum = Reduce(storage).Sum(sum[v]);
        if (threadIdx.x == 0) partial[std::int64_t(first + v) * gridDim.x + blockIdx.x] = block_sum;
        __syncthreads();  // the next reduction reuses the storage
      }
    }
  }
}

/// One block per total.
__global__ void multi_dot_final_kernel(const double* partial, int blocks, double* totals) {
  sum_partials(partial + std::int64_t(blockIdx.x) * blocks, blocks, totals + blockIdx.x);
}

/// y_j += sum_i (alpha c_i) v_ij. The coefficients are read by every thread from the same
/// addresses (a broadcast from L1 through the read-only path).
__global__ void combine_kernel(std::int64_t n, double alpha, const double* vectors, std::int64_t stride, int count,
                               const double* __restrict__ coefficients, double* y) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < n; j += std::int64_t(gridDim.x) * blockDim.x) {
    double yj = y[j];
    for (int i = 0; i < count; ++i) yj += (alpha * __ldg(coefficients + i)) * vectors[i * stride + j];
    y[j] = yj;
  }
}

}  // namespace

void axpby(std::int64_t n, double alpha, const double* x, double beta, double* y, cudaStream_t stream) {
  if (n <= 0) return;
  axpby_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, alpha, x, beta, y);
  TESSERA_CHECK_LAUNCH();
}

void diagonal_axpby(std::int64_t n, double alpha, const double* d, const double* x, double beta, double* y,
                    cudaStream_t stream) {
  if (n <= 0) return;
  diagonal_axpby_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, alpha, d, x, beta, y);
  TESSERA_CHECK_LAUNCH();
}

void combine(std::int64_t n, double alpha, const double* vectors, std::int64_t stride, int count,
             const double* coefficients, double* y, cudaStream_t stream) {
  if (n <= 0 || count <= 0) return;
  combine_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, alpha, vectors, stride, count, coefficients, y);
  TESSERA_CHECK_LAUNCH();
}

void copy(std::int64_t n, const double* x, double* y, cudaStream_t stream) {
  if (n > 0 && x != y)
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(y, x, std::size_t(n) * sizeof(double), cudaMemcpyDeviceToDevice, stream));
}

void zero(std::int64_t n, double* y, cudaStream_t stream) {
  if (n > 0) TESSERA_CUDA_CHECK(cudaMemsetAsync(y, 0, std::size_t(n) * sizeof(double), stream));
}

double* DeviceDot::device_sum(std::int64_t n, const double* x, const double* y, cudaStream_t stream) {
  if (partial_.size() < std::size_t(kDotBlocks) + 1) partial_.allocate(std::size_t(kDotBlocks) + 1, stream);
  sum_into(n, x, y, partial_.data(), stream);
  return partial_.data();
}

void DeviceDot::sum_into(std::int64_t n, const double* x, const double* y, double* total, cudaStream_t stream) {
  if (n <= 0) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(double), stream));
    return;
  }
  if (partial_.size() < std::size_t(kDotBlocks) + 1) partial_.allocate(std::size_t(kDotBlocks) + 1, stream);
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, kDotBlocks));
  dot_partial_kernel<<<blocks, kThreads, 0, stream>>>(n, x, y, partial_.data() + 1);
  TESSERA_CHECK_LAUNCH();
  dot_final_kernel<<<1, kThreads, 0, stream>>>(partial_.data() + 1, blocks, total);
  TESSERA_CHECK_LAUNCH();
}

void DeviceMultiDot::sums_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                               double* totals, cudaStream_t stream) {
  if (count <= 0) return;
  if (n <= 0) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(totals, 0, std::size_t(count) * sizeof(double), stream));
    return;
  }
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, kDotBlocks));
  reserve(count, stream);
  multi_dot_partial_kernel<<<blocks, kThreads, 0, stream>>>(n, vectors, stride, count, w, partial_.data());
  TESSERA_CHECK_LAUNCH();
  multi_dot_final_kernel<<<count, kThreads, 0, stream>>>(partial_.data(), blocks, totals);
  TESSERA_CHECK_LAUNCH();
}

void DeviceMultiDot::reserve(int count, cudaStream_t stream) {
  const std::size_t needed = std::size_t(std::max(count, 0)) * std::size_t(kDotBlocks);
  if (partial_.size() < needed) partial_.allocate(needed, stream);
}

double DeviceDot::operator()(std::int64_t n, const double* x, const double* y, cudaStream_t stream) {
  if (n <= 0) return 0.0;
  const double* sum = device_sum(n, x, y, stream);
  double total = 0.0;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&total, sum, sizeof(double), cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return total;
}

}  // namespace tessera::cuda
