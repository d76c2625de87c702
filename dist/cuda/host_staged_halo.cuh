#pragma once
// HostStagedHalo: the ghost values of a per-row device array over a HaloPlan, exchanged through
// host memory -- a gather kernel of the sent items, one copy down, dist::exchange over MPI, one
// copy up. For setup steps that exchange a few boundary values of 8-byte items (node keys,
// global ids) a few times each: it needs no NCCL context, and the staging costs tens of
// microseconds an exchange. The per-product halo of SpMV/SpMM is device_spmv.hpp's instead.
// Every call is ordered on the stream given at construction (current device); exchange() is
// collective over the plan's ranks and returns once the ghosts are queued for upload.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/halo_plan.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/device_buffer.hpp"

namespace tessera::dist::gpu {

namespace staged_halo_detail {
template <class T>
__global__ void gather_items(std::int64_t count, const std::int64_t* index, const T* owned, T* out) {
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k < count) out[k] = owned[index[k]];
}
}  // namespace staged_halo_detail

class HostStagedHalo {
 public:
  using Word = std::uint64_t;  // the item: any trivially copyable 8-byte type

  /// Uploads the plan's send indices; keeps a reference to `plan` (which must outlive it).
  HostStagedHalo(const HaloPlan& plan, cudaStream_t stream)
      : plan_(plan), stream_(stream), send_(plan.num_sent(), stream), send_host_(plan.num_sent()),
        ghosts_host_(plan.num_ghosts()) {
    send_local_.upload(plan.send_local, stream);
  }

  /// Collective. ghosts[g] = owned[i] of ghost g's row i on its owner (device arrays).
  template <class T>
  void exchange(const Communicator& comm, const T* owned, T* ghosts) {
    static_assert(sizeof(T) == sizeof(Word) && std::is_trivially_copyable_v<T>, "8-byte items");
    const std::int64_t sent = plan_.num_sent();
    if (sent > 0) {
      constexpr int threads = 256;
      staged_halo_detail::gather_items<<<tessera::cuda::grid_for(sent, threads), threads, 0, stream_>>>(
          sent, send_local_.data(), owned, reinterpret_cast<T*>(send_.data()));
      TESSERA_CHECK_LAUNCH();
      TESSERA_CUDA_CHECK(
          cudaMemcpyAsync(send_host_.data(), send_.data(), sent * sizeof(Word), cudaMemcpyDeviceToHost, stream_));
    }
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    dist::exchange(comm, plan_.pattern, sizeof(Word), send_host_.data(), ghosts_host_.data());
    // The next exchange synchronises the stream before MPI writes ghosts_host_ again, so this
    // copy has finished by then even if the buffer is pinned (asynchronous).
    if (!ghosts_host_.empty())
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(ghosts, ghosts_host_.data(), ghosts_host_.size() * sizeof(Word),
                                         cudaMemcpyHostToDevice, stream_));
  }

 private:
  const HaloPlan& plan_;
  cudaStream_t stream_;
  tessera::cuda::DeviceBuffer<std::int64_t> send_local_;
  tessera::cuda::DeviceBuffer<Word> send_;
  std::vector<Word> send_host_, ghosts_host_;
};

}  // namespace tessera::dist::gpu
