// The SpGEMM work estimate on the device (CUB reductions over counting iterators, one small
// kernel per B-side array) and its host reference.
#include "local/cuda/spgemm_engine_choice.hpp"

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <set>
#include <vector>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/formats/tile_bits.hpp"

namespace tessera::cuda {
namespace {

constexpr int kThreads = 256;

struct CsrPattern {
  std::int64_t rows;
  const std::int64_t* row_ptr;
  const std::int32_t* col;
};

/// Calls visit(K) once for each distinct tile column K of tile-row `tile_row`, in increasing
/// order: an 8-way merge of the tile-row's sorted rows on col / 8 (no sort, no scratch).
template <class Visit>
__device__ void for_each_tile_column(const CsrPattern& m, std::int64_t tile_row, Visit visit) {
  std::int64_t head[tile::kDim], end[tile::kDim];
  const std::int64_t first = tile_row * tile::kDim;
  for (int r = 0; r < tile::kDim; ++r) {
    const bool in = first + r < m.rows;
    head[r] = in ? m.row_ptr[first + r] : 0;
    end[r] = in ? m.row_ptr[first + r + 1] : 0;
  }
  while (true) {
    std::int32_t k = 0x7fffffff;  // past every tile column
    for (int r = 0; r < tile::kDim; ++r)
      if (head[r] < end[r] && m.col[head[r]] / tile::kDim < k) k = m.col[head[r]] / tile::kDim;
    if (k == 0x7fffffff) return;
    visit(k);
    for (int r = 0; r < tile::kDim; ++r)
      while (head[r] < end[r] && m.col[head[r]] / tile::kDim == k) ++head[r];
  }
}

__global__ void csr_tiles_per_tile_row_kernel(CsrPattern m, std::int64_t tile_rows, std::int64_t* count) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tile_rows) return;
  std::int64_t n = 0;
  for_each_tile_column(m, t, [&](std::int32_t) { ++n; });
  count[t] = n;
}

/// Row r of a tile matrix: the popcounts of byte r % 8 of the bitmaps of its tile-row.
__global__ void tile_row_lengths_kernel(std::int64_t rows, const std::int64_t* tile_row_ptr,
                                        const std::uint64_t* bitmap, std::int64_t* row_len) {
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const std::int64_t t = r / tile::kDim;
  const int shift = int(r % tile::kDim) * tile::kDim;
  std::int64_t n = 0;
  for (std::int64_t k = tile_row_ptr[t]; k < tile_row_ptr[t + 1]; ++k) n += tile::popcount((bitmap[k] >> shift) & 0xffu);
  row_len[r] = n;
}

__global__ void tile_counts_kernel(std::int64_t tile_rows, const std::int64_t* tile_row_ptr, std::int64_t* count) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < tile_rows) count[t] = tile_row_ptr[t + 1] - tile_row_ptr[t];
}

/// What the estimate reads of B: its row lengths (from row_ptr, or an array when B is in tiles)
/// and its nonzero tiles per tile-row.
struct BSide {
  const std::int64_t* row_ptr = nullptr;
  const std::int64_t* row_len = nullptr;
  const std::int64_t* tiles_per_tile_row = nullptr;
  __device__ std::int64_t length(std::int32_t k) const { return row_len ? row_len[k] : row_ptr[k + 1] - row_ptr[k]; }
};

struct ScalarProductsOfEntry {
  const std::int32_t* a_col;
  BSide b;
  __device__ std::int64_t operator()(std::int64_t entry) const { return b.length(a_col[entry]); }
};

/// Tile pairs of each tile-row of A, one thread per tile-row. A plain kernel, not a functor fed
/// to the reduction: the reduction gives each thread many consecutive items, and one item here
/// is an 8-way merge over a whole tile-row (hundreds of steps for R = P^T), so folded into the
/// reduction it left a few thousand threads walking long serial chains (tens of milliseconds
/// on the AMG's R*(AP), measured on an H100).
__global__ void tile_pairs_per_tile_row_kernel(CsrPattern a, BSide b, std::int64_t tile_rows, std::int64_t* pairs) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tile_rows) return;
  std::int64_t n = 0;
  for_each_tile_column(a, t, [&](std::int32_t k) { n += b.tiles_per_tile_row[k]; });
  pairs[t] = n;
}

template <class PerItem>
void sum_into(std::int64_t items, PerItem per_item, std::int64_t* out, cudaStream_t s) {
  const auto values = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), per_item);
  cub_call(s, [&](void* temp, std::size_t& bytes) { return cub::DeviceReduce::Sum(temp, bytes, values, out, items, s); });
}

SpgemmWorkEstimate estimate(const DeviceCsr<double>& a, const BSide& b, cudaStream_t s) {
  const CsrPattern ap{a.rows, a.row_ptr.data(), a.col_idx.data()};
  DeviceBuffer<std::int64_t> sums(2, s);
  sum_into(a.nnz, ScalarProductsOfEntry{a.col_idx.data(), b}, sums.data(), s);
  const std::int64_t tile_rows = tile::count(a.rows);
  DeviceBuffer<std::int64_t> pairs(std::size_t(tile_rows), s);
  if (tile_rows > 0) {
    tile_pairs_per_tile_row_kernel<<<grid_for(tile_rows, kThreads), kThreads, 0, s>>>(ap, b, tile_rows, pairs.data());
    TESSERA_CHECK_LAUNCH();
  }
  cub_call(s, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceReduce::Sum(temp, bytes, pairs.data(), sums.data() + 1, tile_rows, s);
  });
  const std::vector<std::int64_t> host = sums.download(s);
  return SpgemmWorkEstimate{host[0], host[1], a.rows};
}

void require_conformal(std::int64_t a_rows, std::int64_t a_cols, std::int64_t b_rows, std::int64_t b_cols) {
  TESSERA_REQUIRE_INPUT(a_cols == b_rows, "SpGEMM work estimate: inner dimensions differ (", a_rows, "x", a_cols,
                        " times ", b_rows, "x", b_cols, ")");
}

}  // namespace

OffloadSpgemm choose_level_spgemm_engine(const SpgemmWorkEstimate& a_p_tent) {
  if (a_p_tent.tile_pairs == 0) return OffloadSpgemm::tile;
  return a_p_tent.products_per_pair() >= kLevelTileProductsPerPairThreshold ? OffloadSpgemm::tile
                                                                             : OffloadSpgemm::hash;
}

OffloadSpgemm resolve_level_spgemm_engine(OffloadSpgemm which, const DeviceCsr<double>& a, const DeviceCsr<double>& b,
                                          cudaStream_t stream) {
  if (which != OffloadSpgemm::automatic) return which;
  return choose_level_spgemm_engine(estimate_spgemm_work(a, b, stream));
}

OffloadSpgemm choose_spgemm_engine(const SpgemmWorkEstimate& e) {
  if (e.tile_pairs == 0) return OffloadSpgemm::tile;
  const bool tiles_well_filled = e.products_per_pair() >= kTileProductsPerPairThreshold;
  const bool rows_do_enough_work = e.products_per_row() >= kTileMinProductsPerRow;
  if (tiles_well_filled && rows_do_enough_work) return OffloadSpgemm::tile;
  return e.products_per_row() <= kHashMaxProductsPerRow ? OffloadSpgemm::hash : OffloadSpgemm::cusparse;
}

SpgemmWorkEstimate estimate_spgemm_work(const DeviceCsr<double>& a, const DeviceCsr<double>& b, cudaStream_t s) {
  require_conformal(a.rows, a.cols, b.rows, b.cols);
  if (a.nnz == 0 || b.nnz == 0) return SpgemmWorkEstimate{0, 0, a.rows};
  const std::int64_t tile_rows = tile::count(b.rows);
  DeviceBuffer<std::int64_t> tiles(std::size_t(tile_rows), s);
  csr_tiles_per_tile_row_kernel<<<grid_for(tile_rows, kThreads), kThreads, 0, s>>>(
      CsrPattern{b.rows, b.row_ptr.data(), b.col_idx.data()}, tile_rows, tiles.data());
  TESSERA_CHECK_LAUNCH();
  return estimate(a, BSide{b.row_ptr.data(), nullptr, tiles.data()}, s);
}

SpgemmWorkEstimate estimate_spgemm_work(const DeviceCsr<double>& a, const DeviceTileMatrix<double>& b,
                                        cudaStream_t s) {
  require_conformal(a.rows, a.cols, b.rows, b.cols);
  if (a.nnz == 0 || b.nnz == 0) return SpgemmWorkEstimate{0, 0, a.rows};
  const std::int64_t tile_rows = b.tile_rows();
  DeviceBuffer<std::int64_t> row_len(std::size_t(b.rows), s), tiles(std::size_t(tile_rows), s);
  tile_row_lengths_kernel<<<grid_for(b.rows, kThreads), kThreads, 0, s>>>(b.rows, b.tile_row_ptr.data(),
                                                                          b.bitmap.data(), row_len.data());
  TESSERA_CHECK_LAUNCH();
  tile_counts_kernel<<<grid_for(tile_rows, kThreads), kThreads, 0, s>>>(tile_rows, b.tile_row_ptr.data(),
                                                                        tiles.data());
  TESSERA_CHECK_LAUNCH();
  return estimate(a, BSide{nullptr, row_len.data(), tiles.data()}, s);
}

namespace {

/// The distinct tile columns of each tile-row of `m`.
std::vector<std::set<std::int64_t>> host_tile_columns(const Csr<double>& m) {
  std::vector<std::set<std::int64_t>> columns(std::size_t(tile::count(m.rows)));
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (std::int64_t p = m.row_ptr[i]; p < m.row_ptr[i + 1]; ++p)
      columns[std::size_t(i / tile::kDim)].insert(m.col_idx[p] / tile::kDim);
  return columns;
}

}  // namespace

SpgemmWorkEstimate estimate_spgemm_work_host(const Csr<double>& a, const Csr<double>& b) {
  require_conformal(a.rows, a.cols, b.rows, b.cols);
  SpgemmWorkEstimate e;
  e.rows = a.rows;
  for (std::int64_t p = 0; p < a.nnz(); ++p) {
    const std::int32_t k = a.col_idx[p];
    e.scalar_products += b.row_ptr[k + 1] - b.row_ptr[k];
  }
  const auto b_columns = host_tile_columns(b);
  for (const auto& tile_row : host_tile_columns(a))
    for (const std::int64_t k : tile_row) e.tile_pairs += std::int64_t(b_columns[std::size_t(k)].size());
  return e;
}

}  // namespace tessera::cuda
