#include "amg/cuda/dist_node_offsets.hpp"

#include "amg/cuda/setup_phase_kernels.cuh"
#include "local/core/error.hpp"

namespace tessera::amg::gpu {
namespace {

__global__ void uniform_offsets(std::int64_t count, std::int64_t dofs_per_node, std::int64_t* out) {
  const std::int64_t n = detail::thread_index();
  if (n <= count) out[n] = n * dofs_per_node;
}

}  // namespace

tessera::cuda::DeviceBuffer<std::int64_t> device_node_offsets(const DistNodes& nodes, cudaStream_t s) {
  tessera::cuda::DeviceBuffer<std::int64_t> out;
  const std::int64_t count = nodes.count();
  if (nodes.dofs_per_node <= 0) {
    out.upload(nodes.ptr, s);
    return out;
  }
  TESSERA_ASSERT(nodes.ptr.back() == count * nodes.dofs_per_node, "a uniform node layout of ", count, " nodes of ",
                 nodes.dofs_per_node, " dofs covers ", nodes.ptr.back(), " dofs");
  out.allocate(count + 1, s);
  uniform_offsets<<<tessera::cuda::grid_for(count + 1, detail::kBlock), detail::kBlock, 0, s>>>(
      count, nodes.dofs_per_node, out.data());
  TESSERA_CHECK_LAUNCH();
  return out;
}

}  // namespace tessera::amg::gpu
