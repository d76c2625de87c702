#pragma once
// Poisons the device's stream-ordered memory pool for tests of calls that allocate their own
// outputs: device memory from the pool is not zeroed, but fresh pages often are, so an entry a
// kernel forgets to write could read back as a lucky 0. After this call the next allocations
// reuse 0xff bytes (NaN for floating types, -1 for indices), and a missed entry shows.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"  // retain_pool_memory (host code only)
#include "local/cuda/device_buffer.hpp"

namespace tessera::testing {

/// Fills `bytes` of the pool with 0xff and frees them back to it. The pool is told to keep freed
/// memory (else a synchronisation could hand it back to the driver), and the free has completed at
/// return, so allocations on any stream may reuse the poisoned block.
inline void poison_device_pool(std::size_t bytes, cudaStream_t stream = nullptr) {
  cuda::retain_pool_memory();
  {
    cuda::DeviceBuffer<unsigned char> block(bytes, stream);
    block.fill_bytes(0xff, stream);
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace tessera::testing
