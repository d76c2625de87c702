#pragma once
// replay_smoothing (amg/dist/dist_smoothing.hpp) on the device: P's values from the record the
// first re-setup made (SmoothedValueMap), new values of A P_tent (a device product in tile form),
// P_tent, D^-1 and omega; P's pattern fixed. Per entry of P, in row i:
//   p = 0 + P_tent[tent] + (-omega * inv_diag[i]) * AP[ap]   (a missing source adds nothing)
// with every operation rounded as the host's (no fused multiply-add), so with equal operands it
// equals the host replay bit for bit. Built only with CUDA.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "amg/dist/dist_smoothing.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

class DeviceSmoothingReplay {
 public:
  /// `map` was made by smoothed_blocks for `p`'s pattern. `ap_tile_position[k]` (on the device)
  /// is the tile value position of the k-th entry (CSR order) of the device A P_tent
  /// (tessera::cuda::csr_positions). Not collective; uploads on `stream`.
  DeviceSmoothingReplay(const SmoothedValueMap& map, const dist::DistMatrix& p,
                        const tessera::cuda::DeviceBuffer<std::int64_t>& ap_tile_position, cudaStream_t stream);

  /// P's local and non-local values (device CSR blocks of the recorded pattern) from P_tent's
  /// values [local | non-local] (`tent`), A P_tent's tile values, inv_diag (owned rows) and
  /// omega. Ordered on `stream`.
  void run(const double* tent, const double* ap_tiles, const double* inv_diag, double omega,
           tessera::cuda::DeviceCsr<double>& p_local, tessera::cuda::DeviceCsr<double>& p_nonlocal,
           cudaStream_t stream) const;

 private:
  // Per entry of P's block (its CSR order): the P_tent value and the A P_tent tile value it reads, -1 none.
  tessera::cuda::DeviceBuffer<std::int64_t> local_tent_, local_ap_, nonlocal_tent_, nonlocal_ap_;
};

}  // namespace tessera::amg::gpu
