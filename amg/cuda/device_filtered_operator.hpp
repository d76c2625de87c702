#pragma once
// The filtered operator of prolongator smoothing on the device, the twin of
// amg/filtered_operator.hpp (A_F: A's entries within a node block or between strongly connected
// nodes, every other entry of a row added to its diagonal), bit for bit: the same pattern and
// map, and the values summed in the same order (one thread a row, A's entries in order).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

struct DeviceFilteredOperator {
  tessera::cuda::DeviceCsr<double> a;                 // A_F
  tessera::cuda::DeviceBuffer<std::int64_t> target;   // entry p of A is added into entry target[p] of A_F

  std::int64_t bytes() const { return a.bytes() + std::int64_t(target.bytes()); }
};

/// amg::filtered_operator on the device: `a` (rows sorted, every diagonal present), its nodes
/// (`node_ptr`, num_nodes + 1 offsets) and the strong node graph of device_strength_graph (rows
/// sorted). Values zero; nullopt when no entry is dropped. Synchronises `stream` (A_F's size).
std::optional<DeviceFilteredOperator> device_filtered_operator(const tessera::cuda::DeviceCsr<double>& a,
                                                               const std::int64_t* node_ptr, std::int64_t num_nodes,
                                                               const tessera::cuda::DeviceCsr<double>& graph,
                                                               cudaStream_t stream = nullptr);

/// amg::refresh_filtered_values on the device: A_F's values from `a`'s (the pattern filtered).
void device_refresh_filtered_values(const tessera::cuda::DeviceCsr<double>& a, DeviceFilteredOperator& f,
                                    cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
