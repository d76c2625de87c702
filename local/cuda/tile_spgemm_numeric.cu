// Numeric phase of the tile SpGEMM.
//   pull rows:  one warp per pair of C tiles (J1, J2) of tile-row I; for each A(I,K) it finds
//               B(K,J1), B(K,J2) by binary search and accumulates both products in one
//               m16n8k8 MMA (mma_tile.cuh), or in FMA (TileProduct::fma / FP32); then writes
//               every present element of the two tiles at value_offset + rank.
//   push rows:  skewed rows (tile_spgemm_internal.hpp): values zeroed, then one warp per
//               A(I,K) walks B's row K and adds each 8x8 product into C with atomics.
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

template <class T, class Acc, bool kTensorCore>
__global__ void __launch_bounds__(kBlock) pull_pairs(TileView<const T> a, TileView<const T> b, TileView<Acc> c,
                                                     const std::int32_t* task_row, const std::int64_t* task_tile,
                                                     std::int64_t tasks) {
  __shared__ dev::PairScratch<Acc> scratch[kTensorCore ? 1 : kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const std::int64_t task = blockIdx.x * std::int64_t(kWarps) + warp;
  if (task >= tasks) return;  // warp-uniform
  const std::int64_t row = task_row[task], p1 = task_tile[task];
  const bool has2 = p1 + 1 < c.row_ptr[row + 1];
  const std::int32_t j1 = c.col[p1], j2 = has2 ? c.col[p1 + 1] : -1;
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
    for (unsigned hits = __ballot_sync(0xffffffffu, useful); hits; hits &= hits - 1) {
      const int src = __ffs(hits) - 1;
      const std::int64_t kq = base + src;
      const std::int64_t s1 = __shfl_sync(0xffffffffu, q1, src), s2 = __shfl_sync(0xffffffffu, q2, src);
      dev::PairOperands p;
      p.a_off = a.offset[kq];
      p.a_bm = a.bitmap[kq];
      p.b1_off = s1 >= 0 ? b.offset[s1] : 0;
      p.b1_bm = s1 >= 0 ? b.bitmap[s1] : 0;
      p.b2_off = s2 >= 0 ? b.offset[s2] : 0;
      p.b2_bm = s2 >= 0 ? b.bitmap[s2] : 0;
      if constexpr (kTensorCore) dev::mma(dev::load_fragments(a.values, b.values, p, g, t), d);
      else dev::fma_pair(a.values, b.values, p, g, t, lane, scratch[warp], d);
    }
  }
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

template <class Acc>
__global__ void zero_rows(TileView<Acc> c, const std::int32_t* rows) {
  const std::int32_t row = rows[blockIdx.x];
  const std::int64_t end = c.offset[c.row_ptr[row + 1]];
  for (std::int64_t v = c.offset[c.row_ptr[row]] + threadIdx.x; v < end; v += blockDim.x) c.values[v] = Acc(0);
}

template <class T, class Acc>
__global__ void __launch_bounds__(kBlock) push_products(TileView<const T> a, TileView<const T> b, TileView<Acc> c,
                                                        const std::int32_t* task_row, const std::int64_t* task_tile,
                                                        std::int64_t tasks) {
  __shared__ Acc a_dense[kWarps][tile::kElems], b_dense[kWarps][tile::kElems];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t task = blockIdx.x * std::int64_t(kWarps) + warp;
  if (task >= tasks) return;
  const std::int64_t row = task_row[task], ka = task_tile[task];
  const std::uint64_t a_bm = a.bitmap[ka];
  for (int e = lane; e < tile::kElems; e += 32) a_dense[warp][e] = dev::tile_element<Acc>(a.values, a.offset[ka], a_bm, e);
  const std::int32_t k = a.col[ka];
  for (std::int64_t kb = b.row_ptr[k]; kb < b.row_ptr[k + 1]; ++kb) {
    const std::uint64_t b_bm = b.bitmap[kb], product = tile::bool_product(a_bm, b_bm);
    if (!product) continue;
    const std::int64_t pc = dev::find_tile(c.col, c.row_ptr[row], c.row_ptr[row + 1], b.col[kb]);
    const std::uint64_t c_bm = c.bitmap[pc];
    __syncwarp();
    for (int e = lane; e < tile::kElems; e += 32) b_dense[warp][e] = dev::tile_element<Acc>(b.values, b.offset[kb], b_bm, e);
    __syncwarp();
    for (int e = lane; e < tile::kElems; e += 32) {
      if (!((product >> e) & 1u)) continue;
      const int r = e / tile::kDim, col = e % tile::kDim;
      Acc sum = 0;
#pragma unroll
      for (int kk = 0; kk < tile::kDim; ++kk) sum = fma(a_dense[warp][r * tile::kDim + kk], b_dense[warp][kk * tile::kDim + col], sum);
      atomicAdd(&c.values[c.offset[pc] + tile::rank_below(c_bm, e)], sum);
    }
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
  const std::int64_t pulls = pull_row_.size();
  // FP32 has no exact-FP32 MMA (TF32 rounds the inputs to 10 bits): its products are FMA.
  const bool tensor_core = options_.product == TileProduct::tensor_core && !std::is_same_v<T, float>;
  if (pulls) {
    if (tensor_core) {
      if constexpr (!std::is_same_v<T, float>)
        pull_pairs<T, Out, true><<<grid_for(pulls, kWarps), kBlock, 0, s>>>(av, bv, cv, pull_row_.data(),
                                                                           pull_tile_.data(), pulls);
    } else {
      pull_pairs<T, Out, false><<<grid_for(pulls, kWarps), kBlock, 0, s>>>(av, bv, cv, pull_row_.data(),
                                                                          pull_tile_.data(), pulls);
    }
    TESSERA_CHECK_LAUNCH();
  }
  if (push_rows_.size()) {
    zero_rows<Out><<<unsigned(push_rows_.size()), kBlock, 0, s>>>(cv, push_rows_.data());
    TESSERA_CHECK_LAUNCH();
    const std::int64_t pushes = push_a_tile_.size();
    push_products<T, Out><<<grid_for(pushes, kWarps), kBlock, 0, s>>>(av, bv, cv, push_a_row_.data(),
                                                                     push_a_tile_.data(), pushes);
    TESSERA_CHECK_LAUNCH();
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
