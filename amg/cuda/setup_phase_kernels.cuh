#pragma once
// Small pieces shared by the device setup phases (device_strength.cu, device_aggregation.cu,
// device_tentative.cu, device_prolongator.cu): thread indexing and an exclusive scan that also
// yields the total (row offsets from sorted keys: tessera::cuda::segment_starts). Internal to amg/cuda.
#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "local/cuda/cub_call.cuh"
#include "local/cuda/device_buffer.hpp"

namespace tessera::amg::gpu::detail {

constexpr int kBlock = 256;

__device__ inline std::int64_t thread_index() { return blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; }

/// out[0..n] = exclusive prefix sums of counts[0..n) (out[n] = total); counts needs n + 1
/// entries whose last is 0, so one scan of n + 1 items gives the total without a second pass.
template <class Count, class Offset>
void exclusive_scan_with_total(const Count* counts, Offset* out, std::int64_t n, cudaStream_t stream) {
  tessera::cuda::cub_call(stream, [&](void* tmp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(tmp, bytes, counts, out, n + 1, stream);
  });
}

}  // namespace tessera::amg::gpu::detail
