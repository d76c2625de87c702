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

__global__ void dot_final_kernel(const double* partial, int count, double* total) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  double sum = 0.0;
  for (int i = threadIdx.x; i < count; i += kThreads) sum += partial[i];
  const double block_sum = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) *total = block_sum;
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

double DeviceDot::operator()(std::int64_t n, const double* x, const double* y, cudaStream_t stream) {
  if (n <= 0) return 0.0;
  const double* sum = device_sum(n, x, y, stream);
  double total = 0.0;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&total, sum, sizeof(double), cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return total;
}

}  // namespace tessera::cuda
