#pragma once
// The row offsets of a non-local block whose entries sit in a few listed rows (a rank's surface:
// the cross-rank strength edges, P_tent's rows returned by other ranks), made on the GPU from the
// short list instead of uploading an offset for every owned row (57 MB at 7M rows). Internal to
// amg/cuda. Built only with CUDA.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "local/cuda/device_buffer.hpp"

namespace tessera::amg::gpu {

/// offsets[0..rows]: row listed[i] holds ptr[i + 1] - ptr[i] entries, every other row none.
/// `listed` increasing within [0, rows), ptr its offsets (listed.size() + 1 of them). On `s`.
tessera::cuda::DeviceBuffer<std::int64_t> listed_row_offsets(const std::vector<std::int64_t>& listed,
                                                             const std::vector<std::int64_t>& ptr,
                                                             std::int64_t rows, cudaStream_t s);

}  // namespace tessera::amg::gpu
