// CSR -> tiles: key every entry by (tile, bit) = ((I * tile_cols + J) << 6) | (r%8 * 8 + c%8),
// radix sort (CUB) the keys with the entry indices, so each tile's entries come out in bit
// order; run-length encoding of the tile keys gives the tiles and their value counts.
// Tiles -> CSR: one warp per row counts, a scan gives row_ptr, one warp per row fills, its
// lanes on 32 of the tile-row's tiles at a time, each writing its tile's run of the row at its
// place from a warp prefix sum (tiles are sorted by column, bits within a tile row by column:
// rows come out sorted). The CSR writes are contiguous across the warp, where a thread per row
// wrote 32 rows apart and left long rows to one thread.
// Refreshes on a fixed pattern: tiles keep the sort's entry permutation and gather new values
// through it; CSR from tiles reruns only the fill pass on the kept row_ptr.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include "local/core/error.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/index_kernels.cuh"
#include "local/cuda/tile_convert.hpp"
#include "local/cuda/tile_device.cuh"
#include "local/cuda/tile_spgemm_internal.hpp"

namespace tessera::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

/// The row of this warp in a launch of grid_for(rows, kWarps) blocks of kBlock threads.
__device__ __forceinline__ std::int64_t warp_row() {
  return (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32;
}

// Keys of a's entries, or with Transposed of a^T's (entry (r, c) keyed as (c, r)): the same
// sort then yields to_tiles(transpose(a)) without forming the transpose. A warp a row, its lanes
// on consecutive entries.
template <bool Transposed>
__global__ void entry_keys(const std::int64_t* row_ptr, const std::int32_t* col, std::int64_t rows,
                           std::int64_t tile_cols, std::uint64_t* keys, std::int64_t* index) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // warp-uniform
  for (std::int64_t e = row_ptr[r] + threadIdx.x % 32; e < row_ptr[r + 1]; e += 32) {
    const std::int64_t row = Transposed ? col[e] : r, c = Transposed ? r : col[e];
    const std::uint64_t tile_key = static_cast<std::uint64_t>(row / tile::kDim) * tile_cols + c / tile::kDim;
    keys[e] = (tile_key << 6) | tile::bit_index(static_cast<int>(row % tile::kDim), static_cast<int>(c % tile::kDim));
    index[e] = e;
  }
}

template <class T>
__global__ void gather_values(const T* in, const std::int64_t* index, std::int64_t n, T* out,
                              const std::uint64_t* keys, std::uint64_t* tile_keys) {
  const std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  out[e] = in[index[e]];
  tile_keys[e] = keys[e] >> 6;
}

__global__ void tile_fields(const std::uint64_t* unique_keys, const std::int64_t* offset, const std::uint64_t* keys,
                            std::int64_t tiles, std::int64_t tile_cols, std::int32_t* tile_col,
                            std::uint64_t* bitmap) {
  const std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (p >= tiles) return;
  std::uint64_t bm = 0;
  for (std::int64_t e = offset[p]; e < offset[p + 1]; ++e) bm |= std::uint64_t{1} << (keys[e] & 63u);
  bitmap[p] = bm;
  tile_col[p] = static_cast<std::int32_t>(unique_keys[p] % tile_cols);
}

template <class T>
__global__ void row_lengths(TileView<const T> a, std::int64_t rows, std::int64_t* lengths) {
  __shared__ typename cub::WarpReduce<int>::TempStorage reduce[kWarps];
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // warp-uniform
  const std::int64_t tr = r / tile::kDim;
  const int in_row = static_cast<int>(r % tile::kDim);
  std::int64_t n = 0;
  for (std::int64_t base = a.row_ptr[tr]; base < a.row_ptr[tr + 1]; base += 32) {
    const std::int64_t p = base + threadIdx.x % 32;
    const int here = p < a.row_ptr[tr + 1] ? tile::popcount(tile::row_mask(a.bitmap[p], in_row)) : 0;
    n += cub::WarpReduce<int>(reduce[threadIdx.x / 32]).Sum(here);  // valid in lane 0
    __syncwarp();  // before the storage is used again
  }
  if (threadIdx.x % 32 == 0) lengths[r] = n;
}

// Row r's entries in to_csr's order (tiles by column, bits by column), the k-th of them as
// emit(row_ptr[r] + k, its column, the position of its value in a.values); called by the whole
// warp of row r. Each lane takes one tile of 32 at a time: a tile's part of the row is a run of
// columns and of values (a tile's values are row-major), placed by the warp's prefix sum.
template <class T, class Emit>
__device__ void for_each_row_entry(const TileView<const T>& a, std::int64_t r, std::int64_t out, Emit emit) {
  using WarpScan = cub::WarpScan<int>;
  __shared__ typename WarpScan::TempStorage scan[kWarps];
  const std::int64_t tr = r / tile::kDim, end = a.row_ptr[tr + 1];
  const int in_row = static_cast<int>(r % tile::kDim);
  for (std::int64_t base = a.row_ptr[tr]; base < end; base += 32) {
    const std::int64_t p = base + threadIdx.x % 32;
    const std::uint64_t bm = p < end ? a.bitmap[p] : 0;
    unsigned mask = tile::row_mask(bm, in_row);
    int before = 0, total = 0;
    WarpScan(scan[threadIdx.x / 32]).ExclusiveSum(tile::popcount(mask), before, total);
    __syncwarp();  // before the storage is used again
    if (mask) {
      std::int64_t k = out + before, position = a.offset[p] + tile::rank_below(bm, tile::bit_index(in_row, 0));
      const std::int64_t first_col = std::int64_t(a.col[p]) * tile::kDim;
      for (; mask; mask &= mask - 1) emit(k++, first_col + __ffs(mask) - 1, position++);
    }
    out += total;
  }
}

template <class T>
__global__ void fill_rows(TileView<const T> a, std::int64_t rows, const std::int64_t* row_ptr, std::int32_t* col,
                          T* values) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // warp-uniform
  for_each_row_entry(a, r, row_ptr[r], [&](std::int64_t k, std::int64_t c, std::int64_t position) {
    col[k] = static_cast<std::int32_t>(c);
    values[k] = a.values[position];
  });
}

template <class T>
__global__ void fill_positions(TileView<const T> a, std::int64_t rows, const std::int64_t* row_ptr,
                               std::int64_t* positions) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // warp-uniform
  for_each_row_entry(a, r, row_ptr[r], [&](std::int64_t k, std::int64_t, std::int64_t position) { positions[k] = position; });
}

template <class T>
__global__ void gather_by_source(std::int64_t n, const std::int64_t* source, const T* in, T* out) {
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k < n) out[k] = in[source[k]];
}

/// to_tiles (of a^T with Transposed); with `source` non-null the sorted entry indices (the
/// gather map) are kept there.
template <class T, bool Transposed = false>
DeviceTileMatrix<T> convert_to_tiles(const DeviceCsr<T>& a, DeviceBuffer<std::int64_t>* source, cudaStream_t s) {
  DeviceTileMatrix<T> t;
  t.rows = Transposed ? a.cols : a.rows;
  t.cols = Transposed ? a.rows : a.cols;
  t.nnz = a.nnz;
  const std::int64_t nnz = a.nnz, tile_rows = t.tile_rows(), tile_cols = t.tile_cols();
  t.tile_row_ptr.allocate(tile_rows + 1, s);
  t.values.allocate(nnz, s);
  if (nnz == 0) {
    if (source) source->release();
    t.tile_row_ptr.fill_bytes(0, s);
    t.value_offset.allocate(1, s);
    t.value_offset.fill_bytes(0, s);
    return t;
  }
  DeviceBuffer<std::uint64_t> keys(nnz, s), sorted_keys(nnz, s);
  {
    DeviceBuffer<std::int64_t> index(nnz, s), sorted_index(nnz, s);
    entry_keys<Transposed><<<grid_for(a.rows, kWarps), kBlock, 0, s>>>(a.row_ptr.data(), a.col_idx.data(), a.rows,
                                                                        tile_cols, keys.data(), index.data());
    TESSERA_CHECK_LAUNCH();
    const int end_bit = 6 + significant_bits(static_cast<std::uint64_t>(tile_rows) * tile_cols);
    cub_call(s, [&](void* tmp, std::size_t& n) {
      return cub::DeviceRadixSort::SortPairs(tmp, n, keys.data(), sorted_keys.data(), index.data(),
                                             sorted_index.data(), nnz, 0, end_bit, s);
    });
    gather_values<T><<<grid_for(nnz, kBlock), kBlock, 0, s>>>(a.values.data(), sorted_index.data(), nnz,
                                                             t.values.data(), sorted_keys.data(), keys.data());
    TESSERA_CHECK_LAUNCH();
    if (source) *source = std::move(sorted_index);
  }
  // keys now holds the tile key of each sorted entry.
  DeviceBuffer<std::uint64_t> unique_keys(nnz, s);
  DeviceBuffer<std::int64_t> counts(nnz, s), runs(1, s);
  cub_call(s, [&](void* tmp, std::size_t& n) {
    return cub::DeviceRunLengthEncode::Encode(tmp, n, keys.data(), unique_keys.data(), counts.data(), runs.data(),
                                              nnz, s);
  });
  t.num_tiles = read_scalar(runs.data(), s);
  t.value_offset.allocate(t.num_tiles + 1, s);
  exclusive_scan_total(counts.data(), t.value_offset.data(), t.num_tiles, s);
  t.tile_col.allocate(t.num_tiles, s);
  t.bitmap.allocate(t.num_tiles, s);
  tile_fields<<<grid_for(t.num_tiles, kBlock), kBlock, 0, s>>>(unique_keys.data(), t.value_offset.data(),
                                                              sorted_keys.data(), t.num_tiles, tile_cols,
                                                              t.tile_col.data(), t.bitmap.data());
  TESSERA_CHECK_LAUNCH();
  // A tile's key is tile_row * tile_cols + tile_col: tile row r's tiles start at key r * tile_cols.
  segment_starts(unique_keys.data(), t.num_tiles, tile_rows, static_cast<std::uint64_t>(tile_cols),
                 t.tile_row_ptr.data(), s);
  return t;
}

}  // namespace

template <class T>
DeviceTileMatrix<T> to_tiles(const DeviceCsr<T>& a, cudaStream_t s) {
  return convert_to_tiles<T>(a, nullptr, s);
}

template <class T>
DeviceTileMatrix<T> to_tiles(const DeviceCsr<T>& a, DeviceBuffer<std::int64_t>& source, cudaStream_t s) {
  return convert_to_tiles<T>(a, &source, s);
}

template <class T>
DeviceTileMatrix<T> to_tiles_transposed(const DeviceCsr<T>& a, cudaStream_t s) {
  return convert_to_tiles<T, true>(a, nullptr, s);
}

template <class T>
void refresh_tile_values(const DeviceCsr<T>& a, const DeviceBuffer<std::int64_t>& source, DeviceTileMatrix<T>& t,
                         cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(a.nnz == t.nnz && std::int64_t(source.size()) == a.nnz,
                        "tile value refresh: the CSR has ", a.nnz, " entries, the tiles ", t.nnz, ", the map ",
                        source.size());
  if (a.nnz == 0) return;
  gather_by_source<T><<<grid_for(a.nnz, kBlock), kBlock, 0, s>>>(a.nnz, source.data(), a.values.data(),
                                                                 t.values.data());
  TESSERA_CHECK_LAUNCH();
}

template <class T>
void refresh_csr_values(const DeviceTileMatrix<T>& a, DeviceCsr<T>& c, cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(a.rows == c.rows && a.cols == c.cols && a.nnz == c.nnz, "CSR value refresh: the tiles are ",
                        a.rows, "x", a.cols, " with ", a.nnz, " entries, the CSR ", c.rows, "x", c.cols, " with ",
                        c.nnz);
  if (a.rows == 0) return;
  fill_rows<T><<<grid_for(a.rows, kWarps), kBlock, 0, s>>>(view_of<const T>(a), a.rows, c.row_ptr.data(),
                                                          c.col_idx.data(), c.values.data());
  TESSERA_CHECK_LAUNCH();
}

template <class T>
DeviceCsr<T> to_csr(const DeviceTileMatrix<T>& a, cudaStream_t s) {
  DeviceCsr<T> c;
  c.rows = a.rows;
  c.cols = a.cols;
  const auto av = view_of<const T>(a);
  DeviceBuffer<std::int64_t> lengths(a.rows, s);
  if (a.rows) {
    row_lengths<T><<<grid_for(a.rows, kWarps), kBlock, 0, s>>>(av, a.rows, lengths.data());
    TESSERA_CHECK_LAUNCH();
  }
  c.row_ptr.allocate(a.rows + 1, s);
  c.nnz = exclusive_scan_total(lengths.data(), c.row_ptr.data(), a.rows, s);
  c.col_idx.allocate(c.nnz, s);
  c.values.allocate(c.nnz, s);
  if (a.rows) {
    fill_rows<T><<<grid_for(a.rows, kWarps), kBlock, 0, s>>>(av, a.rows, c.row_ptr.data(), c.col_idx.data(),
                                                            c.values.data());
    TESSERA_CHECK_LAUNCH();
  }
  return c;
}

template <class T>
DeviceBuffer<std::int64_t> csr_positions(const DeviceTileMatrix<T>& a, cudaStream_t s) {
  if (a.nnz == 0) return {};  // a product without tiles may hold no offset arrays at all
  const auto av = view_of<const T>(a);
  DeviceBuffer<std::int64_t> lengths(a.rows, s), row_ptr(a.rows + 1, s);
  row_lengths<T><<<grid_for(a.rows, kWarps), kBlock, 0, s>>>(av, a.rows, lengths.data());
  TESSERA_CHECK_LAUNCH();
  const std::int64_t nnz = exclusive_scan_total(lengths.data(), row_ptr.data(), a.rows, s);
  TESSERA_ASSERT(nnz == a.nnz, "csr_positions: the tiles hold ", nnz, " entries, their count says ", a.nnz);
  DeviceBuffer<std::int64_t> positions(nnz, s);
  fill_positions<T><<<grid_for(a.rows, kWarps), kBlock, 0, s>>>(av, a.rows, row_ptr.data(), positions.data());
  TESSERA_CHECK_LAUNCH();
  return positions;
}

template DeviceTileMatrix<double> to_tiles(const DeviceCsr<double>&, cudaStream_t);
template DeviceTileMatrix<double> to_tiles_transposed(const DeviceCsr<double>&, cudaStream_t);
template DeviceTileMatrix<float> to_tiles(const DeviceCsr<float>&, cudaStream_t);
template DeviceTileMatrix<Half> to_tiles(const DeviceCsr<Half>&, cudaStream_t);
template DeviceCsr<double> to_csr(const DeviceTileMatrix<double>&, cudaStream_t);
template DeviceCsr<float> to_csr(const DeviceTileMatrix<float>&, cudaStream_t);
template DeviceCsr<Half> to_csr(const DeviceTileMatrix<Half>&, cudaStream_t);
template DeviceTileMatrix<double> to_tiles(const DeviceCsr<double>&, DeviceBuffer<std::int64_t>&, cudaStream_t);
template DeviceBuffer<std::int64_t> csr_positions(const DeviceTileMatrix<double>&, cudaStream_t);
template void refresh_tile_values(const DeviceCsr<double>&, const DeviceBuffer<std::int64_t>&,
                                  DeviceTileMatrix<double>&, cudaStream_t);
template void refresh_csr_values(const DeviceTileMatrix<double>&, DeviceCsr<double>&, cudaStream_t);

}  // namespace tessera::cuda
