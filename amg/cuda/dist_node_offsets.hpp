#pragma once
// A rank's node layout (DistNodes::ptr) on its GPU, for the distributed device phases (strength
// graph, tentative prolongator). A uniform layout (every node the same number of dofs: scalar
// problems, elasticity) is written by a kernel, n * dofs_per_node, instead of uploading the
// host's array, which at 7M owned rows is 56 MB copied each level by each phase.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "amg/dist/dist_strength.hpp"
#include "local/cuda/device_buffer.hpp"

namespace tessera::amg::gpu {

/// nodes.count() + 1 offsets equal to nodes.ptr, ordered on `stream`.
tessera::cuda::DeviceBuffer<std::int64_t> device_node_offsets(const DistNodes& nodes, cudaStream_t stream);

}  // namespace tessera::amg::gpu
