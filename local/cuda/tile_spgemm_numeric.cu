// Numeric phase of the tile SpGEMM: one warp per pair of C tiles (J1, J2) of tile-row I,
// accumulating both tiles' products in one m16n8k8 MMA per A tile (mma_tile.cuh), or in FMA
// (TileProduct::fma / FP32), then writing every present element of the two tiles at
// value_offset + rank. The warp finds its (A(I,K), B(K,J1), B(K,J2)) operands either
//   pulled: by binary search of B(K,J1), B(K,J2) for each A(I,K) of the row, or
//   listed: from the symbolic phase's list of the row's useful pairs (skewed rows,
//           tile_spgemm_plan.cu).
// Each C element is summed by one lane in A's order either way: no atomics, and a repeated
// numeric phase gives the same bits.
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <type_traits>

#include "local/cuda/cub_call.cuh"
#include "local/cuda/mma_tile.cuh"
#include "local/cuda/tile_spgemm_internal.hpp"

namespace tessera::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr unsigned kAll = 0xffffffffu;

/// Per-warp scratch: shared dense tiles for the FMA path, nothing for the MMA.
template <class Acc, bool kTensorCore>
using WarpScratch = dev::PairScratch<Acc>[kTensorCore ? 1 : kWarps];

/// The lanes flagged `useful` each hold one product (A tile ka, B tiles q1 for J1 and q2 for
/// J2, -1 where absent); the warp multiplies them in lane order into d. `frag`: where this
/// lane's f64 MMA operands lie in a tile (made once per kernel).
template <class T, class Acc, bool kTensorCore>
__device__ __forceinline__ void multiply_hits(const TileView<const T>& a, const TileView<const T>& b, bool useful,
                                              std::int64_t ka, std::int64_t q1, std::int64_t q2,
                                              const dev::FragmentLane& frag, dev::PairScratch<Acc>& scratch,
                                              Acc (&d)[4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  for (unsigned hits = __ballot_sync(kAll, useful); hits; hits &= hits - 1) {
    const int src = __ffs(hits) - 1;
    const std::int64_t kq = __shfl_sync(kAll, ka, src);
    const std::int64_t s1 = __shfl_sync(kAll, q1, src), s2 = __shfl_sync(kAll, q2, src);
    dev::PairOperands p;
    p.a_off = a.offset[kq];
    p.a_bm = a.bitmap[kq];
    p.b1_off = s1 >= 0 ? b.offset[s1] : 0;
    p.b1_bm = s1 >= 0 ? b.bitmap[s1] : 0;
    p.b2_off = s2 >= 0 ? b.offset[s2] : 0;
    p.b2_bm = s2 >= 0 ? b.bitmap[s2] : 0;
    if constexpr (!kTensorCore) dev::fma_pair(a.values, b.values, p, g, t, lane, scratch, d);
    else if constexpr (std::is_same_v<T, double>) dev::mma(dev::load_fragments(a.values, b.values, p, frag), d);
    else dev::mma(dev::load_fragments(a.values, b.values, p, g, t), d);
  }
}

/// Writes the warp's results: every present element of C tiles p1 and (has2) p1 + 1.
template <class Acc>
__device__ __forceinline__ void store_pair(const TileView<Acc>& c, std::int64_t p1, bool has2, const Acc (&d)[4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int which = dev::out_tile(i);
    if (which == 1 && !has2) continue;
    const std::int64_t pc = p1 + which;
    const std::uint64_t bm = c.bitmap[pc];
    const int bit = dev::out_bit(i, g, t);
    if ((bm >> bit) & 1u) c.values[c.offset[pc] + tile::rank_below(bm, bit)] = d[i];
  }
}

/// Searched warp tasks (tile_spgemm_internal.hpp's WorkLists): task t is in tile-row row[t].
struct SearchedTasks {
  const std::int32_t* row;
  const std::int64_t* row_start;  // per tile-row (rows + 1): its first searched task
  std::int64_t count;
};

/// The first C tile of task t in tile-row `row`: tasks of a kind are numbered row by row, so t
/// is the row's task i = t - row_start[row], on the row's tiles 2i and 2i + 1.
template <class Acc>
__device__ __forceinline__ std::int64_t first_c_tile(const TileView<Acc>& c, const std::int64_t* row_start,
                                                     std::int64_t row, std::int64_t t) {
  return c.row_ptr[row] + 2 * (t - row_start[row]);
}

template <class T, class Acc, bool kTensorCore>
__global__ void __launch_bounds__(kBlock) pull_pairs(TileView<const T> a, TileView<const T> b, TileView<Acc> c,
                                                     SearchedTasks tasks) {
  __shared__ WarpScratch<Acc, kTensorCore> scratch;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t task = blockIdx.x * std::int64_t(kWarps) + warp;
  if (task >= tasks.count) return;  // warp-uniform
  const std::int64_t row = tasks.row[task], p1 = first_c_tile(c, tasks.row_start, row, task);
  const bool has2 = p1 + 1 < c.row_ptr[row + 1];
  const std::int32_t j1 = c.col[p1], j2 = has2 ? c.col[p1 + 1] : -1;
  const dev::FragmentLane frag = dev::fragment_lane(lane / 4, lane % 4);
  Acc d[4] = {0, 0, 0, 0};
  // Lanes search 32 A tiles at once for B(K,J1), B(K,J2) and cull pairs whose boolean
  // products are empty; the warp then multiplies only the hits, one MMA each. (Loading every
  // operand in the search and shuffling all six to the warp, to pipeline the next hit's loads
  // under the current MMA, measured 15-20% slower on the H100.)
  const std::int64_t a_end = a.row_ptr[row + 1];
  for (std::int64_t base = a.row_ptr[row]; base < a_end; base += 32) {
    const std::int64_t ka = base + lane;
    std::int64_t q1 = -1, q2 = -1;
    bool useful = false;
    if (ka < a_end) {
      const std::int32_t k = a.col[ka];
      const std::int64_t b_begin = b.row_ptr[k], b_end = b.row_ptr[k + 1];
      q1 = dev::find_tile(b.col, b_begin, b_end, j1);
      q2 = has2 ? dev::find_tile(b.col, q1 >= 0 ? q1 + 1 : b_begin, b_end, j2) : -1;
      const std::uint64_t b_bits = (q1 >= 0 ? b.bitmap[q1] : 0) | (q2 >= 0 ? b.bitmap[q2] : 0);
      useful = tile::bool_product(a.bitmap[ka], b_bits) != 0;
    }
    multiply_hits<T, Acc, kTensorCore>(a, b, useful, ka, q1, q2, frag, scratch[kTensorCore ? 0 : warp], d);
  }
  store_pair(c, p1, has2, d);
}

/// Listed warp tasks (tile_spgemm_internal.hpp's WorkLists): each finds its row from its
/// block's, and its pairs from its block's first.
struct ListedTasks {
  const std::int32_t* block_row;
  const std::int64_t* row_start;         // per tile-row (rows + 1): its first listed task
  const std::int64_t* block_pair_start;  // per block (blocks + 1): its first pair
  const std::uint32_t* pair_offset;      // per task: its first pair, counted from its block's
  const ListedPair* pairs;
  std::int64_t count;
};
static_assert(kWarps == kTasksPerBlock, "a listed task's row is searched from its block's");

/// Listed tasks: lanes read 32 of the task's pairs at once. A tile's pairs with J1 and J2 are
/// adjacent (J1 first), and the lane holding J1 takes its neighbour's J2 into the same MMA.
template <class T, class Acc, bool kTensorCore>
__global__ void __launch_bounds__(kBlock) listed_pairs(TileView<const T> a, TileView<const T> b, TileView<Acc> c,
                                                       ListedTasks tasks) {
  __shared__ WarpScratch<Acc, kTensorCore> scratch;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t task = blockIdx.x * std::int64_t(kWarps) + warp;
  if (task >= tasks.count) return;  // warp-uniform
  // The task's pairs end where the next task's start: in its block, or at the next block's.
  // (Read before the row's search, a branch, so that these loads are issued with its first.)
  const std::int64_t block_pairs = tasks.block_pair_start[blockIdx.x];
  const std::int64_t begin = block_pairs + tasks.pair_offset[task];
  const bool last_of_block = warp == kWarps - 1 || task + 1 == tasks.count;
  const std::int64_t end = last_of_block ? tasks.block_pair_start[blockIdx.x + 1]
                                         : block_pairs + tasks.pair_offset[task + 1];
  const std::int64_t row = listed_task_row(tasks.block_row, tasks.row_start, task);
  const std::int64_t p1 = first_c_tile(c, tasks.row_start, row, task);
  const bool has2 = p1 + 1 < c.row_ptr[row + 1];
  const dev::FragmentLane frag = dev::fragment_lane(lane / 4, lane % 4);
  Acc d[4] = {0, 0, 0, 0};
  const ListedPair* pairs = tasks.pairs;
  const std::int64_t a_row_start = a.row_ptr[row];
  for (std::int64_t base = begin; base < end; base += 32) {
    const bool valid = base + lane < end;
    const ListedPair p = valid ? pairs[base + lane] : ListedPair{-1, -1};
    const std::int32_t prev_a = __shfl_up_sync(kAll, p.a_in_row, 1);
    const std::int32_t next_a = __shfl_down_sync(kAll, p.a_in_row, 1);
    const std::int32_t next_b = __shfl_down_sync(kAll, p.b_in_row_which, 1);
    const bool follower = lane > 0 && valid && prev_a == p.a_in_row;  // J2 taken by the lane before
    const bool leader = lane < 31 && valid && next_a == p.a_in_row;
    const std::int64_t ka = a_row_start + p.a_in_row;
    std::int64_t q1 = -1, q2 = -1;
    if (valid && !follower) {
      const std::int64_t b_row_start = b.row_ptr[a.col[ka]];
      (p.b_in_row_which & 1 ? q2 : q1) = b_row_start + (p.b_in_row_which >> 1);
      if (leader) q2 = b_row_start + (next_b >> 1);
    }
    multiply_hits<T, Acc, kTensorCore>(a, b, valid && !follower, ka, q1, q2, frag, scratch[kTensorCore ? 0 : warp],
                                       d);
  }
  store_pair(c, p1, has2, d);
}

template <class T, class Acc, bool kTensorCore>
void launch_products(const TileView<const T>& a, const TileView<const T>& b, const TileView<Acc>& c,
                     SearchedTasks pulled, ListedTasks listed, cudaStream_t s) {
  if (pulled.count) {
    pull_pairs<T, Acc, kTensorCore><<<grid_for(pulled.count, kWarps), kBlock, 0, s>>>(a, b, c, pulled);
    TESSERA_CHECK_LAUNCH();
  }
  if (listed.count) {
    listed_pairs<T, Acc, kTensorCore><<<grid_for(listed.count, kWarps), kBlock, 0, s>>>(a, b, c, listed);
    TESSERA_CHECK_LAUNCH();
  }
}

/// FP16 inputs: Inf or NaN cannot be represented; the GPU entry refuses them (max of |bits|).
struct HalfMagnitude {
  __device__ unsigned operator()(const Half& h) const { return h.bits & 0x7fffu; }
};

void require_finite_half(const DeviceBuffer<Half>& values, const char* what, cudaStream_t s) {
  if (values.size() == 0) return;
  DeviceBuffer<unsigned> max_bits(1, s);
  const auto magnitudes = thrust::make_transform_iterator(values.data(), HalfMagnitude{});
  cub_call(s, [&](void* t, std::size_t& n) {
    return cub::DeviceReduce::Max(t, n, magnitudes, max_bits.data(), static_cast<std::int64_t>(values.size()), s);
  });
  TESSERA_REQUIRE_INPUT(read_scalar(max_bits.data(), s) < 0x7c00u, "tile SpGEMM (fp16): matrix ", what,
                        " holds Inf or NaN, which FP16 inputs cannot take (finite range is +-65504)");
}

}  // namespace

template <class T>
void TileSpgemm<T>::numeric(const DeviceTileMatrix<T>& a, const DeviceTileMatrix<T>& b, DeviceTileMatrix<Out>& c) {
  TESSERA_REQUIRE_INPUT(have_symbolic_, "tile SpGEMM: numeric() called before symbolic()");
  TESSERA_REQUIRE_INPUT(a.num_tiles == a_tiles_ && b.num_tiles == b_tiles_ && c.num_tiles == info_.c_tiles &&
                            c.nnz == info_.c_nnz,
                        "tile SpGEMM: numeric() needs the patterns symbolic() saw (A tiles ", a.num_tiles, " vs ",
                        a_tiles_, ", B tiles ", b.num_tiles, " vs ", b_tiles_, ", C tiles ", c.num_tiles, " vs ",
                        info_.c_tiles, ")");
  cudaStream_t s = stream_;
  if constexpr (std::is_same_v<T, Half>) {
    require_finite_half(a.values, "A", s);
    require_finite_half(b.values, "B", s);
  }
  const auto av = view_of<const T>(a), bv = view_of<const T>(b);
  const auto cv = view_of<Out>(c);
  const SearchedTasks pulled{pull_row_.data(), row_pull_start_.data(), static_cast<std::int64_t>(pull_row_.size())};
  const ListedTasks listed{listed_block_row_.data(), row_listed_start_.data(), block_pair_start_.data(),
                           pair_offset_.data(), listed_pairs_.data(), info_.listed_tasks};
  // FP32 has no exact-FP32 MMA (TF32 rounds the inputs to 10 bits): its products are FMA.
  const bool tensor_core = options_.product == TileProduct::tensor_core && !std::is_same_v<T, float>;
  if (tensor_core) {
    if constexpr (!std::is_same_v<T, float>)
      launch_products<T, Out, true>(av, bv, cv, pulled, listed, s);
  } else {
    launch_products<T, Out, false>(av, bv, cv, pulled, listed, s);
  }
}

template void TileSpgemm<double>::numeric(const DeviceTileMatrix<double>&, const DeviceTileMatrix<double>&,
                                          DeviceTileMatrix<double>&);
template void TileSpgemm<float>::numeric(const DeviceTileMatrix<float>&, const DeviceTileMatrix<float>&,
                                         DeviceTileMatrix<float>&);
template void TileSpgemm<Half>::numeric(const DeviceTileMatrix<Half>&, const DeviceTileMatrix<Half>&,
                                        DeviceTileMatrix<float>&);

template <class T>
DeviceTileMatrix<spgemm_output_t<T>> multiply(const DeviceTileMatrix<T>& a, const DeviceTileMatrix<T>& b,
                                              const TileSpgemmOptions& options, cudaStream_t stream) {
  TileSpgemm<T> plan(options, stream);
  DeviceTileMatrix<spgemm_output_t<T>> c;
  plan.symbolic(a, b, c);
  plan.numeric(a, b, c);
  if (options.drop_zeros) return drop_zeros(c, stream);
  return c;
}

template DeviceTileMatrix<double> multiply(const DeviceTileMatrix<double>&, const DeviceTileMatrix<double>&,
                                           const TileSpgemmOptions&, cudaStream_t);
template DeviceTileMatrix<float> multiply(const DeviceTileMatrix<float>&, const DeviceTileMatrix<float>&,
                                          const TileSpgemmOptions&, cudaStream_t);
template DeviceTileMatrix<float> multiply(const DeviceTileMatrix<Half>&, const DeviceTileMatrix<Half>&,
                                          const TileSpgemmOptions&, cudaStream_t);

}  // namespace tessera::cuda
