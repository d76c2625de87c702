// CSR -> tiles, where every row's columns increase (every CSR this library makes): a tile-row's
// tiles are an 8-way merge of its rows by tile column. A group of 8 lanes takes a tile-row, a
// lane its row; each step the group takes the least tile column among the rows' next entries,
// every row its run of entries in that column (their bits in the tile's row), and a group prefix
// sum places the runs in the tile's values (row-major: the bit order). A counting pass, a scan
// and the writing pass: no sort, and the values are read and written once.
// CSR -> tiles otherwise (a row out of order, which the counting pass notices; tile-rows too long
// for a group; and a^T's tiles):
// key every entry by (tile, bit) = ((I * tile_cols + J) << 6) | (r%8 * 8 + c%8), radix sort
// (CUB) the keys with the entry indices, so each tile's entries come out in bit order; run-length
// encoding of the tile keys gives the tiles and their value counts.
// Tiles -> CSR: one warp per row counts, a scan gives row_ptr, one warp per row fills, its
// lanes on 32 of the tile-row's tiles at a time: each lane stages its tile's run of the row in
// shared memory at its place from a warp prefix sum (tiles are sorted by column, bits within a
// tile row by column: rows come out sorted), and the warp writes the staged entries to the CSR
// as consecutive lanes on consecutive entries.
// Refreshes on a fixed pattern: tiles keep the conversion's entry permutation and gather new
// values through it; CSR from tiles reruns only the fill pass on the kept row_ptr.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

#include <climits>

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

// ---- CSR -> tiles by merging each tile-row's rows --------------------------------------------------

namespace cg = cooperative_groups;

/// The lanes of one tile-row, a lane a row.
using RowGroup = cg::thread_block_tile<tile::kDim>;
constexpr int kGroups = kBlock / tile::kDim;
constexpr std::int32_t kNoTile = INT32_MAX;  // a row with no entries left
// A group merges its tile-row one tile at a time, so the longest tile-row is the merge's critical
// path, and tile-rows of thousands of entries (a power-law graph's hubs, the rows of P^T) leave
// the GPU to a few groups. Such matrices take the sort, which reads every entry in parallel. On
// the H100, without these bounds: R-MAT 2^16 x 2^16 (16 a row) converted in 10 ms against the
// sort's 0.7, and the one-GPU AMG's PtAP on elasticity3d:48, whose R = P^T has 14,832 rows of 532
// entries on average, took 11.9 ms against 8.7. The bounds: a tile-row of more than kMergeTiles
// tiles, and an average tile-row of more than kMergeEntries entries.
constexpr std::int64_t kMergeTiles = 128;
constexpr std::int64_t kMergeEntries = 1024;

/// The tile-row of this group in a launch of grid_for(tile_rows, kGroups) blocks of kBlock threads.
__device__ __forceinline__ std::int64_t group_tile_row() {
  return (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / tile::kDim;
}

/// A lane's place in its row: the entries not taken yet are [next, end).
struct RowCursor {
  const std::int32_t* col;
  std::int64_t next = 0, end = 0;
  std::int32_t last = -1;  // the column taken last
  bool increasing = true;  // every column taken exceeded the one before it

  __device__ std::int32_t tile_col() const { return next < end ? col[next] / tile::kDim : kNoTile; }

  /// Takes the run of entries in tile column `tc` from `next` on: their bits in the tile's row.
  /// Every entry is taken once and in row order, so `last` checks that the row increases.
  __device__ unsigned take(std::int32_t tc) {
    unsigned bits = 0;
    for (; next < end; ++next) {
      const std::int32_t c = col[next];
      if (c / tile::kDim != tc) break;
      increasing = increasing && c > last;
      last = c;
      bits |= 1u << (c % tile::kDim);
    }
    return bits;
  }
};

/// Row `lane` of tile-row `tr` (no entries past the last row).
__device__ RowCursor row_cursor(const std::int64_t* row_ptr, const std::int32_t* col, std::int64_t rows,
                                std::int64_t tr, int lane) {
  RowCursor cursor{col};
  const std::int64_t r = tr * tile::kDim + lane;
  if (r < rows) {
    cursor.next = row_ptr[r];
    cursor.end = row_ptr[r + 1];
  }
  return cursor;
}

/// The least tile column among the group's rows: the next tile of the tile-row, or kNoTile.
__device__ __forceinline__ std::int32_t next_tile(const RowGroup& g, const RowCursor& cursor) {
  return cg::reduce(g, cursor.tile_col(), cg::less<std::int32_t>());
}

/// Tiles of each tile-row; sets *unmergeable where a row's columns do not increase (the merge
/// would then be wrong: a column taken twice, a run split) or a tile-row has more than
/// kMergeTiles tiles (counting stops there; more than 64 kMergeTiles entries: at once).
__global__ void merged_tile_counts(const std::int64_t* row_ptr, const std::int32_t* col, std::int64_t rows,
                                   std::int64_t tile_rows, std::int64_t* tiles, int* unmergeable) {
  const RowGroup g = cg::tiled_partition<tile::kDim>(cg::this_thread_block());
  const std::int64_t tr = group_tile_row();
  if (tr >= tile_rows) return;  // group-uniform
  const std::int64_t last = (tr + 1) * tile::kDim < rows ? (tr + 1) * tile::kDim : rows;
  const std::int64_t entries = row_ptr[last] - row_ptr[tr * tile::kDim];
  if (entries > tile::kElems * kMergeTiles) {
    *unmergeable = 1;  // any writer: the same 1
    return;
  }
  RowCursor cursor = row_cursor(row_ptr, col, rows, tr, g.thread_rank());
  std::int64_t n = 0;
  for (std::int32_t tc; n <= kMergeTiles && (tc = next_tile(g, cursor)) != kNoTile; ++n) cursor.take(tc);
  if (!cursor.increasing || n > kMergeTiles) *unmergeable = 1;
  if (g.thread_rank() == 0) tiles[tr] = n;
}

/// The tile arrays the merge writes; `source` (tile value k = the CSR's value source[k]) may be null.
template <class T>
struct MergedTiles {
  const std::int64_t* tile_row_ptr;
  std::int32_t* tile_col;
  std::uint64_t* bitmap;
  std::int64_t* value_offset;
  T* values;
  std::int64_t* source;
};

template <class T>
__global__ void merge_tiles(const std::int64_t* row_ptr, const std::int32_t* col, const T* values, std::int64_t rows,
                            std::int64_t tile_rows, MergedTiles<T> out) {
  const RowGroup g = cg::tiled_partition<tile::kDim>(cg::this_thread_block());
  const std::int64_t tr = group_tile_row();
  if (tr >= tile_rows) return;  // group-uniform
  const int lane = static_cast<int>(g.thread_rank());
  RowCursor cursor = row_cursor(row_ptr, col, rows, tr, lane);
  // The tile-row's values are its rows' entries, reordered: they start where its first row's do.
  std::int64_t p = out.tile_row_ptr[tr], base = row_ptr[tr * tile::kDim];
  for (std::int32_t tc; (tc = next_tile(g, cursor)) != kNoTile; ++p) {
    const std::int64_t first = cursor.next;
    const unsigned bits = cursor.take(tc);
    const int count = static_cast<int>(cursor.next - first);
    const int through = cg::inclusive_scan(g, count);  // this row's run and the rows above it
    const std::uint64_t bitmap =
        cg::reduce(g, std::uint64_t{bits} << (tile::kDim * lane), cg::bit_or<std::uint64_t>());
    for (int i = 0; i < count; ++i) {
      const std::int64_t k = base + through - count + i;
      out.values[k] = values[first + i];
      if (out.source) out.source[k] = first + i;
    }
    if (lane == 0) {
      out.tile_col[p] = tc;
      out.bitmap[p] = bitmap;
      out.value_offset[p] = base;
    }
    base += g.shfl(through, tile::kDim - 1);
  }
  if (tr == tile_rows - 1 && lane == 0) out.value_offset[p] = base;  // the end: every entry
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
// emit(row_ptr[r] + k, its column, the position of its value in a.values), consecutive lanes on
// consecutive k; called by the whole warp of row r. Each lane takes one tile of 32 at a time and
// stages its tile's part of the row (a run of columns and of values: a tile's values are
// row-major) in shared memory at the place the warp's prefix sum gives; the warp then emits the
// staged entries, so the CSR writes are whole lines where a lane writing its own run wrote a few
// entries here and there (fill_rows moved about a fifth of the copy bandwidth so).
template <class T, class Emit>
__device__ void for_each_row_entry(const TileView<const T>& a, std::int64_t r, std::int64_t out, Emit emit) {
  using WarpScan = cub::WarpScan<int>;
  constexpr int kStaged = 32 * tile::kDim;  // a row's entries in 32 tiles, at most
  __shared__ typename WarpScan::TempStorage scan[kWarps];
  __shared__ std::int32_t staged_col[kWarps][kStaged];
  __shared__ std::int64_t staged_position[kWarps][kStaged];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t tr = r / tile::kDim, end = a.row_ptr[tr + 1];
  const int in_row = static_cast<int>(r % tile::kDim);
  for (std::int64_t base = a.row_ptr[tr]; base < end; base += 32) {
    const std::int64_t p = base + lane;
    const std::uint64_t bm = p < end ? a.bitmap[p] : 0;
    unsigned mask = tile::row_mask(bm, in_row);
    int k = 0, total = 0;
    WarpScan(scan[warp]).ExclusiveSum(tile::popcount(mask), k, total);
    if (mask) {
      std::int64_t position = a.offset[p] + tile::rank_below(bm, tile::bit_index(in_row, 0));
      const std::int32_t first_col = a.col[p] * tile::kDim;
      for (; mask; mask &= mask - 1, ++k) {
        staged_col[warp][k] = first_col + __ffs(mask) - 1;
        staged_position[warp][k] = position++;
      }
    }
    __syncwarp();  // the stage is written (and the scan's storage free again)
    for (int j = lane; j < total; j += 32) emit(out + j, staged_col[warp][j], staged_position[warp][j]);
    __syncwarp();  // the stage is read
    out += total;
  }
}

template <class T>
__global__ void fill_rows(TileView<const T> a, std::int64_t rows, const std::int64_t* row_ptr, std::int32_t* col,
                          T* values) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // warp-uniform
  for_each_row_entry(a, r, row_ptr[r], [&](std::int64_t k, std::int32_t c, std::int64_t position) {
    col[k] = c;
    values[k] = a.values[position];
  });
}

template <class T>
__global__ void fill_positions(TileView<const T> a, std::int64_t rows, const std::int64_t* row_ptr,
                               std::int64_t* positions) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // warp-uniform
  for_each_row_entry(a, r, row_ptr[r],
                     [&](std::int64_t k, std::int32_t, std::int64_t position) { positions[k] = position; });
}

template <class T>
__global__ void gather_by_source(std::int64_t n, const std::int64_t* source, const T* in, T* out) {
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k < n) out[k] = in[source[k]];
}

/// to_tiles by the merge into `t` (rows, columns and nnz set, tile_row_ptr and values allocated),
/// or false, with nothing else written, where a row's columns do not increase or the tile-rows
/// are too long for it (kMergeTiles, kMergeEntries).
template <class T>
bool merge_to_tiles(const DeviceCsr<T>& a, DeviceBuffer<std::int64_t>* source, DeviceTileMatrix<T>& t,
                    cudaStream_t s) {
  const std::int64_t tile_rows = t.tile_rows();
  if (a.nnz > kMergeEntries * tile_rows) return false;
  DeviceBuffer<std::int64_t> counts(tile_rows, s);
  DeviceBuffer<int> unmergeable(1, s);
  unmergeable.fill_bytes(0, s);
  merged_tile_counts<<<grid_for(tile_rows, kGroups), kBlock, 0, s>>>(a.row_ptr.data(), a.col_idx.data(), a.rows,
                                                                      tile_rows, counts.data(), unmergeable.data());
  TESSERA_CHECK_LAUNCH();
  if (read_scalar(unmergeable.data(), s) != 0) return false;
  t.num_tiles = exclusive_scan_total(counts.data(), t.tile_row_ptr.data(), tile_rows, s);
  t.tile_col.allocate(t.num_tiles, s);
  t.bitmap.allocate(t.num_tiles, s);
  t.value_offset.allocate(t.num_tiles + 1, s);
  if (source) source->allocate(a.nnz, s);
  const MergedTiles<T> out{t.tile_row_ptr.data(), t.tile_col.data(), t.bitmap.data(),
                           t.value_offset.data(), t.values.data(),   source ? source->data() : nullptr};
  merge_tiles<T><<<grid_for(tile_rows, kGroups), kBlock, 0, s>>>(a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                                                                 a.rows, tile_rows, out);
  TESSERA_CHECK_LAUNCH();
  return true;
}

/// to_tiles (of a^T with Transposed) by the radix sort into `t` (as merge_to_tiles); with `source`
/// non-null the sorted entry indices (the gather map) are kept there.
template <class T, bool Transposed>
void sort_to_tiles(const DeviceCsr<T>& a, DeviceBuffer<std::int64_t>* source, DeviceTileMatrix<T>& t, cudaStream_t s) {
  const std::int64_t nnz = a.nnz, tile_rows = t.tile_rows(), tile_cols = t.tile_cols();
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
}

/// to_tiles (of a^T with Transposed): by the merge where a's rows increase and its tile-rows are
/// short enough (merge_to_tiles), else by the sort.
template <class T, bool Transposed = false>
DeviceTileMatrix<T> convert_to_tiles(const DeviceCsr<T>& a, DeviceBuffer<std::int64_t>* source, cudaStream_t s) {
  DeviceTileMatrix<T> t;
  t.rows = Transposed ? a.cols : a.rows;
  t.cols = Transposed ? a.rows : a.cols;
  t.nnz = a.nnz;
  t.tile_row_ptr.allocate(t.tile_rows() + 1, s);
  t.values.allocate(a.nnz, s);
  if (a.nnz == 0) {
    if (source) source->release();
    t.tile_row_ptr.fill_bytes(0, s);
    t.value_offset.allocate(1, s);
    t.value_offset.fill_bytes(0, s);
    return t;
  }
  // a^T's tile-rows gather a's columns: a sort's work, not a merge's.
  if constexpr (!Transposed) {
    if (merge_to_tiles(a, source, t, s)) return t;
  }
  sort_to_tiles<T, Transposed>(a, source, t, s);
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
