#include "amg/cuda/device_smoothing_replay.hpp"

#include <algorithm>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {

namespace {

constexpr int kThreads = 256;

// One thread a row: P's rows hold a few entries, and the row's scale is computed once, as the
// host computes it. __dmul_rn/__dadd_rn keep nvcc from fusing the multiply-add, which the host
// (x86-64 without FMA contraction) does not do either.
__global__ void replay_rows_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr,
                                   const std::int64_t* __restrict__ from_tent, const std::int64_t* __restrict__ from_ap,
                                   const double* __restrict__ tent, const double* __restrict__ ap,
                                   const double* __restrict__ inv_diag, double omega, double* __restrict__ p) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  const double scale = __dmul_rn(-omega, inv_diag[i]);
  for (std::int64_t j = row_ptr[i]; j < row_ptr[i + 1]; ++j) {
    double v = 0.0;
    if (from_tent[j] >= 0) v = __dadd_rn(v, tent[from_tent[j]]);
    if (from_ap[j] >= 0) v = __dadd_rn(v, __dmul_rn(scale, ap[from_ap[j]]));
    p[j] = v;
  }
}

// Record's A P_tent entries (CSR order, -1: none) -> their tile value positions, in place.
__global__ void to_tile_positions_kernel(std::int64_t n, const std::int64_t* __restrict__ tile_position,
                                         std::int64_t* __restrict__ entry) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < n && entry[j] >= 0) entry[j] = tile_position[entry[j]];
}

void to_tile_positions(const tessera::cuda::DeviceBuffer<std::int64_t>& tile_position,
                       tessera::cuda::DeviceBuffer<std::int64_t>& entries, cudaStream_t stream) {
  const auto n = static_cast<std::int64_t>(entries.size());
  if (n == 0) return;
  to_tile_positions_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      n, tile_position.data(), entries.data());
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

void launch(const tessera::cuda::DeviceCsr<double>& block, const tessera::cuda::DeviceBuffer<std::int64_t>& from_tent,
            const tessera::cuda::DeviceBuffer<std::int64_t>& from_ap, const double* tent, const double* ap,
            const double* inv_diag, double omega, double* out, cudaStream_t stream) {
  if (block.rows == 0 || block.nnz == 0) return;
  const auto blocks = static_cast<unsigned>((block.rows + kThreads - 1) / kThreads);
  replay_rows_kernel<<<blocks, kThreads, 0, stream>>>(block.rows, block.row_ptr.data(), from_tent.data(),
                                                      from_ap.data(), tent, ap, inv_diag, omega, out);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

DeviceSmoothingReplay::DeviceSmoothingReplay(const SmoothedValueMap& map, const dist::DistMatrix& p,
                                             const tessera::cuda::DeviceBuffer<std::int64_t>& ap_tile_position,
                                             cudaStream_t stream) {
  TESSERA_ASSERT(map.p_entries == p.nnz() && static_cast<std::int64_t>(ap_tile_position.size()) == map.ap_entries,
                 "DeviceSmoothingReplay: the record is not of this P and A P_tent");
  // The pieces are consecutive ranges of rows, in order: joined, they list the blocks' entries in CSR order.
  std::vector<std::int64_t> local_tent, local_ap, nonlocal_tent, nonlocal_ap;
  local_tent.reserve(static_cast<std::size_t>(p.local.nnz()));
  local_ap.reserve(static_cast<std::size_t>(p.local.nnz()));
  nonlocal_tent.reserve(static_cast<std::size_t>(p.nonlocal.nnz()));
  nonlocal_ap.reserve(static_cast<std::size_t>(p.nonlocal.nnz()));
  std::int64_t next_row = 0;
  for (const SmoothedValueMap::Piece& piece : map.pieces) {
    TESSERA_ASSERT(piece.rows_begin == next_row, "DeviceSmoothingReplay: the record's pieces are not consecutive");
    next_row = piece.rows_end;
    local_tent.insert(local_tent.end(), piece.local_tent.begin(), piece.local_tent.end());
    nonlocal_tent.insert(nonlocal_tent.end(), piece.nonlocal_tent.begin(), piece.nonlocal_tent.end());
    local_ap.insert(local_ap.end(), piece.local_ap.begin(), piece.local_ap.end());
    nonlocal_ap.insert(nonlocal_ap.end(), piece.nonlocal_ap.begin(), piece.nonlocal_ap.end());
  }
  TESSERA_ASSERT(next_row == p.owned_rows() && static_cast<std::int64_t>(local_tent.size()) == p.local.nnz() &&
                     static_cast<std::int64_t>(nonlocal_tent.size()) == p.nonlocal.nnz(),
                 "DeviceSmoothingReplay: the record does not cover P's rows");
  local_tent_.upload(local_tent, stream);
  local_ap_.upload(local_ap, stream);
  nonlocal_tent_.upload(nonlocal_tent, stream);
  nonlocal_ap_.upload(nonlocal_ap, stream);
  to_tile_positions(ap_tile_position, local_ap_, stream);
  to_tile_positions(ap_tile_position, nonlocal_ap_, stream);
}

void DeviceSmoothingReplay::run(const double* tent, const double* ap_tiles, const double* inv_diag, double omega,
                                tessera::cuda::DeviceCsr<double>& p_local, tessera::cuda::DeviceCsr<double>& p_nonlocal,
                                cudaStream_t stream) const {
  TESSERA_ASSERT(p_local.nnz == static_cast<std::int64_t>(local_tent_.size()) &&
                     p_nonlocal.nnz == static_cast<std::int64_t>(nonlocal_tent_.size()),
                 "DeviceSmoothingReplay: P's blocks are not the recorded pattern");
  launch(p_local, local_tent_, local_ap_, tent, ap_tiles, inv_diag, omega, p_local.values.data(), stream);
  launch(p_nonlocal, nonlocal_tent_, nonlocal_ap_, tent, ap_tiles, inv_diag, omega, p_nonlocal.values.data(), stream);
}

}  // namespace tessera::amg::gpu
