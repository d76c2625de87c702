#pragma once
// Index helpers of the device setup and product code, defined once: fill with 0, 1, 2, ...
// (the payload of a sort that yields a permutation) and the plain gather out[k] = in[source[k]]
// (applying that permutation to values). dist/cuda/value_maps' gather is not this one: it reads
// from and writes to several concatenated parts. Launchers order the work on `stream` and
// accept n == 0. Include only from .cu files.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"  // grid_for

namespace tessera::cuda {
namespace index_detail {

constexpr int kThreads = 256;

template <class T>
__global__ void iota_kernel(std::int64_t n, T* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<T>(i);
}

template <class T>
__global__ void gather_kernel(std::int64_t n, const std::int64_t* source, const T* in, T* out) {
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) out[k] = in[source[k]];
}

}  // namespace index_detail

/// out[i] = i for i < n.
template <class T>
void fill_iota(std::int64_t n, T* out, cudaStream_t stream) {
  if (n <= 0) return;
  index_detail::iota_kernel<<<grid_for(n, index_detail::kThreads), index_detail::kThreads, 0, stream>>>(n, out);
  TESSERA_CHECK_LAUNCH();
}

/// out[k] = in[source[k]] for k < n.
template <class T>
void gather(std::int64_t n, const std::int64_t* source, const T* in, T* out, cudaStream_t stream) {
  if (n <= 0) return;
  index_detail::gather_kernel<<<grid_for(n, index_detail::kThreads), index_detail::kThreads, 0, stream>>>(
      n, source, in, out);
  TESSERA_CHECK_LAUNCH();
}

}  // namespace tessera::cuda
