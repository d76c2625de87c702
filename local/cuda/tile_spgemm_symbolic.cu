// Symbolic phase of the tile SpGEMM: the exact structure of C from bitmap boolean products.
//   1. pairs per tile-row I of C (sum over A(I,K) of |B row K|): segmented sum (CUB)
//   2. bin tile-rows by pairs (CUB three-way partition): warp per row (shared table),
//      block per row (shared table), block per row with a global-memory table
//   3. count pass: distinct J with a non-empty OR of products; CUB scan -> tile_row_ptr
//   4. fill pass: tile columns and OR'ed bitmaps; CUB segmented sort sorts each tile-row
//   5. popcounts, CUB scan -> value_offset (exact value allocation)
//   6. work lists for the numeric phase (tile_spgemm_plan.cu)
#include <cub/device/device_partition.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "local/cuda/cub_call.cuh"
#include "local/cuda/tile_hash.cuh"
#include "local/cuda/tile_spgemm_internal.hpp"

namespace tessera::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;
constexpr std::int64_t kSmallPairs = 96;    // warp per row, kSmallSlots-slot shared table
constexpr int kSmallSlots = 256;
constexpr std::int64_t kMediumPairs = 1024; // block per row, kMediumSlots-slot shared table
constexpr int kMediumSlots = 2048;

__global__ void pairs_of_a_tiles(TilePattern a, TilePattern b, std::int64_t a_tiles, std::int64_t* pairs) {
  const std::int64_t ka = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (ka >= a_tiles) return;
  const std::int32_t k = a.col[ka];
  pairs[ka] = b.row_ptr[k + 1] - b.row_ptr[k];
}

struct PairsInRange {
  const std::int64_t* pairs;
  std::int64_t above, at_most;
  __device__ bool operator()(std::int32_t row) const { return pairs[row] > above && pairs[row] <= at_most; }
};

/// One tile-row with a group of kThreads threads and a table of mask+1 slots: count pass
/// (bits == nullptr) stores the number of output tiles; fill pass writes them, unsorted (a
/// CUB segmented sort follows: ranking the entries inside the shared table, tried instead,
/// was 5x slower on poisson3d27).
template <int kThreads>
__device__ void symbolic_row(const TilePattern& a, const TilePattern& b, std::int64_t row, int rank,
                             std::int32_t* keys, unsigned long long* bits, unsigned mask, int* counter,
                             std::int64_t* count, const std::int64_t* c_ptr, std::int32_t* c_col,
                             std::uint64_t* c_bits) {
  for (unsigned s = rank; s <= mask; s += kThreads) {
    keys[s] = dev::kEmptyKey;
    if (bits) bits[s] = 0;
  }
  if (rank == 0) *counter = 0;
  dev::group_sync<kThreads>();
  const int inserted = dev::hash_tile_row<kThreads>(a, b, row, rank, keys, bits, mask);
  if (!bits) {
    if (inserted) atomicAdd(counter, inserted);
    dev::group_sync<kThreads>();
    if (rank == 0) count[row] = *counter;
  } else {
    dev::group_sync<kThreads>();
    const std::int64_t base = c_ptr[row];
    for (unsigned s = rank; s <= mask; s += kThreads) {
      const std::int32_t key = keys[s];
      if (key == dev::kEmptyKey) continue;
      const int at = atomicAdd(counter, 1);
      c_col[base + at] = key;
      c_bits[base + at] = bits[s];
    }
  }
  dev::group_sync<kThreads>();  // the table is reused for the next row
}

struct SymbolicOut {
  std::int64_t* count;  // count pass
  const std::int64_t* c_ptr;
  std::int32_t* c_col;  // fill pass (unsorted)
  std::uint64_t* c_bits;
};

template <bool kFill>
__global__ void __launch_bounds__(kBlock) symbolic_small(TilePattern a, TilePattern b, const std::int32_t* rows,
                                                         std::int64_t n_rows, SymbolicOut out) {
  __shared__ std::int32_t keys[kWarpsPerBlock][kSmallSlots];
  __shared__ unsigned long long bits[kFill ? kWarpsPerBlock : 1][kFill ? kSmallSlots : 1];
  __shared__ int counter[kWarpsPerBlock];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t task = blockIdx.x * std::int64_t(kWarpsPerBlock) + warp;
  if (task >= n_rows) return;  // whole warps leave; only warp-level syncs follow
  symbolic_row<32>(a, b, rows[task], lane, keys[warp], kFill ? bits[warp] : nullptr, kSmallSlots - 1,
                   &counter[warp], out.count, out.c_ptr, out.c_col, out.c_bits);
}

template <bool kFill>
__global__ void __launch_bounds__(kBlock) symbolic_medium(TilePattern a, TilePattern b, const std::int32_t* rows,
                                                          SymbolicOut out) {
  __shared__ std::int32_t keys[kMediumSlots];
  __shared__ unsigned long long bits[kFill ? kMediumSlots : 1];
  __shared__ int counter;
  symbolic_row<kBlock>(a, b, rows[blockIdx.x], threadIdx.x, keys, kFill ? bits : nullptr, kMediumSlots - 1,
                       &counter, out.count, out.c_ptr, out.c_col, out.c_bits);
}

__host__ __device__ unsigned table_slots(std::int64_t pairs, std::int64_t b_tile_cols) {
  const std::int64_t need = 2 * (pairs < b_tile_cols ? pairs : b_tile_cols);
  unsigned slots = 64;
  while (slots < need) slots <<= 1;
  return slots;
}

/// Huge rows: a block per row, grid-stride, each block owning `slots_per_block` slots of
/// global memory (bounded by the number of B tile columns, not by the row's pairs).
template <bool kFill>
__global__ void __launch_bounds__(kBlock) symbolic_large(TilePattern a, TilePattern b, std::int64_t b_tile_cols,
                                                         const std::int32_t* rows, std::int64_t n_rows,
                                                         const std::int64_t* pairs, std::int32_t* keys_all,
                                                         unsigned long long* bits_all, std::int64_t slots_per_block,
                                                         SymbolicOut out) {
  __shared__ int counter;
  std::int32_t* keys = keys_all + blockIdx.x * slots_per_block;
  unsigned long long* bits = kFill ? bits_all + blockIdx.x * slots_per_block : nullptr;
  for (std::int64_t i = blockIdx.x; i < n_rows; i += gridDim.x) {
    const std::int32_t row = rows[i];
    const unsigned mask = table_slots(pairs[row], b_tile_cols) - 1;
    symbolic_row<kBlock>(a, b, row, threadIdx.x, keys, bits, mask, &counter, out.count, out.c_ptr, out.c_col,
                         out.c_bits);
  }
}

struct Popcount {
  __device__ std::int64_t operator()(std::uint64_t bitmap) const { return tile::popcount(bitmap); }
};

/// TESSERA_SPGEMM_TRACE=1 prints each symbolic step's time (synchronizing after each).
class StepTrace {
 public:
  explicit StepTrace(cudaStream_t s) : stream_(s), on_(std::getenv("TESSERA_SPGEMM_TRACE") != nullptr) {}
  void mark(const char* step) {
    if (!on_) return;
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto now = std::chrono::steady_clock::now();
    std::printf("  symbolic %-22s %8.3f ms\n", step, std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }
  void value(const char* what, std::int64_t v) const {
    if (on_) std::printf("  symbolic %-22s %lld\n", what, static_cast<long long>(v));
  }

 private:
  cudaStream_t stream_;
  bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// Rows of each symbolic bin (CUB three-way partition on the pair counts).
struct RowBins {
  DeviceBuffer<std::int32_t> small, medium, large;
  std::int64_t n_small = 0, n_medium = 0, n_large = 0;
};

RowBins bin_rows(const DeviceBuffer<std::int64_t>& pairs, std::int64_t tile_rows, cudaStream_t s) {
  RowBins bins;
  bins.small.allocate(tile_rows, s);
  bins.medium.allocate(tile_rows, s);
  bins.large.allocate(tile_rows, s);
  if (tile_rows == 0) return bins;
  DeviceBuffer<std::int64_t> selected(2, s);
  const PairsInRange small{pairs.data(), -1, kSmallPairs}, medium{pairs.data(), kSmallPairs, kMediumPairs};
  cub_call(s, [&](void* t, std::size_t& n) {
    return cub::DevicePartition::If(t, n, thrust::counting_iterator<std::int32_t>(0), bins.small.data(),
                                    bins.medium.data(), bins.large.data(), selected.data(), tile_rows, small,
                                    medium, s);
  });
  const auto counts = selected.download(s);
  bins.n_small = counts[0];
  bins.n_medium = counts[1];
  bins.n_large = tile_rows - counts[0] - counts[1];
  return bins;
}

/// Runs the count pass (kFill = false) or the fill pass over every bin.
template <bool kFill>
void symbolic_pass(const TilePattern& a, const TilePattern& b, std::int64_t b_tile_cols, const RowBins& bins,
                   const DeviceBuffer<std::int64_t>& pairs, const SymbolicOut& out, cudaStream_t s) {
  if (bins.n_small) {
    symbolic_small<kFill><<<grid_for(bins.n_small, kWarpsPerBlock), kBlock, 0, s>>>(a, b, bins.small.data(),
                                                                                     bins.n_small, out);
    TESSERA_CHECK_LAUNCH();
  }
  if (bins.n_medium) {
    symbolic_medium<kFill><<<unsigned(bins.n_medium), kBlock, 0, s>>>(a, b, bins.medium.data(), out);
    TESSERA_CHECK_LAUNCH();
  }
  if (!bins.n_large) return;
  DeviceBuffer<std::int64_t> max_pairs(1, s);
  cub_call(s, [&](void* t, std::size_t& n) {
    return cub::DeviceReduce::Max(t, n, pairs.data(), max_pairs.data(), a.tile_rows, s);
  });
  const std::int64_t slots = table_slots(read_scalar(max_pairs.data(), s), b_tile_cols);
  int sms = 0, device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // As many blocks as a 1 GiB table budget allows (at least 2 per SM): the rows of this bin
  // are few on power-law graphs but all of them on uniformly random matrices.
  const std::int64_t by_memory = (std::int64_t{1} << 30) / (slots * 12);
  const std::int64_t blocks = std::min<std::int64_t>(bins.n_large, std::max<std::int64_t>(2 * sms, by_memory));
  DeviceBuffer<std::int32_t> keys(blocks * slots, s);
  DeviceBuffer<unsigned long long> bits(kFill ? blocks * slots : 0, s);
  symbolic_large<kFill><<<unsigned(blocks), kBlock, 0, s>>>(a, b, b_tile_cols, bins.large.data(), bins.n_large,
                                                            pairs.data(), keys.data(), bits.data(), slots, out);
  TESSERA_CHECK_LAUNCH();
}

/// Exclusive prefix sum of counts[0..n) into offsets[0..n] (offsets[n] = total); returns the total.
std::int64_t scan_counts(const std::int64_t* counts, std::int64_t* offsets, std::int64_t n, cudaStream_t s) {
  TESSERA_CUDA_CHECK(cudaMemsetAsync(offsets + n, 0, sizeof(std::int64_t), s));
  if (n == 0) return 0;
  cub_call(s, [&](void* t, std::size_t& bytes) {
    return cub::DeviceScan::InclusiveSum(t, bytes, counts, offsets + 1, n, s);
  });
  TESSERA_CUDA_CHECK(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t), s));
  return read_scalar(offsets + n, s);
}

}  // namespace

std::int64_t exclusive_scan_total(const std::int64_t* counts, std::int64_t* offsets, std::int64_t n,
                                  cudaStream_t s) {
  return scan_counts(counts, offsets, n, s);
}

template <class T>
void TileSpgemm<T>::symbolic(const DeviceTileMatrix<T>& a, const DeviceTileMatrix<T>& b, DeviceTileMatrix<Out>& c) {
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "tile SpGEMM: A is ", a.rows, " x ", a.cols, " but B is ", b.rows, " x ",
                        b.cols, ": A.cols must equal B.rows");
  cudaStream_t s = stream_;
  const std::int64_t tile_rows = a.tile_rows();
  const TilePattern ap = pattern_of(a), bp = pattern_of(b);
  info_ = {};
  StepTrace trace(s);
  retain_pool_memory();
  c.rows = a.rows;
  c.cols = b.cols;

  // 1-2. pairs per output tile-row, and the bins.
  DeviceBuffer<std::int64_t> pairs(tile_rows + 1, s);
  {
    DeviceBuffer<std::int64_t> tile_pairs(std::max<std::int64_t>(a.num_tiles, 1), s);
    if (a.num_tiles) {
      pairs_of_a_tiles<<<grid_for(a.num_tiles, kBlock), kBlock, 0, s>>>(ap, bp, a.num_tiles, tile_pairs.data());
      TESSERA_CHECK_LAUNCH();
    } else {
      tile_pairs.fill_bytes(0, s);
    }
    if (tile_rows) {
      cub_call(s, [&](void* t, std::size_t& n) {
        return cub::DeviceSegmentedReduce::Sum(t, n, tile_pairs.data(), pairs.data(), tile_rows, ap.row_ptr,
                                               ap.row_ptr + 1, s);
      });
    }
  }
  trace.mark("pairs per row");
  const RowBins bins = bin_rows(pairs, tile_rows, s);
  trace.mark("bins");
  trace.value("rows small", bins.n_small);
  trace.value("rows medium", bins.n_medium);
  trace.value("rows large", bins.n_large);
  info_.rows_small = bins.n_small;
  info_.rows_medium = bins.n_medium;
  info_.rows_large = bins.n_large;

  // 3. count pass and tile_row_ptr.
  DeviceBuffer<std::int64_t> count(tile_rows + 1, s);
  symbolic_pass<false>(ap, bp, b.tile_cols(), bins, pairs, SymbolicOut{count.data(), nullptr, nullptr, nullptr}, s);
  c.tile_row_ptr.allocate(tile_rows + 1, s);
  c.num_tiles = scan_counts(count.data(), c.tile_row_ptr.data(), tile_rows, s);
  count.release();

  trace.mark("count pass + scan");
  trace.value("C tiles", c.num_tiles);

  // 4. fill pass (unsorted) and per-row sort, ping-ponging between two buffers (so the sort's
  // workspace stays small).
  c.tile_col.allocate(c.num_tiles, s);
  c.bitmap.allocate(c.num_tiles, s);
  if (c.num_tiles) {
    DeviceBuffer<std::int32_t> col_other(c.num_tiles, s);
    DeviceBuffer<std::uint64_t> bits_other(c.num_tiles, s);
    symbolic_pass<true>(ap, bp, b.tile_cols(), bins, pairs,
                        SymbolicOut{nullptr, c.tile_row_ptr.data(), col_other.data(), bits_other.data()}, s);
    trace.mark("fill pass");
    cub::DoubleBuffer<std::int32_t> cols(col_other.data(), c.tile_col.data());
    cub::DoubleBuffer<std::uint64_t> bits(bits_other.data(), c.bitmap.data());
    cub_call(s, [&](void* t, std::size_t& n) {
      return cub::DeviceSegmentedSort::SortPairs(t, n, cols, bits, c.num_tiles, tile_rows, c.tile_row_ptr.data(),
                                                 c.tile_row_ptr.data() + 1, s);
    });
    trace.mark("segmented sort");
    if (cols.Current() != c.tile_col.data()) std::swap(c.tile_col, col_other);
    if (bits.Current() != c.bitmap.data()) std::swap(c.bitmap, bits_other);
  }

  // 5. value offsets (scan of the popcounts): exact allocation.
  c.value_offset.allocate(c.num_tiles + 1, s);
  c.nnz = 0;
  TESSERA_CUDA_CHECK(cudaMemsetAsync(c.value_offset.data(), 0, sizeof(std::int64_t), s));
  if (c.num_tiles) {
    const auto nnz_of_tile = thrust::make_transform_iterator(c.bitmap.data(), Popcount{});
    cub_call(s, [&](void* t, std::size_t& n) {
      return cub::DeviceScan::InclusiveSum(t, n, nnz_of_tile, c.value_offset.data() + 1, c.num_tiles, s);
    });
    c.nnz = read_scalar(c.value_offset.data() + c.num_tiles, s);
  }
  c.values.allocate(c.nnz, s);
  trace.mark("value offsets");
  trace.value("C nnz", c.nnz);

  // 6. numeric work lists.
  WorkLists lists = build_work_lists(ap, bp, b.tile_cols(), pattern_of(c), pairs.data(), options_, s);
  info_.list_bytes = lists.list_bytes();  // before the buffers move out
  pull_row_ = std::move(lists.pull_row);
  row_pull_start_ = std::move(lists.row_pull_start);
  row_listed_start_ = std::move(lists.row_listed_start);
  listed_block_row_ = std::move(lists.listed_block_row);
  block_pair_start_ = std::move(lists.block_pair_start);
  pair_offset_ = std::move(lists.pair_offset);
  listed_pairs_ = std::move(lists.listed_pairs);
  trace.mark("work lists");
  info_.tile_pairs = lists.tile_pairs;
  info_.pull_tasks = static_cast<std::int64_t>(pull_row_.size());
  info_.listed_tasks = lists.listed_tasks;
  info_.listed_pairs = static_cast<std::int64_t>(listed_pairs_.size());
  info_.list_batches = lists.list_batches;
  info_.c_tiles = c.num_tiles;
  info_.c_nnz = c.nnz;
  a_tiles_ = a.num_tiles;
  b_tiles_ = b.num_tiles;
  have_symbolic_ = true;
}

template class TileSpgemm<double>;
template class TileSpgemm<float>;
template class TileSpgemm<Half>;

}  // namespace tessera::cuda
