// drop_zeros: removes the entries of a tile matrix that are exactly zero (SpGEMM cancellation),
// and the tiles left empty. Scans (CUB) give the new tile numbering and value offsets.
#include "local/cuda/cub_call.cuh"
#include "local/cuda/tile_device.cuh"
#include "local/cuda/tile_spgemm.hpp"
#include "local/cuda/tile_spgemm_internal.hpp"

namespace tessera::cuda {
namespace {

constexpr int kBlock = 256;

template <class T>
__global__ void nonzero_bitmaps(TileView<const T> c, std::int64_t tiles, std::uint64_t* kept_bits,
                                std::int64_t* keep) {
  const std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (p >= tiles) return;
  std::uint64_t bm = c.bitmap[p], kept = 0;
  for (std::int64_t v = c.offset[p]; bm; ++v, bm &= bm - 1)
    if (c.values[v] != T(0)) kept |= bm & (~bm + 1);  // lowest set bit
  kept_bits[p] = kept;
  keep[p] = kept != 0;
}

__global__ void renumber_rows(const std::int64_t* old_ptr, const std::int64_t* new_index, std::int64_t rows,
                              std::int64_t* new_ptr) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (r <= rows) new_ptr[r] = new_index[old_ptr[r]];
}

__global__ void move_tiles(const std::int32_t* old_col, const std::uint64_t* kept_bits, const std::int64_t* new_index,
                           std::int64_t tiles, std::int32_t* col, std::uint64_t* bitmap, std::int64_t* nnz) {
  const std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (p >= tiles || !kept_bits[p]) return;
  const std::int64_t q = new_index[p];
  col[q] = old_col[p];
  bitmap[q] = kept_bits[p];
  nnz[q] = tile::popcount(kept_bits[p]);
}

template <class T>
__global__ void move_values(TileView<const T> c, std::int64_t tiles, const std::uint64_t* kept_bits,
                            const std::int64_t* new_index, const std::int64_t* new_offset, T* values) {
  const std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (p >= tiles || !kept_bits[p]) return;
  std::int64_t out = new_offset[new_index[p]];
  std::uint64_t bm = c.bitmap[p];
  for (std::int64_t v = c.offset[p]; bm; ++v, bm &= bm - 1)
    if (kept_bits[p] & bm & (~bm + 1)) values[out++] = c.values[v];
}

}  // namespace

template <class T>
DeviceTileMatrix<T> drop_zeros(const DeviceTileMatrix<T>& c, cudaStream_t s) {
  const std::int64_t tiles = c.num_tiles, rows = c.tile_rows();
  const auto cv = view_of<const T>(c);
  DeviceBuffer<std::uint64_t> kept_bits(tiles, s);
  DeviceBuffer<std::int64_t> keep(tiles, s), new_index(tiles + 1, s);
  if (tiles) {
    nonzero_bitmaps<T><<<grid_for(tiles, kBlock), kBlock, 0, s>>>(cv, tiles, kept_bits.data(), keep.data());
    TESSERA_CHECK_LAUNCH();
  }
  DeviceTileMatrix<T> out;
  out.rows = c.rows;
  out.cols = c.cols;
  out.num_tiles = exclusive_scan_total(keep.data(), new_index.data(), tiles, s);
  out.tile_row_ptr.allocate(rows + 1, s);
  renumber_rows<<<grid_for(rows + 1, kBlock), kBlock, 0, s>>>(c.tile_row_ptr.data(), new_index.data(), rows,
                                                             out.tile_row_ptr.data());
  TESSERA_CHECK_LAUNCH();
  out.tile_col.allocate(out.num_tiles, s);
  out.bitmap.allocate(out.num_tiles, s);
  DeviceBuffer<std::int64_t> nnz(out.num_tiles, s);
  if (tiles) {
    move_tiles<<<grid_for(tiles, kBlock), kBlock, 0, s>>>(c.tile_col.data(), kept_bits.data(), new_index.data(), tiles,
                                                         out.tile_col.data(), out.bitmap.data(), nnz.data());
    TESSERA_CHECK_LAUNCH();
  }
  out.value_offset.allocate(out.num_tiles + 1, s);
  out.nnz = exclusive_scan_total(nnz.data(), out.value_offset.data(), out.num_tiles, s);
  out.values.allocate(out.nnz, s);
  if (tiles) {
    move_values<T><<<grid_for(tiles, kBlock), kBlock, 0, s>>>(cv, tiles, kept_bits.data(), new_index.data(),
                                                             out.value_offset.data(), out.values.data());
    TESSERA_CHECK_LAUNCH();
  }
  return out;
}

template DeviceTileMatrix<double> drop_zeros(const DeviceTileMatrix<double>&, cudaStream_t);
template DeviceTileMatrix<float> drop_zeros(const DeviceTileMatrix<float>&, cudaStream_t);

}  // namespace tessera::cuda
