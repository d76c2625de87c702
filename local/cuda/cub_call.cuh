#pragma once
// Runs a CUB device algorithm with its two-phase temporary-storage protocol: the first call
// sizes the workspace, which comes from DeviceBuffer (stream-ordered pool, peak tracked) and
// is released, stream-ordered, when the call returns.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_buffer.hpp"

namespace tessera::cuda {

/// Keeps freed memory in the device's default pool (release threshold = max) instead of
/// returning it to the driver at every synchronization: otherwise each stream-ordered
/// allocation after a host sync (SpGEMM reads sizes back several times) maps fresh pages,
/// which cost more than the kernels on mid-size problems. Process-wide, set once.
inline void retain_pool_memory() {
  static const bool done = [] {
    int device = 0;
    cudaMemPool_t pool = nullptr;
    TESSERA_CUDA_CHECK(cudaGetDevice(&device));
    TESSERA_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = ~std::uint64_t{0};
    TESSERA_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    return true;
  }();
  (void)done;
}

/// `algorithm(void* temp, size_t& bytes)` must forward to a cub::Device* call on `stream`.
template <class Algorithm>
void cub_call(cudaStream_t stream, Algorithm&& algorithm) {
  std::size_t bytes = 0;
  TESSERA_CUDA_CHECK(algorithm(nullptr, bytes));
  DeviceBuffer<unsigned char> temp(bytes ? bytes : 1, stream);
  TESSERA_CUDA_CHECK(algorithm(temp.data(), bytes));
}

/// Copies one value from device memory (waits for `stream`).
template <class T>
T read_scalar(const T* device_value, cudaStream_t stream) {
  T host{};
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&host, device_value, sizeof(T), cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

inline unsigned grid_for(std::int64_t items, int per_block) {
  const std::int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks > 0 ? blocks : 1);
}

}  // namespace tessera::cuda
